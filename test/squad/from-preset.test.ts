import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { isTroupeError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { agent } from '../../src/patterns/agent.js';
import { defaultEvaluatorPrompt, defaultOrchestratorPrompt, fromPreset, presetFromTeam } from '../../src/squad/from-preset.js';
import { discoverSquad } from '../../src/squad/parse.js';
import type { TeamPresetInput } from '../../src/squad/preset.js';
import { builtInPresets, loadUserPresets, saveTeamAsPreset } from '../../src/squad/presets.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const REQUEST = 'Add a search box to the catalogue';
const ROUTING = '## Routing\n| Work | Who |\n| UI | builder |';
const SHARED = '## 2026-01-02: Use Blazor components\nDecided by the lead.';
const PLAN = '@worker:builder\nBuild the search box.\n@end\n@worker:checker\nTest the search box.\n@end';

const preset = (extra: Partial<TeamPresetInput> = {}): TeamPresetInput => ({
  name: 'Web Crew',
  mode: 'orchestrator-reflect',
  workers: [
    { name: 'builder', role: 'Builder', systemPrompt: 'You are the builder. Write the code.' },
    { name: 'checker', role: 'Checker', systemPrompt: 'You are the checker. Find what breaks.' },
  ],
  routingContext: ROUTING,
  sharedContext: SHARED,
  ...extra,
});

const workerPrompt = (system: string, task: string) =>
  `${system}\n\n${SHARED}\n\n## ORIGINAL USER REQUEST\n${REQUEST}\n\n## YOUR ASSIGNED TASK\n${task}`;

const planningPrompt =
  `## ORIGINAL USER REQUEST\n${REQUEST}\n\n## AVAILABLE WORKERS\n- builder: Builder\n- checker: Checker\n\n## ROUTING CONTEXT\n${ROUTING}\n\n` +
  'Plan the work and assign tasks to the workers. Assign tasks with one block per worker:\n@worker:builder\n<the task>\n@end';

/** A scripted adapter where the orchestrator plans and then synthesises with `syntheses` in turn. */
function setup(syntheses: string[], extra: Parameters<typeof scriptedAdapter>[0] = {}) {
  const clock = new SimulatedClock();
  let n = 0;
  const adapter = scriptedAdapter({
    clock,
    ...extra,
    rules: [
      ...(extra.rules ?? []),
      { agent: 'orchestrator', reply: (r) => (r.text.includes('## WORKER RESULTS') ? syntheses[Math.min(n++, syntheses.length - 1)]! : PLAN) },
      { agent: 'builder', reply: 'builder: search box built' },
      { agent: 'checker', reply: 'checker: 3 tests pass' },
    ],
  });
  return { clock, adapter };
}

const tempRoot = tempDirs('troupe-from-preset-');

describe('fromPreset', () => {
  it('orchestrator-reflect by default: routing context in planning, shared context in every worker prompt, the preset prompts', async () => {
    const { clock, adapter } = setup(['Search box built and tested.\n[[GROUP_REFLECT_COMPLETE]]']);
    const { mode: _mode, ...noMode } = preset({ orchestratorPrompt: 'You lead the web crew.' });
    const team = fromPreset(noMode);
    expect(team).toMatchObject({ name: 'Web Crew', kind: 'orchestrate' });
    expect(team.preset.mode).toBe('orchestrator-reflect');
    const result = await run(team, REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', goalMet: true, iterations: 1, agent: 'orchestrator', output: 'Search box built and tested.' });
    expect(adapter.inputsOf('orchestrator')[0]).toBe(planningPrompt);
    expect(adapter.inputsOf('builder')).toEqual([workerPrompt('You are the builder. Write the code.', 'Build the search box.')]);
    expect(adapter.inputsOf('checker')).toEqual([workerPrompt('You are the checker. Find what breaks.', 'Test the search box.')]);
    const system = Object.fromEntries(adapter.sessions.map((s) => [s.agent, s.system]));
    expect(system).toEqual({
      orchestrator: 'You lead the web crew.',
      builder: 'You are the builder. Write the code.',
      checker: 'You are the checker. Find what breaks.',
    });
  });

  it('passes maxIterations through and scores against goalScore (0-10) with an evaluator', async () => {
    const { clock, adapter } = setup(['Draft.', 'Search box with tests.'], {
      replies: { evaluator: ['SCORE: 7/10\nRATIONALE: No tests yet.', 'SCORE: 8/10\nRATIONALE: Good enough.'] },
    });
    const result = await run(fromPreset(preset({ maxIterations: 3, goalScore: 8 })), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2, output: 'Search box with tests.' });
    expect(result.summary).toMatch(/^✅ Goal met \(2\/3\)/);
    expect(result.evaluations.map((e) => [e.score, e.evaluator, e.goalMet])).toEqual([[0.7, 'evaluator', false], [0.8, 'evaluator', true]]);
    expect(adapter.sessions.find((s) => s.agent === 'evaluator')?.system).toBe(defaultEvaluatorPrompt({ name: 'Web Crew' }));
    // The second plan carries the evaluation; the routing context was given once, in the first.
    expect(adapter.inputsOf('orchestrator')[2]).toContain('## LAST EVALUATION\nScore: 0.70 (stable)\nNo tests yet.');
    expect(adapter.inputsOf('builder')).toHaveLength(2);
    // evaluator: false lets the orchestrator judge itself with sentinels.
    const self = setup(['Done.\n[[GROUP_REFLECT_COMPLETE]]']);
    const again = await run(fromPreset(preset({ goalScore: 8 }), { evaluator: false }), REQUEST, { adapter: self.adapter, clock: self.clock });
    expect(again.evaluations.map((e) => e.evaluator)).toEqual(['orchestrator']);
  });

  it('orchestrator mode: one pass with a generic orchestrator prompt', async () => {
    const { clock, adapter } = setup(['The search box is built and tested.']);
    const result = await run(fromPreset(preset({ mode: 'orchestrator', description: 'builds web pages' })), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', goalMet: true, iterations: 1, output: 'The search box is built and tested.', evaluations: [] });
    expect(adapter.inputsOf('orchestrator')).toHaveLength(2);
    expect(adapter.inputsOf('orchestrator')[0]).toBe(planningPrompt);
    expect(adapter.inputsOf('checker')).toEqual([workerPrompt('You are the checker. Find what breaks.', 'Test the search box.')]);
    expect(adapter.sessions.find((s) => s.agent === 'orchestrator')?.system).toBe(
      'You are the orchestrator of the Web Crew team (builds web pages). Split each request into tasks for the workers best suited to them, then combine their results into one answer.',
    );
    expect(defaultOrchestratorPrompt({ name: 'Web Crew', description: 'builds web pages' })).toBe(adapter.sessions[0]?.system);
  });

  it('broadcast mode: every worker gets the shared context and the request; no orchestrator without a prompt', async () => {
    const { clock, adapter } = setup([]);
    const result = await run(fromPreset(preset({ mode: 'broadcast' })), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', goalMet: true });
    expect(result.output).toBe('### From builder\nbuilder: search box built\n\n### From checker\nchecker: 3 tests pass');
    expect(adapter.inputsOf('builder')).toEqual([`${SHARED}\n\n${REQUEST}`]);
    expect(adapter.inputsOf('checker')).toEqual([`${SHARED}\n\n${REQUEST}`]);
    expect(adapter.inputsOf('orchestrator')).toEqual([]);
    // With an orchestrator prompt, an orchestrator synthesises.
    const synth = setup(['One answer from both.']);
    const merged = await run(fromPreset(preset({ mode: 'broadcast', orchestratorPrompt: 'Merge the answers.' })), REQUEST, synth);
    expect(merged).toMatchObject({ output: 'One answer from both.', agent: 'orchestrator' });
    expect(synth.adapter.inputsOf('orchestrator')[0]).toContain('## WORKER RESULTS\n\n### From builder\nbuilder: search box built');
  });

  it('sequential mode: workers in order, each after the shared context and the earlier answers', async () => {
    const { clock, adapter } = setup([]);
    const result = await run(fromPreset(preset({ mode: 'sequential' })), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', goalMet: true, output: 'checker: 3 tests pass', agent: 'checker' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['builder', 'checker']);
    expect(adapter.inputsOf('builder')).toEqual([`${SHARED}\n\n${REQUEST}`]);
    expect(adapter.inputsOf('checker')).toEqual([`${SHARED}\n\n## ORIGINAL USER REQUEST\n${REQUEST}\n\n## EARLIER ANSWERS\n\n### From builder\nbuilder: search box built`]);
  });

  it('gives workers their model and adapter; `adapters` resolves names eagerly, else the run does', async () => {
    const { clock, adapter } = setup([]);
    const fast = scriptedAdapter({ id: 'fast', clock, fallback: 'fast answer' });
    const team = preset({ mode: 'sequential', workers: [
      { name: 'builder', systemPrompt: 'Build.', model: 'big-model' },
      { name: 'checker', systemPrompt: 'Check.', adapter: 'fast' },
    ] });
    const result = await run(fromPreset(team, { adapters: { fast }, model: 'small-model' }), REQUEST, { adapter, clock });
    expect(result.output).toBe('fast answer');
    expect(adapter.sessions.map((s) => [s.agent, s.model])).toEqual([['builder', 'big-model']]);
    expect(fast.sessions.map((s) => [s.agent, s.model])).toEqual([['checker', 'small-model']]);
    // Without `adapters`, the name is resolved by run(..., { adapters }).
    const later = scriptedAdapter({ id: 'fast', clock, fallback: 'later answer' });
    expect((await run(fromPreset(team), REQUEST, { adapter, adapters: { fast: later }, clock })).output).toBe('later answer');
    let error: unknown;
    try {
      fromPreset(team, { adapters: { slow: fast } });
    } catch (e) {
      error = e;
    }
    expect(isTroupeError(error, 'unknown_adapter')).toBe(true);
    expect((error as Error).message).toBe('Worker "checker" of preset "Web Crew" names adapter "fast", which is not in `adapters` (slow)');
  });

  it('gives a worker without a prompt a generic one, and rejects bad presets and options', async () => {
    const { clock, adapter } = setup([]);
    await run(fromPreset(preset({ mode: 'sequential', workers: [{ name: 'builder', role: 'Builder', systemPrompt: ' ' }] })), REQUEST, { adapter, clock });
    expect(adapter.sessions[0]?.system).toBe('You are builder, the Builder of the Web Crew team. Do the part of the task that falls to you, and say clearly what you did and what is left.');
    expect(() => fromPreset(preset({ workers: [] }))).toThrow(/Invalid team preset: workers/);
    expect(() => fromPreset(null as unknown as TeamPresetInput)).toThrow('Expected a team preset, got null');
    expect(() => fromPreset(preset({ workers: [{ name: 'orchestrator', systemPrompt: 'x' }] }))).toThrow(/worker named "orchestrator"/);
    expect(() => fromPreset(preset({ workers: [{ name: 'a', systemPrompt: 'x' }, { name: 'a', systemPrompt: 'y' }] }))).toThrow('Worker "a" is listed twice');
    expect(fromPreset(preset({ workers: [{ name: 'orchestrator', systemPrompt: 'x' }] }), { leadName: 'lead' }).preset.workers).toHaveLength(1);
    expect(() => fromPreset(preset(), { adapters: 'fast' as never })).toThrow('Expected `adapters` to be an object of adapters by name, got "fast" (string)');
    expect(() => fromPreset(preset(), { model: '' })).toThrow('Expected `model` to be a non-empty string');
  });

  it('runs the team of a squad fixture with its routing and decision log', async () => {
    const squad = await discoverSquad(join(import.meta.dirname, '..', 'fixtures', 'squad', 'Azure-Samples__eShopLite'));
    expect(squad).not.toBeNull();
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'orchestrator', match: /## WORKER RESULTS/, reply: 'Plan agreed.\n[[GROUP_REFLECT_COMPLETE]]' },
        { agent: 'orchestrator', reply: '@worker:Ripley\nScope the search feature.\n@end\n@worker:Hicks\nDesign the search UI.\n@end' },
      ],
      fallback: (r) => `${r.agent}: done`,
    });
    const result = await run(fromPreset(squad!), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', output: 'Plan agreed.' });
    const plan = adapter.inputsOf('orchestrator')[0]!;
    expect(plan).toContain('- Ripley: Lead\n- Hicks: Frontend Dev\n- Bishop: Backend Dev');
    expect(plan).toContain(`## ROUTING CONTEXT\n${squad!.routingContext}`);
    const ripley = adapter.inputsOf('Ripley')[0]!;
    // The worker's charter, then what it remembers (its history.md), then the decision log.
    const history = `## Your history (history.md, newest first)\n\n${squad!.workers[0]!.history}`;
    expect(ripley.startsWith(`${squad!.workers[0]!.systemPrompt}\n\n${history}\n\n${squad!.sharedContext}\n\n## ORIGINAL USER REQUEST`)).toBe(true);
    expect(adapter.inputsOf('Bishop')).toEqual([]);
  });
});

describe('saving a team as a preset', () => {
  it('saves the preset of a fromPreset team, and reads orchestrate options as a preset', async () => {
    const store = memoryStore();
    const root = tempRoot();
    const team = fromPreset(builtInPresets().find((p) => p.name === 'implement-and-challenge')!);
    const saved = await saveTeamAsPreset(team, { store, repoRoot: root });
    expect(saved.preset).toMatchObject({ name: 'implement-and-challenge', source: 'user', maxIterations: 3, goalScore: 8 });
    expect((await discoverSquad(root))?.workers.map((w) => w.name)).toEqual(['implementer', 'challenger']);

    const options = {
      name: 'pair',
      mode: 'orchestrator' as const,
      lead: agent({ name: 'lead', system: 'Lead the pair.' }),
      workers: [agent({ name: 'coder', system: 'Write code.', description: 'Coder', model: 'm1', adapter: 'fast' }), agent({ name: 'tester' })],
      sharedContext: 'Use TypeScript.',
      goalScore: 0.7,
    };
    expect(presetFromTeam(options)).toEqual({
      name: 'pair', mode: 'orchestrator', orchestratorPrompt: 'Lead the pair.', sharedContext: 'Use TypeScript.', goalScore: 7,
      workers: [{ name: 'coder', systemPrompt: 'Write code.', role: 'Coder', model: 'm1', adapter: 'fast' }, { name: 'tester', systemPrompt: '' }],
    });
    await saveTeamAsPreset(options, { store });
    expect((await loadUserPresets(store)).map((p) => p.name).sort()).toEqual(['implement-and-challenge', 'pair']);
    expect(() => presetFromTeam({ name: 'x' } as never)).toThrow(/Expected a team built by fromPreset/);
  });
});

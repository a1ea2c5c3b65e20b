import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { advisors } from '../../src/patterns/advisors.js';
import { agent } from '../../src/patterns/agent.js';
import { reflect } from '../../src/patterns/reflect.js';
import { readRun } from '../../src/persistence/run-log.js';
import { formatWhatIf } from '../../src/travel/format.js';
import { replayRun, whatIf } from '../../src/travel/what-if.js';

/** A review panel: two reviewers in parallel, a lead who writes the verdict from both. */
const panel = () =>
  advisors(agent({ name: 'lead', system: 'Write the verdict.' }), [
    agent({ name: 'security', system: 'Review for security.' }),
    agent({ name: 'style', system: 'Review for style.' }),
  ]);

const recordedAdapter = () =>
  scriptedAdapter({
    rules: [
      { agent: 'security', reply: { text: 'No injection risk.', usage: { inputTokens: 10, outputTokens: 4, costUsd: 0.001 } } },
      { agent: 'style', reply: { text: 'Names are fine.', usage: { inputTokens: 10, outputTokens: 4, costUsd: 0.001 } } },
      { agent: 'lead', reply: (r) => ({ text: `Approve. (${r.text.includes('Rename') ? 'after renames' : 'as is'})`, usage: { inputTokens: 30, outputTokens: 5, costUsd: 0.003 } }) },
    ],
  });

async function recordPanel() {
  const store = memoryStore();
  const clock = new SimulatedClock();
  await run(panel(), 'Review PR 7', { adapter: recordedAdapter(), store, runId: 'review-1', clock });
  return { store, clock, log: await readRun('review-1', { store }) };
}

describe('what-if replay', () => {
  it('calls the model only for the changed agent and the agent that depends on it', async () => {
    const { log, clock } = await recordPanel();
    const live = scriptedAdapter({
      rules: [
        { agent: 'style', reply: { text: 'Rename `x` to `count`.', usage: { inputTokens: 12, outputTokens: 6, costUsd: 0.002 } } },
        { agent: 'lead', reply: (r) => ({ text: `Approve. (${r.text.includes('Rename') ? 'after renames' : 'as is'})`, usage: { inputTokens: 32, outputTokens: 5, costUsd: 0.003 } }) },
      ],
    });
    const report = await whatIf(panel(), log, { adapter: live, clock, changes: [{ agent: 'style', prompt: 'Review naming strictly.' }] });
    // The model saw two calls: the changed reviewer and the lead, whose input holds its answer; the other reviewer came from the recording.
    expect(live.calls.map((c) => c.agent).sort()).toEqual(['lead', 'style']);
    expect(live.sessions.find((s) => s.agent === 'style')?.system).toBe('Review naming strictly.');
    expect(report.counts).toEqual({ recorded: 1, live: 2, context: 0 });
    expect(report.calls.filter((c) => c.source === 'recorded').map((c) => c.agent)).toEqual(['security']);
    expect(report.liveAgents).toEqual(['lead', 'style']);
    expect(report.changedAgents).toEqual(['lead', 'style']);
    expect(report.changes).toEqual(['prompt of style']);
    expect(report.recorded.output).toBe('Approve. (as is)');
    expect(report.whatIf.output).toBe('Approve. (after renames)');
    expect(report.outputChanged).toBe(true);
    // What the changed run would cost, and what this replay spent on the model.
    expect(report.recorded.usage).toMatchObject({ inputTokens: 50, outputTokens: 13, turns: 3 });
    expect(report.whatIf.usage).toMatchObject({ inputTokens: 54, outputTokens: 15, turns: 3 });
    expect(report.liveUsage).toMatchObject({ inputTokens: 44, outputTokens: 11, turns: 2 });
    expect(report.liveUsage.costUsd).toBeCloseTo(0.005);
    expect(report.regressed).toBe(false);
    const text = formatWhatIf(report, { width: 100 });
    expect(text).toContain('what-if of run review-1');
    expect(text).toMatch(/model calls\s+3\s+\| 3: 1 recorded, 2 new, 0 to restore context/);
    expect(text).toContain('new calls for: lead, style');
    expect(text).toMatch(/Approve\. \(as is\)\s+\| Approve\. \(after renames\)/);
  });

  it('with nothing changed, answers every call from the recording: the same output and no model call', async () => {
    const { log, clock } = await recordPanel();
    const live = scriptedAdapter();
    const report = await whatIf(panel(), log, { adapter: live, clock });
    expect(live.calls).toHaveLength(0);
    expect(report.counts).toEqual({ recorded: 3, live: 0, context: 0 });
    expect(report.outputChanged).toBe(false);
    expect(report.whatIf.usage).toEqual(report.recorded.usage);
    const again = await replayRun(panel(), log, { clock });
    expect(again.output).toBe('Approve. (as is)');
    expect(again.served).toBe(3);
  });

  it('replayRun of a runnable that asks something else fails with a ReplayDivergenceError', async () => {
    const { log, clock } = await recordPanel();
    const changed = advisors(agent({ name: 'lead', system: 'Write the verdict.' }), [agent({ name: 'security', system: 'Review for threats.' }), agent({ name: 'style', system: 'Review for style.' })]);
    // The reviewer whose prompt changed is named: its divergence ends the run, not a note the lead then diverges on.
    const error = await replayRun(changed, log, { clock }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'replay_divergence', details: { agent: 'security' } });
    expect((error as Error).message).toMatch(/agent "security"/);
    // The same change as a what-if without a model: reported, not thrown, and it names the same agent.
    const report = await whatIf(changed, log, { clock });
    expect(report.whatIf.status).toBe('failed');
    expect(report.whatIf.error).toMatch(/^replay_divergence: Replay diverged: agent "security", session 1, turn 1 is not in the recording/);
    expect(report.regressed).toBe(true);
  });

  it('changes a model: every session of that agent goes to the model', async () => {
    const { log, clock } = await recordPanel();
    const live = scriptedAdapter({ rules: [{ agent: 'security', reply: 'No injection risk.' }] });
    const report = await whatIf(panel(), log, { adapter: live, clock, changes: [{ agent: 'security', model: 'bigger-model' }] });
    expect(live.sessions.map((s) => [s.agent, s.model])).toEqual([['security', 'bigger-model']]);
    // Its answer is the same as recorded, so the lead's input is too: answered from the recording.
    expect(report.counts).toEqual({ recorded: 2, live: 1, context: 0 });
    expect(report.changedAgents).toEqual([]);
  });

  it("changes a tool's result: the session goes live at the turn that carries it, after its earlier inputs", async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look up a package', parameters: z.object({ name: z.string() }), execute: () => 'MIT' });
    const checker = () => agent({ name: 'checker', system: 'Check licences.', tools: [lookup] });
    const recorded = scriptedAdapter({
      replies: { checker: [{ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { name: 'left-pad' } }] }] },
      rules: [{ agent: 'checker', reply: (r) => `Licence: ${r.text.includes('GPL') ? 'GPL, not allowed' : 'MIT, allowed'}` }],
    });
    const store = memoryStore();
    const clock = new SimulatedClock();
    await run(checker(), 'Is left-pad allowed?', { adapter: recorded, store, runId: 'licence-1', clock });
    const live = scriptedAdapter({
      replies: { checker: [{ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { name: 'left-pad' } }] }] },
      rules: [{ agent: 'checker', reply: (r) => `Licence: ${r.text.includes('GPL') ? 'GPL, not allowed' : 'MIT, allowed'}` }],
    });
    const report = await whatIf(checker(), await readRun('licence-1', { store }), { adapter: live, clock, changes: [{ tool: 'lookup', result: 'GPL-3.0' }] });
    expect(report.whatIf.output).toBe('Licence: GPL, not allowed');
    expect(report.counts).toEqual({ recorded: 1, live: 1, context: 1 });
    expect(report.changes).toEqual(['result of tool lookup']);
    // The live session was given the first input again, then the changed tool result.
    expect(live.calls.map((c) => c.text)).toEqual(['Is left-pad allowed?', '[tool result lookup#c1] GPL-3.0']);
  });

  it('reports a score that drops as a regression, and logs the what-if run with its parent', async () => {
    const loop = () => reflect(agent({ name: 'writer', system: 'Write a haiku.' }), { goal: 'A haiku about rain', evaluator: agent({ name: 'critic' }), maxIterations: 2 });
    const store = memoryStore();
    const clock = new SimulatedClock();
    await run(loop(), 'Rain', { adapter: scriptedAdapter({ replies: { writer: ['Soft rain on the roof'], critic: ['PASS'] } }), store, runId: 'haiku-1', clock });
    const live = scriptedAdapter({ replies: { writer: ['Rain.', 'Rain again.'], critic: ['FAIL: not a haiku', 'FAIL: still not'] } });
    const report = await whatIf(loop(), await readRun('haiku-1', { store }), { adapter: live, clock, store, runId: 'haiku-1-terse', changes: [{ agent: 'writer', prompt: 'Answer in one word.' }] });
    expect(report.scores).toEqual([{ scorer: 'reflect:writer', recorded: 1, whatIf: 0, delta: -1, dropped: true }]);
    expect(report.regressed).toBe(true);
    expect(formatWhatIf(report)).toContain('DROPPED');
    const logged = await readRun('haiku-1-terse', { store });
    expect(logged.events[0]).toMatchObject({ type: 'run.forked', mode: 'what-if', parent: { runId: 'haiku-1' }, changes: ['prompt of writer'] });
    expect(logged.meta?.parent).toEqual({ runId: 'haiku-1' });
    // Scorers of your own are compared too.
    const scored = await whatIf(loop(), await readRun('haiku-1', { store }), { clock, scorers: { length: ({ output }) => output.length } });
    expect(scored.scores).toContainEqual({ scorer: 'length', recorded: 21, whatIf: 21, delta: 0, dropped: false });
  });
});

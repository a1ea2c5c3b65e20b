import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { scriptedAdapter, type ScriptedAdapterOptions } from '../../src/adapters/scripted.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate, type OrchestrateOptions } from '../../src/patterns/orchestrate.js';
import { orchestrateStateSchema, type OrchestrateState } from '../../src/patterns/orchestrate-state.js';
import { resume } from '../../src/core/resume.js';
import { LoopControl } from '../../src/core/control.js';
import { checkpointRecorder } from '../helpers/checkpoints.js';
import { Gauge, gaugedAdapter } from '../helpers/concurrency.js';

const REQUEST = 'Add a login form with validation';
const PLAN = '@worker:coder\nWrite the form.\n@end\n@worker:tester\nWrite the tests.\n@end';

function team(extra: Partial<OrchestrateOptions> = {}) {
  return orchestrate({
    lead: agent({ name: 'lead', system: 'You lead the team.' }),
    workers: [agent({ name: 'coder', system: 'You write TypeScript.' }), agent({ name: 'tester', description: 'Writes tests' })],
    ...extra,
  });
}

function setup(options: ScriptedAdapterOptions) {
  const clock = new SimulatedClock();
  const adapter = scriptedAdapter({
    clock,
    ...options,
    rules: [...(options.rules ?? []), { agent: 'coder', reply: 'coder: form done' }, { agent: 'tester', reply: 'tester: tests done' }],
  });
  const events: TroupeEvent[] = [];
  return { clock, adapter, events, onEvent: (e: TroupeEvent) => events.push(e) };
}

const types = (events: TroupeEvent[], prefix = 'reflect.') => events.filter((e) => e.type.startsWith(prefix)).map((e) => e.type);

/** Advance the simulated clock until `promise` settles. */
async function drive<T>(clock: SimulatedClock, promise: Promise<T>, stepMs = 500): Promise<T> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 1000 && !settled; i++) await clock.advance(stepMs);
  return promise;
}

/** A lead that plans, then synthesises with the given texts, one per iteration. */
function lead(syntheses: string[], plan = PLAN) {
  let n = 0;
  return (r: { text: string }) => (r.text.includes('## WORKER RESULTS') ? syntheses[Math.min(n++, syntheses.length - 1)]! : plan);
}

describe('orchestrate (orchestrator-reflect)', () => {
  it('meets its goal in iteration 2 with an evaluator, keeping one orchestrator session', async () => {
    const { adapter, clock, events, onEvent } = setup({
      rules: [{ agent: 'lead', reply: lead(['Draft one of the form.', 'Final form with validation and tests.']) }],
      replies: { judge: ['SCORE: 0.5\nRATIONALE: The tests are missing.', 'SCORE: 0.95\nRATIONALE: Complete.'] },
    });
    const loop = team({ evaluator: agent({ name: 'judge' }) });
    const result = await run(loop, REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', goalMet: true, iterations: 2, agent: 'lead' });
    expect(result.output).toBe('Final form with validation and tests.');
    expect(result.summary).toBe('✅ Goal met (2/5) in 0 ms');
    expect(result.evaluations.map((e) => [e.score, e.trend, e.evaluator])).toEqual([[0.5, 'stable', 'judge'], [0.95, 'improving', 'judge']]);
    expect(adapter.sessions.filter((s) => s.agent === 'lead')).toHaveLength(1);
    const leadInputs = adapter.inputsOf('lead');
    expect(leadInputs[0]).toContain('- coder: You write TypeScript.');
    expect(leadInputs[0]).toContain('- tester: Writes tests');
    expect(leadInputs[2]).toContain('## LAST EVALUATION');
    expect(leadInputs[2]).toContain('The tests are missing.');
    expect(adapter.inputsOf('judge')[1]).toContain('Final form with validation and tests.');
    expect(types(events)).toEqual([
      'reflect.iteration.started', 'reflect.dispatched', 'reflect.worker.completed', 'reflect.worker.completed', 'reflect.evaluated',
      'reflect.iteration.started', 'reflect.dispatched', 'reflect.worker.completed', 'reflect.worker.completed', 'reflect.evaluated',
      'reflect.completed',
    ]);
    expect(result.usage.turns).toBe(adapter.calls.length);
  });

  it('gives the worker its system prompt, the shared context, the original request and its task', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['Done.\n[[GROUP_REFLECT_COMPLETE]]']) }] });
    await run(team({ sharedContext: 'Repository: acme/web' }), REQUEST, { adapter, clock });
    expect(adapter.inputsOf('coder')[0]).toBe(
      `You write TypeScript.\n\nRepository: acme/web\n\n## ORIGINAL USER REQUEST\n${REQUEST}\n\n## YOUR ASSIGNED TASK\nWrite the form.`,
    );
    expect(adapter.inputsOf('tester')[0]).toMatch(/^You are a worker in a team\./);
  });

  it('shows the routing context in the first plan only; later plans carry the last evaluation instead', async () => {
    const { adapter, clock } = setup({
      rules: [{ agent: 'lead', reply: lead(['Draft.', 'Final.']) }],
      replies: { judge: ['SCORE: 0.3\nRATIONALE: Validation is missing.', 'SCORE: 1\nRATIONALE: Complete.'] },
    });
    await run(team({ evaluator: agent({ name: 'judge' }), routingContext: 'Send UI work to coder.' }), REQUEST, { adapter, clock });
    const [first, , second] = adapter.inputsOf('lead');
    expect(first).toContain('## AVAILABLE WORKERS');
    expect(first).toContain('## ROUTING CONTEXT\nSend UI work to coder.');
    expect(second).toContain('## ITERATION 2/5');
    expect(second).toContain('## LAST EVALUATION\nScore: 0.30');
    expect(second).toContain('Validation is missing.');
    expect(second).not.toContain('## ROUTING CONTEXT');
  });

  it('ends at max iterations, judging itself with [[NEEDS_ITERATION]] (score 0.4)', async () => {
    let n = 0;
    const { adapter, clock } = setup({
      rules: [{ agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Attempt ${++n} with change-${n} and idea-${n}\n[[NEEDS_ITERATION]]` : PLAN) }],
    });
    const result = await run(team({ maxIterations: 3 }), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'max-iterations', goalMet: false, iterations: 3 });
    expect(result.summary).toBe('⏱️ Max iterations (3/3) in 0 ms');
    expect(result.evaluations.map((e) => e.score)).toEqual([0.4, 0.4, 0.4]);
    expect(result.output).toBe('Attempt 3 with change-3 and idea-3');
  });

  it('stalls after two repeated syntheses', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: lead(['The same synthesis again.\n[[NEEDS_ITERATION]]']) }] });
    const result = await run(team(), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'stalled', iterations: 3, goalMet: false });
    expect(result.summary).toMatch(/^⚠️ Stalled/);
    expect(events.filter((e) => e.type === 'reflect.stall.warning').map((e) => (e as TroupeEvent<'reflect.stall.warning'>).iteration)).toEqual([2]);
    expect(events.filter((e) => e.type === 'reflect.stalled').map((e) => (e as TroupeEvent<'reflect.stalled'>).iteration)).toEqual([3]);
  });

  it('ends on the error budget after 3 consecutive errors, backing off on the clock', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: { fault: 'throw', error: 'model unavailable' } }] });
    const result = await drive(clock, run(team(), REQUEST, { adapter, clock, onEvent }));
    expect(result).toMatchObject({ status: 'failed', reason: 'error-budget', iterations: 0, error: 'model unavailable' });
    expect(result.summary).toMatch(/^❌ Error budget exhausted \(0\/5\)/);
    expect(adapter.inputsOf('lead')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'reflect.iteration.failed').map((e) => (e as TroupeEvent<'reflect.iteration.failed'>).consecutive)).toEqual([1, 2, 3]);
    const started = events.filter((e) => e.type === 'reflect.iteration.started');
    expect(started.map((e) => (e as TroupeEvent<'reflect.iteration.started'>).iteration)).toEqual([1, 1, 1]);
    expect(started.map((e) => e.time)).toEqual([0, 2000, 4000]);
  });

  it('resets the error count after a successful iteration', async () => {
    const fail = { fault: 'throw' as const, error: 'flaky' };
    const { adapter, clock } = setup({
      replies: { lead: [fail, fail, PLAN, 'First try.\n[[NEEDS_ITERATION]]', fail, fail, PLAN, 'Done.\n[[GROUP_REFLECT_COMPLETE]]'] },
    });
    const result = await drive(clock, run(team({ retry: { delayMs: 100 } }), REQUEST, { adapter, clock }));
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
  });

  it('is cancelled during dispatch, with no model call after the abort', async () => {
    const { adapter, clock } = setup({
      rules: [{ agent: 'lead', reply: lead(['never']) }, { agent: 'coder', reply: { text: 'slow', delayMs: 5000 } }],
    });
    const controller = new AbortController();
    const p = run(team(), REQUEST, { adapter, clock, signal: controller.signal });
    await clock.advance(1000);
    expect(adapter.inputsOf('coder')).toHaveLength(1);
    const calls = adapter.calls.length;
    controller.abort();
    const result = await drive(clock, p);
    expect(result).toMatchObject({ status: 'cancelled', goalMet: false, iterations: 0 });
    expect(result.summary).toMatch(/^⏹️ Cancelled/);
    await clock.runAll();
    expect(adapter.calls.length).toBe(calls);
  });

  it("is cancelled through its run's control", async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['never']) }, { agent: 'coder', reply: { text: 'slow', delayMs: 5000 } }] });
    const loop = team();
    const control = new LoopControl();
    const p = run(loop, REQUEST, { adapter, clock, control });
    await clock.advance(1000);
    control.cancel();
    const result = await drive(clock, p);
    expect(result).toMatchObject({ status: 'cancelled' });
    expect(adapter.inputsOf('lead')).toHaveLength(1);
  });

  it('pauses after the current step and resumes at the same iteration with the stall history reset', async () => {
    const { adapter, clock } = setup({
      rules: [{ agent: 'lead', reply: lead(['Same answer.\n[[NEEDS_ITERATION]]']) }],
      fallback: 'SCORE: 0.5\nRATIONALE: meh',
    });
    const loop = team({ evaluator: agent({ name: 'judge' }), maxIterations: 2, stall: { tolerance: 1 } });
    const control = new LoopControl();
    const first = startRun(loop, REQUEST, { adapter, clock, control });
    first.emitter.on('reflect.evaluated', () => control.pause());
    const paused = await first.result;
    expect(paused).toMatchObject({ status: 'paused', iterations: 1 });
    expect(paused.summary).toMatch(/^⏸️ Paused \(1\/2\)/);
    expect(paused.state.iteration).toBe(1);

    const calls = adapter.calls.length;
    const still = await run(loop, REQUEST, { adapter, clock, control });
    expect(still.status).toBe('paused');
    expect(adapter.calls.length).toBe(calls);

    control.unpause();
    const events: TroupeEvent[] = [];
    const resumed = await run(loop, REQUEST, { adapter, clock, control, onEvent: (e) => events.push(e) });
    const started = events.filter((e) => e.type === 'reflect.iteration.started') as Array<TroupeEvent<'reflect.iteration.started'>>;
    expect(started.map((e) => e.iteration)).toEqual([2]);
    // The synthesis repeats iteration 1's; with tolerance 1 it would stall had the history not been reset.
    expect(resumed).toMatchObject({ status: 'completed', reason: 'max-iterations', iterations: 2 });
    expect(resumed.evaluations).toHaveLength(2);
  });

  it('pausing mid-iteration resumes that iteration from its start', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['Done.\n[[GROUP_REFLECT_COMPLETE]]']) }] });
    const loop = team();
    const control = new LoopControl();
    const first = startRun(loop, REQUEST, { adapter, clock, control });
    first.emitter.on('reflect.dispatched', () => control.pause());
    expect(await first.result).toMatchObject({ status: 'paused', iterations: 0 });
    expect(adapter.inputsOf('lead')).toHaveLength(1);
    control.unpause();
    const result = await run(loop, REQUEST, { adapter, clock, control });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1 });
    expect(adapter.inputsOf('lead')[1]).toContain('## AVAILABLE WORKERS');
  });

  it('dispatches with the delegate_to_worker tool, several calls in parallel', async () => {
    const { adapter, clock } = setup({
      replies: {
        lead: [
          { toolCalls: [{ name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'Write the form.' } }, { name: 'delegate_to_worker', arguments: { worker: 'tester', task: 'Write the tests.' } }] },
          (r) => `Combined: ${r.text.includes('coder: form done') && r.text.includes('tester: tests done') ? 'both' : 'missing'}\n[[GROUP_REFLECT_COMPLETE]]`,
        ],
      },
      rules: [{ agent: 'coder', reply: { text: 'coder: form done', delayMs: 1000 } }, { agent: 'tester', reply: { text: 'tester: tests done', delayMs: 1000 } }],
    });
    const result = await drive(clock, run(team({ dispatch: 'tool' }), REQUEST, { adapter, clock }), 1000);
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1, output: 'Combined: both' });
    expect(clock.now()).toBe(1000); // in parallel: one latency, not two
    const tools = adapter.sessions.find((s) => s.agent === 'lead')?.tools ?? [];
    expect(tools.map((t) => t.name)).toEqual(['delegate_to_worker']);
    expect(JSON.stringify(tools[0]?.parameters)).toContain('"enum":["coder","tester"]');
    expect(adapter.inputsOf('coder')[0]).toContain(`## ORIGINAL USER REQUEST\n${REQUEST}`);
    expect(result.results.map((r) => r.worker).sort()).toEqual(['coder', 'tester']);
  });

  it('falls back to text dispatch when the adapter has no tools', async () => {
    const { adapter, clock } = setup({ capabilities: { tools: false }, rules: [{ agent: 'lead', reply: lead(['Ok.\n[[GROUP_REFLECT_COMPLETE]]']) }] });
    const result = await run(team({ dispatch: 'tool' }), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met' });
    expect(adapter.inputsOf('lead')[0]).toContain('@worker:coder');
  });

  it('nudges an orchestrator that assigned nothing in iteration 1, without advancing the iteration', async () => {
    const { adapter, clock, events, onEvent } = setup({
      replies: { lead: ["I'll handle this myself.", 'Still myself.', PLAN, 'Done.\n[[GROUP_REFLECT_COMPLETE]]'] },
    });
    const result = await run(team(), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1 });
    const inputs = adapter.inputsOf('lead');
    expect(inputs[1]).toContain('You did not assign any task');
    expect(inputs[1]).toContain('- coder: You write TypeScript.');
    expect(inputs[1]).toContain('@worker:coder\n<the task>\n@end');
    expect(events.filter((e) => e.type === 'reflect.iteration.started')).toHaveLength(1);
  });

  it('nudges in tool dispatch too', async () => {
    const { adapter, clock } = setup({
      replies: {
        lead: [
          'I will just answer.',
          { toolCalls: [{ name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'Write the form.' } }] },
          'Form written.\n[[GROUP_REFLECT_COMPLETE]]',
        ],
      },
    });
    const result = await run(team({ dispatch: 'tool' }), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1, output: 'Form written.' });
    expect(adapter.inputsOf('lead')[1]).toContain('Call the delegate_to_worker tool for each task.');
  });

  it('fails with a clear error after 3 nudges', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: 'No.' }] });
    await expect(run(team(), REQUEST, { adapter, clock })).rejects.toMatchObject({
      code: 'no_assignments',
      message: 'Lead "lead" assigned no task to a worker after 3 nudges (workers: coder, tester)',
    });
    expect(adapter.inputsOf('lead')).toHaveLength(4);
  });

  it('meets its goal with the direct answer when a later iteration assigns nothing', async () => {
    const { adapter, clock } = setup({ replies: { lead: [PLAN, 'Draft.\n[[NEEDS_ITERATION]]', 'Here is the answer myself.'] } });
    const result = await run(team(), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2, output: 'Here is the answer myself.', goalMet: true });
    expect(result.summary).toBe('✅ Goal met (2/5) in 0 ms');
  });

  it('turns a timed-out worker into a failed result, not a crash', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'coder', reply: { fault: 'hang' } }, { agent: 'lead', reply: lead(['Partial.\n[[GROUP_REFLECT_COMPLETE]]']) }] });
    const result = await drive(clock, run(team({ workerTimeoutMs: 1000 }), REQUEST, { adapter, clock }));
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met' });
    const coder = result.results.find((r) => r.worker === 'coder');
    expect(coder).toMatchObject({ success: false, error: 'Worker "coder" timed out after 1000 ms' });
    expect(adapter.inputsOf('lead')[1]).toContain('### From coder (failed)');
  });

  it('emits reflect.quality.degrading when the score drops', async () => {
    let n = 0;
    const { adapter, clock, events, onEvent } = setup({
      rules: [{ agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Version ${++n} text-${n}` : PLAN) }],
      replies: { judge: ['SCORE: 0.8', 'SCORE: 0.3', 'SCORE: 0.95'] },
    });
    await run(team({ evaluator: agent({ name: 'judge' }) }), REQUEST, { adapter, clock, onEvent });
    const degrading = events.filter((e) => e.type === 'reflect.quality.degrading') as Array<TroupeEvent<'reflect.quality.degrading'>>;
    expect(degrading).toHaveLength(1);
    expect(degrading[0]).toMatchObject({ iteration: 2, score: 0.3, previous: 0.8 });
  });

  it('checkpoints a serialisable state after every iteration in the run store and resumes from it', async () => {
    const saves = checkpointRecorder<OrchestrateState>('orchestrate', 2);
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['Same.\n[[NEEDS_ITERATION]]']) }] });
    const first = await run(team({ maxIterations: 5 }), REQUEST, { adapter, clock, store: saves.store, runId: 'o', signal: saves.signal, onEvent: saves.onEvent });
    expect(first.status).toBe('cancelled');
    expect(saves.states.map((s) => s.iteration)).toEqual([1, 2]);
    for (const s of saves.states) {
      expect(s.schemaVersion).toBe(1);
      expect(orchestrateStateSchema.parse(s)).toEqual(s);
    }
    expect(saves.states[1]!.stall.consecutive).toBe(1);

    // Resume at iteration 3: the evaluation history and the stall state carry over.
    const events: TroupeEvent[] = [];
    const resumed = await resume(team({ maxIterations: 5 }), 'o', { adapter, clock, store: saves.store, onEvent: (e) => events.push(e) });
    expect((events.find((e) => e.type === 'reflect.iteration.started') as TroupeEvent<'reflect.iteration.started'>).iteration).toBe(3);
    expect(resumed).toMatchObject({ status: 'completed', reason: 'stalled', iterations: 3 });
    expect(resumed.evaluations.map((e) => e.iteration)).toEqual([1, 2, 3]);
    expect(adapter.inputsOf('coder').at(-1)).toContain(REQUEST);
  });

  it('rejects bad options with clear messages', () => {
    expect(() => team({ maxIterations: 0 })).toThrow('Expected `maxIterations` to be a positive integer, got 0 (number)');
    expect(() => team({ goalScore: 2 })).toThrow(/goalScore/);
    expect(() => orchestrate({ workers: [] })).toThrow(/workers/);
    expect(() => team({ evaluator: 'judge' as never })).toThrow('Expected `evaluator` to be an agent, got "judge" (string)');
    expect(() => orchestrate({ workers: [agent({ name: 'a' })] })).toThrow(/needs a `lead`/);
  });
});

describe('orchestrate (maxParallel)', () => {
  const workers = () => ['coder', 'tester', 'writer'].map((name) => agent({ name }));
  const isWorker = (name: string) => ['coder', 'tester', 'writer'].includes(name);
  const slow = (name: string) => ({ agent: name, reply: { text: `${name}: done`, delayMs: 1000 } });
  const THREE = '@worker:coder\nA.\n@end\n@worker:tester\nB.\n@end\n@worker:writer\nC.\n@end';

  it('bounds the workers of a text dispatch', async () => {
    const clock = new SimulatedClock();
    const gauge = new Gauge();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'lead', reply: lead(['Done.'], THREE) }, slow('coder'), slow('tester'), slow('writer')] });
    const loop = orchestrate({ mode: 'orchestrator', lead: agent({ name: 'lead' }), workers: workers(), maxParallel: 2 });
    const result = await drive(clock, run(loop, REQUEST, { adapter: gaugedAdapter(adapter, gauge, isWorker), clock }), 1000);
    expect(result.results.map((r) => r.output).sort()).toEqual(['coder: done', 'tester: done', 'writer: done']);
    expect(gauge.peak).toBe(2);
    expect(clock.now()).toBe(2000);
  });

  it('bounds the delegate_to_worker calls of a tool dispatch', async () => {
    const clock = new SimulatedClock();
    const gauge = new Gauge();
    const call = (worker: string) => ({ name: 'delegate_to_worker', arguments: { worker, task: 'Do it.' } });
    const adapter = scriptedAdapter({
      clock,
      replies: { lead: [{ toolCalls: [call('coder'), call('tester'), call('writer')] }, 'All done.\n[[GROUP_REFLECT_COMPLETE]]'] },
      rules: [slow('coder'), slow('tester'), slow('writer')],
    });
    const loop = orchestrate({ mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead' }), workers: workers(), maxParallel: 1 });
    const result = await drive(clock, run(loop, REQUEST, { adapter: gaugedAdapter(adapter, gauge, isWorker), clock }), 1000);
    expect(result.output).toBe('All done.');
    expect(gauge.peak).toBe(1);
    expect(clock.now()).toBe(3000);
  });

  it('bounds the workers of the broadcast mode', async () => {
    const clock = new SimulatedClock();
    const gauge = new Gauge();
    const adapter = scriptedAdapter({ clock, rules: [slow('coder'), slow('tester'), slow('writer')] });
    const loop = orchestrate({ mode: 'broadcast', workers: workers(), maxParallel: 2 });
    const result = await drive(clock, run(loop, REQUEST, { adapter: gaugedAdapter(adapter, gauge, isWorker), clock }), 1000);
    expect(result.results).toHaveLength(3);
    expect(gauge.peak).toBe(2);
    expect(clock.now()).toBe(2000);
  });

  it('refuses a maxParallel that is not a positive integer', () => {
    expect(() => orchestrate({ mode: 'broadcast', workers: workers(), maxParallel: 0 })).toThrow('Expected `maxParallel` to be a positive integer, got 0 (number)');
  });
});

describe('orchestrate (one-pass modes)', () => {
  it('broadcast sends the same prompt to every worker in parallel', async () => {
    const { adapter, clock } = setup({});
    const loop = orchestrate({ mode: 'broadcast', workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], sharedContext: 'Context.' });
    const result = await run(loop, REQUEST, { adapter, clock });
    expect(adapter.inputsOf('coder')).toEqual([`Context.\n\n${REQUEST}`]);
    expect(adapter.inputsOf('tester')).toEqual([`Context.\n\n${REQUEST}`]);
    expect(result).toMatchObject({ status: 'completed', goalMet: true, iterations: 1 });
    expect(result.output).toBe('### From coder\ncoder: form done\n\n### From tester\ntester: tests done');
  });

  it('broadcast with an orchestrator synthesises the answers', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: 'Synthesis.' }] });
    const result = await run(team({ mode: 'broadcast' }), REQUEST, { adapter, clock });
    expect(result.output).toBe('Synthesis.');
    expect(adapter.inputsOf('lead')[0]).toContain('### From tester\ntester: tests done');
  });

  it('sequential runs one worker at a time, each seeing the earlier responses', async () => {
    const { adapter, clock } = setup({});
    const loop = orchestrate({ mode: 'sequential', workers: [agent({ name: 'coder' }), agent({ name: 'tester' })] });
    const result = await run(loop, REQUEST, { adapter, clock });
    expect(adapter.inputsOf('coder')).toEqual([REQUEST]);
    expect(adapter.inputsOf('tester')[0]).toBe(`## ORIGINAL USER REQUEST\n${REQUEST}\n\n## EARLIER ANSWERS\n\n### From coder\ncoder: form done`);
    expect(result).toMatchObject({ output: 'tester: tests done', agent: 'tester', status: 'completed' });
  });

  it('broadcast runs the broadcast pattern: the first failed worker cancels the others and fails the pass', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'coder', reply: { fault: 'throw', error: 'down' } }, { agent: 'tester', reply: { text: 'slow', delayMs: 5000 } }] });
    const loop = orchestrate({ mode: 'broadcast', workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], retry: { maxRetries: 0 } });
    const result = await drive(clock, run(loop, REQUEST, { adapter, clock, onEvent }));
    expect(result).toMatchObject({ status: 'failed', reason: 'error-budget', goalMet: false, iterations: 0, error: 'Worker "coder" failed: down' });
    expect(result.trace.children[0]!.children.map((op) => `${op.kind}:${op.name}`)).toEqual(['broadcast:orchestrate']);
    expect(types(events, 'broadcast.')).toEqual([]);
    // The tester was cancelled, not left to answer.
    expect(events.filter((e) => e.type === 'reflect.worker.completed').map((e) => (e as TroupeEvent<'reflect.worker.completed'>).worker)).toEqual(['coder']);
  });

  it('sequential runs the sequential pattern: a failed worker ends the pass before the next one', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'coder', reply: { fault: 'throw', error: 'down' } }] });
    const loop = orchestrate({ mode: 'sequential', workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], retry: { maxRetries: 1, delayMs: 10 } });
    const result = await drive(clock, run(loop, REQUEST, { adapter, clock }));
    expect(result).toMatchObject({ status: 'failed', reason: 'error-budget', error: 'Worker "coder" failed: down' });
    expect(adapter.inputsOf('coder')).toHaveLength(2);
    expect(adapter.inputsOf('tester')).toEqual([]);
  });

  it('orchestrator mode plans, dispatches, collects and synthesises once', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['One pass result.']) }] });
    const result = await run(team({ mode: 'orchestrator' }), REQUEST, { adapter, clock });
    expect(result).toMatchObject({ status: 'completed', output: 'One pass result.', iterations: 1, goalMet: true });
    expect(adapter.inputsOf('lead')).toHaveLength(2);
    expect(result.summary).toMatch(/^✅ Completed \(1\/1\)/);
  });
});

import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { resume } from '../../src/core/resume.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { reflect } from '../../src/patterns/reflect.js';
import { listRuns } from '../../src/persistence/runs.js';
import { readRun } from '../../src/persistence/run-log.js';
import { executePlan, planRunnable, type PlanRunOptions } from '../../src/plan/engine/execute.js';
import { listCheckpoints } from '../../src/travel/checkpoints.js';
import { forkRun } from '../../src/travel/fork.js';
import { replayRun } from '../../src/travel/what-if.js';
import { chunk, planOf } from '../plan/helpers.js';

const plan = planOf(chunk(0), chunk(1), chunk(2, [0]), chunk(3, [1]), chunk(4, [2]), chunk(5, [3, 4]));
const options: PlanRunOptions = { maxParallel: 1, planId: 'six' };
/** Each chunk's agent answers with the chunk it was given. */
const script = () => scriptedAdapter({ rules: [{ agent: 'Generic', reply: (r) => `done ${/# Chunk (\d+)/.exec(r.text)?.[1] ?? '?'}` }] });
const chunksRun = (adapter: ReturnType<typeof script>) => adapter.inputsOf('Generic').map((text) => Number(/# Chunk (\d+)/.exec(text)?.[1]));

/** A plan that crashes after three of its six chunks succeeded. */
async function crashedPlan() {
  const store = memoryStore();
  const clock = new SimulatedClock();
  const controller = new AbortController();
  let succeeded = 0;
  const onEvent = (e: TroupeEvent) => {
    if (e.type === 'chunk.status' && e.status === 'completed' && ++succeeded === 3) controller.abort();
  };
  await expect(executePlan(plan, { ...options, adapter: script(), store, runId: 'plan-1', clock, signal: controller.signal, onEvent })).rejects.toMatchObject({ code: 'cancelled' });
  return { store, clock };
}

describe('forking a run from a checkpoint', () => {
  it('forks a plan after a crash with a chunk result edited: its dependents see the edit, the original is untouched', async () => {
    const { store, clock } = await crashedPlan();
    const original = await readRun('plan-1', { store });
    const checkpoints = listCheckpoints(original);
    expect(checkpoints.map((c) => [c.id, c.type, c.kind, c.summary])).toEqual([
      [1, 'saved', 'plan', '0 of 6 chunks completed'],
      [2, 'appended', 'plan', 'chunk 0 completed'],
      [3, 'appended', 'plan', 'chunk 1 completed'],
      [4, 'appended', 'plan', 'chunk 2 completed'],
    ]);
    expect(checkpoints.every((c) => c.path === '/plan:six#0' && !c.seeded)).toBe(true);
    const storedBefore = JSON.stringify(await store.read('runs/plan-1/checkpoint-entries/plan:six#0'));

    // Fork just after chunk 1 succeeded, with chunk 0's result changed: chunk 2 (which needs chunk 0) had not run yet then.
    const fork = await forkRun('plan-1', { store, at: 3, forkId: 'plan-1-b', clock, edit: () => undefined, set: [{ pointer: '/entry/output', value: 'done 1, but in Rust' }] });
    expect(fork).toMatchObject({ forkId: 'plan-1-b', parent: { runId: 'plan-1', checkpoint: 3 }, runnable: 'six', paths: ['/plan:six#0'], changes: ['/entry/output = "done 1, but in Rust"', 'edited by a function'] });
    const adapter = script();
    const result = await resume(planRunnable(plan, options), 'plan-1-b', { store, adapter, clock });
    expect(result.status).toBe('completed');
    // Chunks 0 and 1 are not run again; 2..5 are, and chunk 3 (which needs chunk 1) sees the edited result.
    expect(chunksRun(adapter).sort()).toEqual([2, 3, 4, 5]);
    expect(adapter.inputsOf('Generic').find((t) => t.startsWith('# Chunk 3'))).toContain('done 1, but in Rust');
    expect(result.results.map((r) => r.output)).toEqual(['done 0', 'done 1, but in Rust', 'done 2', 'done 3', 'done 4', 'done 5']);

    // The original never changes: its log, its checkpoint stream, and it still resumes on its own.
    expect((await readRun('plan-1', { store })).events).toEqual(original.events);
    expect(JSON.stringify(await store.read('runs/plan-1/checkpoint-entries/plan:six#0'))).toBe(storedBefore);
    const resumed = await resume(planRunnable(plan, options), 'plan-1', { store, adapter: script(), clock });
    expect(resumed.results.map((r) => r.output)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `done ${i}`));

    // The fork's log starts with its parent and the checkpoints it was seeded with; its meta keeps the parent.
    const forkLog = await readRun('plan-1-b', { store });
    expect(forkLog.events[0]).toMatchObject({ type: 'run.forked', mode: 'fork', parent: { runId: 'plan-1', checkpoint: 3 }, runnable: 'six' });
    expect(forkLog.events.find((e) => e.type === 'run.started')).toMatchObject({ resumed: true, parent: { runId: 'plan-1', checkpoint: 3 } });
    expect(forkLog.meta).toMatchObject({ runId: 'plan-1-b', status: 'completed', parent: { runId: 'plan-1', checkpoint: 3 } });
    const forkCheckpoints = listCheckpoints(forkLog);
    expect(forkCheckpoints.filter((c) => c.seeded).map((c) => c.summary)).toEqual(['0 of 6 chunks completed', 'chunk 0 completed', 'chunk 1 completed']);
    expect(forkCheckpoints.filter((c) => c.seeded)[2]!.entry).toMatchObject({ output: 'done 1, but in Rust' });

    // A fork replays with no model call, and forks again.
    const replayed = await replayRun(planRunnable(plan, options), forkLog, { clock });
    expect(replayed.results.map((r) => r.output)).toEqual(result.results.map((r) => r.output));
    expect(replayed.served).toBe(4);
    const last = forkCheckpoints.find((c) => c.summary === 'chunk 4 completed')!;
    const again = await forkRun('plan-1-b', { store, at: last.id, forkId: 'plan-1-c', clock, set: [{ pointer: '/entry/output', value: 'done 4, revised' }] });
    const third = script();
    const final = await resume(planRunnable(plan, options), again.forkId, { store, adapter: third, clock });
    expect(chunksRun(third)).toEqual([5]);
    expect(third.inputsOf('Generic')[0]).toContain('done 4, revised');
    expect(final.results[1]!.output).toBe('done 1, but in Rust');

    const runs = await listRuns({ store });
    expect(runs.map((r) => [r.runId, r.parent?.runId])).toEqual(expect.arrayContaining([['plan-1', undefined], ['plan-1-b', 'plan-1'], ['plan-1-c', 'plan-1-b']]));
  });

  it('forks a reflect loop at an iteration with the feedback changed, and the fork continues from there', async () => {
    const loop = () => reflect(agent({ name: 'writer' }), { goal: 'A haiku', evaluator: agent({ name: 'critic' }), maxIterations: 3 });
    const store = memoryStore();
    const clock = new SimulatedClock();
    await run(loop(), 'Rain', { adapter: scriptedAdapter({ replies: { writer: ['Draft one.', 'Draft two.'], critic: ['FAIL: no season word', 'PASS'] } }), store, runId: 'haiku-1', clock });
    const checkpoints = listCheckpoints(await readRun('haiku-1', { store }));
    expect(checkpoints.map((c) => c.summary)).toEqual(['iteration 1, score 0', 'iteration 2, score 1', 'iteration 2, score 1, finished']);
    const fork = await forkRun('haiku-1', { store, at: 1, forkId: 'haiku-2', clock, set: [{ pointer: '/state/feedback', value: 'Mention the moon.' }] });
    const adapter = scriptedAdapter({ replies: { writer: ['Moonlit rain.'], critic: ['PASS'] } });
    const result = await resume(loop(), fork.forkId, { store, adapter, clock });
    expect(adapter.inputsOf('writer')).toHaveLength(1);
    expect(adapter.inputsOf('writer')[0]).toContain('## ITERATION 2/3');
    expect(adapter.inputsOf('writer')[0]).toContain('Mention the moon.');
    expect(result).toMatchObject({ output: 'Moonlit rain.', status: 'completed', reason: 'goal-met', iterations: 2 });
  });

  it('refuses an unknown checkpoint, an edit that breaks the schema and a run id in use, writing nothing', async () => {
    const { store, clock } = await crashedPlan();
    const keys = await store.list('runs/');
    await expect(forkRun('plan-1', { store, at: 9 })).rejects.toMatchObject({ code: 'unknown_checkpoint', message: expect.stringContaining('has no checkpoint 9 (it has 4') });
    await expect(forkRun('nope', { store, at: 1 })).rejects.toMatchObject({ code: 'unknown_run' });
    await expect(forkRun('plan-1', { store, at: 2, set: [{ pointer: '/entry/attempts', value: 'many' }] })).rejects.toMatchObject({
      code: 'invalid_edit',
      message: expect.stringContaining('/attempts: Invalid input: expected number'),
    });
    await expect(forkRun('plan-1', { store, at: 2, set: [{ pointer: '/state/chunks', value: [] }] })).rejects.toMatchObject({ code: 'invalid_edit', message: expect.stringContaining('starts with /entry') });
    await expect(forkRun('plan-1', { store, at: 1, set: [{ pointer: '/state/plan/nothing/here', value: 1 }] })).rejects.toMatchObject({ code: 'invalid_edit', message: expect.stringContaining('nothing at "/state/plan/nothing"') });
    await expect(forkRun('plan-1', { store, at: 1, forkId: 'plan-1', clock })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await store.list('runs/')).toEqual(keys);
  });
});

import { describe, expect, it } from 'vitest';
import { NotRunningError } from '../../../src/core/control.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock, sleep } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { resume } from '../../../src/core/resume.js';
import { readRun } from '../../../src/persistence/index.js';
import { executePlan, planRunnable, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import { PlanControl, planChangeTool, planChangesFromLog } from '../../../src/plan/live/control.js';
import { applyPlanChange, PlanChangeError } from '../../../src/plan/live/replan.js';
import { replayRun } from '../../../src/travel/what-if.js';
import { chunk, drive, planOf } from '../helpers.js';

/** A runner whose chunks take `ms[i]` (default 10) on the clock; `ran` records the order they start in. */
function timed(clock: SimulatedClock, ran: number[], ms: Record<number, number> = {}, onStart?: (id: number) => void): ChunkRunner {
  return async ({ chunk: c, signal, prompt }) => {
    ran.push(c.sequenceIndex);
    onStart?.(c.sequenceIndex);
    await sleep(clock, ms[c.sequenceIndex] ?? 10, signal);
    return `out ${c.sequenceIndex} (${prompt.split('\n')[0]})`;
  };
}

function thrown(f: () => unknown): PlanChangeError {
  try {
    f();
  } catch (error) {
    if (error instanceof PlanChangeError) return error;
    throw error;
  }
  throw new Error('expected a PlanChangeError');
}

describe('applyPlanChange', () => {
  const chunks = planOf(chunk(0), chunk(1, [0]), chunk(2, [1])).chunks;
  const pending = (): string => 'pending';

  it('splits a chunk: parts inherit its dependencies and its dependents wait for the last parts', () => {
    const applied = applyPlanChange(chunks, { split: [{ chunk: 1, parts: [chunk(10), chunk(11, [10]), chunk(12)] }] }, pending);
    const byId = new Map(applied.chunks.map((c) => [c.sequenceIndex, c.dependsOnIndexes]));
    expect([...byId.keys()]).toEqual([0, 2, 10, 11, 12]);
    expect(byId.get(10)).toEqual([0]);
    expect(byId.get(11)).toEqual([0, 10]);
    expect(byId.get(2)).toEqual([11, 12]);
    expect(applied).toMatchObject({ added: [10, 11, 12], removed: [1], rewired: [2] });
  });

  it('refuses each invalid change with the problem and the chunks named', () => {
    expect(thrown(() => applyPlanChange(chunks, { add: [chunk(1)] }, pending))).toMatchObject({ code: 'invalid_change', problem: 'duplicate_id', chunks: [1] });
    expect(thrown(() => applyPlanChange(chunks, { add: [chunk(5, [9])] }, pending))).toMatchObject({ problem: 'unknown_dependency', chunks: [5] });
    expect(thrown(() => applyPlanChange(chunks, { rewire: [{ chunk: 0, dependsOn: [2] }] }, pending))).toMatchObject({ problem: 'cycle', chunks: [0, 1, 2] });
    expect(thrown(() => applyPlanChange(chunks, { cancel: [1] }, pending))).toMatchObject({ problem: 'dangling_dependency', chunks: [2, 1] });
    expect(thrown(() => applyPlanChange(chunks, { cancel: [7] }, pending))).toMatchObject({ problem: 'unknown_chunk', chunks: [7] });
    expect(thrown(() => applyPlanChange(chunks, { rewire: [{ chunk: 1, dependsOn: [] }] }, () => 'running'))).toMatchObject({ problem: 'chunk_started', message: 'Cannot rewire chunk 1: it is running' });
    expect(thrown(() => applyPlanChange(chunks, { cancel: [2] }, () => 'completed'))).toMatchObject({ problem: 'chunk_finished' });
    // An id removed by an earlier change is never used again.
    expect(thrown(() => applyPlanChange(chunks, { add: [chunk(4)] }, pending, new Set([4])))).toMatchObject({ problem: 'duplicate_id' });
    // Cancel and rewire in one change: valid together.
    expect(applyPlanChange(chunks, { cancel: [1], rewire: [{ chunk: 2, dependsOn: [0] }] }, pending).chunks.map((c) => c.sequenceIndex)).toEqual([0, 2]);
  });
});

describe('re-planning a running plan', () => {
  it('adds chunks and rewires a waiting one while the plan runs; the critical-path order updates at once', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const ran: number[] = [];
    const events: TroupeEvent[] = [];
    // 0 runs alone (one slot); 1 and 2 are ready after it. While 0 runs, a long chain 5 → 6 → 7 is added after 0, and 2 waits for 7.
    const runChunk = timed(clock, ran, {}, (id) => {
      if (id !== 0) return;
      control.change({
        add: [chunk(5, [0], { complexity: 'High' }), chunk(6, [5], { complexity: 'High' }), chunk(7, [6])],
        rewire: [{ chunk: 2, dependsOn: [7] }],
        reason: 'the audit found more work',
      });
    });
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [0]));
    const outcome = await drive(clock, executePlan(plan, { clock, control, runChunk, maxParallel: 1, onEvent: (e) => events.push(e) }));
    // The chain is the longest remaining path, so 5 starts before 1; 2 waits for 7.
    expect(ran).toEqual([0, 5, 6, 7, 1, 2]);
    expect(outcome.status).toBe('completed');
    expect(outcome.plan.chunks.map((c) => [c.sequenceIndex, c.dependsOnIndexes])).toEqual([[0, []], [1, [0]], [2, [7]], [5, [0]], [6, [5]], [7, [6]]]);
    expect(outcome.results).toHaveLength(6);
    expect(outcome.changes).toEqual([expect.objectContaining({ id: 1, source: 'api', after: 0 })]);
    const changed = events.filter((e): e is TroupeEvent<'plan.changed'> => e.type === 'plan.changed');
    expect(changed.map((e) => [e.added, e.removed, e.rewired, e.change.reason])).toEqual([[[5, 6, 7], [], [2], 'the audit found more work']]);
    expect(control.running).toBe(false);
  });

  it('cancels a running chunk and splits another; removed chunks have no result and the plan completes', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const ran: number[] = [];
    const statuses: string[] = [];
    const runChunk = timed(clock, ran, { 0: 5, 1: 100 }, (id) => {
      if (id !== 0) return;
      // 1 is running; 2 has not started: 1 goes, 2 becomes 20 and 21, and 3 (after 2) waits for 21.
      queueMicrotask(() => {
        control.cancelChunk(1, 'not needed');
        control.splitChunk(2, [chunk(20), chunk(21, [20])], 'too big');
      });
    });
    const plan = planOf(chunk(0), chunk(1), chunk(2, [0]), chunk(3, [2]));
    const outcome = await drive(
      clock,
      executePlan(plan, { clock, control, runChunk, maxParallel: 2, onEvent: (e) => e.type === 'chunk.status' && statuses.push(`${e.sequenceIndex}:${e.status}`) }),
    );
    expect(statuses).toContain('1:cancelled');
    expect(ran).toEqual([0, 1, 20, 21, 3]);
    expect(outcome.status).toBe('completed');
    expect(outcome.results.map((r) => [r.sequenceIndex, r.status])).toEqual([[0, 'completed'], [3, 'completed'], [20, 'completed'], [21, 'completed']]);
    expect(outcome.plan.chunks.find((c) => c.sequenceIndex === 3)!.dependsOnIndexes).toEqual([21]);
    expect(outcome.changes!.map((c) => c.change.reason)).toEqual(['not needed', 'too big']);
  });

  it('refuses an invalid change atomically with a typed error, and any change when no plan runs', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const errors: PlanChangeError[] = [];
    const ran: number[] = [];
    const runChunk = timed(clock, ran, {}, (id) => {
      if (id !== 0) return;
      // Adds 9 but would leave 2 depending on the cancelled 1: nothing of it applies.
      errors.push(thrown(() => control.change({ add: [chunk(9)], cancel: [1] })));
      errors.push(thrown(() => control.rewire(0, [])));
    });
    const outcome = await drive(clock, executePlan(planOf(chunk(0), chunk(1, [0]), chunk(2, [1])), { clock, control, runChunk, maxParallel: 1 }));
    expect(errors.map((e) => [e.problem, e.chunks])).toEqual([['dangling_dependency', [2, 1]], ['chunk_started', [0]]]);
    expect(ran).toEqual([0, 1, 2]);
    expect(outcome.plan.chunks).toHaveLength(3);
    expect(outcome.changes).toBeUndefined();
    expect(() => control.addChunks([chunk(9)])).toThrow(NotRunningError);
    expect(() => control.addChunks([chunk(9)])).toThrow(expect.objectContaining({ code: 'not_running' }));
    expect(thrown(() => control.change({}))).toMatchObject({ problem: 'empty' });
    expect(thrown(() => control.change({ add: [{ sequenceIndex: -1 }] } as never))).toMatchObject({ problem: 'malformed' });
  });

  it('gives an orchestrator the change_plan tool, which answers a refused change with its problem', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const tool = planChangeTool(control);
    const answers: unknown[] = [];
    const runChunk = timed(clock, [], {}, (id) => {
      if (id !== 0) return;
      answers.push(tool.execute({ add: [chunk(3, [0])] }, {} as never));
      answers.push(tool.execute({ rewire: [{ chunk: 0, dependsOn: [] }] }, {} as never));
    });
    const outcome = await drive(clock, executePlan(planOf(chunk(0), chunk(1, [0])), { clock, control, runChunk }));
    // The tool answers once the change is in the run's store (at once here: no store).
    expect(await answers[0]).toMatch(/^Change 1 applied\. The plan now has 3 chunks: 0 Chunk A; 1 Chunk B \(after 0\); 3 Chunk D \(after 0\)\.$/);
    expect(await answers[1]).toMatch(/^Refused \(chunk_started\): Cannot rewire chunk 0: it is running$/);
    expect(outcome.changes![0]!.source).toBe('tool');
  });
});

describe('a changed plan in the run log', () => {
  it('resumes after a crash in the middle of a re-plan: the changed plan continues, added chunks run, removed ones do not', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const control = new PlanControl();
    const ran: number[] = [];
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [1]));
    const runChunk: ChunkRunner = async ({ chunk: c }) => {
      ran.push(c.sequenceIndex);
      if (c.sequenceIndex === 1) {
        // The change is logged, then the process dies before any of its chunks ran.
        control.change({ split: [{ chunk: 2, parts: [chunk(4), chunk(5, [4])] }], add: [chunk(6, [1])] });
        controller.abort();
      }
      return `out ${c.sequenceIndex}`;
    };
    await expect(executePlan(plan, { maxParallel: 1, signal: controller.signal, runChunk, store, runId: 'changed', control })).rejects.toMatchObject({ code: 'cancelled' });
    expect(ran).toEqual([0, 1]);

    ran.length = 0;
    // The resumed run is given the original plan: its checkpoint holds the change.
    const resumed = await resume(planRunnable(plan, { runChunk: async ({ chunk: c }) => (ran.push(c.sequenceIndex), `again ${c.sequenceIndex}`), maxParallel: 1 }), 'changed', { store });
    expect(ran.sort()).toEqual([1, 4, 5, 6]);
    expect(resumed.status).toBe('completed');
    expect(resumed.plan.chunks.map((c) => c.sequenceIndex)).toEqual([0, 1, 6, 4, 5]);
    expect(resumed.results.map((r) => r.status)).toEqual(Array(5).fill('completed'));
    expect(resumed.changes).toEqual([expect.objectContaining({ id: 1, change: expect.objectContaining({ add: [expect.objectContaining({ sequenceIndex: 6 })] }) })]);
  });

  it('replays a plan changed while it ran with no model call, reproducing the changed plan', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const adapter = scriptedAdapter({ rules: [{ agent: 'Generic', reply: (r) => `done: ${r.text.split('\n')[0]}` }] });
    const control = new PlanControl();
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [1]));
    const onEvent = (e: TroupeEvent): void => {
      if (e.type === 'chunk.status' && e.sequenceIndex === 0 && e.status === 'completed') control.change({ add: [chunk(3, [0])], rewire: [{ chunk: 2, dependsOn: [1, 3] }] });
    };
    const first = await drive(clock, executePlan(plan, { adapter, clock, control, store, runId: 'live', maxParallel: 1, onEvent }));
    expect(first.plan.chunks).toHaveLength(4);
    const log = await readRun('live', { store });
    const recorded = planChangesFromLog(log);
    expect(recorded).toEqual([expect.objectContaining({ id: 1, after: 1 })]);

    const again = await drive(clock, replayRun(planRunnable(plan, { maxParallel: 1 }), log, { clock, control: new PlanControl({ replay: recorded }) }));
    expect(again.served).toBe(4);
    expect(again.plan).toEqual(first.plan);
    expect(again.results.map((r) => [r.sequenceIndex, r.output])).toEqual(first.results.map((r) => [r.sequenceIndex, r.output]));
    expect(again.changes!.map((c) => c.change)).toEqual(first.changes!.map((c) => c.change));
  });
});

describe('re-planning from a planning session', () => {
  it('changes the executing plan and posts to its workers, and says so in its conversation', async () => {
    const { PlanningSession } = await import('../../../src/plan/session/planning-session.js');
    let session!: InstanceType<typeof PlanningSession>;
    const refused: unknown[] = [];
    const adapter = scriptedAdapter({
      replies: { planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0), chunk(1, [0])))], synthesis: ['summary'] },
      rules: [
        {
          agent: 'Generic',
          reply: (r) => {
            if (r.text.startsWith('# Chunk 0')) {
              session.changePlan({ add: [chunk(2, [1])], reason: 'a release note is needed' });
              session.post({ to: { chunk: 2 }, text: 'Mention the new flag.' });
              try {
                session.changePlan({ cancel: [0] });
              } catch (error) {
                refused.push(error);
              }
            }
            return `done ${r.text.split('\n')[0]}`;
          },
        },
      ],
    });
    session = new PlanningSession({ adapter, clock: new SimulatedClock(), maxParallel: 1 });
    expect(() => session.changePlan({ add: [chunk(5)] })).toThrow(/changePlan/);
    await session.submitTask('Ship the flag');
    const done = await session.approvePlan();
    expect(done.phase).toBe('completed');
    const last = session.runs.at(-1)!;
    expect(last.outcome.plan.chunks.map((c) => c.sequenceIndex)).toEqual([0, 1, 2]);
    expect(last.outcome.changes).toEqual([expect.objectContaining({ source: 'session' })]);
    expect(adapter.inputsOf('Generic')[2]).toContain('- From api (to chunk 2): Mention the new flag.');
    expect(refused).toEqual([expect.objectContaining({ code: 'invalid_change', problem: 'dangling_dependency' })]);
    expect(session.messages.map((m) => m.text)).toContain('Plan changed (change 1: a release note is needed): it now has 3 chunks.');
  });
});

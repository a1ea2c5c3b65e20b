import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { checkpointKey, checkpointStream } from '../../src/core/checkpoint.js';
import { resume } from '../../src/core/resume.js';
import type { Store } from '../../src/core/store.js';
import { executePlan, planRunnable, type PlanRunOptions } from '../../src/plan/engine/execute.js';
import type { ChunkJobData, Executor } from '../../src/plan/engine/executor.js';
import { recordChunkResult } from '../../src/plan/engine/checkpoint.js';
import { planExecutionStateSchema } from '../../src/plan/engine/state.js';
import { reflect } from '../../src/patterns/reflect.js';
import { agent } from '../../src/patterns/agent.js';
import { chunk, planOf } from '../plan/helpers.js';

const plan = planOf(chunk(0), chunk(1), chunk(2, [0]), chunk(3, [1]), chunk(4, [2]), chunk(5, [3, 4]));
/** Each chunk's agent answers with the chunk it was given. */
const script = () => scriptedAdapter({ rules: [{ agent: 'Generic', reply: (r) => `done ${/# Chunk (\d+)/.exec(r.text)?.[1] ?? '?'}` }] });
const chunksRun = (adapter: ReturnType<typeof script>) => adapter.inputsOf('Generic').map((text) => Number(/# Chunk (\d+)/.exec(text)?.[1]));
const options: PlanRunOptions = { maxParallel: 1, planId: 'six' };

describe('resuming a plan execution', () => {
  it('finishes a plan killed after 3 of 6 chunks without running the first 3 again', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    let succeeded = 0;
    const onEvent = (e: TroupeEvent) => {
      if (e.type === 'chunk.status' && e.status === 'completed' && ++succeeded === 3) controller.abort();
    };
    const first = script();
    await expect(executePlan(plan, { ...options, adapter: first, store, runId: 'p1', signal: controller.signal, onEvent })).rejects.toMatchObject({ code: 'cancelled' });
    const ranFirst = chunksRun(first);
    expect(ranFirst).toHaveLength(3);
    // The state is saved once, when the plan starts; each chunk that succeeds is one entry of the checkpoint's stream.
    const saved = planExecutionStateSchema.parse((await store.get('runs/p1/checkpoints/plan:six#0') as { state: unknown }).state);
    expect(saved.chunks.map((c) => c.status)).toEqual(['pending', 'pending', 'pending', 'pending', 'pending', 'pending']);
    const entries = (await store.read(checkpointStream('p1', '/plan:six#0'))).records as Array<{ sequenceIndex: number; status: string; output: string }>;
    expect(entries.map((e) => [e.sequenceIndex, e.status, e.output])).toEqual(ranFirst.map((i) => [i, 'completed', `done ${i}`]));

    const second = script();
    const events: TroupeEvent[] = [];
    const resumed = await resume(planRunnable(plan, options), 'p1', { store, adapter: second, onEvent: (e) => events.push(e) });
    const ranSecond = chunksRun(second);
    expect(ranSecond).toHaveLength(3);
    expect([...ranFirst, ...ranSecond].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(resumed.status).toBe('completed');
    expect(resumed.results.map((r) => r.output)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `done ${i}`));
    expect(events.find((e) => e.type === 'plan.started')).toMatchObject({ resumed: true });
    // A chunk of the second half sees the output of its dependency from the first half.
    const five = second.inputsOf('Generic').find((t) => t.startsWith('# Chunk 5'));
    expect(five).toContain('done 4');
  });

  it('returns the saved outcome of a finished plan with zero model calls', async () => {
    const store = memoryStore();
    const original = await executePlan(plan, { ...options, adapter: script(), store, runId: 'p2' });
    const adapter = script();
    const again = await resume(planRunnable(plan, options), 'p2', { store, adapter });
    expect(adapter.calls).toHaveLength(0);
    expect(again.output).toBe(original.output);
    expect(again.results).toEqual(original.results);
  });

  it('keys the loops a chunk runs by chunk, so a resumed plan finds them', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const loopPlan = planOf(chunk(0), chunk(1, [0]));
    let calls = 0;
    const runChunk: PlanRunOptions['runChunk'] = async ({ chunk: c, ctx }) => {
      const loop = reflect(agent({ name: `writer${c.sequenceIndex}` }), { maxIterations: 1 });
      const out = await loop.run(c.prompt, ctx);
      if (c.sequenceIndex === 1 && ++calls === 1) controller.abort();
      return out.output;
    };
    const adapter = scriptedAdapter({ rules: [{ agent: /^writer/, reply: (r) => `${r.agent} wrote` }] });
    await expect(executePlan(loopPlan, { runChunk, store, runId: 'p3', signal: controller.signal, planId: 'loops', adapter })).rejects.toThrow();
    expect(await store.list('runs/p3/checkpoints/plan:loops#0/')).toEqual([
      'runs/p3/checkpoints/plan:loops#0/chunk-0/reflect:reflect:writer0#0',
      'runs/p3/checkpoints/plan:loops#0/chunk-1/reflect:reflect:writer1#0',
    ]);
    const again = scriptedAdapter({ rules: [{ agent: /^writer/, reply: 'unexpected' }] });
    const resumed = await resume(planRunnable(loopPlan, { runChunk, planId: 'loops' }), 'p3', { store, adapter: again });
    // Chunk 0 succeeded and is kept; chunk 1 was aborted after its loop finished: the loop's saved outcome is reused.
    expect(again.calls).toHaveLength(0);
    expect(resumed.results.map((r) => r.output)).toEqual(['writer0 wrote', 'writer1 wrote']);
  });
});

describe('the plan checkpoint fixture', () => {
  it('resumes a stored plan checkpoint (schemaVersion 1) and runs only the chunks it lacks', async () => {
    const doc = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'persistence', 'checkpoint-plan.v1.json'), 'utf8')) as { state: { plan: Parameters<typeof planRunnable>[0] } };
    const store = memoryStore();
    const three = planRunnable(doc.state.plan, { maxParallel: 1, planId: 'three' });
    await store.set('runs/fx/checkpoints/plan:three#0', { ...doc, runId: 'fx' });
    await store.append('runs/fx/events', { type: 'run.started', runId: 'fx', time: 0, runnable: 'three', input: 'Three steps' });
    const adapter = scriptedAdapter({ rules: [{ agent: 'Generic', reply: 'again' }] });
    const resumed = await resume(three, 'fx', { store, adapter });
    expect(adapter.calls).toHaveLength(2);
    expect(resumed.results.map((r) => r.output)).toEqual(['done', 'again', 'again']);
  });
});

describe('chunk results recorded by another process (a queue-backed executor)', () => {
  /** An executor that hands attempts to "workers": each records its result in the store, then reports it back as recorded. */
  function workerExecutor(store: Store, jobs: ChunkJobData[], stopAfter?: { count: number; controller: AbortController }): Executor {
    let done = 0;
    return {
      kind: 'test-queue',
      maxParallel: 1,
      async dispatch(job) {
        const data = job.toJSON();
        jobs.push(data);
        const output = `worker did ${data.chunk.sequenceIndex}`;
        await recordChunkResult(store, data, { output, files: [`f${data.chunk.sequenceIndex}`] });
        if (stopAfter && ++done === stopAfter.count) stopAfter.controller.abort();
        return { output, recorded: true };
      },
    };
  }

  it('counts the chunks workers recorded while no scheduler ran as done when the run is resumed', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const jobs: ChunkJobData[] = [];
    const flow = (executor?: Executor) => planRunnable(plan, { ...options, ...(executor ? { executor } : {}) });
    // The scheduler dies after two chunks ...
    const first = executePlan(plan, { ...options, executor: workerExecutor(store, jobs, { count: 2, controller }), store, runId: 'q1', signal: controller.signal });
    await expect(first).rejects.toMatchObject({ code: 'cancelled' });
    expect(jobs.map((j) => [j.runId, j.checkpointPath, j.attempt])).toEqual([['q1', '/plan:six#0', 1], ['q1', '/plan:six#0', 1]]);
    // ... and a worker finishes chunk 2 (a job of the dead scheduler's queue) while no scheduler is up.
    const taken = { ...jobs[1]!, chunk: plan.chunks[2]! };
    await recordChunkResult(store, taken, 'worker did 2 late');
    // The new scheduler runs only what nobody finished; results recorded as done are not written again.
    const resumedJobs: ChunkJobData[] = [];
    const resumed = await resume(flow(workerExecutor(store, resumedJobs)), 'q1', { store });
    expect(resumedJobs.map((j) => j.chunk.sequenceIndex).sort()).toEqual([3, 4, 5]);
    expect(resumed.results.map((r) => r.output)).toEqual(['worker did 0', 'worker did 1', 'worker did 2 late', 'worker did 3', 'worker did 4', 'worker did 5']);
    expect(resumed.results[0]!.files).toEqual(['f0']);
    const entries = (await store.read(checkpointStream('q1', '/plan:six#0'))).records;
    expect(entries).toHaveLength(6); // one per chunk, all written by the workers
  });

  it('compacts: a resumed plan saves its state with the entries folded in, and later reads only the entries after it', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    let succeeded = 0;
    const onEvent = (e: TroupeEvent) => void (e.type === 'chunk.status' && e.status === 'completed' && ++succeeded === 2 && controller.abort());
    await expect(executePlan(plan, { ...options, adapter: script(), store, runId: 'q2', signal: controller.signal, onEvent })).rejects.toThrow();
    const controller2 = new AbortController();
    let again = 0;
    const onEvent2 = (e: TroupeEvent) => void (e.type === 'chunk.status' && e.status === 'completed' && ++again === 2 && controller2.abort());
    await expect(resume(planRunnable(plan, options), 'q2', { store, adapter: script(), signal: controller2.signal, onEvent: onEvent2 })).rejects.toThrow();
    const doc = (await store.get(checkpointKey('q2', '/plan:six#0'))) as { entriesFrom: number; state: { chunks: Array<{ status: string }> } };
    expect(doc.entriesFrom).toBe(2);
    expect(doc.state.chunks.filter((c) => c.status === 'completed')).toHaveLength(2);
    const adapter = script();
    const done = await resume(planRunnable(plan, options), 'q2', { store, adapter });
    expect(chunksRun(adapter)).toHaveLength(2);
    expect(done.status).toBe('completed');
  });

  it('refuses a result that is not one, with a clear error', async () => {
    const store = memoryStore();
    const job = { runId: 'r', checkpointPath: '/plan:x#0', chunk: plan.chunks[0]!, attempt: 1 };
    await expect(recordChunkResult(store, job, { output: 3 } as never)).rejects.toThrow(/Expected a chunk job .* and its result/);
    await expect(recordChunkResult(store, { ...job, checkpointPath: undefined } as never, 'x')).rejects.toThrow(/Expected a chunk job/);
    expect((await store.read(checkpointStream('r', '/plan:x#0'))).records).toEqual([]);
  });
});

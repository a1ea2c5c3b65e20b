import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock, sleep } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { executePlan, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import type { ChunkJob, ChunkJobData, Executor } from '../../../src/plan/engine/executor.js';
import type { Store } from '../../../src/core/store.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { chunk, drive, planOf } from '../helpers.js';

describe('the plan state machine', () => {
  it('fails an attempt whose result is neither text nor { output }, and does not hang', async () => {
    const outcome = await executePlan(planOf(chunk(0), chunk(1, [0])), { retry: { maxRetries: 0 }, runChunk: async () => 42 as never });
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'skipped']);
    expect(outcome.results[0]!.error).toBe('Expected the attempt of chunk 0 to give a string or { output: string, files?: string[] }, got 42 (number)');
  });

  it('keeps files from { output, files } results and counts attempts', async () => {
    const outcome = await executePlan(planOf(chunk(0)), { runChunk: async () => ({ output: 'done', files: ['a.ts'] }) });
    expect(outcome.results[0]).toMatchObject({ status: 'completed', attempts: 1, output: 'done', files: ['a.ts'] });
  });

  it('never dispatches an attempt whose Running event cancelled the plan', async () => {
    const controller = new AbortController();
    const ran: number[] = [];
    const events: TroupeEvent[] = [];
    const onEvent = (e: TroupeEvent) => {
      events.push(e);
      if (e.type === 'chunk.status' && e.sequenceIndex === 1 && e.status === 'running') controller.abort();
    };
    const runChunk: ChunkRunner = async ({ chunk: c }) => (ran.push(c.sequenceIndex), 'ok');
    await expect(executePlan(planOf(chunk(0), chunk(1, [0]), chunk(2, [1])), { maxParallel: 1, signal: controller.signal, onEvent, runChunk })).rejects.toMatchObject({ code: 'cancelled' });
    expect(ran).toEqual([0]);
    const last = new Map(events.filter((e): e is TroupeEvent<'chunk.status'> => e.type === 'chunk.status').map((e) => [e.sequenceIndex, e.status]));
    expect([...last]).toEqual([[0, 'completed'], [1, 'cancelled'], [2, 'cancelled']]);
  });

  it('appends one checkpoint entry per chunk that succeeds, without waiting for the store, and ends once they are written', async () => {
    const clock = new SimulatedClock();
    const inner = memoryStore();
    let writing = 0;
    let most = 0;
    // A slow store: every append takes 7 ms on the clock.
    const store: Store = {
      ...inner,
      get: (k, o) => inner.get(k, o),
      set: (k, v, o) => inner.set(k, v, o),
      read: (k, o) => inner.read(k, o),
      append: async (stream, record) => {
        if (!stream.includes('checkpoint-entries')) return inner.append(stream, record);
        most = Math.max(most, ++writing);
        await sleep(clock, 7);
        writing--;
        return inner.append(stream, record);
      },
    };
    const runChunk: ChunkRunner = async ({ chunk: c, signal }) => {
      await sleep(clock, 3 + (c.sequenceIndex % 3), signal);
      return `ok ${c.sequenceIndex}`;
    };
    const plan = planOf(...Array.from({ length: 8 }, (_, i) => chunk(i)));
    const outcome = await drive(clock, executePlan(plan, { clock, maxParallel: 4, runChunk, store, runId: 'slow' }));
    expect(outcome.status).toBe('completed');
    expect(most).toBeGreaterThan(1); // chunks went on while entries were written
    expect(writing).toBe(0);
    const entries = (await inner.read('runs/slow/checkpoint-entries/plan:plan#0')).records as Array<{ sequenceIndex: number; output: string }>;
    expect(entries.map((e) => e.output).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `ok ${i}`));
  });

  it('leaves no timer behind, whether the plan completes, fails or is cancelled', async () => {
    const clock = new SimulatedClock();
    const runChunk: ChunkRunner = async ({ chunk: c, signal }) => {
      await sleep(clock, 5, signal);
      if (c.sequenceIndex === 1) throw new Error('broken');
      return 'ok';
    };
    await drive(clock, executePlan(planOf(chunk(0), chunk(1)), { clock, chunkTimeoutMs: 1000, retry: { maxRetries: 0 }, runChunk }));
    expect(clock.pending).toBe(0);
    const controller = new AbortController();
    const cancelled = executePlan(planOf(chunk(0), chunk(1)), { clock, signal: controller.signal, retry: { delayMs: 50 }, runChunk });
    await clock.advance(6);
    controller.abort();
    await expect(drive(clock, cancelled)).rejects.toMatchObject({ code: 'cancelled' });
    expect(clock.pending).toBe(0);
  });
});

describe('chunk jobs', () => {
  it('serialise to their data: run, plan, chunk, prompt, role and attempt, without closures or adapter objects', async () => {
    const sent: ChunkJobData[] = [];
    const remote: Executor = {
      kind: 'queue',
      maxParallel: 2,
      dispatch: async (job: ChunkJob) => {
        sent.push(JSON.parse(JSON.stringify(job)) as ChunkJobData);
        return `done ${job.chunk.sequenceIndex}`;
      },
    };
    const adapter = scriptedAdapter({ fallback: 'unused' });
    const plan = planOf(chunk(0), chunk(1, [0], { role: 'Testing' }));
    const outcome = await executePlan(plan, { executor: remote, runId: 'run-7', planId: 'p', roles: { Generic: { adapter }, Testing: { adapter: 'fast', model: 'small' } } });
    expect(outcome.status).toBe('completed');
    expect(sent.map((j) => Object.keys(j).sort())).toEqual([
      ['attempt', 'checkpointPath', 'chunk', 'planId', 'prompt', 'role', 'runId'],
      ['attempt', 'checkpointPath', 'chunk', 'planId', 'prompt', 'role', 'runId'],
    ]);
    expect(sent[0]).toMatchObject({ runId: 'run-7', planId: 'p', chunk: plan.chunks[0], attempt: 1, checkpointPath: '/plan:p#0' });
    expect(sent[0]!.role).not.toHaveProperty('adapter');
    expect(sent[1]!.role).toMatchObject({ adapter: 'fast', model: 'small' });
    expect(sent[1]!.prompt).toContain('### 0. Chunk A (Generic)\n\ndone 0');
  });
});

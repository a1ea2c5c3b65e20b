import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { RunContext } from '../../../src/core/context.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { createOp, totalUsage } from '../../../src/core/ops.js';
import { run } from '../../../src/core/run.js';
import { RemoteMirror, watchJob, type RemoteEvent } from '../../../src/integrations/bullmq/mirror.js';
import { BATCH_INTERVAL_MS, EventOutbox } from '../../../src/integrations/bullmq/outbox.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { agent } from '../../../src/patterns/agent.js';
import { scriptedAdapter } from '../../../src/testing/index.js';

/** A plan-like context: the run's root, a plan op under it, the chunk's checkpoint scope. */
function planContext(options: { resuming?: boolean; store?: ReturnType<typeof memoryStore> } = {}) {
  const clock = new SimulatedClock(1000);
  const events: TroupeEvent[] = [];
  const root = createOp('op-0', 'run', 'plan', clock.now());
  const ctx = RunContext.create({ runId: 'coord', clock, signal: new AbortController().signal, root, ...options });
  ctx.emitter.on('*', (e) => events.push(e));
  return { clock, events, root, ctx };
}

/** The events a worker's run of one agent emits (its own run, op ids of its own). */
async function workerEvents(): Promise<{ events: RemoteEvent[]; usage: number }> {
  const events: RemoteEvent[] = [];
  const result = await run(agent({ name: 'Generic', system: 'Work.' }), 'do it', {
    adapter: scriptedAdapter({ fallback: { text: 'done', usage: { inputTokens: 9, outputTokens: 4 } } }),
    runId: 'worker-run',
    onEvent: (e) => events.push(JSON.parse(JSON.stringify(e)) as RemoteEvent),
  });
  return { events, usage: result.usage.inputTokens };
}

describe('RemoteMirror', () => {
  it('re-emits a worker’s events in the coordinator’s run, with its ops as nodes of the coordinator’s tree', async () => {
    const { ctx, events, root } = planContext();
    const worker = await workerEvents();
    let mirror!: RemoteMirror;
    // The worker's agent ran for chunk 3 of plan p: its ops go under the plan's op.
    await ctx.enter({ kind: 'plan', name: 'p' }, async (plan) => {
      mirror = new RemoteMirror(plan.withCheckpointScope('chunk-3'));
      mirror.apply('exec-1', worker.events);
      mirror.close('failed', 'left open');
      return { output: '', agent: 'p', status: 'completed' };
    });
    // No run.* event of the worker's own run comes through.
    expect(events.filter((e) => e.type.startsWith('run.'))).toEqual([]);
    const started = events.find((e): e is TroupeEvent<'op.started'> => e.type === 'op.started' && e.kind === 'agent')!;
    const planOp = root.children[0]!;
    expect(started).toMatchObject({ runId: 'coord', parentId: planOp.id, depth: 2, path: '/plan:p#0/chunk-3/agent:Generic#0', time: 1000 });
    const node = planOp.children[0]!;
    expect(node).toMatchObject({ id: started.opId, kind: 'agent', name: 'Generic', status: 'completed' });
    // Every event refers to an op of the coordinator's run.
    const ids = new Set([root.id, planOp.id, node.id]);
    for (const e of events) expect(ids.has(e.opId!), `${e.type}`).toBe(true);
    // Usage: the node's own (turns included), rolled up to the plan.
    expect(node.usage).toMatchObject({ inputTokens: worker.usage, outputTokens: 4, turns: 1 });
    expect(totalUsage(planOp)).toEqual(mirror.usage());
    const turn = events.find((e): e is TroupeEvent<'model.turn'> => e.type === 'model.turn')!;
    expect(turn.session).toBe(1);
  });

  it('closes what a lost execution left open, drops its late events, and follows the next execution', async () => {
    const { ctx, events, root } = planContext();
    const worker = await workerEvents();
    const started = worker.events.filter((e) => e.type === 'op.started' || e.type === 'agent.started');
    const mirror = new RemoteMirror(ctx);
    mirror.apply('lost', started);
    mirror.apply('next', worker.events);
    mirror.apply('lost', worker.events); // the lost worker wakes up: ignored
    mirror.close('completed');
    expect(root.children.map((n) => [n.status, n.error])).toEqual([
      ['failed', expect.stringMatching(/lost/)],
      ['completed', undefined],
    ]);
    expect(events.filter((e) => e.type === 'op.completed')).toHaveLength(2);
    // A second session of the same agent gets the next ordinal of the coordinator's run.
    const turn = events.find((e): e is TroupeEvent<'model.turn'> => e.type === 'model.turn')!;
    expect(turn.session).toBe(1);
  });

  it('closes nodes still open when the job ends (cancelled), innermost first', async () => {
    const { ctx, events, root } = planContext();
    const mirror = new RemoteMirror(ctx);
    mirror.apply('x', [
      { type: 'op.started', opId: 'op-1', kind: 'router', name: 'r', parentId: 'op-0', depth: 1, path: '/router:r#0' },
      { type: 'op.started', opId: 'op-2', kind: 'agent', name: 'a', parentId: 'op-1', depth: 2, path: '/router:r#0/agent:a#0' },
      { type: 'op.started', kind: 'broken' }, // malformed: skipped
    ]);
    // The end of an op whose start was never seen (a job taken over while it ran) is dropped.
    mirror.apply('x', [{ type: 'op.completed', opId: 'op-9', kind: 'agent', name: 'z', status: 'completed' }]);
    mirror.close('cancelled', 'The run was cancelled');
    mirror.apply('x', [{ type: 'warning', message: 'late' }]);
    const closed = events.filter((e): e is TroupeEvent<'op.completed'> => e.type === 'op.completed');
    expect(closed.map((e) => [e.name, e.status])).toEqual([
      ['a', 'cancelled'],
      ['r', 'cancelled'],
    ]);
    expect(root.children[0]!.children[0]!.status).toBe('cancelled');
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

});

describe('watchJob', () => {
  it('adds where a job waited and ran to the run (remote.* in the attempt’s op) and closes a lost worker’s ops on a stall', async () => {
    const { ctx, events, root } = planContext();
    const worker = await workerEvents();
    const mirror = new RemoteMirror(ctx);
    const watcher = watchJob(ctx, mirror, { jobId: 'j1', queue: 'q', kind: 'chunk' });
    watcher.queued!(false);
    watcher.started!('w1', 12);
    watcher.batch('exec-1', { events: worker.events.filter((e) => e.type === 'op.started') });
    watcher.stalled('w1');
    watcher.queued!(true);
    mirror.close('completed');
    const remote = events.filter((e) => e.type.startsWith('remote.'));
    expect(remote).toEqual([
      expect.objectContaining({ type: 'remote.queued', jobId: 'j1', queue: 'q', kind: 'chunk', adopted: false, opId: root.id, runId: 'coord' }),
      expect.objectContaining({ type: 'remote.started', jobId: 'j1', queue: 'q', worker: 'w1', waitMs: 12, opId: root.id }),
      expect.objectContaining({ type: 'remote.stalled', jobId: 'j1', queue: 'q', worker: 'w1' }),
      expect.objectContaining({ type: 'remote.queued', adopted: true }),
    ]);
    expect(root.children.map((n) => [n.status, n.error])).toEqual([['failed', 'The worker running this attempt was lost; the job went back to the queue']]);
  });
});

describe('EventOutbox', () => {
  it('batches events emitted in one turn of the event loop, keeps their order, and adds the failure last', async () => {
    const sent: string[] = [];
    const outbox = new EventOutbox(async (data) => void sent.push(data), () => undefined);
    const event = (n: number) => ({ type: 'warning', runId: 'w', time: n, message: `m${n}` }) as TroupeEvent;
    outbox.push(event(1));
    await Promise.resolve();
    outbox.push(event(2));
    await new Promise((resolve) => setImmediate(resolve));
    outbox.push(event(3));
    await outbox.flush({ message: 'boom', code: 'adapter_error' });
    const batches = sent.map((s) => JSON.parse(s) as { events: Array<{ time: number }>; failure?: unknown });
    // 1 and 2 were emitted in one turn of the event loop (a microtask apart): one batch.
    expect(batches.map((b) => b.events.map((e) => e.time))).toEqual([[1, 2], [3]]);
    expect(batches.at(-1)!.failure).toEqual({ message: 'boom', code: 'adapter_error' });
  });

  it("sends an op's start at once, with the events queued before it, so a worker that dies in the op's work leaves the op behind", async () => {
    const sent: string[] = [];
    const outbox = new EventOutbox(async (data) => void sent.push(data), () => undefined);
    const warning = { type: 'warning', runId: 'w', time: 1, message: 'm1' } as TroupeEvent;
    const started = { type: 'op.started', runId: 'w', time: 2, opId: 'op-1', kind: 'agent', name: 'a', parentId: 'op-0', depth: 1, path: '' } as TroupeEvent;
    outbox.push(warning);
    outbox.push(started);
    // Sent before anything else runs (the worker may start a model call and die in it).
    expect(sent.map((s) => (JSON.parse(s) as { events: Array<{ time: number }> }).events.map((e) => e.time))).toEqual([[1, 2]]);
  });

  describe('within the interval after a batch', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('holds other events until the interval ends (one command for a stream of them), but never an op start', async () => {
      vi.useFakeTimers();
      const sent: string[] = [];
      const outbox = new EventOutbox(async (data) => void sent.push(data), () => undefined);
      const times = () => sent.map((s) => (JSON.parse(s) as { events: Array<{ time: number }> }).events.map((e) => e.time));
      const event = (n: number) => ({ type: 'warning', runId: 'w', time: n, message: `m${n}` }) as TroupeEvent;
      const started = (n: number) => ({ type: 'op.started', runId: 'w', time: n, opId: `op-${n}`, kind: 'agent', name: 'a', parentId: 'op-0', depth: 1, path: '' }) as TroupeEvent;
      outbox.push(started(1));
      // Event 2 waits past the end of its turn: the op start before it has just gone.
      outbox.push(event(2));
      await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS - 1);
      expect(times()).toEqual([[1]]);
      outbox.push(event(3));
      outbox.push(event(4));
      await vi.advanceTimersByTimeAsync(1);
      expect(times()).toEqual([[1], [2, 3, 4]]);
      // An op start goes at once, with what is queued before it.
      outbox.push(event(5));
      outbox.push(started(6));
      expect(times()).toEqual([[1], [2, 3, 4], [5, 6]]);
      // Past the interval, an event goes at the end of its turn.
      await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
      outbox.push(event(7));
      await vi.advanceTimersToNextTimerAsync();
      expect(times()).toEqual([[1], [2, 3, 4], [5, 6], [7]]);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('tells of a job’s start by the end of its first turn: with its first op start, else in a batch of its own, else in its result', async () => {
      vi.useFakeTimers();
      const sent: string[] = [];
      const times = () => sent.map((s) => (JSON.parse(s) as { events: Array<{ time: number }> }).events.map((e) => e.time));
      const started = { type: 'op.started', runId: 'w', time: 1, opId: 'op-1', kind: 'agent', name: 'a', parentId: 'op-0', depth: 1, path: '' } as TroupeEvent;
      // The run starts an op in the job's first turn: that batch tells, and nothing else goes.
      const first = new EventOutbox(async (data) => void sent.push(data), () => undefined);
      first.begin();
      first.push(started);
      await vi.advanceTimersToNextTimerAsync();
      expect(times()).toEqual([[1]]);
      // The turn ends before the run starts an op (a workspace being prepared): an empty batch tells.
      sent.length = 0;
      const slow = new EventOutbox(async (data) => void sent.push(data), () => undefined);
      slow.begin();
      await vi.advanceTimersToNextTimerAsync();
      expect(times()).toEqual([[]]);
      // The job ends in its first turn: its result tells, with every event; nothing is sent.
      sent.length = 0;
      const quick = new EventOutbox(async (data) => void sent.push(data), () => undefined);
      quick.begin();
      quick.push({ type: 'warning', runId: 'w', time: 2, message: 'm2' } as TroupeEvent);
      expect(quick.takeTail(1000)).toHaveLength(1);
      await vi.runAllTimersAsync();
      expect(sent).toEqual([]);
    });
  });

  it('hands the events still queued at the end to the result when they are few, and sends them when they are many', async () => {
    const sent: string[] = [];
    const outbox = new EventOutbox(async (data) => void sent.push(data), () => undefined);
    const event = (n: number, text = '') => ({ type: 'warning', runId: 'w', time: n, message: `m${n}${text}` }) as TroupeEvent;
    outbox.push(event(1));
    outbox.push(event(2));
    expect(outbox.takeTail(1000)).toEqual([event(1), event(2)]);
    expect(outbox.takeTail(1000)).toBeUndefined();
    outbox.push(event(3, 'x'.repeat(2000)));
    expect(outbox.takeTail(1000)).toBeUndefined();
    await outbox.flush();
    expect(sent.map((s) => (JSON.parse(s) as { events: Array<{ time: number }> }).events.map((e) => e.time))).toEqual([[3]]);
    // Nothing was sent before, nor is sent after, for the tail that went with the result.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
  });

  it('warns instead of failing the job when an event is not JSON or a batch cannot be sent', async () => {
    const warnings: string[] = [];
    const outbox = new EventOutbox(async () => Promise.reject(new Error('Redis away')), (m) => warnings.push(m));
    const cyclic: Record<string, unknown> = { type: 'warning' };
    cyclic.self = cyclic;
    outbox.push(cyclic as unknown as TroupeEvent);
    outbox.push({ type: 'warning', runId: 'w', time: 0, message: 'fine' } as TroupeEvent);
    await outbox.flush();
    expect(warnings.some((w) => /not JSON/.test(w))).toBe(true);
    expect(warnings.some((w) => /could not be sent to the coordinator: Redis away/.test(w))).toBe(true);
  });
});

import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { isTroupeError } from '../../../src/core/errors.js';
import { run } from '../../../src/core/run.js';
import { bullmqExecutor, remote, startWorker } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { callsPerChunk, chunk, plan, startWorkerProcess, stopAll, type WorkerProcess } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe.skipIf(!url)('cancelling distributed work', () => {
  const procs: WorkerProcess[] = [];
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0)) await thing.close();
    await stopAll(procs);
  });

  it('removes the plan’s queued jobs and aborts its running attempts on the worker; no model call starts after the abort', { timeout: 60_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    // A worker process that runs two chunks at once, each waiting a minute in its model call.
    const worker = await startWorkerProcess({ url: url!, queueName: place.queueName, prefix: place.prefix, name: 'slow', concurrency: 2, delayMs: 60_000 });
    procs.push(worker);
    const executor = bullmqExecutor({ ...place, maxParallel: 6 });
    open.push(executor);
    const cancelled: Array<{ sequenceIndex?: number; removed: boolean }> = [];
    executor.events.on('job.cancelled', (e) => cancelled.push(e));
    const controller = new AbortController();
    const running = executePlan(plan([0, 1, 2, 3, 4, 5].map((i) => chunk(i))), { executor, signal: controller.signal });
    const outcome = running.then(() => undefined, (e: unknown) => e);
    // Two chunks are in their model call; four wait in the queue.
    await worker.waitFor((l) => l.t === 'call' && worker.lines.filter((x) => x.t === 'call').length === 2);
    controller.abort();
    expect(isTroupeError(await outcome, 'cancelled')).toBe(true);
    // The worker aborts both running attempts.
    for (let i = 0; i < 2; i++) await worker.waitFor((l) => l.t === 'failed' && l.cancelled === true && worker.lines.filter((x) => x.t === 'failed').length > i);
    while (cancelled.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));
    // The four queued jobs are removed; one a worker takes in the moment between its mark and its removal
    // (the worker freed a slot) is dropped by the worker unstarted: no fifth start below.
    expect(cancelled.filter((c) => c.removed).length).toBeGreaterThanOrEqual(3);
    // BullMQ marks the two jobs failed once their processors have returned.
    let stats = await executor.stats();
    while (stats.active > 0) stats = await executor.stats();
    expect(stats).toMatchObject({ waiting: 0, active: 0, inFlight: 0 });
    // A job sent after the cancellation runs next: had a cancelled job stayed queued, it would have run first.
    const echo = remote('echo', { executor });
    expect((await run(echo, 'still there?')).output).toBe('slow answered');
    const calls = callsPerChunk(worker.lines);
    expect([...calls.values()]).toEqual([1, 1]);
    expect(worker.lines.filter((l) => l.t === 'started' && l.kind === 'chunk')).toHaveLength(2);
  });

  it('cancels a remote run when its run is aborted', { timeout: 60_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const worker = await startWorkerProcess({ url: url!, queueName: place.queueName, prefix: place.prefix, name: 'slow', concurrency: 1, delayMs: 60_000 });
    procs.push(worker);
    const executor = bullmqExecutor(place);
    open.push(executor);
    // A chunk occupies the worker's one slot; the remote run waits in the queue behind it.
    const controller = new AbortController();
    const chunkRun = executePlan(plan([chunk(0)]), { executor, signal: controller.signal }).catch((e: unknown) => e);
    await worker.waitFor((l) => l.t === 'call');
    const echoAbort = new AbortController();
    const queued = new Promise<void>((resolve) => executor.events.on('job.queued', (e) => e.kind === 'run' && resolve()));
    const echo = run(remote('echo', { executor }), 'hello', { signal: echoAbort.signal }).catch((e: unknown) => e);
    await queued;
    const removed = new Promise<boolean>((resolve) => executor.events.once('job.cancelled', (e) => resolve(e.removed)));
    echoAbort.abort();
    expect(isTroupeError(await echo, 'cancelled')).toBe(true);
    expect(await removed).toBe(true);
    controller.abort();
    await chunkRun;
    await worker.waitFor((l) => l.t === 'failed');
    expect(worker.lines.filter((l) => l.t === 'started')).toHaveLength(1);
  });

  it('marks a job it cannot remove: when the job goes back to the queue, the next worker drops it unrun', { timeout: 60_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const executor = bullmqExecutor(place);
    open.push(executor);
    // Another process holds the job (active, locked) when the plan is cancelled, so the coordinator cannot remove it.
    const holder = new Worker(place.queueName, null, { connection: { url: url! }, prefix: place.prefix });
    open.push(holder);
    const controller = new AbortController();
    const queued = new Promise<string>((resolve) => executor.events.once('job.queued', (e) => resolve(e.jobId)));
    const running = executePlan(plan([chunk(0)]), { executor, signal: controller.signal }).catch((e: unknown) => e);
    const jobId = await queued;
    const job = await holder.getNextJob('holder');
    expect(job?.id).toBe(jobId);
    const cancelled = new Promise<boolean>((resolve) => executor.events.once('job.cancelled', (e) => resolve(e.removed)));
    controller.abort();
    expect(isTroupeError(await running, 'cancelled')).toBe(true);
    expect(await cancelled).toBe(false);
    // The holder lets go of it (a worker closing, or lost); a troupe worker takes it next and fails it without running it.
    await job!.moveToWait('holder');
    let calls = 0;
    const worker = await startWorker({ ...place, adapter: scriptedAdapter({ fallback: () => `call ${++calls}` }) });
    open.push(worker);
    const started: string[] = [];
    worker.events.on('job.started', (e) => started.push(e.jobId));
    const failed = await new Promise<{ jobId: string; cancelled: boolean; code?: string }>((resolve) => worker.events.once('job.failed', resolve));
    expect(failed).toMatchObject({ jobId, cancelled: true, code: 'cancelled' });
    expect(started).toEqual([]);
    expect(calls).toBe(0);
    expect((await executor.stats()).waiting).toBe(0);
  });

  it('runs a job whose id a cancelled job had, on a worker that heard that cancellation: the run that reuses the id clears it', { timeout: 60_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    // One slot, held by chunk 0 (its model call waits until aborted) while chunk 1 is queued and cancelled.
    const worker = await startWorker({ ...place, maxParallel: 1, adapter: scriptedAdapter({ rules: [{ match: '# Chunk 0:', reply: { fault: 'hang' } }], fallback: 'done' }) });
    open.push(worker);
    const executor = bullmqExecutor(place);
    open.push(executor);
    const started = new Promise<void>((resolve) => worker.events.once('job.started', () => resolve()));
    const holding = new AbortController();
    const held = executePlan(plan([chunk(0)]), { executor, signal: holding.signal }).catch((e: unknown) => e);
    await started;
    const first = new AbortController();
    const queued = new Promise<void>((resolve) => executor.events.once('job.queued', () => resolve()));
    const cancelledRun = executePlan(plan([chunk(1)]), { executor, runId: 'reused', signal: first.signal }).catch((e: unknown) => e);
    await queued;
    const removed = new Promise<boolean>((resolve) => executor.events.once('job.cancelled', (e) => resolve(e.removed)));
    first.abort();
    expect(isTroupeError(await cancelledRun, 'cancelled')).toBe(true);
    expect(await removed).toBe(true);
    // The same run id again: the same job id, taken by the worker that heard the cancellation once chunk 0 lets go of its slot.
    const again = executePlan(plan([chunk(1)]), { executor, runId: 'reused' });
    const requeued = new Promise<void>((resolve) => executor.events.once('job.queued', () => resolve()));
    await requeued;
    holding.abort();
    await held;
    expect((await again).results[0]).toMatchObject({ status: 'completed', output: 'done', attempts: 1 });
  });
});

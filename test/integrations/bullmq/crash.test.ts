import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { TroupeEvent } from '../../../src/core/events.js';
import { walk, type OpNode } from '../../../src/core/ops.js';
import { bullmqExecutor } from '../../../src/integrations/bullmq/index.js';
import { checkpointStream } from '../../../src/core/checkpoint.js';
import { redisStore } from '../../../src/integrations/redis/index.js';
import { resume } from '../../../src/core/resume.js';
import { run } from '../../../src/core/run.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import {
  callsPerChunk,
  chunk,
  crashPlan,
  plan,
  startCoordinatorProcess,
  startWorkerProcess,
  stopAll,
  type WorkerLine,
  type WorkerProcess,
} from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';
import { eventually } from '../../helpers/eventually.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe.skipIf(!url)('crashes', () => {
  const procs: WorkerProcess[] = [];
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0)) await thing.close();
    await stopAll(procs);
  });

  /** A queue of its own and where its store lives. */
  function place() {
    return { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1), storePrefix: prefixes() };
  }

  it('recovers a job whose worker was killed (kill -9) mid-chunk: another worker finishes it, and the plan gets each result once', { timeout: 60_000 }, async () => {
    const p = place();
    const locks = { lockDurationMs: 1000, stalledIntervalMs: 500 };
    // Worker A takes the first chunk and sits in its model call.
    const a = await startWorkerProcess({ url: url!, queueName: p.queueName, prefix: p.prefix, name: 'A', delayMs: 60_000, ...locks });
    procs.push(a);
    const executor = bullmqExecutor({ connection: p.connection, queueName: p.queueName, prefix: p.prefix, maxParallel: 1 });
    open.push(executor);
    const stalled: string[] = [];
    executor.events.on('job.stalled', (e) => stalled.push(e.worker ?? ''));
    const events: TroupeEvent[] = [];
    const running = run(planRunnable(plan([chunk(0), chunk(1, [0])]), { executor }), 'task', { onEvent: (e) => events.push(e) });
    await a.waitFor((l) => l.t === 'call' && l.chunk === 0);
    a.child.kill('SIGKILL');
    await a.exited;
    // Worker B comes up; once A's lock has expired, BullMQ hands the job to B.
    const b = await startWorkerProcess({ url: url!, queueName: p.queueName, prefix: p.prefix, name: 'B', ...locks });
    procs.push(b);
    const outcome = await running;
    expect(outcome.status).toBe('completed');
    expect(outcome.results.map((r) => [r.output, r.attempts])).toEqual([
      ['B did chunk 0', 1],
      ['B did chunk 1', 1],
    ]);
    expect(stalled).toEqual(['A']);
    // B's lines reach this process through a pipe, maybe after the plan has its result.
    await b.waitFor((l) => l.t === 'call' && l.chunk === 1);
    expect(callsPerChunk([...a.lines, ...b.lines])).toEqual(new Map([[0, 2], [1, 1]]));
    // A's half of the attempt is in the trace as a failed op; B's as the completed one.
    const agents: OpNode[] = [];
    walk(outcome.trace, (n) => void (n.kind === 'agent' && agents.push(n)));
    expect(agents.map((n) => n.status).sort()).toEqual(['completed', 'completed', 'failed']);
    expect(agents.find((n) => n.status === 'failed')!.error).toMatch(/worker running this attempt was lost/);
    expect(events.filter((e) => e.type === 'op.completed' && e.kind === 'agent')).toHaveLength(3);
    // The run log says where chunk 0 went: to A, lost, then to B.
    const chunk0 = events.filter((e) => e.type.startsWith('remote.') && (e as { jobId?: string }).jobId?.endsWith('chunk-0|1'));
    expect(chunk0.map((e) => [e.type, (e as { worker?: string }).worker])).toEqual([
      ['remote.queued', undefined],
      ['remote.started', 'A'],
      ['remote.stalled', 'A'],
      ['remote.started', 'B'],
    ]);
  });

  it('resumes a plan whose coordinator was killed: chunks that finished, also while no coordinator was up, do not run again', { timeout: 60_000 }, async () => {
    const p = place();
    const runId = `crash-${randomUUID()}`;
    const gate = `${p.storePrefix}d:gate`; // the document `gate` of the store
    const workers = await killCoordinatorMidPlan(p, runId, gate);
    // With no coordinator up, the workers finish 2 and 3 and record them in the plan's checkpoint.
    const store = redisStore({ connection: url!, prefix: p.storePrefix });
    open.push(store);
    await store.set('gate', true);
    await idle(workers);
    const { records } = await store.read(checkpointStream(runId, '/plan:crash#0'));
    expect(records).toEqual(
      expect.arrayContaining([2, 3].map((i) => ({ sequenceIndex: i, status: 'completed', attempts: 1, output: expect.stringMatching(new RegExp(`did chunk ${i}$`)) }))),
    );

    const executor = bullmqExecutor({ connection: p.connection, queueName: p.queueName, prefix: p.prefix, maxParallel: 4 });
    open.push(executor);
    const queued: number[] = [];
    executor.events.on('job.queued', (e) => queued.push(e.sequenceIndex!));
    const events: TroupeEvent[] = [];
    const result = await resume(planRunnable(crashPlan(), { executor, planId: 'crash' }), runId, { store, onEvent: (e) => events.push(e) });
    expect(result.status).toBe('completed');
    expect(result.results.every((r) => r.status === 'completed')).toBe(true);
    // The workers' lines reach this process through pipes, maybe after the plan has its result.
    await eventually(() => callsPerChunk(workers.flatMap((w) => w.lines)).size === 8, 'every chunk\'s call is seen');
    expect(callsPerChunk(workers.flatMap((w) => w.lines))).toEqual(new Map([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [i, 1])));
    // The plan restored its checkpoint with the workers' entries folded in: chunks 0 to 3 are not sent again, and keep their outputs.
    expect(events).toContainEqual(expect.objectContaining({ type: 'checkpoint.restored', kind: 'plan', completed: false }));
    expect(queued.filter((i) => i < 4)).toEqual([]);
    expect(queued).toContain(7);
    expect(result.results.slice(0, 4).map((r) => r.output)).toEqual([0, 1, 2, 3].map((i) => expect.stringMatching(new RegExp(`did chunk ${i}$`))));
  });

  it('resumes a plan whose coordinator was killed while jobs still run: the new coordinator waits for them instead of starting them again', { timeout: 60_000 }, async () => {
    const p = place();
    const runId = `crash-${randomUUID()}`;
    const gate = `${p.storePrefix}d:gate`; // the document `gate` of the store
    const workers = await killCoordinatorMidPlan(p, runId, gate);

    const store = redisStore({ connection: url!, prefix: p.storePrefix });
    open.push(store);
    const executor = bullmqExecutor({ connection: p.connection, queueName: p.queueName, prefix: p.prefix, maxParallel: 4 });
    open.push(executor);
    const adopted: Array<number | undefined> = [];
    executor.events.on('job.queued', (e) => {
      if (e.adopted) adopted.push(e.sequenceIndex);
      // Both slow chunks are still running, and the new coordinator has taken them over: let them finish.
      if (adopted.includes(2) && adopted.includes(3)) void store.set('gate', true);
    });
    const result = await resume(planRunnable(crashPlan(), { executor, planId: 'crash' }), runId, { store });
    expect(result.status).toBe('completed');
    // The workers' lines reach this process through pipes, maybe after the plan has its result.
    await eventually(() => callsPerChunk(workers.flatMap((w) => w.lines)).size === 8, 'every chunk\'s call is seen');
    expect(callsPerChunk(workers.flatMap((w) => w.lines))).toEqual(new Map([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [i, 1])));
    // The gated chunks 2 and 3 were running when the coordinator died, and were taken over; 4 and 5 (ready once 0 and 1
    // ended) may have been in flight too on a loaded machine: taken over as well, never sent again (one call each, above).
    expect(adopted).toEqual(expect.arrayContaining([2, 3]));
    expect(adopted.filter((i) => ![2, 3, 4, 5].includes(i!))).toEqual([]);
  });

  async function startWorkers(p: ReturnType<typeof place>, gate: { key: string; chunks: number[] }): Promise<WorkerProcess[]> {
    const started = await Promise.all(
      ['A', 'B'].map((name) => startWorkerProcess({ url: url!, queueName: p.queueName, prefix: p.prefix, storePrefix: p.storePrefix, name, concurrency: 2, gate })),
    );
    procs.push(...started);
    return started;
  }

  /**
   * Two workers whose chunks 2 and 3 are held until the store's `gate` exists, and a coordinator process that is
   * killed once chunks 0 and 1 succeeded and 2 and 3 are in their model calls. Resolves with the workers.
   */
  async function killCoordinatorMidPlan(p: ReturnType<typeof place>, runId: string, gate: string): Promise<WorkerProcess[]> {
    const workers = await startWorkers(p, { key: gate, chunks: [2, 3] });
    const coordinator = await startCoordinatorProcess({ url: url!, queueName: p.queueName, prefix: p.prefix, storePrefix: p.storePrefix, runId });
    procs.push(coordinator);
    await coordinator.waitFor((l) => l.t === 'completed' && coordinator.lines.filter((x) => x.t === 'completed').length === 2);
    await Promise.all([2, 3].map((i) => anyLine(workers, (l) => l.t === 'call' && l.chunk === i)));
    coordinator.child.kill('SIGKILL');
    await coordinator.exited;
    return workers;
  }
});

/** Resolve with the first line of any of the workers that matches. */
function anyLine(workers: readonly WorkerProcess[], match: (line: WorkerLine) => boolean): Promise<WorkerLine> {
  return Promise.race(workers.map((w) => w.waitFor(match)));
}

/** Resolve once every job the workers started has ended. */
async function idle(workers: readonly WorkerProcess[]): Promise<void> {
  const ended = (l: WorkerLine) => l.t === 'completed' || l.t === 'failed' || l.t === 'handedBack';
  for (;;) {
    const lines = workers.flatMap((w) => w.lines);
    if (lines.filter((l) => l.t === 'started').length === lines.filter(ended).length) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

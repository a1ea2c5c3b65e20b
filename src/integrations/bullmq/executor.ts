/**
 * `bullmqExecutor`: an {@link Executor} that sends each chunk attempt to a
 * BullMQ queue, where worker processes on any machine take it. The plan's
 * scheduler keeps scheduling (ready queue, retries, time-outs, the abort
 * threshold); only the attempt crosses the wire.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import { anything, defineOptions, func, positiveInteger } from '../../core/options.js';
import type { ChunkAttemptResult, ChunkJob, ChunkJobData, Executor } from '../../plan/engine/executor.js';
import { JobClient } from './client.js';
import { coordinatorError } from './errors.js';
import { checkBase, placeOf } from './connection.js';
import type { QueueClientEvents } from './events.js';
import { RemoteMirror, watchJob } from './mirror.js';
import { clientSettings, queueClientShape, queueLocationShape, type QueueClientOptions } from './options.js';
import { writeGrant } from './trust.js';
import { chunkJobId, chunkJobSchema, type ChunkJobWire } from './wire.js';

/** A trace-context carrier: a plain object of strings (W3C `traceparent`, `tracestate`). */
export type TraceCarrier = Record<string, string>;

/** Options of {@link bullmqExecutor}. */
export interface BullmqExecutorOptions extends Omit<QueueClientOptions, 'queueName'> {
  /**
   * The queue of each attempt: a name, or a function of the job, for one
   * queue per role (`(job) => \`{troupe-${job.chunk.role}}\``) so each role
   * has workers of its own, scaled on its own depth; on Redis Cluster a
   * hash tag in each name spreads the queues over the cluster. Default: `troupe`.
   */
  queueName?: string | ((job: ChunkJobData) => string);
  /**
   * Attempts this coordinator has in the queue at once (the scheduler never
   * dispatches more). Set it to about the workers' total `maxParallel`: a
   * chunk's time-out also counts the time its job waits in the queue.
   * Default: 64.
   */
  maxParallel?: number;
  /**
   * The trace context each job carries, from the op the attempt belongs to
   * (with `troupe/otel`: `(job, op) => tracing.inject(op)`). A worker reads it
   * back with `extractTraceContext(job.traceContext)`. Default: none.
   */
  traceContext?: (job: ChunkJobData, op: { runId: string; opId: string }) => TraceCarrier | undefined;
}

const bullmqExecutorOptions = defineOptions<BullmqExecutorOptions>('bullmqExecutor', {
  ...queueClientShape,
  connection: queueLocationShape.connection,
  prefix: queueLocationShape.prefix,
  queueName: anything,
  maxParallel: positiveInteger,
  traceContext: func,
});

/** Numbers of a queue, for autoscaling and dashboards. */
export interface QueueStats {
  queueName: string;
  /** Jobs waiting for a worker (the queue depth). */
  waiting: number;
  /** Jobs a worker is running. */
  active: number;
  /** Jobs waiting for a delay. */
  delayed: number;
  /** Age of the oldest waiting job, in ms (0 when none waits). */
  oldestWaitingMs: number;
  /** Workers connected to the queue (-1 when Redis does not tell: `CLIENT LIST` refused). */
  workers: number;
  /** Jobs this coordinator waits for. */
  inFlight: number;
  /** Time from queued to started of this coordinator's most recent jobs (up to 256), in ms. */
  recentWaitMs: { count: number; median: number; p95: number; max: number };
}

/** A queue-backed executor. */
export interface BullmqExecutor extends Executor {
  readonly kind: 'bullmq';
  /** The queue it sends attempts to (`undefined` when `queueName` is a function: one queue per job's choice). */
  readonly queueName: string | undefined;
  /** Typed events of its jobs: queued, started (with the worker's name), completed, failed, cancelled, stalled; the connection going down and up. */
  readonly events: EventEmitter<QueueClientEvents>;
  /**
   * A queue's depth, active jobs and wait times: a seam for autoscaling.
   * `queueName` is required when the executor routes jobs to several queues.
   */
  stats(options?: { queueName?: string; signal?: AbortSignal }): Promise<QueueStats>;
  /** Close its connections; attempts still in flight fail with a `QueueError` (`closed`). */
  close(): Promise<void>;
}

/** Where an executor keeps its queue clients, for `remote(name, { executor })` to share. */
const CLIENTS = Symbol('troupe.bullmq.clients');

/** The client of queue `queueName` (default: the executor's own) of an executor made by {@link bullmqExecutor}; `undefined` for anything else. */
export function clientOf(executor: unknown, queueName?: string): JobClient | undefined {
  const clients = typeof executor === 'object' && executor !== null ? (executor as { [CLIENTS]?: unknown })[CLIENTS] : undefined;
  return typeof clients === 'function' ? (clients as (queueName?: string) => JobClient)(queueName) : undefined;
}

/** Jobs of one chunk the lookup of a resumed run reads at most. */
const MAX_PROBE = 1000;

/**
 * An executor that runs each chunk attempt as a BullMQ job, on whichever
 * worker (`startWorker`, `troupe worker`) takes it. `executePlan`,
 * `planRunnable` and `PlanningSession` use it unchanged.
 *
 * - Each attempt is one job: the chunk, its prompt, its role, the attempt, the
 *   run id, the chunk's checkpoint path and the trace context; never a closure.
 * - The worker's events (ops, agent turns, tool calls, text deltas, usage)
 *   come back before its result and join the plan's run: the run log,
 *   `onEvent`, the op tree and the usage roll-up cover remote work.
 * - When the attempt's signal aborts (time-out, cancellation, the abort
 *   threshold) its job is removed if still queued, else its worker aborts it.
 * - In a resumed run (`resume(...)` with the store the workers record to) a
 *   chunk a worker finished is taken from the store, and a job an earlier
 *   coordinator left queued or running is waited for, not run again. With
 *   a store, each chunk job's grant is written there before the job is
 *   added: a worker records a result only for a job it was granted for.
 * - With `signingKey`, each job is signed, and workers with the same key
 *   run only jobs whose signature verifies; jobs over `maxJobBytes` or
 *   `maxPromptBytes` are refused before they are added.
 *
 * @example
 * ```ts
 * import { bullmqExecutor } from 'troupe/bullmq';
 * const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:6379', maxParallel: 16 });
 * const outcome = await executePlan(plan, { executor, store });
 * await executor.close();
 * ```
 */
export function bullmqExecutor(options: BullmqExecutorOptions): BullmqExecutor {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected bullmqExecutor options, got ${describeValue(options)}`);
  bullmqExecutorOptions.check(options);
  const route = options.queueName;
  if (route !== undefined && typeof route !== 'string' && typeof route !== 'function') {
    throw new ConfigurationError(`Expected \`queueName\` to be a queue name or a function of a job, got ${describeValue(route)}`);
  }
  const fixed = typeof route === 'function' ? undefined : (route ?? 'troupe');
  const base = checkBase(options, 'bullmqExecutor');
  if (fixed !== undefined) placeOf(base, fixed);
  const settings = clientSettings(options, 'bullmqExecutor');
  const maxParallel = options.maxParallel ?? 64;
  const traceContext = options.traceContext;
  if (traceContext !== undefined && typeof traceContext !== 'function') {
    throw new ConfigurationError(`Expected \`traceContext\` to be a function of a job, got ${describeValue(traceContext)}`);
  }
  const events = new EventEmitter<QueueClientEvents>();
  /** One client per queue, made when first used. */
  const clients = new Map<string, JobClient>();
  const clientFor = (queueName: string): JobClient => {
    let client = clients.get(queueName);
    if (!client) clients.set(queueName, (client = new JobClient(placeOf(base, queueName), settings, events)));
    return client;
  };
  const defaultClient = (queueName: string | undefined, usedFor: string): JobClient => {
    const name = queueName ?? fixed;
    if (name === undefined) throw new ConfigurationError(`This executor sends jobs to several queues: give the \`queueName\` of ${usedFor}`);
    return clientFor(name);
  };
  const dispatch = dispatcher((job) => clientFor(typeof route === 'function' ? route(job) : fixed!), traceContext);

  const executor: BullmqExecutor = {
    kind: 'bullmq',
    maxParallel,
    queueName: fixed,
    events,
    dispatch,
    async stats(opts = {}) {
      const client = defaultClient(opts.queueName, 'stats()');
      const counts = await client.counts(opts.signal);
      const waits = [...client.recentWaits()].sort((a, b) => a - b);
      const at = (q: number) => (waits.length === 0 ? 0 : waits[Math.min(waits.length - 1, Math.floor(q * waits.length))]!);
      return { queueName: client.queueName, ...counts, inFlight: client.inFlight, recentWaitMs: { count: waits.length, median: at(0.5), p95: at(0.95), max: waits.at(-1) ?? 0 } };
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
  Object.defineProperty(executor, CLIENTS, { value: (queueName?: string) => defaultClient(queueName, 'remote()') });
  return executor;
}

/**
 * The executor's `dispatch`: send the attempt to its queue (or, in a
 * resumed run, take over the job an earlier coordinator sent) and mirror
 * what the worker reports into the attempt's context.
 */
function dispatcher(clientOfJob: (job: ChunkJobData) => JobClient, traceContext: BullmqExecutorOptions['traceContext']): (job: ChunkJob) => Promise<ChunkAttemptResult> {
  /** In resumed runs: how far the job numbers of each chunk are ahead of its attempt numbers. */
  const offsets = new Map<string, number>();

  /** The job number of this attempt: its attempt number, after the jobs an earlier coordinator added for the chunk. */
  async function jobNumber(client: JobClient, job: ChunkJob, path: string): Promise<number> {
    if (!job.ctx.resuming) return job.attempt;
    const key = `${job.runId}\n${path}`;
    let offset = offsets.get(key);
    if (offset === undefined) {
      let last = 0;
      let lastState = 'unknown';
      for (let n = 1; n <= MAX_PROBE; n++) {
        const state = await client.jobState(chunkJobId(job.runId, path, n), job.signal);
        if (state === 'unknown') break;
        [last, lastState] = [n, state];
      }
      // Take over the last job unless it failed: then this attempt is a new job after it.
      offset = last === 0 ? 0 : last - job.attempt + (lastState === 'failed' ? 1 : 0);
      offsets.set(key, offset);
    }
    return job.attempt + offset;
  }

  return async (job) => {
    const ctx = job.ctx;
    const signal = job.signal;
    const data = job.toJSON();
    const client = clientOfJob(data);
    const path = ctx.checkpointPath;
    const jobId = chunkJobId(data.runId, path, await jobNumber(client, job, path));
    const carrier = traceContext?.(data, { runId: ctx.runId, opId: ctx.op.id });
    const wire: ChunkJobWire = { v: 1, kind: 'chunk', ...data, path, ...(carrier ? { traceContext: carrier } : {}) };
    // What a worker would refuse (an unknown role, a chunk that is not one) is refused here, before a job is added.
    const checked = chunkJobSchema.safeParse(wire);
    if (!checked.success) {
      const issues = checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
      throw new ConfigurationError(`Chunk ${describeValue(data.chunk?.sequenceIndex)} cannot be sent to a worker: ${issues.join('; ')}`, { code: 'invalid_argument', details: { issues } });
    }
    const store = ctx.store;
    if (store && data.agent === undefined) {
      // The grant: a worker records the chunk's result in the plan's checkpoint only for a job its coordinator handed out.
      await writeGrant(store, data.runId, wire, { jobId, sequenceIndex: data.chunk.sequenceIndex, attempt: data.attempt }, { signal }).catch((error: unknown) => {
        if (signal.aborted) throw error;
        ctx.emit('warning', { message: `The grant of job ${jobId} could not be written (its worker will not record the chunk; this run will): ${errorMessage(error)}`, code: 'store_error' });
      });
    }
    const mirror = new RemoteMirror(ctx);
    try {
      const result = await client.submit({
        jobId,
        kind: 'chunk',
        data: wire,
        ref: { jobId, kind: 'chunk', runId: data.runId, planId: data.planId, sequenceIndex: data.chunk.sequenceIndex, attempt: data.attempt },
        signal,
        existing: ctx.resuming ? 'adopt' : 'replace',
        watcher: watchJob(ctx, mirror, { jobId, queue: client.queueName, kind: 'chunk' }),
      });
      mirror.close('failed', 'The worker finished the job without closing this op');
      return { output: result.output, ...(result.files ? { files: result.files } : {}), ...(result.recorded ? { recorded: true } : {}) };
    } catch (error) {
      mirror.close(signal.aborted ? 'cancelled' : 'failed', errorMessage(error));
      throw coordinatorError(ctx, error);
    }
  };
}

/**
 * `startWorker`: a process (or part of one) that takes troupe jobs from a
 * BullMQ queue and runs them with its own agents and adapters.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EventEmitter } from 'eventemitter3';
import type { Job, Worker as BullWorker } from 'bullmq';
import type { ModelAdapter } from '../../core/adapter.js';
import { realClock, type Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import type { TroupeEvent } from '../../core/events.js';
import { abortSignal, anything, boolean, defineOptions, expectNonNegativeInteger, expectPositiveInteger, expectPositiveNumber, func, positiveInteger } from '../../core/options.js';
import type { ToolDefinition } from '../../core/tools.js';
import { guardrailOptions, validateGuardrailOptions, type GuardrailOptions } from '../../core/guardrails.js';
import { loadPeer } from '../../core/peer.js';
import type { Store } from '../../core/store.js';
import type { WorkspaceStrategy } from '../../workspaces/types.js';
import { checkPlace, openClient, whenReady, type QueueLocation, type QueuePlace, type RedisClient } from './connection.js';
import type { WorkerEvents } from './events.js';
import { checkRoleAgents, loadRegistry, type RoleAgents, type WorkerAgents } from './registry.js';
import { withTimeout } from './time.js';
import { BATCH_EVENT, CANCEL_MARK_PREFIX } from './wire.js';
import { unreadJobInfo, type WorkerJobInfo } from './worker-job.js';
import { HandedBack, jobEvent, jobProcessor } from './worker-processor.js';
import { IdleTracker, RunningJobs } from './worker-parts.js';
import { queueLocationShape } from './options.js';
import { jobTrust, type JobTrust } from './trust.js';

/** Options of {@link startWorker}. */
export interface StartWorkerOptions extends QueueLocation {
  /** Jobs this worker runs at once. Default: 1. */
  maxParallel?: number;
  /**
   * The runnables it can run, by name: an object of runnables, a list (each
   * under its `name`), or a folder of agent files (compiled with `adapters`
   * and `tools`). A chunk runs on the agent named after its role (or
   * `roles[role]`); without one, on an agent built from the role
   * configuration the job carries, as a plan does in process. `remote(name)`
   * runs the runnable `name`. Default: none.
   */
  agents?: WorkerAgents;
  /** Which agent runs the chunks of a role, when it is not the one named after the role. */
  roles?: RoleAgents;
  /** The adapter of agents that name none. One of `adapter` and `adapters` is required. */
  adapter?: ModelAdapter;
  /** Adapters by name, for agents and roles that name one. */
  adapters?: Record<string, ModelAdapter>;
  /**
   * Tools of the agents built from a role configuration (and of agent files
   * that name them). An agent built from a role gets only those the role
   * allows: the role's `tools` when the job has them, else those its
   * `preferredTools` name (none for a role that names none).
   */
  tools?: readonly ToolDefinition[];
  /**
   * Guardrails on every job this worker runs, as `planRunnable(plan, {
   * guardrails })` puts them on every attempt in process: a chunk attempt
   * is guarded as `chunk <n>` (input: its prompt; output: its answer;
   * stream and tool guardrails on everything it runs), a `remote(name)` run
   * under its name. Agents built from a role configuration are guarded
   * only this way; agents of the registry may also carry their own
   * (`withGuardrails`). A trip fails the job with `guardrail_tripped`, its
   * guardrail, stage and verdict, and the coordinator halts its run.
   * Default: none.
   */
  guardrails?: GuardrailOptions;
  /**
   * The store the coordinators' runs use: each chunk this worker finishes
   * is recorded in its plan's checkpoint there (`recordChunkResult`), so a
   * coordinator that resumes the run counts it as done instead of running
   * it again. Also `append` is needed. Default: none (nothing recorded).
   */
  store?: Store;
  /** A workspace for each chunk (prepared, merged, cleaned up here, on the worker). Default: none. */
  workspace?: WorkspaceStrategy;
  /** The directory workspaces are prepared from (and agents work in without one). Default: `process.cwd()`. */
  baseDir?: string;
  /** The worker's name, in events and results (which worker ran a chunk). Default: `<hostname>:<pid>:<4 hex>`. */
  name?: string;
  /** The clock of the runs and of every wait. Default: the real clock. */
  clock?: Clock;
  /**
   * How long a job's lock lasts without renewal, in ms (renewed at half of
   * it while the job runs). A worker that dies loses its jobs' locks; BullMQ
   * then gives them to another worker. Default: 30000.
   */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock expired, in ms. Default: 30000. */
  stalledIntervalMs?: number;
  /** How many times a job may be taken over after its worker was lost before it fails. Default: 1. */
  maxStalledCount?: number;
  /**
   * On `close()` (and SIGTERM with `handleSignals`), how long running jobs
   * may take to finish, in ms; after it they are aborted and handed back to
   * the queue for another worker. Default: 25000.
   */
  closeTimeoutMs?: number;
  /**
   * Close on SIGTERM and SIGINT (a second signal hands the running jobs back
   * at once). Listeners are added here and removed on close, never at
   * import. Default: false.
   */
  handleSignals?: boolean;
  /**
   * Called as each job starts; the listener it returns receives every event
   * of the job's run on this worker. With `troupe/otel`:
   * `observe: (job) => otelTracing({ parent: extractTraceContext(job.traceContext) }).onEvent`.
   */
  observe?: (job: WorkerJobInfo) => ((event: TroupeEvent) => void) | undefined;
  /** Longest wait for one Redis call (connecting, reading a cancellation, sending events), in ms. Default: 10000. */
  timeoutMs?: number;
  /**
   * The secret the coordinators sign jobs with (`bullmqExecutor({
   * signingKey })`, `remote(name, { signingKey })`), of at least 16 bytes.
   * With it, the worker runs only jobs whose signature verifies: an
   * unsigned job, or one whose signature does not verify, fails at once
   * with a `JobRefusedError` (code `job_refused`, reason `unsigned` or
   * `bad_signature`) and `job.failed`, and is never run or retried.
   * Without it, the worker runs any job written to its queue. Default:
   * none.
   */
  signingKey?: string | Uint8Array;
  /** The largest job this worker runs, in bytes of JSON; a larger one fails before it runs (`job_refused`, `too_large`). Default: 2 MiB. */
  maxJobBytes?: number;
  /** The largest prompt (a chunk's prompt, a run's input) this worker runs, in bytes of UTF-8; a larger one fails before it runs. Default: 1 MiB. */
  maxPromptBytes?: number;
  /** Closes the worker when it aborts (gracefully, as `close()`). */
  signal?: AbortSignal;
}

/** The description of {@link StartWorkerOptions}; the values `anything` lets through are checked by `startWorker` itself. */
const startWorkerOptions = defineOptions<StartWorkerOptions>('startWorker', {
  ...queueLocationShape,
  maxParallel: positiveInteger,
  agents: anything,
  roles: anything,
  adapter: anything,
  adapters: anything,
  tools: anything,
  guardrails: guardrailOptions,
  store: anything,
  workspace: anything,
  baseDir: anything,
  name: anything,
  clock: anything,
  lockDurationMs: anything,
  stalledIntervalMs: anything,
  maxStalledCount: anything,
  closeTimeoutMs: anything,
  handleSignals: boolean,
  observe: func,
  timeoutMs: anything,
  signingKey: anything,
  maxJobBytes: anything,
  maxPromptBytes: anything,
  signal: abortSignal,
});

/** A running worker. */
export interface TroupeWorker {
  /** Its name. */
  readonly name: string;
  /** The queue it takes jobs from. */
  readonly queueName: string;
  /** Typed events: each job started, completed, failed or handed back; closing, closed; warnings. */
  readonly events: EventEmitter<WorkerEvents>;
  /** Jobs running now. */
  readonly running: number;
  /** Resolves once no job has run for `ms` (on the worker's clock), or once the worker is closed. */
  onIdle(ms: number, options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Stop taking jobs, let running ones finish for up to `timeoutMs` (default:
   * `closeTimeoutMs`), hand the rest back to the queue, and close the
   * connections. Idempotent; a second call with `timeoutMs: 0` hands back at once.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Start a worker: it takes chunk attempts and named runs from the queue
 * (`concurrency` at a time), runs each with its own agents and adapters,
 * sends the events back to the coordinator as they happen, records the
 * chunks it finishes in their plan's checkpoint in `store`, and aborts a job when its coordinator cancels
 * it. Resolves once it is connected and taking jobs.
 *
 * @example
 * ```ts
 * import { startWorker } from 'troupe/bullmq';
 * const worker = await startWorker({
 *   connection: process.env.REDIS_URL!, agents: './agents', adapter, store, maxParallel: 4, handleSignals: true,
 * });
 * worker.events.on('job.completed', (job) => console.log(`done ${job.label}`));
 * ```
 */
export async function startWorker(options: StartWorkerOptions): Promise<TroupeWorker> {
  const o = checkWorkerOptions(options);
  const place = checkPlace(options, 'startWorker');
  const { clock, timeoutMs } = o;
  const events = new EventEmitter<WorkerEvents>();
  const warn = (message: string) => events.emit('worker.warning', { message });
  const adapters = { ...(options.adapters ?? {}) };
  const tools = [...(options.tools ?? [])];
  const registry = await loadRegistry(options.agents, { adapters, tools, ...(options.signal ? { signal: options.signal } : {}) });
  const bull = await loadPeer('bullmq', () => import('bullmq'), 'startWorker');
  const link = await connectWorker(place, o);
  const { client, jobs } = link;
  const idle = new IdleTracker(clock);
  let eventsKey = '';
  const processor = jobProcessor({
    host: {
      worker: o.name,
      registry,
      roles: o.roles,
      adapter: options.adapter,
      adapters,
      tools,
      guardrails: o.guardrails,
      store: options.store,
      workspace: options.workspace,
      baseDir: o.baseDir,
      clock,
      trust: o.trust,
      observe: options.observe,
      publish: (jobId, exec, data) =>
        withTimeout(client.xadd(eventsKey, 'MAXLEN', '~', '10000', '*', 'event', BATCH_EVENT, 'jobId', jobId, 'exec', exec, 'worker', o.name, 'data', data), timeoutMs, clock).then(() => undefined),
      readCancel: (jobId) => jobs.check(jobId),
      warn,
    },
    jobs,
    idle,
    events,
    clock,
    waitingError: () => new bull.WaitingError(),
    unrecoverableError: (message) => new bull.UnrecoverableError(message),
  });
  const bullWorker: BullWorker = new bull.Worker(place.queueName, processor, {
    connection: client,
    prefix: place.prefix,
    concurrency: o.maxParallel,
    name: o.name,
    lockDuration: o.lockDurationMs,
    stalledInterval: o.stalledIntervalMs,
    maxStalledCount: o.maxStalledCount,
  });
  eventsKey = bullWorker.keys.events!;
  bullWorker.on('error', (error: Error) => {
    // While Redis is away every poll fails; say so only for errors with a working connection.
    if (client.status === 'ready') warn(`Worker error: ${errorMessage(error)}`);
  });
  bullWorker.on('failed', (job: Job | undefined, error: Error) => {
    // A job its coordinator cancelled before this worker took it: BullMQ failed it unrun, on its mark (never started here).
    if (job?.id === undefined || !job.deferredFailure?.startsWith(CANCEL_MARK_PREFIX)) return;
    events.emit('job.failed', { ...jobEvent(unreadJobInfo(job.id, job.data)), durationMs: 0, error: errorMessage(error), code: 'cancelled', cancelled: true });
  });
  const close = closer({ o, events, warn, bullWorker, link, idle, signal: options.signal });
  return {
    name: o.name,
    queueName: place.queueName,
    events,
    get running() {
      return idle.busy;
    },
    onIdle(ms, idleOptions = {}) {
      expectPositiveNumber('ms', ms);
      return idle.idle(ms, idleOptions.signal);
    },
    close,
  };
}

/** A worker's connections: the client (shared with BullMQ) and the running jobs, subscribed to cancellations. */
interface WorkerLink {
  readonly client: RedisClient;
  readonly jobs: RunningJobs;
  /** Drop the subscription and the connection troupe opened. */
  release(): void;
}

/** Connect and subscribe to cancellations; resolves once both are ready (or fails within `timeoutMs`, closing what it opened). */
async function connectWorker(place: QueuePlace, o: WorkerSettings): Promise<WorkerLink> {
  const { clock, timeoutMs } = o;
  const { client, owned } = await openClient(place, 'startWorker');
  const onError = () => undefined; // connection errors surface through the calls that fail
  client.on('error', onError);
  const jobs = new RunningJobs(client, place, clock, timeoutMs);
  const release = () => {
    jobs.close();
    // A connection troupe opened keeps its error listener: ioredis may still report a failed reconnection.
    if (owned) client.disconnect();
    else client.off('error', onError);
  };
  try {
    await whenReady(client, timeoutMs, clock, 'startWorker');
    await jobs.listen(onError);
  } catch (error) {
    release();
    throw error;
  }
  return { client, jobs, release };
}

/** What closing a worker needs. */
interface CloserParts {
  o: WorkerSettings;
  events: EventEmitter<WorkerEvents>;
  warn: (message: string) => void;
  bullWorker: BullWorker;
  link: WorkerLink;
  idle: IdleTracker;
  signal: AbortSignal | undefined;
}

/**
 * The worker's `close`, wired to SIGTERM and SIGINT when asked (a second
 * signal hands running jobs back at once) and to the worker's signal.
 */
function closer(parts: CloserParts): TroupeWorker['close'] {
  const { o, events, warn, bullWorker, link, idle, signal } = parts;
  const { clock, timeoutMs } = o;
  let closing: Promise<void> | undefined;
  let signalled = false;
  const handBack = () => link.jobs.abortAll(new HandedBack());
  const onSignal = () => {
    void close(signalled ? { timeoutMs: 0 } : {});
    signalled = true;
  };
  const onAbort = () => void close();

  function close(closeOptions: { timeoutMs?: number } = {}): Promise<void> {
    const grace = expectNonNegativeInteger('timeoutMs', closeOptions.timeoutMs) ?? o.closeTimeoutMs;
    if (closing) {
      if (grace === 0) handBack();
      return closing;
    }
    closing = (async () => {
      events.emit('worker.closing', { name: o.name });
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      signal?.removeEventListener('abort', onAbort);
      const cancelHandBack = clock.setTimer(handBack, grace);
      // Past the grace period and `timeoutMs` to hand jobs back, stop waiting for BullMQ (Redis may be away).
      await withTimeout(bullWorker.close(), grace + timeoutMs, clock).catch((error: unknown) => warn(`The worker did not close cleanly: ${errorMessage(error)}`));
      cancelHandBack();
      link.release();
      idle.close();
      events.emit('worker.closed', { name: o.name });
    })();
    return closing;
  }

  if (o.handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return close;
}

/** The options of a worker after validation. */
interface WorkerSettings {
  maxParallel: number;
  roles: RoleAgents;
  baseDir: string;
  name: string;
  clock: Clock;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  closeTimeoutMs: number;
  handleSignals: boolean;
  timeoutMs: number;
  guardrails: GuardrailOptions | undefined;
  trust: JobTrust;
}

function checkWorkerOptions(options: StartWorkerOptions): WorkerSettings {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected startWorker options, got ${describeValue(options)}`);
  startWorkerOptions.check(options);
  const { adapter, adapters, store, workspace, observe, clock } = options;
  if (adapter === undefined && adapters === undefined) throw new ConfigurationError('startWorker needs `adapter` or `adapters`: the models its agents run on');
  if (adapter !== undefined && typeof adapter?.openSession !== 'function') throw new ConfigurationError(`Expected \`adapter\` to be a model adapter, got ${describeValue(adapter)}`);
  if (adapters !== undefined && (typeof adapters !== 'object' || adapters === null || !Object.values(adapters).every((a) => typeof a?.openSession === 'function'))) {
    throw new ConfigurationError(`Expected \`adapters\` to be model adapters by name, got ${describeValue(adapters)}`);
  }
  if (store !== undefined && (typeof store?.append !== 'function' || typeof store.read !== 'function')) throw new ConfigurationError(`Expected \`store\` to be a store, got ${describeValue(store)}`);
  if (workspace !== undefined && typeof workspace?.prepare !== 'function') throw new ConfigurationError(`Expected \`workspace\` to be a workspace strategy, got ${describeValue(workspace)}`);
  if (observe !== undefined && typeof observe !== 'function') throw new ConfigurationError(`Expected \`observe\` to be a function of a job, got ${describeValue(observe)}`);
  if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock.setTimer !== 'function')) throw new ConfigurationError(`Expected \`clock\` to be a Clock, got ${describeValue(clock)}`);
  if (options.tools !== undefined && !(Array.isArray(options.tools) && options.tools.every((t) => typeof t?.name === 'string' && typeof t.execute === 'function'))) {
    throw new ConfigurationError(`Expected \`tools\` to be an array of tool definitions, got ${describeValue(options.tools)}`);
  }
  for (const key of ['baseDir', 'name'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw new ConfigurationError(`Expected \`${key}\` to be a non-empty string, got ${describeValue(value)}`);
  }
  if (options.handleSignals !== undefined && typeof options.handleSignals !== 'boolean') throw new ConfigurationError(`Expected \`handleSignals\` to be a boolean, got ${describeValue(options.handleSignals)}`);
  return {
    maxParallel: options.maxParallel ?? 1,
    roles: checkRoleAgents(options.roles),
    baseDir: options.baseDir ?? process.cwd(),
    name: options.name ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 4)}`,
    clock: clock ?? realClock,
    lockDurationMs: expectPositiveInteger('lockDurationMs', options.lockDurationMs) ?? 30_000,
    stalledIntervalMs: expectPositiveInteger('stalledIntervalMs', options.stalledIntervalMs) ?? 30_000,
    maxStalledCount: expectNonNegativeInteger('maxStalledCount', options.maxStalledCount) ?? 1,
    closeTimeoutMs: expectNonNegativeInteger('closeTimeoutMs', options.closeTimeoutMs) ?? 25_000,
    handleSignals: options.handleSignals ?? false,
    timeoutMs: expectPositiveNumber('timeoutMs', options.timeoutMs) ?? 10_000,
    guardrails: options.guardrails === undefined ? undefined : validateGuardrailOptions(options.guardrails),
    trust: jobTrust(options),
  };
}

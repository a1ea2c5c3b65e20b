/**
 * The coordinator's side of a queue: add jobs, route the events and results
 * that come back to whoever waits for them, cancel jobs, and make sure every
 * wait ends. Shared by `bullmqExecutor` and `remote`.
 *
 * Results and event batches arrive on the queue's BullMQ event stream (one
 * blocking reader, started at the stream's current end). A job's event
 * batches are published before its result, on the same stream, so a result
 * always comes after everything its worker reported. Missed stream entries
 * (the stream is capped) and a Redis that lost its data are caught by
 * reconciling the jobs in flight with their state in Redis, every
 * `reconcileIntervalMs` and whenever the connection comes back.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { Job } from 'bullmq';
import { raceAbort } from '../../core/abort.js';
import { abortError, type Clock } from '../../core/clock.js';
import { TroupeError, errorMessage } from '../../core/errors.js';
import { defined } from '../../core/defined.js';
import { troupeKey, type QueuePlace } from './connection.js';
import { QueueError, RemoteJobError } from './errors.js';
import type { JobRef, QueueClientEvents } from './events.js';
import { openQueue, type OpenedQueue } from './queue-connection.js';
import { withTimeout } from './time.js';
import { AddBatch, PREPARE_ADDS, type AddOutcome, type JobToAdd } from './add-batch.js';
import { SIGNATURE_FIELD, checkJobSize, signJob, type JobTrust } from './trust.js';
import { CANCEL_MARK_PREFIX, eventBatchSchema, jobResultSchema, type EventBatchWire, type JobFailureWire, type JobKind, type JobResultWire, type JobWire } from './wire.js';

/** Receives what a job's worker reports while it runs. */
export interface JobWatcher {
  /** The job is in Redis: added, or (`adopted`) found there from an earlier coordinator. */
  queued?(adopted: boolean): void;
  /** A worker started the job (a new execution, after a worker was lost, starts again). */
  started?(worker: string, waitMs: number): void;
  /** A batch of the job's events, from execution `exec` (a job run again after its worker was lost has a new one). */
  batch(exec: string, batch: EventBatchWire): void;
  /** The job's worker (`worker`, when it had started) was lost; BullMQ put it back in the queue. */
  stalled(worker: string | undefined): void;
}

/** One job to add (or take over) and wait for. */
export interface SubmitRequest {
  jobId: string;
  kind: JobKind;
  data: JobWire;
  /** For events (the client adds its queue). */
  ref: Omit<JobRef, 'queue'>;
  /**
   * What to do with a job that already has this id: `adopt` it when it is
   * queued, running or done (a resumed run takes over the attempt an earlier
   * coordinator started), or `replace` it (a run that reuses an earlier run's
   * id must not take that run's results). `fresh`: the id is new (random),
   * nothing to look up.
   */
  existing: 'adopt' | 'replace' | 'fresh';
  /** Cancels the job: removed when queued, aborted on its worker when running. */
  signal: AbortSignal;
  watcher: JobWatcher;
}

/** Settings of a {@link JobClient}, validated by its owner. */
export interface JobClientSettings {
  clock: Clock;
  /** Longest wait for one Redis call. */
  timeoutMs: number;
  /** How long jobs in flight wait for a lost connection to come back before they fail. */
  unavailableTimeoutMs: number;
  /** How often jobs in flight are checked against their state in Redis. */
  reconcileIntervalMs: number;
  /** Seconds a finished job stays in Redis (for a resumed coordinator to find). */
  keepCompletedSeconds: number;
  keepFailedSeconds: number;
  /** The key jobs are signed with, and the size limits they are checked against before they are added. */
  trust: JobTrust;
  /** Names the owner in errors (`bullmqExecutor`, `remote`). */
  usedBy: string;
}

type Opened = OpenedQueue;

interface Pending {
  readonly req: SubmitRequest;
  readonly queuedAt: number;
  /** The job is in Redis (added or taken over). */
  added: boolean;
  adding: Promise<void> | undefined;
  worker: string | undefined;
  /** The execution whose batches arrive (a new one after the worker was lost). */
  exec: string | undefined;
  /** Taken over finished (a resumed run): its result is all there is, and no start is told for it. */
  doneWhenTaken: boolean;
  failure: JobFailureWire | undefined;
  settled: boolean;
  resolve(result: JobResultWire): void;
  reject(error: unknown): void;
}

/** States in which a job is still to run or running. */
const LIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** How many recent waits `stats()` summarises. */
const WAIT_SAMPLES = 256;

/** How long a cancellation mark stays in Redis (a worker that takes the job later still sees it). */
const CANCEL_TTL_MS = 3_600_000;

/**
 * Cancels jobs (`KEYS[1..n]`: their cancellation keys; `KEYS[n+1..2n]`:
 * their BullMQ keys): marks each key (`ARGV[2]` ms), marks each job still
 * in Redis (BullMQ's `defa` field, `ARGV[3]` and the reason: a worker
 * that takes the job afterwards fails it unrun), then publishes each
 * message on channel `ARGV[1]`. `ARGV[4..]`: each job's reason and message.
 */
const CANCEL_JOBS = `local n = #KEYS / 2
for i = 1, n do
  local why = ARGV[2 + 2 * i]
  redis.call('SET', KEYS[i], why, 'PX', ARGV[2])
  if redis.call('EXISTS', KEYS[n + i]) == 1 then redis.call('HSET', KEYS[n + i], 'defa', ARGV[3] .. why) end
end
for i = 1, n do redis.call('PUBLISH', ARGV[1], ARGV[3 + 2 * i]) end
return n`;

/**
 * Clears the cancellation of an earlier job with a job's id (a resumed run
 * takes the job over): its key (`KEYS[1]`), and the mark on the job
 * (`KEYS[2]`) when it is a coordinator's (`ARGV[1]`), not BullMQ's own.
 */
const CLEAR_CANCEL = `redis.call('DEL', KEYS[1])
local mark = redis.call('HGET', KEYS[2], 'defa')
if mark and string.sub(mark, 1, #ARGV[1]) == ARGV[1] then redis.call('HDEL', KEYS[2], 'defa') end
return 1`;

/** The coordinator's side of one queue. */
export class JobClient {
  /** Typed events of the jobs (shared by the clients of one executor's queues). */
  readonly events: EventEmitter<QueueClientEvents>;
  readonly #place: QueuePlace;
  readonly #s: JobClientSettings;
  #opening: Promise<Opened> | undefined;
  readonly #pending = new Map<string, Pending>();
  readonly #background = new Set<Promise<void>>();
  #closed = false;
  #downSince: number | undefined;
  #cancelDown: (() => void) | undefined;
  /** The cancellations of this turn, written together (see {@link #mark}). */
  #marking: { jobs: Array<{ jobId: string; why: string }>; done: Promise<void> } | undefined;
  #cancelReconcile: (() => void) | undefined;
  readonly #waits: number[] = [];
  /** The adds of one turn of the event loop, sent together. */
  readonly #adds = new AddBatch((jobs) => this.#sendAdds(jobs));

  constructor(place: QueuePlace, settings: JobClientSettings, events = new EventEmitter<QueueClientEvents>()) {
    this.#place = place;
    this.#s = settings;
    this.events = events;
  }

  /** The queue's name. */
  get queueName(): string {
    return this.#place.queueName;
  }

  /** Jobs this client waits for. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Waits (queued → started) of the most recent jobs, in ms. */
  recentWaits(): readonly number[] {
    return this.#waits;
  }

  /**
   * Add the job (or take over the job with its id that an earlier
   * coordinator added and that is still queued, running or finished) and
   * resolve with its result. Rejects with a {@link RemoteJobError} when it
   * failed on its worker, a {@link QueueError} when Redis did not answer or
   * lost it, a `JobRefusedError` (`too_large`) before adding a job over the
   * size limits, or the abort error when `signal` aborts (the job is
   * cancelled). With a signing key the job is added signed.
   */
  async submit(request: SubmitRequest): Promise<JobResultWire> {
    if (request.signal.aborted) throw abortError(request.signal);
    const { trust } = this.#s;
    checkJobSize(trust, request.jobId, request.data);
    const req: SubmitRequest = trust.key === undefined ? request : { ...request, data: { ...request.data, [SIGNATURE_FIELD]: signJob(trust.key, request.jobId, request.kind, request.data) } };
    const opened = await this.#open(req.signal);
    if (this.#closed) throw new QueueError('closed', `${this.#s.usedBy} is closed`);
    if (this.#pending.has(req.jobId)) throw new QueueError('command_failed', `Job ${req.jobId} is already in flight from this coordinator`, { details: { jobId: req.jobId } });
    let resolve!: (result: JobResultWire) => void;
    let reject!: (error: unknown) => void;
    const result = new Promise<JobResultWire>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const p: Pending = { req, queuedAt: this.#s.clock.now(), added: false, adding: undefined, worker: undefined, exec: undefined, doneWhenTaken: false, failure: undefined, settled: false, resolve, reject };
    this.#pending.set(req.jobId, p);
    const onAbort = () => this.#cancel(p, req.signal.reason);
    req.signal.addEventListener('abort', onAbort, { once: true });
    this.#armReconcile();
    try {
      const adding = this.#enqueue(p, opened);
      p.adding = adding;
      await adding.catch((error: unknown) => this.#settle(p, error));
      return await result;
    } finally {
      req.signal.removeEventListener('abort', onAbort);
      if (this.#pending.get(req.jobId) === p) this.#pending.delete(req.jobId);
    }
  }

  /** The state of job `jobId` in Redis (`unknown` when there is none). */
  async jobState(jobId: string, signal?: AbortSignal): Promise<string> {
    const { queue } = await this.#open(signal);
    return this.#call('read the state of job', () => queue.getJobState(jobId));
  }

  /** Counts of the queue's jobs by state, the age of the oldest waiting job, and how many workers are connected. */
  async counts(signal?: AbortSignal): Promise<{ waiting: number; active: number; delayed: number; oldestWaitingMs: number; workers: number }> {
    const { queue } = await this.#open(signal);
    const [counts, oldest, workers] = await this.#call('read the counts of', () =>
      Promise.all([queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), queue.getJobs(['waiting', 'prioritized'], 0, 0, true), queue.getWorkersCount().catch(() => -1)]),
    );
    const first = oldest[0];
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      oldestWaitingMs: first ? Math.max(0, this.#s.clock.now() - first.timestamp) : 0,
      workers,
    };
  }

  /** Stop: every job in flight fails with a `QueueError` (`closed`), then the connections close (a client you gave stays open). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelReconcile?.();
    this.#cancelDown?.();
    for (const p of this.#pending.values()) this.#settle(p, new QueueError('closed', `${this.#s.usedBy} was closed while job ${p.req.jobId} was in flight`, { details: { jobId: p.req.jobId } }));
    await Promise.allSettled([...this.#background]);
    const opened = await this.#opening?.catch(() => undefined);
    await opened?.close();
  }

  /** What events say about `p`'s job. */
  #ref(p: Pending): JobRef {
    return { ...p.req.ref, queue: this.#place.queueName };
  }

  /** Open the connection, the queue and the event reader once; later calls share them. */
  #open(signal?: AbortSignal): Promise<Opened> {
    if (this.#closed) return Promise.reject(new QueueError('closed', `${this.#s.usedBy} is closed`));
    this.#opening ??= this.#connect();
    const opening = this.#opening;
    // A failed opening is not kept: the next call tries again.
    opening.catch(() => {
      if (this.#opening === opening) this.#opening = undefined;
    });
    return raceAbort(opening, signal);
  }

  #connect(): Promise<Opened> {
    const { usedBy, clock, timeoutMs } = this.#s;
    return openQueue(this.#place, { usedBy, clock, timeoutMs, call: (action, fn) => this.#call(action, fn) }, {
      up: () => this.#up(),
      down: () => this.#down(),
      batch: (args) => this.#onBatch(args),
      completed: (jobId, value) => this.#onCompleted(jobId, value),
      failed: (jobId, reason) => this.#onFailed(jobId, reason),
      stalled: (jobId) => this.#onStalled(jobId),
    });
  }

  /**
   * Put the job in Redis: add it (with the other adds of this turn of the
   * event loop, in one round trip), or take over a job with its id that an
   * earlier coordinator added.
   */
  async #enqueue(p: Pending, opened: Opened): Promise<void> {
    const { jobId, kind, data, existing } = p.req;
    if (existing === 'adopt') return this.#adopt(p, opened);
    let outcome: AddOutcome;
    try {
      outcome = await this.#adds.add({ jobId, kind, data, check: existing === 'replace' });
    } catch (error) {
      this.#markAddFailed(jobId);
      throw error;
    }
    if (outcome === 'dropped') return;
    if (outcome === 'exists') {
      // An earlier run with the same id left a job of this id: the add did nothing. Replace that job.
      if (p.settled) return;
      const state = await this.#call('read the state of job', () => opened.queue.getJobState(jobId));
      if (state === 'active') {
        throw new QueueError('command_failed', `Job ${jobId} is running for an earlier run with the same id: give every run its own runId, or resume it`, { details: { jobId } });
      }
      if (state !== 'unknown') await this.#call('remove the earlier job', () => opened.queue.remove(jobId));
      if (p.settled) return;
      await this.#addOne(p, opened);
    }
    this.#queued(p, false);
  }

  /** In a resumed run: take over the job an earlier coordinator added when it is queued, running or done; else add it anew. */
  async #adopt(p: Pending, opened: Opened): Promise<void> {
    const { client, queue } = opened;
    const { jobId } = p.req;
    // A cancellation of an earlier job with this id must not cancel this one: cleared with the look-up, in one round trip.
    const [, state] = await this.#call('read the state of job', () =>
      Promise.all([client.eval(CLEAR_CANCEL, 2, troupeKey(this.#place, `cancel:${jobId}`), queue.toKey(jobId), CANCEL_MARK_PREFIX), queue.getJobState(jobId)]),
    );
    if (p.settled) return;
    if (state === 'completed' || LIVE.has(state)) {
      // Queued, running or done for the same run and chunk path: the attempt a coordinator before us started.
      this.#queued(p, true);
      if (state === 'completed') {
        p.doneWhenTaken = true;
        await this.#reconcileOne(p);
      }
      return;
    }
    // A failed job of the same id: run the attempt again.
    if (state !== 'unknown') await this.#call('remove the earlier job', () => queue.remove(jobId));
    await this.#addOne(p, opened);
    this.#queued(p, false);
  }

  /** Add `p`'s job on its own. */
  async #addOne(p: Pending, { queue }: Opened): Promise<void> {
    try {
      await this.#call('add job', () => queue.add(p.req.kind, p.req.data, this.#jobOptions(p.req.jobId)));
    } catch (error) {
      this.#markAddFailed(p.req.jobId);
      throw error;
    }
  }

  /**
   * Send the adds of one turn of the event loop: the script that clears
   * the checked jobs' cancellation marks and looks for earlier jobs of
   * their ids goes first, the adds (one pipeline) right behind it on the
   * same connection, so both take one round trip.
   */
  async #sendAdds(batch: JobToAdd[]): Promise<AddOutcome[]> {
    const { client, queue } = await this.#open();
    // An attempt cancelled while it waited for the batch is not added (its cancellation mark must stay, too).
    const jobs = batch.filter((j) => this.#pending.get(j.jobId)?.settled === false);
    if (jobs.length === 0) return batch.map(() => 'dropped');
    const checked = jobs.filter((j) => j.check);
    const keys = [...checked.map((j) => queue.toKey(j.jobId)), ...checked.map((j) => troupeKey(this.#place, `cancel:${j.jobId}`))];
    const [found] = await this.#call(jobs.length === 1 ? 'add job' : `add ${jobs.length} jobs`, () =>
      Promise.all([
        checked.length === 0 ? Promise.resolve([]) : (client.eval(PREPARE_ADDS, keys.length, ...keys) as Promise<number[]>),
        queue.addBulk(jobs.map((j) => ({ name: j.kind, data: j.data, opts: this.#jobOptions(j.jobId) }))),
      ]),
    );
    const existed = new Set(checked.filter((_, i) => found[i] === 1).map((j) => j.jobId));
    const sent = new Set(jobs);
    return batch.map((j) => (!sent.has(j) ? 'dropped' : existed.has(j.jobId) ? 'exists' : 'added'));
  }

  #jobOptions(jobId: string) {
    const { keepCompletedSeconds, keepFailedSeconds } = this.#s;
    return { jobId, attempts: 1, removeOnComplete: { age: keepCompletedSeconds }, removeOnFail: { age: keepFailedSeconds } };
  }

  /** The add may still land once Redis answers: mark it cancelled, so a worker that takes it drops it. */
  #markAddFailed(jobId: string): void {
    this.#track(this.#mark(jobId, 'add failed').catch(() => undefined));
  }

  /** The job is in Redis: say so. */
  #queued(p: Pending, adopted: boolean): void {
    p.added = true;
    this.events.emit('job.queued', { ...this.#ref(p), adopted });
    p.req.watcher.queued?.(adopted);
  }

  /** The job's signal aborted: stop waiting now; mark it cancelled, tell its worker, and remove it if it is still queued. */
  #cancel(p: Pending, reason: unknown): void {
    const { jobId } = p.req;
    this.#settle(p, abortError(p.req.signal));
    const why = errorMessage(reason ?? 'cancelled');
    const marked = this.#mark(jobId, why);
    const work = (async () => {
      const { queue } = await this.#open();
      await marked;
      await p.adding?.catch(() => undefined);
      const removed = p.added ? await this.#call('remove job', () => queue.remove(jobId)) : 0;
      this.events.emit('job.cancelled', { ...this.#ref(p), removed: removed === 1 || !p.added });
    })().catch((error: unknown) => {
      this.events.emit('queue.warning', { message: `Could not cancel job ${jobId}: ${errorMessage(error)}` });
    });
    this.#track(work);
  }

  /**
   * Mark job `jobId` cancelled and tell its worker. The jobs cancelled in
   * one turn (a plan's, when its signal aborts) go together, in one
   * script: every mark (the job's key, and the job itself while it is in
   * Redis, so that a worker that takes it afterwards drops it unrun), then
   * every message (a worker running one aborts it). A worker that frees a
   * slot on hearing a message, and takes the next job at once, finds that
   * job marked too.
   */
  #mark(jobId: string, why: string): Promise<void> {
    let batch = this.#marking;
    if (!batch) {
      const jobs: Array<{ jobId: string; why: string }> = [];
      const done = Promise.resolve().then(async () => {
        this.#marking = undefined;
        const { client, queue } = await this.#open();
        const keys = [...jobs.map((j) => troupeKey(this.#place, `cancel:${j.jobId}`)), ...jobs.map((j) => queue.toKey(j.jobId))];
        const args = jobs.flatMap((j) => [j.why, JSON.stringify({ jobId: j.jobId, reason: j.why })]);
        await this.#call('cancel jobs', () => client.eval(CANCEL_JOBS, keys.length, ...keys, troupeKey(this.#place, 'cancel'), CANCEL_TTL_MS, CANCEL_MARK_PREFIX, ...args));
      });
      batch = this.#marking = { jobs, done };
    }
    batch.jobs.push({ jobId, why });
    return batch.done;
  }

  #onBatch(args: Record<string, unknown>): void {
    const p = this.#pending.get(String(args.jobId));
    if (!p || p.settled || typeof args.exec !== 'string' || typeof args.worker !== 'string' || typeof args.data !== 'string') return;
    let batch: EventBatchWire;
    try {
      const parsed = eventBatchSchema.safeParse(JSON.parse(args.data));
      if (!parsed.success) return;
      batch = parsed.data;
    } catch {
      return;
    }
    this.#applyBatch(p, args.exec, args.worker, batch);
  }

  /** A batch of events of execution `exec` on `worker` (the first of an execution says it started). */
  #applyBatch(p: Pending, exec: string, worker: string, batch: EventBatchWire): void {
    if (p.exec !== exec) {
      p.exec = exec;
      p.worker = worker;
      const waitMs = this.#s.clock.now() - p.queuedAt;
      this.#waits.push(waitMs);
      if (this.#waits.length > WAIT_SAMPLES) this.#waits.shift();
      this.events.emit('job.started', { ...this.#ref(p), worker, waitMs });
      p.req.watcher.started?.(worker, waitMs);
    }
    if (batch.failure) p.failure = batch.failure;
    p.req.watcher.batch(exec, batch);
  }

  #onCompleted(jobId: string, value: unknown): void {
    const p = this.#pending.get(jobId);
    if (!p || p.settled) return;
    const parsed = jobResultSchema.safeParse(value);
    if (!parsed.success) {
      this.#settle(p, new RemoteJobError(`Job ${jobId} returned a result troupe cannot read (a worker of another version?)`, { details: { jobId, issues: parsed.error.issues.map((i) => i.message) } }));
      return;
    }
    // The run's last events, which came with its result: all of them for a job that ended in the turn it started in, whose start
    // is told here (a job taken over when done has only those too, but no start is told for it).
    const { events, exec } = parsed.data;
    if (p.exec !== exec && !(p.doneWhenTaken && p.exec === undefined)) this.#applyBatch(p, exec, parsed.data.worker, { events: events ?? [] });
    else if (events !== undefined) {
      p.exec = exec;
      p.req.watcher.batch(exec, { events });
    }
    p.worker = parsed.data.worker;
    this.events.emit('job.completed', { ...this.#ref(p), worker: parsed.data.worker, durationMs: this.#s.clock.now() - p.queuedAt });
    this.#settle(p, undefined, parsed.data);
  }

  #onFailed(jobId: string, reason: string): void {
    const p = this.#pending.get(jobId);
    if (!p || p.settled) return;
    const failure = p.failure;
    const message = failure?.message ?? (reason || `Job ${jobId} failed`);
    const error = new RemoteJobError(message, { remoteCode: failure?.code, trip: failure?.guardrail, details: { jobId, ...defined({ worker: p.worker }) } });
    this.#settle(p, error);
  }

  #onStalled(jobId: string): void {
    const p = this.#pending.get(jobId);
    if (!p || p.settled) return;
    const worker = p.worker;
    this.events.emit('job.stalled', { ...this.#ref(p), ...defined({ worker }) });
    p.worker = undefined;
    p.req.watcher.stalled(worker);
  }

  /** Settle once: with `result`, or with `error` (and a `job.failed` event unless it is the caller's own abort). */
  #settle(p: Pending, error: unknown, result?: JobResultWire): void {
    if (p.settled) return;
    p.settled = true;
    if (result !== undefined && error === undefined) return p.resolve(result);
    if (!p.req.signal.aborted) {
      const code = error instanceof TroupeError ? error.code : 'queue_error';
      this.events.emit('job.failed', { ...this.#ref(p), ...defined({ worker: p.worker }), error: errorMessage(error), code });
    }
    p.reject(error);
  }

  /** Check the jobs in flight against Redis: a result or failure whose event was missed, or a job Redis no longer has. */
  async #reconcile(): Promise<void> {
    await Promise.all([...this.#pending.values()].filter((p) => p.added && !p.settled).map((p) => this.#reconcileOne(p).catch(() => undefined)));
  }

  async #reconcileOne(p: Pending): Promise<void> {
    const { queue } = await this.#open();
    const jobId = p.req.jobId;
    const state = await this.#call('read the state of job', () => queue.getJobState(jobId));
    if (p.settled || LIVE.has(state)) return;
    if (state === 'unknown') {
      this.#settle(p, new QueueError('lost', `Job ${jobId} is no longer in Redis (was Redis restarted without persistence, or the job removed?)`, { details: { jobId } }));
      return;
    }
    const job = (await this.#call('read job', () => queue.getJob(jobId))) as Job | undefined;
    if (p.settled) return;
    if (!job) return this.#settle(p, new QueueError('lost', `Job ${jobId} is no longer in Redis`, { details: { jobId } }));
    if (state === 'completed') this.#onCompleted(jobId, job.returnvalue);
    else this.#onFailed(jobId, job.failedReason);
  }

  /** Reconcile every `reconcileIntervalMs` while jobs are in flight. */
  #armReconcile(): void {
    if (this.#cancelReconcile || this.#closed) return;
    this.#cancelReconcile = this.#s.clock.setTimer(() => {
      this.#cancelReconcile = undefined;
      if (this.#pending.size === 0 || this.#closed) return;
      this.#track(this.#reconcile().finally(() => this.#armReconcile()));
    }, this.#s.reconcileIntervalMs);
  }

  #down(): void {
    if (this.#closed || this.#downSince !== undefined) return;
    this.#downSince = this.#s.clock.now();
    this.events.emit('queue.down', { queueName: this.#place.queueName });
    this.#cancelDown = this.#s.clock.setTimer(() => {
      const ms = this.#s.unavailableTimeoutMs;
      for (const p of this.#pending.values()) {
        this.#settle(p, new QueueError('unavailable', `Redis was unreachable for ${ms} ms while job ${p.req.jobId} was in flight`, { details: { jobId: p.req.jobId, unavailableTimeoutMs: ms } }));
      }
    }, this.#s.unavailableTimeoutMs);
  }

  #up(): void {
    if (this.#downSince === undefined || this.#closed) return;
    const downMs = this.#s.clock.now() - this.#downSince;
    this.#downSince = undefined;
    this.#cancelDown?.();
    this.#cancelDown = undefined;
    this.events.emit('queue.up', { queueName: this.#place.queueName, downMs });
    this.#track(this.#reconcile());
  }

  /** Run a Redis call within `timeoutMs` on the clock; failures become `QueueError`s. */
  async #call<T>(action: string, fn: () => Promise<T>): Promise<T> {
    const { clock, timeoutMs } = this.#s;
    const queue = this.#place.queueName;
    try {
      return await withTimeout(fn(), timeoutMs, clock, `Redis did not answer within ${timeoutMs} ms (${action} on queue "${queue}")`);
    } catch (error) {
      if (error instanceof TroupeError) throw error;
      throw new QueueError('command_failed', `Redis could not ${action} on queue "${queue}": ${errorMessage(error)}`, { cause: error });
    }
  }

  #track(work: Promise<void>): void {
    this.#background.add(work);
    void work.finally(() => this.#background.delete(work));
  }
}

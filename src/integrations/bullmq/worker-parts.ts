/**
 * Two parts of a worker: the jobs it runs, each abortable by its
 * coordinator's cancellation; and how long it has been idle.
 *
 * A coordinator cancels a job in one script: it marks the job's key, marks
 * the job itself when it is still in Redis (BullMQ's `defa` field: a worker
 * that takes the job later fails it without running it), and publishes the
 * cancellation on the queue's channel. So a job this worker took before the
 * cancellation hears of it by message, and one it takes after finds the
 * mark in the job it takes: no job start waits on a look-up. A job starts
 * after reading its key only when a message named it before it started here
 * (the key says whether that cancellation still holds: a resumed run, or a
 * run that reuses an earlier run's id, clears it), or while the subscription
 * may have missed messages (it is down, or came back moments ago).
 * @module
 */
import { raceAbort } from '../../core/abort.js';
import type { Clock } from '../../core/clock.js';
import { CancelledError } from '../../core/errors.js';
import { duplicateClient, troupeKey, whenReady, type QueuePlace, type RedisClient } from './connection.js';
import { withTimeout } from './time.js';

/** How many cancellations of jobs not running here are remembered (a job that starts after its message reads its key). */
const REMEMBERED_CANCELLATIONS = 1000;

/** How long after its subscription (re)connects a worker still reads the cancellation key of each job that starts, in ms. */
const RESUBSCRIBE_MARGIN_MS = 2000;

/** The jobs a worker runs, and their cancellation. */
export class RunningJobs {
  readonly #client: RedisClient;
  readonly #place: QueuePlace;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #jobs = new Map<string, AbortController>();
  /** Jobs not running here (yet) whose cancellation was heard, oldest first. */
  readonly #heard = new Set<string>();
  #sub: RedisClient | undefined;
  /** When the subscription last became ready; undefined while it is down. */
  #subscribedAt: number | undefined;

  constructor(client: RedisClient, place: QueuePlace, clock: Clock, timeoutMs: number) {
    this.#client = client;
    this.#place = place;
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  /** How many run now. */
  get size(): number {
    return this.#jobs.size;
  }

  /** Subscribe to the queue's cancellations (on a second connection); resolves once subscribed. */
  async listen(onError: () => void): Promise<void> {
    const sub = duplicateClient(this.#client);
    this.#sub = sub;
    sub.on('error', onError);
    const channel = troupeKey(this.#place, 'cancel');
    await whenReady(sub, this.#timeoutMs, this.#clock, 'startWorker');
    await withTimeout(sub.subscribe(channel), this.#timeoutMs, this.#clock);
    this.#subscribedAt = this.#clock.now();
    sub.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const parsed = parseCancel(message);
      if (parsed) this.#cancel(parsed.jobId, parsed.reason);
    });
    sub.on('close', () => {
      this.#subscribedAt = undefined;
    });
    // Cancellations published while the connection was down were missed: read the marks of the running jobs.
    sub.on('ready', () => {
      this.#subscribedAt = this.#clock.now();
      for (const jobId of this.#jobs.keys()) void this.cancelled(jobId).then((reason) => reason !== undefined && this.#cancel(jobId, reason));
    });
  }

  /** Track job `jobId`: returns the signal that aborts when its coordinator cancels it (or `abortAll` is called). */
  start(jobId: string): AbortController {
    const controller = new AbortController();
    this.#jobs.set(jobId, controller);
    return controller;
  }

  /**
   * Before job `jobId` (started with `start`) runs: why it was cancelled,
   * read from its key, when its cancellation was heard before it started
   * here, or when the subscription may have missed it (it is down, or came
   * back moments ago: a job taken while it was away has no mark of its own
   * if its cancellation came after); its signal then aborts. `undefined`,
   * with no look-up, otherwise.
   */
  check(jobId: string): Promise<string | undefined> | undefined {
    const heard = this.#heard.delete(jobId);
    const at = this.#subscribedAt;
    if (!heard && at !== undefined && this.#clock.now() - at >= RESUBSCRIBE_MARGIN_MS) return undefined;
    return this.cancelled(jobId).then((reason) => {
      if (reason !== undefined) this.#cancel(jobId, reason);
      return reason;
    });
  }

  /** Stop tracking job `jobId`. */
  end(jobId: string): void {
    this.#jobs.delete(jobId);
  }

  /** Abort every running job with `reason`. */
  abortAll(reason: Error): void {
    for (const controller of this.#jobs.values()) controller.abort(reason);
  }

  /** Why job `jobId` was cancelled, if its coordinator marked it so (`undefined` also when Redis cannot tell). */
  async cancelled(jobId: string): Promise<string | undefined> {
    const reason = await withTimeout(this.#client.get(troupeKey(this.#place, `cancel:${jobId}`)), this.#timeoutMs, this.#clock).catch(() => null);
    return reason ?? undefined;
  }

  /** Drop the subscription's connection. */
  close(): void {
    this.#sub?.disconnect();
  }

  #cancel(jobId: string, reason: string): void {
    const controller = this.#jobs.get(jobId);
    if (controller) return controller.abort(cancelledBy(reason));
    // Not running here, yet: a job this worker has taken may start after its cancellation's message.
    this.#heard.add(jobId);
    if (this.#heard.size > REMEMBERED_CANCELLATIONS) this.#heard.delete(this.#heard.values().next().value!);
  }
}

function cancelledBy(reason: string): CancelledError {
  return new CancelledError(`Cancelled by the coordinator: ${reason}`);
}

/** A cancellation message: `{ jobId, reason }`; undefined when it is not one. */
function parseCancel(message: string): { jobId: string; reason: string } | undefined {
  try {
    const value = JSON.parse(message) as { jobId?: unknown; reason?: unknown };
    if (typeof value?.jobId !== 'string') return undefined;
    return { jobId: value.jobId, reason: typeof value.reason === 'string' ? value.reason : 'cancelled' };
  } catch {
    return undefined;
  }
}

/** How long a worker has had nothing to do, and promises that wait for it. */
export class IdleTracker {
  readonly #clock: Clock;
  #busy = 0;
  #since: number;
  #closed = false;
  readonly #waiters = new Set<() => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#since = clock.now();
  }

  /** Jobs running now. */
  get busy(): number {
    return this.#busy;
  }

  /** A job started. */
  enter(): void {
    this.#busy++;
  }

  /** A job ended. */
  leave(): void {
    if (--this.#busy > 0) return;
    this.#since = this.#clock.now();
    this.#wake();
  }

  /** The worker closed: every wait ends. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  /** Resolve once nothing has run for `ms` on the clock, or once closed; reject when `signal` aborts. */
  idle(ms: number, signal?: AbortSignal): Promise<void> {
    const waiting = new Promise<void>((resolve) => {
      let cancelTimer = () => {};
      const finish = () => {
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', check);
        resolve();
      };
      const check = (): void => {
        cancelTimer();
        if (this.#closed || signal?.aborted) return finish();
        this.#waiters.add(check);
        if (this.#busy > 0) return; // checked again when the last job ends
        const left = this.#since + ms - this.#clock.now();
        if (left <= 0) return finish();
        cancelTimer = this.#clock.setTimer(check, left);
      };
      check();
      signal?.addEventListener('abort', check, { once: true });
    });
    return raceAbort(waiting, signal);
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

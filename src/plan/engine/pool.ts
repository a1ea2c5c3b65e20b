/**
 * A pool of worker slots shared by several plans: {@link sharedPool} gives
 * each plan an {@link Executor} of its own (`pool.executor(name, { weight,
 * maxParallel })`), and each free slot goes to the plan charged the least
 * worker time for its weight. Around any executor: in process by default,
 * or a queue-backed one whose workers are elsewhere.
 * @module
 */
import { abortError, realClock, type Clock } from '../../core/clock.js';
import { CancelledError, ConfigurationError, describeValue } from '../../core/errors.js';
import { abortSignal, clock as clockCheck, defineOptions, positiveInteger, positiveNumber } from '../../core/options.js';
import { DurationWindow } from './durations.js';
import { Share, type Waiting } from './pool-share.js';
import { directExecutor, executorCheck, type ChunkAttemptResult, type ChunkJob, type Executor } from './executor.js';

/** Options of {@link sharedPool}. */
export interface SharedPoolOptions {
  /**
   * The most attempts running at once over every plan. Default: the
   * `maxParallel` of `executor` when one is given, else 5. At most that of
   * `executor` (past it the inner executor would queue, out of the pool's
   * sight).
   */
  maxParallel?: number;
  /**
   * Where admitted attempts run. Default: in this process
   * (`directExecutor({ maxParallel })`). A queue-backed executor
   * works the same way: the pool decides which plan's attempt goes next,
   * the executor's workers run it.
   */
  executor?: Executor;
  /** Measures worker time (from admission to settlement). Default: the real clock. */
  clock?: Clock;
  /** Closes the pool when it aborts: see {@link SharedPool.close}. */
  signal?: AbortSignal;
}

/** Options of {@link SharedPool.executor}: one plan's (or project's) share. */
export interface PoolShareOptions {
  /** Its share of the slots, relative to the other plans' weights. Default: 1. */
  weight?: number;
  /** The most of its attempts running at once (the `maxParallel` its plans see). Default: the pool's `maxParallel`. */
  maxParallel?: number;
}

/** The description {@link sharedPool} checks its options against. */
const sharedPoolOptions = defineOptions<SharedPoolOptions>('sharedPool', { maxParallel: positiveInteger, executor: executorCheck, clock: clockCheck, signal: abortSignal });

/** The description {@link SharedPool.executor} checks a share's options against. */
const poolShareOptions = defineOptions<PoolShareOptions>('SharedPool.executor', { weight: positiveNumber, maxParallel: positiveInteger });

/** What {@link SharedPool.stats} reports of one share. */
export interface PoolShareStats {
  /** The share's name. */
  name: string;
  /** Its weight. */
  weight: number;
  /** The most of its attempts at once. */
  maxParallel: number;
  /** Attempts running now. */
  running: number;
  /** Attempts waiting for a slot. */
  queued: number;
  /** Attempts that settled (completed, failed or cancelled). */
  settled: number;
  /** Worker time in ms: finished attempts, plus running ones so far (on the pool's clock). */
  workerMs: number;
}

/**
 * One plan's executor in a {@link SharedPool}: pass it as `executor` to
 * `executePlan` or `planRunnable`. Several plans may use the same one (they
 * share its weight and maximum).
 */
export interface PoolExecutor extends Executor {
  readonly kind: 'pool';
  /** Its name in the pool. */
  readonly name: string;
  /** Its share of the slots, relative to the other shares' weights. */
  readonly weight: number;
  /**
   * Leave the pool: waiting attempts reject with a `CancelledError`, later
   * dispatches too, running ones finish; the name is free again. Idempotent.
   */
  close(): void;
}

/** Slots shared by several plans; see {@link sharedPool}. */
export interface SharedPool {
  /** The most attempts running at once over every plan. */
  readonly maxParallel: number;
  /** True once closed (by `close()` or the `signal`). */
  readonly closed: boolean;
  /**
   * A new share named `name` (unique among the open ones), and its executor.
   * Throws a `ConfigurationError` for a bad name or option; once the pool is
   * closed, the error it was closed with (a `CancelledError`, or the
   * signal's reason).
   */
  executor(name: string, options?: PoolShareOptions): PoolExecutor;
  /** Each open share's figures, in the order they joined. */
  stats(): PoolShareStats[];
  /**
   * Close every share (see {@link PoolExecutor.close}): waiting attempts
   * reject with `reason` (default: a `CancelledError`), later calls too;
   * running attempts finish. Idempotent.
   */
  close(reason?: Error): void;
}

/**
 * A pool of `maxParallel` worker slots shared by several plans, each with a
 * weight and a maximum of its own: weighted fair sharing. Every free slot
 * goes to the plan charged least per unit of weight among those with an
 * attempt waiting (ties: fewer running per weight, then the earlier
 * share). A plan is charged the worker time of its settled attempts, and
 * for each running attempt what it is expected to take in all, from how
 * long it has run and how long the plan's recent attempts took; so a slot
 * counts as soon as it is given, and plans that stay busy get worker time
 * in proportion to their weights, with no plan waiting for another to
 * finish. A plan that had nothing waiting banks no credit for the time it
 * could not use: when an attempt arrives to its empty queue, its charge is
 * lifted to within one attempt of the least charged plan with attempts
 * waiting (a plan added while others run starts there too). A plan's own
 * scheduler still picks which of its chunks come first; the pool keeps
 * each plan's attempts in that order.
 *
 * An attempt's time-out (`chunkTimeoutMs`) counts from when its plan hands
 * it to the pool, so time spent waiting for a slot counts.
 *
 * @example
 * ```ts
 * const pool = sharedPool({ maxParallel: 8 });
 * await Promise.all([
 *   executePlan(web, { adapter, baseDir: '/repos/web', executor: pool.executor('web', { weight: 2 }) }),
 *   executePlan(api, { adapter, baseDir: '/repos/api', executor: pool.executor('api', { maxParallel: 3 }) }),
 * ]);
 * ```
 */
export function sharedPool(options: SharedPoolOptions = {}): SharedPool {
  return new Pool(options);
}

class Pool implements SharedPool {
  readonly maxParallel: number;
  readonly #inner: Executor;
  readonly #clock: Clock;
  readonly #shares = new Map<string, Share>();
  #running = 0;
  /** The durations of the pool's recent attempts. */
  readonly #durations = new DurationWindow();
  /** Attempts dispatched since the last admission. */
  #fresh: Waiting[] = [];
  /** An admission is due in a microtask. */
  #due = false;
  #closed: Error | undefined;
  /** Stops listening to the `signal` option. */
  #unlisten: () => void = () => undefined;

  constructor(options: SharedPoolOptions) {
    const { executor, clock, signal } = sharedPoolOptions.check(options);
    const maxParallel = options.maxParallel ?? executor?.maxParallel ?? 5;
    if (executor && maxParallel > executor.maxParallel) {
      throw new ConfigurationError(`Expected \`maxParallel\` to be at most the executor's \`maxParallel\` (${executor.maxParallel}), got ${maxParallel}`);
    }
    this.maxParallel = maxParallel;
    this.#inner = executor ?? directExecutor({ maxParallel });
    this.#clock = clock ?? realClock;
    if (signal?.aborted) this.close(abortError(signal));
    else if (signal) {
      const onAbort = (): void => this.close(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      this.#unlisten = () => signal.removeEventListener('abort', onAbort);
    }
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  executor(name: string, options: PoolShareOptions = {}): PoolExecutor {
    if (this.#closed) throw this.#closed;
    if (typeof name !== 'string' || name.trim() === '') throw new ConfigurationError(`Expected the share's name to be a non-empty string, got ${describeValue(name)}`, { code: 'invalid_argument' });
    if (this.#shares.has(name)) throw new ConfigurationError(`The pool already has a share named "${name}"`, { code: 'invalid_argument', details: { name } });
    poolShareOptions.check(options);
    const weight = options.weight ?? 1;
    const max = options.maxParallel ?? this.maxParallel;
    if (max > this.maxParallel) throw new ConfigurationError(`Expected \`maxParallel\` to be at most the pool's \`maxParallel\` (${this.maxParallel}), got ${max}`);
    const share = new Share(name, weight, max);
    this.#shares.set(name, share);
    return {
      kind: 'pool',
      name,
      weight,
      maxParallel: max,
      dispatch: (job) => this.#dispatch(share, job),
      close: () => this.#close(share, new CancelledError(`The pool's share "${name}" is closed`)),
    };
  }

  stats(): PoolShareStats[] {
    const now = this.#clock.now();
    return [...this.#shares.values()].map((s) => ({
      name: s.name,
      weight: s.weight,
      maxParallel: s.max,
      running: s.running,
      queued: s.queue.length,
      settled: s.settled,
      workerMs: s.workerMs(now),
    }));
  }

  close(reason: Error = new CancelledError('The pool is closed')): void {
    if (this.#closed) return;
    this.#closed = reason;
    this.#unlisten();
    for (const share of [...this.#shares.values()]) this.#close(share, reason);
  }

  #close(share: Share, reason: Error): void {
    if (share.closed) return;
    share.closed = reason;
    if (this.#shares.get(share.name) === share) this.#shares.delete(share.name);
    for (const w of share.queue.splice(0)) this.#reject(w, reason);
  }

  /**
   * Queue the attempt; admission follows in a microtask, so that plans
   * dispatching in the same turn (plans started together) compete for the
   * free slots.
   */
  #dispatch(share: Share, job: ChunkJob): Promise<string | ChunkAttemptResult> {
    if (share.closed) return Promise.reject(share.closed);
    return new Promise((resolve, reject) => {
      if (share.queue.length === 0) this.#rejoin(share);
      const waiting: Waiting = { job, share, resolve, reject, state: 'queued', forget: undefined };
      share.queue.push(waiting);
      this.#fresh.push(waiting);
      this.#admitSoon();
    });
  }

  /** Admit in a microtask (once, however many ask). */
  #admitSoon(): void {
    if (this.#due) return;
    this.#due = true;
    queueMicrotask(() => this.#admit());
  }

  /** Start what fits; the attempts still waiting then listen to their signals (the others never touch them). */
  #admit(): void {
    this.#due = false;
    this.#pump();
    const fresh = this.#fresh;
    this.#fresh = [];
    for (const w of fresh) if (w.state === 'queued') this.#listen(w);
  }

  /** An attempt whose signal aborts while it waits leaves the queue and rejects with the abort error; it never starts. */
  #listen(w: Waiting): void {
    const signal = w.job.signal;
    const onAbort = (): void => {
      const queue = w.share.queue;
      queue.splice(queue.indexOf(w), 1);
      this.#reject(w, abortError(signal));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    w.forget = () => signal.removeEventListener('abort', onAbort);
  }

  #reject(w: Waiting, error: Error): void {
    w.state = 'rejected';
    w.forget?.();
    w.reject(error);
  }

  /**
   * A share whose queue was empty banks no credit for the time it could not
   * use: its charge is lifted to one mean attempt below the least charged
   * of the other busy shares (running or waiting). The one attempt is what
   * a share with attempts running may have earned (its queue empties in
   * passing whenever its plan has dispatched all it had ready), and about
   * what a new share loses waiting for the first running attempts to end
   * (slots are not taken back).
   */
  #rejoin(share: Share): void {
    const now = this.#clock.now();
    let least = Infinity;
    for (const other of this.#shares.values()) if (other !== share && (other.queue.length > 0 || other.running > 0)) least = Math.min(least, other.key(now, this.#durations));
    if (least === Infinity) return;
    const floor = least - this.#durations.expected(0) / share.weight;
    const key = share.key(now, this.#durations);
    if (key < floor) share.lifted += (floor - key) * share.weight;
  }

  /** Fill free slots, each with the head of the share that comes first. */
  #pump(): void {
    while (this.#running < this.maxParallel) {
      const now = this.#clock.now();
      let next: Share | undefined;
      for (const share of this.#shares.values()) if (share.eligible && (next === undefined || this.#before(share, next, now))) next = share;
      if (next === undefined) return;
      const w = next.queue.shift()!;
      w.state = 'started';
      w.forget?.();
      this.#start(w);
    }
  }

  /** Whether `a` gets a slot before `b`: a lower charge per weight, then fewer running per weight (then the earlier share). */
  #before(a: Share, b: Share, now: number): boolean {
    const ka = a.key(now, this.#durations);
    const kb = b.key(now, this.#durations);
    if (ka !== kb) return ka < kb;
    return a.running / a.weight < b.running / b.weight;
  }

  /** Run the attempt on the inner executor; when it settles, count its worker time and fill the slot. */
  #start({ job, share, resolve, reject }: Waiting): void {
    const started = this.#clock.now();
    this.#running++;
    share.starts.push(started);
    let settled: Promise<string | ChunkAttemptResult>;
    try {
      settled = Promise.resolve(this.#inner.dispatch(job));
    } catch (error) {
      settled = Promise.reject(error);
    }
    const release = (): void => {
      this.#running--;
      share.starts.splice(share.starts.indexOf(started), 1);
      const took = this.#clock.now() - started;
      share.served += took;
      share.settled++;
      share.durations.add(took);
      this.#durations.add(took);
    };
    // The freed slot is filled after the plan has seen the result, so that the attempt it dispatches next competes for it.
    settled.then(
      (out) => (release(), resolve(out), this.#admitSoon()),
      (error: unknown) => (release(), reject(error), this.#admitSoon()),
    );
  }
}

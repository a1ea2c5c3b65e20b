/**
 * Clocks. Everything in troupe that waits or measures time takes a
 * {@link Clock}, so tests can use a {@link SimulatedClock} instead of real time.
 * @module
 */
import { CancelledError } from './errors.js';

/** The source of time for anything that waits or measures. */
export interface Clock {
  /** Milliseconds since the epoch (or since the simulated start). */
  now(): number;
  /**
   * Call `fn` once `now()` has reached the current time plus `ms`; returns a
   * function that cancels it. Any delay is accepted: a negative or `NaN`
   * delay means none, `Infinity` means never, and a delay longer than the
   * host's timers allow must still not fire early (see {@link boundedTimer}).
   */
  setTimer(fn: () => void, ms: number): () => void;
}

/**
 * The longest delay of one Node timer: 2^31 - 1 ms, about 24.8 days. Node
 * fires a longer `setTimeout` after 1 ms instead (with a
 * `TimeoutOverflowWarning`).
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** What {@link boundedTimer} needs from its host: a time source and one-shot timers. */
export interface TimerHost {
  /** The time the deadline is measured on, in ms. */
  now(): number;
  /** Arm a one-shot timer of at most {@link MAX_TIMER_DELAY_MS}; returns its handle. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Disarm a timer by its handle. */
  clearTimeout(handle: unknown): void;
}

const nodeTimers: TimerHost = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The one place that bounds timers: call `fn` once `host.now()` has reached
 * the deadline (the current time plus `ms`), with host timers of at most
 * {@link MAX_TIMER_DELAY_MS} chained until then, and armed again when one
 * fires before the host's time says the deadline has come. A negative or
 * `NaN` delay counts as none; `Infinity` never fires and arms nothing.
 * Returns a function that cancels whichever timer is armed.
 */
export function boundedTimer(host: TimerHost, fn: () => void, ms: number): () => void {
  if (ms === Infinity) return () => undefined;
  const deadline = host.now() + (ms > 0 ? ms : 0);
  let handle: unknown;
  let cancelled = false;
  const arm = (delay: number) => {
    handle = host.setTimeout(tick, Math.min(Math.max(delay, 0), MAX_TIMER_DELAY_MS));
  };
  function tick(): void {
    if (cancelled) return;
    const left = deadline - host.now();
    if (left > 0) arm(left);
    else fn();
  }
  arm(deadline - host.now());
  return () => {
    cancelled = true;
    host.clearTimeout(handle);
  };
}

/**
 * The real clock: `Date.now()`, and `setTimeout` through
 * {@link boundedTimer}, so time-outs and delays of any length work.
 */
export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer: (fn: () => void, ms: number) => boundedTimer(nodeTimers, fn, ms),
});

/**
 * Wait `ms` on `clock`; rejects with the signal's reason (a `CancelledError`
 * by default) when `signal` aborts first. Listeners are removed either way.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      cancel();
      reject(abortError(signal));
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error to throw for an aborted signal: its reason if it is an Error, else a CancelledError. */
export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason;
  if (reason instanceof Error) return new CancelledError(undefined, { cause: reason });
  return new CancelledError(typeof reason === 'string' ? reason : undefined);
}

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. Timers fire in time order during
 * {@link SimulatedClock.advance}, with pending promise callbacks flushed
 * between them, so async code scheduled by a timer runs before the next one.
 * Waiting for pending callbacks uses `setImmediate` (a turn of the event
 * loop, not time), so no chain of promise callbacks is too long for it.
 *
 * @example
 * ```ts
 * const clock = new SimulatedClock();
 * const done = sleep(clock, 1000);
 * await clock.advance(1000); // done resolves
 * ```
 */
export class SimulatedClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #nextId = 1;

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): () => void {
    if (ms === Infinity) return () => undefined;
    const timer: Timer = { id: this.#nextId++, at: this.#now + (ms > 0 ? ms : 0), fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.#earliest();
      if (!next || next.at > target) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Fire timers until none are left (or `limit` have fired); returns how many fired. */
  async runAll(limit = 10_000): Promise<number> {
    let fired = 0;
    await flushMicrotasks();
    while (fired < limit) {
      const next = this.#earliest();
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      fired++;
      await flushMicrotasks();
    }
    return fired;
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    return best;
  }
}

/**
 * Let pending promise callbacks run: waits for a macrotask turn (which runs
 * every queued microtask, however long the chain), `rounds` times.
 */
export async function flushMicrotasks(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

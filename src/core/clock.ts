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
  /** Call `fn` after `ms`; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer(fn: () => void, ms: number) {
    const t = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(t);
  },
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
    const timer: Timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
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

/**
 * Small helpers for AbortSignals: combine them, turn a time-out into one,
 * race a promise against one.
 * @module
 */
import { abortError, realClock, type Clock } from './clock.js';
import { TimeoutError } from './errors.js';

/** A signal that aborts when any of the given signals aborts (undefined entries are ignored). */
export function combineSignals(...signals: Array<AbortSignal | undefined>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 1) return present[0]!;
  return AbortSignal.any(present);
}

/** A controller whose signal aborts with a {@link TimeoutError} after `ms` on `clock`. */
export interface TimeoutSignal {
  /** Aborts with a `TimeoutError` once the time has passed. */
  readonly signal: AbortSignal;
  /** Stop the timer (call in `finally`). */
  clear(): void;
}

/**
 * A signal that aborts with a `TimeoutError` after `ms` on the given clock.
 * Call `clear()` when the guarded work is done.
 */
export function timeoutSignal(ms: number, clock: Clock = realClock, message?: string): TimeoutSignal {
  const controller = new AbortController();
  const cancel = clock.setTimer(() => {
    controller.abort(new TimeoutError(message ?? `Timed out after ${ms} ms`, { details: { timeoutMs: ms } }));
  }, ms);
  return { signal: controller.signal, clear: cancel };
}

/** Throw the signal's abort error if it has aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

/**
 * Settle with `promise`, or reject with the abort error as soon as `signal`
 * aborts. The listener is removed when either happens.
 * @internal
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Run `fn` with a signal that also aborts after `timeoutMs` (when given).
 * The timer is always cleared.
 * @internal
 */
export async function withTimeout<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  options: { signal?: AbortSignal; timeoutMs?: number; clock?: Clock; message?: string },
): Promise<T> {
  if (options.timeoutMs === undefined || !Number.isFinite(options.timeoutMs)) {
    return fn(options.signal ?? new AbortController().signal);
  }
  const t = timeoutSignal(options.timeoutMs, options.clock, options.message);
  try {
    const signal = combineSignals(options.signal, t.signal);
    return await raceAbort(fn(signal), signal);
  } finally {
    t.clear();
  }
}

export { abortError };

/**
 * Bounded waits on the injected clock, for calls to Redis and for closing
 * connections while Redis may be away.
 * @module
 */
import type { Clock } from '../../core/clock.js';
import { QueueError } from './errors.js';

/** `promise`, or a `QueueError` (`timeout`) with `message` after `ms` on `clock`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock, message = `Redis did not answer within ${ms} ms`): Promise<T> {
  let cancel = () => {};
  const timeout = new Promise<never>((_, reject) => {
    cancel = clock.setTimer(() => reject(new QueueError('timeout', message, { details: { timeoutMs: ms } })), ms);
  });
  return Promise.race([promise, timeout]).finally(cancel);
}

/** Resolve once `work` has settled, or after `ms` on `clock`, whichever comes first; never rejects. */
export async function settleWithin(work: Promise<unknown>, ms: number, clock: Clock): Promise<void> {
  await withTimeout(work, ms, clock).catch(() => undefined);
}

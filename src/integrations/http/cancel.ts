/**
 * Cancelling a run from any process: the request is a document in the run's
 * store; the run's process watches for it and aborts.
 * @module
 */
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { CancelledError } from '../../core/errors.js';
import { expectPositiveNumber } from '../../core/options.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { DEFAULT_POLL_MS } from './follow.js';
import { checkId } from './ids.js';

/** The document that asks run `runId` to stop. */
export function cancelKey(runId: string): string {
  return `runs/${runId}/cancel`;
}

/** What the cancel document holds. */
export interface CancelRequest {
  schemaVersion: 1;
  /** Clock time of the request. */
  requestedAt: number;
  reason: string;
}

/** Ask run `runId` to stop (see {@link cancellationSignal}, which the run's process watches with). */
export async function requestCancel(store: Store, runId: string, options: StoreCallOptions & { reason?: string; now?: number } = {}): Promise<void> {
  checkId('runId', runId);
  const doc: CancelRequest = { schemaVersion: 1, requestedAt: options.now ?? Date.now(), reason: options.reason ?? 'Cancelled by request' };
  await store.set(cancelKey(runId), doc, options.signal ? { signal: options.signal } : {});
}

/** Options of {@link cancellationSignal}. */
export interface CancellationSignalOptions {
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look, in ms. Default: 250. */
  pollMs?: number;
  /** Stop watching (for instance when the run has ended). */
  signal?: AbortSignal;
}

/**
 * A signal that aborts (with a `CancelledError`) once someone asks run
 * `runId` to stop through the store (`POST /runs/<id>/cancel`, or
 * {@link requestCancel}), from any process. Pass it to `run` and call
 * `stop()` when the run has ended.
 *
 * @example
 * ```ts
 * const watch = cancellationSignal(store, runId);
 * try { await run(flow, input, { store, runId, signal: watch.signal }) } finally { watch.stop() }
 * ```
 */
export function cancellationSignal(store: Store, runId: string, options: CancellationSignalOptions = {}): { signal: AbortSignal; stop(): void } {
  checkId('runId', runId);
  const clock = options.clock ?? realClock;
  const pollMs = expectPositiveNumber('pollMs', options.pollMs) ?? DEFAULT_POLL_MS;
  const controller = new AbortController();
  const stopped = new AbortController();
  const watch = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
  void (async () => {
    while (!watch.aborted && !controller.signal.aborted) {
      const doc = (await store.get(cancelKey(runId), { signal: watch }).catch(() => undefined)) as CancelRequest | undefined;
      if (doc?.schemaVersion === 1) {
        controller.abort(new CancelledError(doc.reason, { details: { runId } }));
        return;
      }
      await sleep(clock, pollMs, watch).catch(() => undefined);
    }
  })();
  return { signal: controller.signal, stop: () => stopped.abort() };
}

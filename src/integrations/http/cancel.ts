/**
 * Cancelling a run from any process: the request is a document in the run's
 * store; the run's process watches for it and aborts.
 * @module
 */
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { CancelledError } from '../../core/errors.js';
import { abortSignal, clock as clockCheck, defineOptions, positiveNumber, required, store as storeCheck, string } from '../../core/options.js';
import type { Store } from '../../core/store.js';
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

/** Options of {@link requestCancel}. */
export interface RequestCancelOptions {
  /** The run's store (for a tenant: its namespaced store). */
  store: Store;
  /** Why, for the run's `CancelledError`. Default: `Cancelled by request`. */
  reason?: string;
  /** The clock of the request's time (`requestedAt`). Default: the real clock. */
  clock?: Clock;
  /** Cancels the write. */
  signal?: AbortSignal;
}

const requestCancelOptions = defineOptions<RequestCancelOptions>('requestCancel', { store: required(storeCheck), reason: string, clock: clockCheck, signal: abortSignal });

/** Ask run `runId` (in `options.store`) to stop (see {@link cancellationSignal}, which the run's process watches with). */
export async function requestCancel(runId: string, options: RequestCancelOptions): Promise<void> {
  requestCancelOptions.check(options ?? ({} as RequestCancelOptions));
  checkId('runId', runId);
  const doc: CancelRequest = { schemaVersion: 1, requestedAt: (options.clock ?? realClock).now(), reason: options.reason ?? 'Cancelled by request' };
  await options.store.set(cancelKey(runId), doc, options.signal ? { signal: options.signal } : {});
}

/** Options of {@link cancellationSignal}. */
export interface CancellationSignalOptions {
  /** The run's store (for a tenant: its namespaced store). */
  store: Store;
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look, in ms. Default: 250. */
  pollMs?: number;
  /** Stop watching (for instance when the run has ended); `close()` does the same. */
  signal?: AbortSignal;
}

const cancellationSignalOptions = defineOptions<CancellationSignalOptions>('cancellationSignal', { store: required(storeCheck), clock: clockCheck, pollMs: positiveNumber, signal: abortSignal });

/** What {@link cancellationSignal} returns: the signal, and `close()` to stop watching. */
export interface CancellationWatch {
  /** Aborts (with a `CancelledError`) once someone asks the run to stop. */
  readonly signal: AbortSignal;
  /** Stop watching the store (call it when the run has ended). */
  close(): void;
}

/**
 * A signal that aborts (with a `CancelledError`) once someone asks run
 * `runId` to stop through `options.store` (`POST /runs/<id>/cancel`, or
 * {@link requestCancel}), from any process. Pass it to `run` and call
 * `close()` when the run has ended.
 *
 * @example
 * ```ts
 * const watch = cancellationSignal(runId, { store });
 * try { await run(flow, input, { store, runId, signal: watch.signal }) } finally { watch.close() }
 * ```
 */
export function cancellationSignal(runId: string, options: CancellationSignalOptions): CancellationWatch {
  cancellationSignalOptions.check(options ?? ({} as CancellationSignalOptions));
  checkId('runId', runId);
  const { store } = options;
  const clock = options.clock ?? realClock;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
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
  return { signal: controller.signal, close: () => stopped.abort() };
}

/**
 * The run-log writer: `run(..., { store })` appends every event of the run
 * to the stream `runs/<runId>/events` and keeps `runs/<runId>/meta` up to
 * date through it. Reading a log back is `troupe/persistence`'s
 * (`readRun`, `timeline`, ...).
 * @module
 */
import { realClock, type Clock } from './clock.js';
import { StoreError, errorMessage } from './errors.js';
import type { RunParent, TroupeEvent } from './events.js';
import type { OutcomeReason, OutcomeStatus } from './outcome.js';
import type { Store } from './store.js';
import type { Usage } from './usage.js';

/** The stream that holds a run's events. */
export function runEventsStream(runId: string): string {
  return `runs/${runId}/events`;
}

/** The document that describes a run (for listing and pruning). */
export function runMetaKey(runId: string): string {
  return `runs/${runId}/meta`;
}

/** What `runs/<runId>/meta` holds. */
export interface RunMeta {
  schemaVersion: 1;
  runId: string;
  runnable: string;
  /** Clock time of `run.started`. */
  startedAt: number;
  /** Clock time of `run.completed` or `run.failed`. */
  endedAt?: number;
  /** The run's status once it ended (`failed` for a failed run). */
  status?: OutcomeStatus;
  /** Why it ended so, when its status says less (`completed` with `goal-met`, `max-rounds`, ...). */
  reason?: OutcomeReason;
  /** The run it was made from (a fork, a what-if replay). */
  parent?: RunParent;
  /** The usage of the whole run, once it completed. */
  usage?: Usage;
}

/** Queues a run's events to its log; see {@link createRunLogWriter}. */
export interface RunLogWriter {
  /** Queue one event (events of other runs are ignored). Never blocks, never throws. */
  write(event: TroupeEvent): void;
  /**
   * Resolves when every queued event is in the store, or the log failed, or
   * `timeoutMs` passed on `clock` (then the log fails with a `StoreError`
   * reported through `onError`, and later events are dropped).
   */
  flush(options?: { clock?: Clock; timeoutMs?: number }): Promise<void>;
  /**
   * Resolves once every event queued so far is in the store (events queued
   * later are not waited for); rejects with a `StoreError` when the log
   * failed before writing them.
   */
  written(): Promise<void>;
}

/** How long a run waits for its log to be flushed before giving up on it (ms). */
export const RUN_LOG_FLUSH_TIMEOUT_MS = 30_000;

/**
 * Start the log of run `runId`: events are snapshotted when written and
 * appended in order by one background loop, so the run never waits on the
 * store. The first store failure is reported once through `onError` and
 * stops the log (later events would leave a gap); the run goes on.
 */
export function createRunLogWriter(store: Store, runId: string, onError: (error: unknown) => void): RunLogWriter {
  const stream = runEventsStream(runId);
  // A queue read from `head` (Array#shift is linear on long arrays): compacted once half of it is done.
  const pending: Array<() => Promise<void>> = [];
  let head = 0;
  let failed = false;
  let draining: Promise<void> | undefined;
  let meta: RunMeta | undefined;
  /** Callers of `written` whose marker is still queued: rejected when the log fails. */
  const waiting = new Set<(error: Error) => void>();
  const failure = (): StoreError => new StoreError(`The run log of "${runId}" could not be written`);

  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    pending.length = 0;
    head = 0;
    onError(error);
    for (const reject of [...waiting]) reject(failure());
    waiting.clear();
  };
  const drain = async () => {
    while (head < pending.length && !failed) {
      const job = pending[head++]!;
      if (head > 1024 && head * 2 > pending.length) {
        pending.splice(0, head);
        head = 0;
      }
      try {
        await job();
      } catch (error) {
        fail(error);
      }
    }
    draining = undefined;
  };

  return {
    write(event) {
      if (failed || event.runId !== runId) return;
      let record: unknown;
      try {
        record = JSON.parse(JSON.stringify(event));
      } catch (error) {
        onError(new StoreError(`Event "${event.type}" is not JSON-serialisable: ${errorMessage(error)}`, { cause: error }));
        return;
      }
      pending.push(() => store.append(stream, record));
      if (event.type === 'run.started') {
        meta = { schemaVersion: 1, runId, runnable: event.runnable, startedAt: event.time, ...(event.parent ? { parent: event.parent } : {}) };
      } else if (meta && (event.type === 'run.completed' || event.type === 'run.failed')) {
        meta = event.type === 'run.completed' ? { ...meta, endedAt: event.time, status: event.status, ...(event.reason ? { reason: event.reason } : {}), usage: event.usage } : { ...meta, endedAt: event.time, status: 'failed' };
      }
      if (event.type === 'run.started' || event.type === 'run.completed' || event.type === 'run.failed') {
        const snapshot = meta;
        pending.push(() => store.set(runMetaKey(runId), snapshot));
      }
      draining ??= drain();
    },
    written() {
      if (failed) return Promise.reject(failure());
      return new Promise<void>((resolve, reject) => {
        waiting.add(reject);
        pending.push(async () => {
          waiting.delete(reject);
          resolve();
        });
        draining ??= drain();
      });
    },
    async flush({ clock = realClock, timeoutMs = RUN_LOG_FLUSH_TIMEOUT_MS } = {}) {
      if (!draining) return;
      let cancel: (() => void) | undefined;
      const timedOut = new Promise<void>((resolve) => {
        cancel = clock.setTimer(() => {
          fail(new StoreError(`The run log was not flushed within ${timeoutMs} ms; ${pending.length - head} queued events were dropped`));
          resolve();
        }, timeoutMs);
      });
      try {
        const current = (): Promise<void> | undefined => draining;
        const settled = (async () => {
          for (let d = current(); d && !failed; d = current()) await d;
        })();
        await Promise.race([settled, timedOut]);
      } finally {
        cancel?.();
      }
    },
  };
}

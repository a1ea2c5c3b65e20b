/**
 * Following a run log: what is in the log from a position on, then what is
 * appended, until the run ends. The log is the one source, so a position is
 * all a reader needs to resume.
 * @module
 */
import { sleep, realClock, type Clock } from '../../core/clock.js';
import type { TroupeEvent } from '../../core/events.js';
import { runEventsStream } from '../../core/run-log-writer.js';
import type { Store } from '../../core/store.js';

/** How often a follower looks for new events by default (ms). */
export const DEFAULT_POLL_MS = 250;

/** One event of a run log and its position in the log (its sequence number, the SSE event id). */
export interface LoggedEvent {
  seq: number;
  event: TroupeEvent;
}

/** Options of {@link followRunLog}. */
export interface FollowRunLogOptions {
  /** The first position to read. Default: 0. */
  from?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look for new events, in ms. Default: 250. */
  pollMs?: number;
}

/** True for the events that end a run. */
export function isTerminal(event: TroupeEvent): boolean {
  return event.type === 'run.completed' || event.type === 'run.failed';
}

/** True when a record of a run log is an event (an object with a `type` and a numeric `time`). */
export function isEventRecord(record: unknown): record is TroupeEvent {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return false;
  const { type, time } = record as { type?: unknown; time?: unknown };
  return typeof type === 'string' && type !== '' && typeof time === 'number' && Number.isFinite(time);
}

/**
 * The events of run `runId` from position `from` on, as they are in the
 * log and then as they are appended (read every `pollMs` on `clock`), up to
 * and including the event that ends the run. Records that are not events
 * are passed over; positions count them, so a position is the same for
 * every reader. Works across processes: whoever appends to the store's run
 * log (the run's own process, distributed workers through it) is followed.
 *
 * @example
 * ```ts
 * for await (const { seq, event } of followRunLog(store, runId, { from: 0 })) console.log(seq, event.type);
 * ```
 */
export async function* followRunLog(store: Store, runId: string, options: FollowRunLogOptions = {}): AsyncGenerator<LoggedEvent> {
  const clock = options.clock ?? realClock;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const stream = runEventsStream(runId);
  const call = options.signal ? { signal: options.signal } : {};
  let next = options.from ?? 0;
  for (;;) {
    const { records, next: after } = await store.read(stream, { ...call, from: next });
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      if (!isEventRecord(record)) continue;
      yield { seq: next + i, event: record };
      if (isTerminal(record)) return;
    }
    next = Math.max(after, next + records.length);
    await sleep(clock, pollMs, options.signal);
  }
}

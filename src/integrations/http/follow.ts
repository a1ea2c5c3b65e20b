/**
 * Following a run log: what is in the log from a position on, then what is
 * appended, until the run ends. The log is the one source, so a position is
 * all a reader needs to resume.
 * @module
 */
import { sleep, realClock, type Clock } from '../../core/clock.js';
import type { TroupeEvent } from '../../core/events.js';
import { abortSignal, clock, defineOptions, nonNegativeInteger, positiveNumber, required, store as storeCheck } from '../../core/options.js';
import { readRunEvents } from '../../core/run-log-reader.js';
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
  /** The store the run logs to (for a tenant: its namespaced store). */
  store: Store;
  /** The first position to read. Default: 0. */
  from?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look for new events, in ms. Default: 250. */
  pollMs?: number;
}

/** The description of {@link FollowRunLogOptions}. */
export const followRunLogOptions = defineOptions<FollowRunLogOptions>('followRunLog', {
  store: required(storeCheck),
  from: nonNegativeInteger,
  signal: abortSignal,
  clock,
  pollMs: positiveNumber,
});

/** True for the events that end a run. */
export function isTerminal(event: TroupeEvent): boolean {
  return event.type === 'run.completed' || event.type === 'run.failed';
}

/**
 * The events of run `runId` in `options.store` from position `from` on, as
 * they are in the log and then as they are appended (read every `pollMs`
 * on `clock`), up to and including the event that ends the run. The log is
 * read by the kernel's run-log reader: records that are not events are
 * passed over; positions count them, so a position is the same for every
 * reader. Works across processes: whoever appends to the store's run
 * log (the run's own process, distributed workers through it) is followed.
 *
 * @example
 * ```ts
 * for await (const { seq, event } of followRunLog(runId, { store, from: 0 })) console.log(seq, event.type);
 * ```
 */
export function followRunLog(runId: string, options: FollowRunLogOptions): AsyncGenerator<LoggedEvent> {
  followRunLogOptions.check(options ?? ({} as FollowRunLogOptions));
  return follow(runId, options);
}

async function* follow(runId: string, options: FollowRunLogOptions): AsyncGenerator<LoggedEvent> {
  const { store, signal } = options;
  const clock = options.clock ?? realClock;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  let next = options.from ?? 0;
  for (;;) {
    const read = await readRunEvents(runId, { store, from: next, ...(signal ? { signal } : {}) });
    for (let i = 0; i < read.events.length; i++) {
      const event = read.events[i]!;
      yield { seq: read.positions[i]!, event };
      if (isTerminal(event)) return;
    }
    next = read.next;
    await sleep(clock, pollMs, signal);
  }
}

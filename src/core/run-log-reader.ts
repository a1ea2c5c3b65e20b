/**
 * The run-log reader: the one way troupe reads a run's events back, from a
 * store (`readRunEvents`) or from JSON lines (`parseJsonLines`, what the
 * file store and the command line read), with one test of what is an event
 * (`isEvent`) and one rule for a torn last line. `resume`, `troupe/persistence`
 * (`readRun`, `timeline`, ...), time travel, `troupe/http`, the command
 * line, the report and the queue integration all read through it. The
 * writer is `run-log-writer.ts`.
 *
 * **Torn last line.** A record is a line that ends with a line end (`\n`,
 * `\r\n` or `\r`). Text after the last line end is a record a crash cut
 * short: it is left out, whether or not it happens to parse, and reported
 * as `torn` (a writer always ends a record with its line end, so a line
 * without one was never finished; the file store cuts it off before its
 * next append). White space alone after the last line end is not a record.
 * Blank lines are passed over and count as no record. Any other line that
 * is not JSON is damage no crash makes: a `ParseError` naming its line.
 * @module
 */
import { ParseError, errorMessage } from './errors.js';
import type { TroupeEvent } from './events.js';
import { loggedOutcome } from './outcome.js';
import { runEventsStream, runMetaKey, type RunMeta } from './run-log-writer.js';
import type { Store } from './store.js';

/** Why `record` is not an event, or undefined when it is one: an object with a `type`, a `runId` and a numeric `time`. */
export function notAnEvent(record: unknown): string | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return `not an object (${record === null ? 'null' : Array.isArray(record) ? 'array' : typeof record})`;
  const { type, runId, time } = record as { type?: unknown; runId?: unknown; time?: unknown };
  if (typeof type !== 'string' || type === '') return 'no event `type`';
  if (typeof runId !== 'string') return 'no `runId`';
  if (typeof time !== 'number' || !Number.isFinite(time)) return 'no numeric `time`';
  return undefined;
}

/** True when a record of a run log is an event: an object with a non-empty `type`, a `runId` and a finite `time`. */
export function isEvent(record: unknown): record is TroupeEvent {
  return notAnEvent(record) === undefined;
}

/** A record of a run log that is not an event (see {@link isEvent}). */
export interface SkippedRecord {
  /** Its position in the log. */
  index: number;
  /** Why it is not an event. */
  reason: string;
}

/** A torn last record: a crash cut an append short, and the record was left out. */
export interface TornRecord {
  /** What was cut short, for messages. */
  reason: string;
}

/** Records of a run log sorted into events and the rest. */
export interface SortedRecords {
  /** The events, in log order. */
  events: TroupeEvent[];
  /** The position in the log of each event (`events[i]` is at `positions[i]`). */
  positions: number[];
  /** The records that are not events. */
  skipped: SkippedRecord[];
}

/** Sort `records` (the first at position `from`) into events and the records that are not events. */
export function sortRecords(records: readonly unknown[], from = 0): SortedRecords {
  const events: TroupeEvent[] = [];
  const positions: number[] = [];
  const skipped: SkippedRecord[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const reason = notAnEvent(record);
    if (reason === undefined) {
      events.push(record as TroupeEvent);
      positions.push(from + i);
    } else skipped.push({ index: from + i, reason });
  }
  return { events, positions, skipped };
}

/** What {@link readRunEvents} reads. */
export interface RunLogEvents extends SortedRecords {
  /** The position after the last record read: pass it as `from` to read only what is appended later. */
  next: number;
  /** Set when the log's last record was torn and left out. */
  torn?: TornRecord;
}

/** Options of {@link readRunEvents}. */
export interface ReadRunEventsOptions {
  /** The store the run logged to. */
  store: Store;
  /** The first position to read. Default: 0. */
  from?: number;
  /** Cancels the read. */
  signal?: AbortSignal;
}

/**
 * The events of run `runId`'s log in `options.store` from position `from`
 * on, with the position of each, the records that are not events, and
 * whether the last record was torn. A run never logged reads as no events.
 */
export async function readRunEvents(runId: string, options: ReadRunEventsOptions): Promise<RunLogEvents> {
  const { store, from = 0, signal } = options;
  const read = await store.read(runEventsStream(runId), { from, ...(signal ? { signal } : {}) });
  return { ...sortRecords(read.records, from), next: Math.max(read.next, from + read.records.length), ...(read.torn ? { torn: read.torn } : {}) };
}

/**
 * A run's meta document as stored, checked and in today's words: undefined
 * unless it is an object with a `runId` (and, when `key` is given, stored
 * under that run's key); a status of a run logged before outcomes had a
 * `reason` (`goal-met`, `coordinator`, ...) reads as status and reason.
 */
export function parseRunMeta(value: unknown, key?: string): RunMeta | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const meta = value as Partial<RunMeta>;
  if (typeof meta.runId !== 'string' || (key !== undefined && runMetaKey(meta.runId) !== key)) return undefined;
  if (typeof meta.status !== 'string') return meta as RunMeta;
  const { status, reason } = loggedOutcome(meta.status, meta.reason);
  const { reason: _old, ...rest } = meta;
  return { ...rest, status, ...(reason === undefined ? {} : { reason }) } as RunMeta;
}

/** Run `runId`'s meta document in `options.store` (see {@link parseRunMeta}), or undefined. */
export async function readRunMeta(runId: string, options: { store: Store; signal?: AbortSignal | undefined }): Promise<RunMeta | undefined> {
  const { store, signal } = options;
  return parseRunMeta(await store.get(runMetaKey(runId), signal ? { signal } : {}), runMetaKey(runId));
}

/** What {@link parseJsonLines} reads. */
export interface JsonLines {
  /** The records from `from` on. */
  records: unknown[];
  /** How many records the text holds (the `next` position of a store read). */
  count: number;
  /** Set when text followed the last line end (see the module's rule). */
  torn?: TornRecord;
}

/**
 * Parse JSON lines by the one rule of this module: one JSON record per
 * line; text after the last line end is torn (left out, reported); blank
 * lines are passed over; another line that is not JSON throws a
 * `ParseError` naming `source` and the line (`details.line`, 1-based). A
 * leading byte order mark is ignored. Records before position `from` are
 * counted but not returned. Linear in the text.
 */
export function parseJsonLines(text: string, source: string, from = 0): JsonLines {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: unknown[] = [];
  let count = 0;
  let line = 0;
  let start = 0;
  // The next line feed and carriage return, each found again only once passed: one scan of the text for each.
  let lf = body.indexOf('\n');
  let cr = body.indexOf('\r');
  for (;;) {
    if (lf >= 0 && lf < start) lf = body.indexOf('\n', start);
    if (cr >= 0 && cr < start) cr = body.indexOf('\r', start);
    const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(lf, cr);
    if (end < 0) break;
    line++;
    const content = body.slice(start, end);
    start = body.charCodeAt(end) === 0x0d && body.charCodeAt(end + 1) === 0x0a ? end + 2 : end + 1;
    if (content.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(content);
    } catch (error) {
      throw new ParseError(`Line ${line} of ${source} is not valid JSON: ${errorMessage(error)}`, { cause: error, details: { source, line } });
    }
    if (count++ >= from) records.push(record);
  }
  const tail = body.slice(start);
  const result: JsonLines = { records, count };
  if (tail.trim() !== '') result.torn = { reason: `the last line of ${source} (line ${line + 1}, ${tail.length} characters) has no line end: a write was cut short` };
  return result;
}

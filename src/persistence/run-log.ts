/**
 * Run logs: every event of a run appended to `runs/<runId>/events` (the
 * file `runs/<runId>/events.jsonl` in a file store), and the tools to read
 * one back: {@link readRun}, {@link timeline}, {@link exportRun},
 * {@link pruneRuns}. Replay a run with `replayAdapter(await exportRun(...))`.
 * @module
 */
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, StoreError, describeValue, errorMessage } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import type { OutcomeStatus } from '../core/runnable.js';
import type { Store, StoreCallOptions } from './store.js';

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

  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    pending.length = 0;
    head = 0;
    onError(error);
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
        meta = { schemaVersion: 1, runId, runnable: event.runnable, startedAt: event.time };
      } else if (meta && (event.type === 'run.completed' || event.type === 'run.failed')) {
        meta = { ...meta, endedAt: event.time, status: event.type === 'run.completed' ? event.status : 'failed' };
      }
      if (event.type === 'run.started' || event.type === 'run.completed' || event.type === 'run.failed') {
        const snapshot = meta;
        pending.push(() => store.set(runMetaKey(runId), snapshot));
      }
      draining ??= drain();
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

/** A record of a run log that is not an event, left out of {@link RunLog.events}. */
export interface SkippedRecord {
  /** Its position in the log. */
  index: number;
  /** Why it is not an event. */
  reason: string;
}

/** A run read back from its log. */
export interface RunLog {
  runId: string;
  /** The run's meta document, when it was written. */
  meta?: RunMeta;
  /** Every logged event, in order. */
  events: TroupeEvent[];
  /** Set when the log's last record was torn (a crash mid-append). */
  torn?: { reason: string };
  /** Records that are not events (not an object, no `type`, no numeric `time`), left out of `events`. */
  skipped?: SkippedRecord[];
}

/** Why `record` is not an event, or undefined when it is one. */
function notAnEvent(record: unknown): string | undefined {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return `not an object (${record === null ? 'null' : Array.isArray(record) ? 'array' : typeof record})`;
  const { type, time } = record as { type?: unknown; time?: unknown };
  if (typeof type !== 'string' || type === '') return 'no event `type`';
  if (typeof time !== 'number' || !Number.isFinite(time)) return 'no numeric `time`';
  return undefined;
}

/** Read a run's log; a run never logged reads with no events. Records that are not events are reported in `skipped`. */
export async function readRun(store: Store, runId: string, options: StoreCallOptions = {}): Promise<RunLog> {
  checkRunId(runId);
  const { records, torn } = await store.read(runEventsStream(runId), options);
  const meta = (await store.get(runMetaKey(runId), options)) as RunMeta | undefined;
  const { events, skipped } = sortRecords(records);
  return { runId, ...(meta === undefined ? {} : { meta }), events, ...(torn ? { torn } : {}), ...(skipped.length > 0 ? { skipped } : {}) };
}

function sortRecords(records: readonly unknown[]): { events: TroupeEvent[]; skipped: SkippedRecord[]; positions: number[] } {
  const events: TroupeEvent[] = [];
  const positions: number[] = [];
  const skipped: SkippedRecord[] = [];
  records.forEach((record, index) => {
    const reason = notAnEvent(record);
    if (reason === undefined) {
      events.push(record as TroupeEvent);
      positions.push(index);
    } else skipped.push({ index, reason });
  });
  return { events, skipped, positions };
}

/** One line of a {@link timeline}. */
export interface TimelineEntry {
  /** Position in the log. */
  index: number;
  /** The event type. */
  type: TroupeEvent['type'];
  /** Clock time of the event. */
  time: number;
  /** Milliseconds since the run's first event. */
  offsetMs: number;
  /** Milliseconds since the previous event. */
  sincePreviousMs: number;
  /**
   * For events that close something (`op.completed`, `agent.completed`,
   * `agent.failed`, `run.completed`, `run.failed`): milliseconds since the
   * matching start event.
   */
  durationMs?: number;
  /** The op the event belongs to. */
  opId?: string;
  /** The agent, when the event names one. */
  agent?: string;
  /** The event itself. */
  event: TroupeEvent;
}

/** Options of {@link timeline}. */
export interface TimelineOptions extends StoreCallOptions {
  /** Receives the records of the log that are not events (they are left out of the timeline). */
  onSkipped?: (skipped: SkippedRecord[]) => void;
}

/**
 * A run's events in order, with offsets and the duration of every op, agent
 * and the run. Records that are not events are skipped and reported through
 * `onSkipped` (entries keep their position in the log as `index`).
 */
export async function timeline(store: Store, runId: string, options: TimelineOptions = {}): Promise<TimelineEntry[]> {
  checkRunId(runId);
  const { onSkipped, ...call } = options;
  const { records } = await store.read(runEventsStream(runId), call);
  const { events, skipped, positions } = sortRecords(records);
  if (skipped.length > 0) onSkipped?.(skipped);
  const starts = new Map<string, number>();
  const first = events[0]?.time ?? 0;
  return events.map((event, at) => {
    const index = positions[at]!;
    const previous = at === 0 ? event.time : events[at - 1]!.time;
    const scope = event.type.startsWith('run.') ? 'run' : event.type.startsWith('agent.') ? `agent:${event.opId}` : `op:${event.opId}`;
    const entry: TimelineEntry = { index, type: event.type, time: event.time, offsetMs: event.time - first, sincePreviousMs: event.time - previous, event };
    if (event.type === 'run.started' || event.type === 'op.started' || event.type === 'agent.started') starts.set(scope, event.time);
    if (['run.completed', 'run.failed', 'op.completed', 'agent.completed', 'agent.failed'].includes(event.type)) {
      const start = starts.get(scope);
      if (start !== undefined) entry.durationMs = event.time - start;
    }
    if (typeof event.opId === 'string') entry.opId = event.opId;
    const agent = (event as { agent?: unknown }).agent;
    if (typeof agent === 'string') entry.agent = agent;
    return entry;
  });
}

/** A run as one JSON document; `replayAdapter(exported)` replays it. */
export interface ExportedRun extends RunLog {
  format: 'troupe.run';
  schemaVersion: 1;
}

/** Export a run's log as one JSON document. */
export async function exportRun(store: Store, runId: string, options: StoreCallOptions = {}): Promise<ExportedRun> {
  const log = await readRun(store, runId, options);
  return { format: 'troupe.run', schemaVersion: 1, ...log };
}

/** Options of {@link pruneRuns}. */
export interface PruneRunsOptions extends StoreCallOptions {
  /** The clock that says what "now" is. Default: the real clock. */
  clock?: Clock;
}

/**
 * Delete every run that ended (or, for a run that never ended, started)
 * more than `maxAgeMs` ago: its documents under `runs/<runId>/` and, when
 * the store has `deleteStream`, its event log. Returns the pruned run ids.
 */
export async function pruneRuns(store: Store, maxAgeMs: number, options: PruneRunsOptions = {}): Promise<string[]> {
  if (!(Number.isFinite(maxAgeMs) && maxAgeMs >= 0)) {
    throw new ConfigurationError(`Expected \`maxAgeMs\` to be a non-negative number, got ${describeValue(maxAgeMs)}`);
  }
  const now = (options.clock ?? realClock).now();
  const call = options.signal ? { signal: options.signal } : {};
  const pruned: string[] = [];
  for (const key of await store.list('runs/', call)) {
    if (!key.endsWith('/meta')) continue;
    const meta = (await store.get(key, call)) as Partial<RunMeta> | undefined;
    if (!meta || typeof meta.runId !== 'string' || runMetaKey(meta.runId) !== key) continue;
    const at = meta.endedAt ?? meta.startedAt;
    if (typeof at !== 'number' || now - at <= maxAgeMs) continue;
    for (const doc of await store.list(`runs/${meta.runId}/`, call)) await store.delete(doc, call);
    await store.deleteStream?.(runEventsStream(meta.runId), call);
    pruned.push(meta.runId);
  }
  return pruned;
}

function checkRunId(runId: string): void {
  if (typeof runId !== 'string' || runId === '') {
    throw new ConfigurationError(`Expected \`runId\` to be a non-empty string, got ${describeValue(runId)}`);
  }
}

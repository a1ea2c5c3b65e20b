/**
 * Run logs: every event of a run is appended to `runs/<runId>/events` (the
 * file `runs/<runId>/events.jsonl` in a file store) by the kernel's writer
 * (`src/core/run-log-writer.ts`); this module reads one back: {@link readRun}, {@link timeline}, {@link exportRun},
 * {@link pruneRuns}. Replay a run with `replayAdapter(await exportRun(...))`.
 * @module
 */
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { runEventsStream, runMetaKey, type RunMeta } from '../core/run-log-writer.js';
import type { Store, StoreCallOptions } from '../core/store.js';
import { defined } from '../core/defined.js';

export { runEventsStream, runMetaKey, type RunMeta } from '../core/run-log-writer.js';

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
  return { runId, ...defined({ meta }), events, ...(torn ? { torn } : {}), ...(skipped.length > 0 ? { skipped } : {}) };
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

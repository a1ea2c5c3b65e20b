/**
 * Run logs: every event of a run is appended to `runs/<runId>/events` (the
 * file `runs/<runId>/events.jsonl` in a file store) by the kernel's writer
 * (`src/core/run-log-writer.ts`); this module reads one back through the
 * kernel's run-log reader (`src/core/run-log-reader.ts`): {@link readRun},
 * {@link timeline}, {@link exportRun}, {@link pruneRuns}. Replay a run with `replayAdapter(await exportRun(...))`.
 * @module
 */
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { abortSignal, clock, defineOptions, func, nonNegativeNumber, required, store as storeCheck } from '../core/options.js';
import { parseRunMeta, readRunEvents, readRunMeta, type SkippedRecord, type TornRecord } from '../core/run-log-reader.js';
import { runEventsStream, type RunMeta } from '../core/run-log-writer.js';
import type { Store } from '../core/store.js';
import { defined } from '../core/defined.js';

export { runEventsStream, runMetaKey, type RunMeta } from '../core/run-log-writer.js';
export { isEvent, type SkippedRecord, type TornRecord } from '../core/run-log-reader.js';

/** A run read back from its log. */
export interface RunLog {
  runId: string;
  /** The run's meta document, when it was written. */
  meta?: RunMeta;
  /** Every logged event, in order. */
  events: TroupeEvent[];
  /** Set when the log's last record was torn (a crash mid-append) and left out. */
  torn?: TornRecord;
  /** Records that are not events (not an object, no `type`, `runId` or numeric `time`), left out of `events`. */
  skipped?: SkippedRecord[];
}

/** Options of {@link readRun}, {@link exportRun} and {@link listRuns}: where the runs are logged. */
export interface RunStoreOptions {
  /** The store the runs were logged in (`run(..., { store })`). */
  store: Store;
  /** Cancels the reads. */
  signal?: AbortSignal;
}

/** The description of {@link RunStoreOptions}, checked by each function that takes them (under its own name). */
export const runStoreOptions = defineOptions<RunStoreOptions>('readRun', { store: required(storeCheck), signal: abortSignal });

/**
 * Read run `runId`'s log from `options.store`; a run never logged reads
 * with no events. Records that are not events are reported in `skipped`,
 * a torn last record in `torn` (docs/persistence.md has the rule).
 *
 * @example
 * ```ts
 * const log = await readRun('review-1', { store });
 * console.log(log.meta?.status, log.events.length);
 * ```
 */
export async function readRun(runId: string, options: RunStoreOptions): Promise<RunLog> {
  runStoreOptions.check(options ?? ({} as RunStoreOptions));
  checkRunId(runId);
  const { store, signal } = options;
  const { events, skipped, torn } = await readRunEvents(runId, { store, ...defined({ signal }) });
  const meta = await readRunMeta(runId, { store, signal });
  return { runId, ...defined({ meta }), events, ...(torn ? { torn } : {}), ...(skipped.length > 0 ? { skipped } : {}) };
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
export interface TimelineOptions extends RunStoreOptions {
  /** Receives the records of the log that are not events (they are left out of the timeline). */
  onSkipped?: (skipped: SkippedRecord[]) => void;
}

const timelineOptions = defineOptions<TimelineOptions>('timeline', { ...runStoreOptions.shape, onSkipped: func });

/**
 * A run's events in order, with offsets and the duration of every op, agent
 * and the run. Records that are not events are skipped and reported through
 * `onSkipped` (entries keep their position in the log as `index`).
 */
export async function timeline(runId: string, options: TimelineOptions): Promise<TimelineEntry[]> {
  timelineOptions.check(options ?? ({} as TimelineOptions));
  checkRunId(runId);
  const { onSkipped, store, signal } = options;
  const { events, skipped, positions } = await readRunEvents(runId, { store, ...defined({ signal }) });
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

/**
 * Export run `runId`'s log as one JSON document.
 *
 * @example
 * ```ts
 * const replay = replayAdapter(await exportRun('review-1', { store }));
 * ```
 */
export async function exportRun(runId: string, options: RunStoreOptions): Promise<ExportedRun> {
  runStoreOptions.check(options ?? ({} as RunStoreOptions), '', 'exportRun');
  const log = await readRun(runId, options);
  return { format: 'troupe.run', schemaVersion: 1, ...log };
}

/** Options of {@link pruneRuns}. */
export interface PruneRunsOptions extends RunStoreOptions {
  /** Runs that ended (or, never ended, started) longer ago than this are deleted, in ms. */
  maxAgeMs: number;
  /** The clock that says what "now" is. Default: the real clock. */
  clock?: Clock;
}

const pruneRunsOptions = defineOptions<PruneRunsOptions>('pruneRuns', { ...runStoreOptions.shape, maxAgeMs: required(nonNegativeNumber), clock });

/**
 * Delete every run of `options.store` that ended (or, for a run that never
 * ended, started) more than `maxAgeMs` ago: its documents under
 * `runs/<runId>/` and, when the store has `deleteStream`, its event log.
 * Returns the pruned run ids.
 *
 * @example
 * ```ts
 * const pruned = await pruneRuns({ store, maxAgeMs: 7 * 24 * 3600_000 });
 * ```
 */
export async function pruneRuns(options: PruneRunsOptions): Promise<string[]> {
  pruneRunsOptions.check(options ?? ({} as PruneRunsOptions));
  const { store, maxAgeMs } = options;
  const now = (options.clock ?? realClock).now();
  const call = options.signal ? { signal: options.signal } : {};
  const pruned: string[] = [];
  for (const key of await store.list('runs/', call)) {
    if (!key.endsWith('/meta')) continue;
    const meta = parseRunMeta(await store.get(key, call), key);
    if (!meta) continue;
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

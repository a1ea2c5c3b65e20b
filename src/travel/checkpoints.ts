/**
 * A run's checkpoints, read from its log: every `checkpoint.saved` and
 * `checkpoint.appended` record, numbered in log order, from every
 * checkpointing pattern (loops, teams, plans and their chunks, planning
 * sessions, coordinations), and the store's state as of any one of them.
 * @module
 */
import type { TroupeEvent } from '../core/events.js';
import { currentChunkStatus } from '../plan/engine/state.js';
import { ConfigurationError, describeValue } from '../core/errors.js';

/** Anything that holds a run's events: a `RunLog`, an exported run, or `{ events }`. */
export interface RunEvents {
  /** The run's id, when known. */
  readonly runId?: string;
  /** The run's events, in log order. */
  readonly events: readonly unknown[];
}

/** One checkpoint of a run, as {@link listCheckpoints} lists it. */
export interface RunCheckpoint {
  /** Its number: 1 for the run's first checkpoint, in log order. `forkRun(..., { at })` takes it. */
  id: number;
  /** Position of its record among the run's events. */
  index: number;
  /** Clock time of the save. */
  time: number;
  /** `saved`: the pattern saved its whole state (or, `finished`, its outcome); `appended`: one entry was added to its stream (a plan's chunk). */
  type: 'saved' | 'appended';
  /** The pattern's kind (`reflect`, `orchestrate`, `team`, `plan`, `coordinate`, `planning-session`, or a runnable's own). */
  kind: string;
  /** The pattern's op name. */
  name: string;
  /** Its checkpoint path in the run. */
  path: string;
  /** True when the pattern had finished (its outcome was saved). */
  finished: boolean;
  /** A few words on where the pattern was: `iteration 2`, `round 1`, `chunk 3 completed`, `4 of 6 tasks done`. */
  summary: string;
  /** The state saved (`saved` only). */
  state?: unknown;
  /** The outcome saved (`finished` only). */
  outcome?: unknown;
  /** The entry appended (`appended` only). */
  entry?: unknown;
  /** True when the checkpoint was not made by this run but copied into it when it was forked. */
  seeded: boolean;
}

/**
 * Every checkpoint of a run, in the order of its log, numbered from 1: the
 * states its patterns saved and the entries they appended (a plan's chunks),
 * across every pattern and nesting level. A fork's own log starts with the
 * checkpoints it was seeded with (`seeded: true`), so a fork lists and
 * forks like any run.
 *
 * @example
 * ```ts
 * const log = await readRun('review-1', { store });
 * for (const c of listCheckpoints(log)) console.log(c.id, c.kind, c.path, c.summary);
 * ```
 */
export function listCheckpoints(run: RunEvents): RunCheckpoint[] {
  if (!run || !Array.isArray(run.events)) throw new ConfigurationError(`Expected a run log (an object with \`events\`), got ${describeValue(run)}`);
  const out: RunCheckpoint[] = [];
  let started = false;
  run.events.forEach((record, index) => {
    if (record === null || typeof record !== 'object') return;
    const e = record as Partial<TroupeEvent<'checkpoint.saved'>> & Partial<TroupeEvent<'checkpoint.appended'>> & { type?: unknown };
    if (e.type === 'run.started') started = true;
    if (e.type !== 'checkpoint.saved' && e.type !== 'checkpoint.appended') return;
    if (typeof e.kind !== 'string' || typeof e.path !== 'string') return;
    const base = { id: out.length + 1, index, time: typeof e.time === 'number' ? e.time : 0, kind: e.kind, name: typeof e.name === 'string' ? e.name : e.kind, path: e.path, seeded: !started };
    if (e.type === 'checkpoint.saved') {
      const finished = e.outcome !== undefined;
      out.push({ ...base, type: 'saved', finished, summary: summarise(e.kind, e.state, finished), state: e.state, ...(finished ? { outcome: e.outcome } : {}) });
    } else {
      out.push({ ...base, type: 'appended', finished: false, summary: summariseEntry(e.entry), entry: e.entry });
    }
  });
  return out;
}

/** What the store held for one checkpoint path as of a checkpoint: the last state saved there, and the entries appended after it. */
export interface CheckpointAt {
  kind: string;
  path: string;
  /** The last state saved (absent when only entries were appended). */
  state?: unknown;
  /** The outcome, when the pattern had finished. */
  outcome?: unknown;
  /** Entries appended after the state, in order. */
  entries: unknown[];
  /** The checkpoints this holds, by id: the save, then each entry. */
  ids: number[];
}

/**
 * The state of every checkpoint path as of checkpoint `at` (included): what
 * a run resumed at that moment would have found. Paths first saved after
 * `at` are left out.
 */
export function checkpointsAt(checkpoints: readonly RunCheckpoint[], at: number): Map<string, CheckpointAt> {
  const byPath = new Map<string, CheckpointAt>();
  for (const c of checkpoints) {
    if (c.id > at) break;
    if (c.type === 'saved') {
      byPath.set(c.path, { kind: c.kind, path: c.path, state: c.state, entries: [], ids: [c.id], ...(c.finished ? { outcome: c.outcome } : {}) });
    } else {
      const current = byPath.get(c.path) ?? { kind: c.kind, path: c.path, entries: [], ids: [] };
      current.entries.push(c.entry);
      current.ids.push(c.id);
      byPath.set(c.path, current);
    }
  }
  return byPath;
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

/** A few words on a saved state: the fields loops, teams, plans and coordinations keep. */
function summarise(kind: string, state: unknown, finished: boolean): string {
  const parts: string[] = [];
  const iteration = field(state, 'iteration');
  const round = field(state, 'round');
  const chunks = field(state, 'chunks');
  const tasks = field(state, 'tasks');
  const evaluations = field(state, 'evaluations');
  if (typeof iteration === 'number') parts.push(`iteration ${iteration}`);
  if (typeof round === 'number') parts.push(`round ${round}`);
  if (Array.isArray(chunks)) parts.push(`${chunks.filter((c) => currentChunkStatus(field(c, 'status')) === 'completed').length} of ${chunks.length} chunks completed`);
  if (Array.isArray(tasks)) parts.push(`${tasks.filter((t) => field(t, 'status') === 'done').length} of ${tasks.length} tasks done`);
  if (Array.isArray(evaluations) && evaluations.length > 0) {
    const score = field(evaluations[evaluations.length - 1], 'score');
    if (typeof score === 'number') parts.push(`score ${score}`);
  }
  if (kind === 'planning-session' && field(state, 'plan') !== undefined) parts.push('plan approved');
  if (finished) parts.push('finished');
  return parts.join(', ');
}

/** A few words on an appended entry (a plan's chunk). */
function summariseEntry(entry: unknown): string {
  const index = field(entry, 'sequenceIndex');
  const status = currentChunkStatus(field(entry, 'status'));
  if (typeof index === 'number') return `chunk ${index}${typeof status === 'string' ? ` ${status}` : ''}`;
  const change = field(field(entry, 'change'), 'id');
  if (typeof change === 'number') return `plan change ${change}`;
  const message = field(field(entry, 'message'), 'id');
  if (typeof message === 'string') return `message ${message}`;
  return 'entry';
}

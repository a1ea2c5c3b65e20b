/**
 * The scheduler's record of one chunk: its status, attempts, result and the
 * attempt that runs. One record per chunk, created with every field set,
 * so every record has the same shape.
 * @module
 */
import { addUsage, type Usage } from '../../core/usage.js';
import type { Attempt } from './attempt.js';
import type { ChunkAttemptResult, ChunkToolCall } from './executor.js';
import type { PlanChunk } from '../model/plan.js';
import type { ChunkStatus } from './state.js';
import type { ChunkResult, MergeConflict } from './types.js';

/** Everything the scheduler knows about one chunk. */
export interface ChunkRecord {
  /** Position in `plan.chunks` (stable: a change of the plan appends chunks and never moves one). */
  readonly position: number;
  /** The chunk (replaced when a change of the plan rewires it before it starts). */
  chunk: PlanChunk;
  /** True once a change of the plan removed the chunk (cancelled, or split into parts). */
  removed: boolean;
  status: ChunkStatus;
  /** Attempts started so far. */
  attempts: number;
  /** Dependencies that have not completed yet. */
  unmet: number;
  output: string | undefined;
  /** The last error (or why the chunk was skipped). */
  error: string | undefined;
  files: string[] | undefined;
  /** Usage and tool calls of its attempts, when known. */
  usage: Usage | undefined;
  toolCalls: ChunkToolCall[] | undefined;
  /** Merges of its work that conflicted; the last one unresolved is what its next attempt is told. */
  mergeConflicts: MergeConflict[] | undefined;
  /** When the chunk first started, when its current attempt started and when it ended, in ms since the execution started (-1 until then). */
  firstStart: number;
  attemptStart: number;
  end: number;
  /** The attempt the scheduler waits for; undefined once it settled or was abandoned. */
  attempt: Attempt | undefined;
  /** Ends a pending retry delay early (the chunk then becomes `cancelled`). */
  cancelRetry: (() => void) | undefined;
}

/** A fresh record of the chunk at `position`, which waits for `unmet` dependencies. */
export function chunkRecord(position: number, chunk: PlanChunk, unmet: number): ChunkRecord {
  return {
    position,
    chunk,
    removed: false,
    status: 'pending',
    attempts: 0,
    unmet,
    output: undefined,
    error: undefined,
    files: undefined,
    usage: undefined,
    toolCalls: undefined,
    mergeConflicts: undefined,
    firstStart: -1,
    attemptStart: -1,
    end: -1,
    attempt: undefined,
    cancelRetry: undefined,
  };
}

/** The public result of a chunk (built as one object in the common cases: an output, or an error). */
export function chunkResult(r: ChunkRecord): ChunkResult {
  const { sequenceIndex, title, role } = r.chunk;
  const { status, attempts, output, error, files, usage, toolCalls, mergeConflicts } = r;
  const durationMs = r.firstStart < 0 || r.end < 0 ? 0 : r.end - r.firstStart;
  if (files === undefined && error === undefined && usage === undefined && toolCalls === undefined && mergeConflicts === undefined) {
    return output === undefined ? { sequenceIndex, title, role, status, attempts, durationMs } : { sequenceIndex, title, role, status, attempts, durationMs, output };
  }
  const result: ChunkResult = { sequenceIndex, title, role, status, attempts, durationMs };
  if (output !== undefined) result.output = output;
  if (error !== undefined) result.error = error;
  if (files !== undefined) result.files = files;
  if (usage !== undefined) result.usage = usage;
  if (toolCalls !== undefined) result.toolCalls = toolCalls;
  if (mergeConflicts !== undefined) result.mergeConflicts = mergeConflicts.map((c) => ({ ...c, paths: [...c.paths], with: c.with.map((w) => ({ ...w, paths: [...w.paths] })) }));
  return result;
}

/** Add what an attempt spent (its usage and tool calls) to the chunk's record. */
export function addSpent(r: ChunkRecord, spent: Pick<ChunkAttemptResult, 'usage' | 'toolCalls'> | undefined): void {
  if (!spent) return;
  if (spent.usage !== undefined) r.usage = r.usage === undefined ? addUsage(spent.usage) : addUsage(r.usage, spent.usage);
  if (spent.toolCalls !== undefined && spent.toolCalls.length > 0) (r.toolCalls ??= []).push(...spent.toolCalls);
}

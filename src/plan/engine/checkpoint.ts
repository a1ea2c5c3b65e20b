/**
 * Plan checkpoints, on the run's checkpoint facility (`ctx.checkpoint`):
 *
 * - when a plan starts, its state (the plan, every chunk's status, the
 *   instructions) is saved once;
 * - every chunk that completes is one entry appended to the checkpoint's
 *   stream (`runs/<runId>/checkpoint-entries<plan path>`), not a new copy
 *   of the whole state, so a plan of n chunks writes O(n), not O(n²);
 * - a finished plan saves its outcome;
 * - a resumed plan reads the state and the entries after it, and keeps
 *   the chunks that completed — also those another process recorded in
 *   the stream while no scheduler ran ({@link recordChunkResult}: a worker
 *   of a queue-backed executor) — then saves its state again with those
 *   entries folded in.
 * @module
 */
import { z } from 'zod';
import { savedOutcomeSchema, checkpointStream, type Checkpoint } from '../../core/checkpoint.js';
import type { RunContext } from '../../core/context.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { abortSignal, defineOptions } from '../../core/options.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import type { PlanIndex } from '../model/dag.js';
import type { ChunkAttemptResult, ChunkJobData } from './executor.js';
import { planSchema, type Plan } from '../model/plan.js';
import type { ChunkRecord } from './record.js';
import { chunkStateSchema, chunkStatusSchema, planEntrySchema, planExecutionStateSchema, type ChunkState, type PlanEntry, type PlanExecutionState } from './state.js';
import type { PlanMessage } from '../live/messages.js';
import { applyPlanChange, type PlanChangeRecord } from '../live/replan.js';
import type { PlanOutcome } from './types.js';

/** Saved stats in today's words: stats saved before the statuses were renamed count `succeeded` and `aborted` chunks. */
export function currentPlanStats(stats: unknown): unknown {
  if (typeof stats !== 'object' || stats === null || !('succeeded' in stats || 'aborted' in stats)) return stats;
  const { succeeded, aborted, ...rest } = stats as Record<string, unknown>;
  return { ...rest, ...(succeeded === undefined ? {} : { completed: succeeded }), ...(aborted === undefined ? {} : { cancelled: aborted }) };
}

/**
 * A saved plan outcome in today's words: outcomes saved before the
 * statuses were renamed count `succeeded` and `aborted` chunks in their
 * stats (and their report's) and say `stoppedBy` (docs/conventions.md,
 * "Retired names").
 */
export function currentPlanOutcome(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const { stoppedBy, ...outcome } = value as Record<string, unknown>;
  if (outcome.stats !== undefined) outcome.stats = currentPlanStats(outcome.stats);
  const report = outcome.report as Record<string, unknown> | undefined;
  if (typeof report === 'object' && report !== null && report.stats !== undefined) outcome.report = { ...report, stats: currentPlanStats(report.stats) };
  if (stoppedBy !== undefined && outcome.reason === undefined) outcome.reason = stoppedBy;
  return outcome;
}

/** The saved outcome of a finished plan, checked when a resumed run returns it (an outcome saved with the earlier words reads in today's). */
export const planOutcomeSchema = z.preprocess(
  currentPlanOutcome,
  savedOutcomeSchema.extend({
    plan: planSchema,
    results: z.array(z.looseObject({ sequenceIndex: z.number().int(), title: z.string(), role: z.string(), status: chunkStatusSchema, attempts: z.number().int(), durationMs: z.number() })),
    stats: z.looseObject({ completed: z.number(), failed: z.number(), skipped: z.number() }),
    instructions: z.array(z.string()),
  }),
);

/** A plan's checkpoint in a run. */
export type PlanCheckpoint = Checkpoint<PlanExecutionState, PlanOutcome, PlanEntry>;

/** The plan's checkpoint in its op context. */
export function planCheckpoint(ctx: RunContext): PlanCheckpoint {
  return ctx.checkpoint<PlanExecutionState, PlanOutcome, PlanEntry>({ kind: 'plan', version: 1, state: planExecutionStateSchema, outcome: planOutcomeSchema, entry: planEntrySchema });
}

/** What a plan starts from: a finished outcome to return as it is, or a state to continue. */
export interface PlanStart {
  outcome?: Omit<PlanOutcome, 'usage'>;
  state?: PlanExecutionState;
}

/** In a resumed run, the plan's checkpoint: its outcome when it finished, else its state with the entries appended since folded in. */
export async function loadPlanStart(checkpoint: PlanCheckpoint, plan: Plan, planId: string): Promise<PlanStart> {
  const saved = await checkpoint.restore();
  if (!saved) return {};
  if (saved.outcome) return { outcome: saved.outcome };
  const base = saved.state ?? { schemaVersion: 1 as const, planId, plan, chunks: [], instructions: [], updatedAt: 0 };
  return { state: foldEntries(base, saved.entries) };
}

/**
 * The state with later entries applied, in order: the last entry of a chunk
 * wins, except that a chunk that completed stays completed; a change is
 * applied to the plan (the chunks it removed are dropped); a message is
 * added to the messages.
 */
export function foldEntries(state: PlanExecutionState, entries: readonly PlanEntry[]): PlanExecutionState {
  if (entries.length === 0) return state;
  const chunks = new Map(state.chunks.map((c) => [c.sequenceIndex, c]));
  let plan = state.plan;
  const changes = [...(state.changes ?? [])];
  const messages = [...(state.messages ?? [])];
  for (const entry of entries) {
    if ('change' in entry) {
      const applied = applyPlanChange(plan.chunks, entry.change.change, () => undefined, retiredBy(changes));
      plan = { ...plan, chunks: applied.chunks };
      for (const id of applied.removed) chunks.delete(id);
      changes.push(entry.change);
      continue;
    }
    if ('message' in entry) {
      messages.push(entry.message);
      continue;
    }
    if (chunks.get(entry.sequenceIndex)?.status === 'completed' && entry.status !== 'completed') continue;
    chunks.set(entry.sequenceIndex, entry);
  }
  return { ...state, plan, chunks: [...chunks.values()], ...(changes.length > 0 ? { changes } : {}), ...(messages.length > 0 ? { messages } : {}) };
}

/** The ids of chunks that `changes` removed (never used again in the plan). */
export function retiredBy(changes: readonly PlanChangeRecord[]): Set<number> {
  const out = new Set<number>();
  for (const r of changes) {
    for (const id of r.change.cancel ?? []) out.add(id);
    for (const s of r.change.split ?? []) out.add(s.chunk);
  }
  return out;
}

/** Give the chunks that completed in `state` their saved results, and count again the dependencies each chunk waits for. */
export function restoreRecords(records: readonly ChunkRecord[], index: PlanIndex, state: PlanExecutionState): void {
  for (const saved of state.chunks) {
    const i = index.position(saved.sequenceIndex);
    if (i === undefined || saved.status !== 'completed') continue;
    const r = records[i]!;
    r.status = 'completed';
    r.attempts = saved.attempts;
    r.output = saved.output ?? '';
    if (saved.files) r.files = saved.files;
  }
  for (const r of records) {
    let unmet = 0;
    for (const d of index.deps[r.position]!) if (records[d]!.status !== 'completed') unmet++;
    r.unmet = unmet;
  }
}

/** What {@link PlanCheckpoints} saves. */
export interface PlanCheckpointsOptions {
  /** The plan's op context (its clock). */
  ctx: RunContext;
  checkpoint: PlanCheckpoint;
  plan: Plan;
  planId: string;
  records: readonly ChunkRecord[];
  /** The instructions so far. */
  instructions: () => readonly string[];
  /** The plan as it is now, when it changed while it ran (else `plan`). */
  live?: () => Plan;
  /** The changes so far. */
  changes?: () => readonly PlanChangeRecord[];
  /** The messages so far. */
  messages?: () => readonly PlanMessage[];
}

/** A running plan's checkpoint: the state when it starts, one entry per chunk that completes, the outcome when it ends. */
export class PlanCheckpoints {
  readonly #o: PlanCheckpointsOptions;

  constructor(options: PlanCheckpointsOptions) {
    this.#o = options;
  }

  /** Whether anything is saved at all (the run has a store). */
  get enabled(): boolean {
    return this.#o.checkpoint.enabled;
  }

  /** True when no entry is still being written. */
  get idle(): boolean {
    return this.#o.checkpoint.idle;
  }

  /** Resolves when every entry is written. */
  flush(): Promise<void> {
    return this.#o.checkpoint.flush();
  }

  /** Resolves once every entry appended so far is written; rejects with a `StoreError` when one could not be. */
  written(): Promise<void> {
    return this.#o.checkpoint.written();
  }

  /** Save the state the plan starts from. */
  async start(): Promise<void> {
    await this.#o.checkpoint.save(this.state());
  }

  /** A chunk completed: append its entry (unless the executor already recorded it, see {@link recordChunkResult}: then it is only logged). */
  completed(r: ChunkRecord, recorded: boolean): void {
    if (recorded) this.#o.checkpoint.recorded(chunkState(r));
    else this.#o.checkpoint.append(chunkState(r));
  }

  /** A change of the plan was applied: append it (one entry, so a resumed run sees all of it or none). */
  changed(record: PlanChangeRecord): void {
    this.#o.checkpoint.append({ change: record });
  }

  /** A message was posted: append it. */
  message(message: PlanMessage): void {
    this.#o.checkpoint.append({ message });
  }

  /** The state now. */
  state(): PlanExecutionState {
    const { ctx, plan, planId, records, instructions, live, changes, messages } = this.#o;
    const state: PlanExecutionState = { schemaVersion: 1, planId, plan: live ? live() : plan, chunks: [], instructions: [...instructions()], updatedAt: ctx.clock.now() };
    for (const r of records) if (!r.removed) state.chunks.push(chunkState(r));
    const changed = changes?.() ?? [];
    if (changed.length > 0) state.changes = [...changed];
    const posted = messages?.() ?? [];
    if (posted.length > 0) state.messages = [...posted];
    return state;
  }

  /** Save the final state with the outcome, so that a resumed run returns it (finished statuses only). */
  async finish(outcome: Omit<PlanOutcome, 'usage'>): Promise<void> {
    await this.#o.checkpoint.finish(this.state(), outcome);
  }
}

function chunkState(r: ChunkRecord): ChunkState {
  const saved: ChunkState = { sequenceIndex: r.chunk.sequenceIndex, status: r.status, attempts: r.attempts };
  if (r.output !== undefined) saved.output = r.output;
  if (r.error !== undefined) saved.error = r.error;
  if (r.files !== undefined) saved.files = [...r.files];
  return saved;
}

/** The options of {@link recordChunkResult}: those of a store call. */
const recordChunkResultOptions = defineOptions<StoreCallOptions>('recordChunkResult', { signal: abortSignal });

/**
 * Record a finished attempt of a chunk in its plan's checkpoint, from any
 * process that shares the run's store: a worker of a queue-backed executor
 * calls it when an attempt succeeds, so that a scheduler that resumes the
 * run later (`resume(runnable, runId, { store })`) counts the chunk as done
 * and does not run it again, even if no scheduler was running when it
 * finished. `job` is the attempt's {@link ChunkJobData} (its `runId` and
 * `checkpointPath` name the plan's checkpoint). An executor that reports
 * the attempt's result back with `recorded: true` saves the scheduler
 * writing it a second time (a second entry would be harmless).
 *
 * @example
 * ```ts
 * // in a worker, after running the attempt described by `job`
 * const output = await runAttempt(job);
 * await recordChunkResult(store, job, { output });
 * ```
 */
export async function recordChunkResult(store: Store, job: Pick<ChunkJobData, 'runId' | 'checkpointPath' | 'chunk' | 'attempt'>, result: string | ChunkAttemptResult, options: StoreCallOptions = {}): Promise<void> {
  recordChunkResultOptions.check(options);
  const entry = chunkStateSchema.safeParse({
    sequenceIndex: job.chunk?.sequenceIndex,
    status: 'completed',
    attempts: job.attempt,
    ...(typeof result === 'string' ? { output: result } : { output: result?.output, ...(result?.files ? { files: result.files } : {}) }),
  });
  if (!entry.success || entry.data.output === undefined || typeof job.runId !== 'string' || typeof job.checkpointPath !== 'string') {
    throw new ConfigurationError(`Expected a chunk job (runId, checkpointPath, chunk, attempt) and its result (a string or { output, files? }), got ${describeValue(result)} for ${describeValue(job)}`);
  }
  await store.append(checkpointStream(job.runId, job.checkpointPath), entry.data, options);
}

/**
 * Changes of a running plan: add chunks, cancel a chunk, split a chunk into
 * parts, rewire a chunk's dependencies. {@link applyPlanChange} turns the
 * live chunks and one {@link PlanChange} into the changed chunks, or
 * refuses the whole change with a {@link PlanChangeError} naming the
 * problem: a change is applied entirely or not at all.
 * @module
 */
import { z } from 'zod';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { indexPlan } from '../model/dag.js';
import { planChunkSchema, validatePlan, type PlanChunk } from '../model/plan.js';

/** A chunk replaced by parts: see {@link PlanChange.split}. */
export interface ChunkSplit {
  /** The `sequenceIndex` of the chunk to split. */
  chunk: number;
  /** The parts, each with a new `sequenceIndex`; each depends on what the split chunk depended on, besides its own `dependsOnIndexes`. */
  parts: PlanChunk[];
}

/** New dependencies of one chunk that has not started: see {@link PlanChange.rewire}. */
export interface ChunkRewire {
  /** The `sequenceIndex` of the chunk. */
  chunk: number;
  /** Every chunk it depends on from now on (replacing its list). */
  dependsOn: number[];
}

/**
 * One change of a running plan, applied atomically: `add`, then `split`,
 * then `rewire`, then `cancel`, and the result validated as a whole.
 */
export interface PlanChange {
  /** New chunks (new `sequenceIndex` values; they may depend on any chunk of the changed plan). */
  add?: PlanChunk[];
  /** Chunks to remove (not finished); a running attempt is aborted. Nothing may still depend on them. */
  cancel?: number[];
  /** Chunks to replace by parts; chunks that depended on one depend on its last parts (those no other part depends on). */
  split?: ChunkSplit[];
  /** New dependency lists of chunks that have not started. */
  rewire?: ChunkRewire[];
  /** Why, for the log and the events. */
  reason?: string;
}

/** The zod schema of {@link PlanChange} (what the log and a model's tool call hold). */
export const planChangeSchema = z.object({
  add: z.array(planChunkSchema).optional(),
  cancel: z.array(z.number().int()).optional(),
  split: z.array(z.object({ chunk: z.number().int(), parts: z.array(planChunkSchema).min(1) })).optional(),
  rewire: z.array(z.object({ chunk: z.number().int(), dependsOn: z.array(z.number().int()) })).optional(),
  reason: z.string().optional(),
});

/** Who changed the plan. */
export type PlanChangeSource = 'api' | 'session' | 'tool' | 'replay';

/** A change as the plan's checkpoint stream and the run log record it. */
export interface PlanChangeRecord {
  /** 1-based number of the change in its plan. */
  id: number;
  change: PlanChange;
  source: PlanChangeSource;
  /** Chunks that had completed when it was applied (where a replay applies it again). */
  after: number;
  /** Clock time it was applied. */
  time: number;
}

/** The zod schema of {@link PlanChangeRecord}. */
export const planChangeRecordSchema = z.object({
  id: z.number().int().positive(),
  change: planChangeSchema,
  source: z.enum(['api', 'session', 'tool', 'replay']),
  after: z.number().int().nonnegative(),
  time: z.number(),
});

/** What makes a change invalid. */
export type PlanChangeProblem =
  | 'malformed'
  | 'empty'
  | 'duplicate_id'
  | 'unknown_chunk'
  | 'unknown_dependency'
  | 'cycle'
  | 'dangling_dependency'
  | 'chunk_finished'
  | 'chunk_started';

/**
 * A plan change was refused (code `invalid_change`); `problem` names what
 * was wrong and `chunks` the chunks concerned. Nothing was changed.
 */
export class PlanChangeError extends ConfigurationError {
  readonly problem: PlanChangeProblem;
  readonly chunks: number[];
  constructor(problem: PlanChangeProblem, message: string, chunks: readonly number[] = []) {
    super(message, { code: 'invalid_change', details: { problem, chunks: [...chunks] } });
    this.name = 'PlanChangeError';
    this.problem = problem;
    this.chunks = [...chunks];
  }
}

/** What a change did: the changed chunks, and the chunks it added and removed. */
export interface AppliedChange {
  chunks: PlanChunk[];
  added: number[];
  removed: number[];
  /** Chunks (kept ones) whose dependencies changed. */
  rewired: number[];
}

/** Statuses in which a chunk may be cancelled or split. */
const unfinished: ReadonlySet<string> = new Set(['pending', 'waiting-for-dependencies', 'queued', 'running', 'retrying']);
/** Statuses in which a chunk's dependencies may change. */
const notStarted: ReadonlySet<string> = new Set(['pending', 'waiting-for-dependencies', 'queued']);

/** Check the shape of a change (the schema), with a {@link PlanChangeError} (`malformed`, `empty`) naming the first problem. */
export function parsePlanChange(change: unknown): PlanChange {
  const parsed = planChangeSchema.safeParse(change);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PlanChangeError('malformed', `Invalid plan change at ${issue.path.join('.') || '(root)'}: ${issue.message}; got ${describeValue(change)}`);
  }
  const c = parsed.data as PlanChange;
  if (!c.add?.length && !c.cancel?.length && !c.split?.length && !c.rewire?.length) throw new PlanChangeError('empty', 'The plan change changes nothing: give `add`, `cancel`, `split` or `rewire`');
  return c;
}

/**
 * Apply `change` to the live `chunks`, or throw a {@link PlanChangeError}.
 * `statusOf` gives each live chunk's status (undefined: not checked, as when
 * a resumed plan folds a change it already accepted); `retired` holds the
 * ids of chunks removed by earlier changes, which are never reused.
 */
export function applyPlanChange(
  chunks: readonly PlanChunk[],
  change: PlanChange,
  statusOf: (sequenceIndex: number) => string | undefined,
  retired: ReadonlySet<number> = new Set(),
): AppliedChange {
  const byId = new Map<number, PlanChunk>();
  for (const c of chunks) byId.set(c.sequenceIndex, { ...c, dependsOnIndexes: [...c.dependsOnIndexes] });
  const original = new Set(byId.keys());
  const added: number[] = [];
  const removed = new Set<number>();
  const rewired = new Set<number>();
  const addNew = (c: PlanChunk): void => {
    const id = c.sequenceIndex;
    if (byId.has(id) || retired.has(id) || removed.has(id)) throw new PlanChangeError('duplicate_id', `Chunk id ${id} is already used in this plan`, [id]);
    byId.set(id, { ...c, dependsOnIndexes: [...c.dependsOnIndexes] });
    added.push(id);
  };
  const live = (id: number, what: string, allowed: ReadonlySet<string>, problem: 'chunk_finished' | 'chunk_started'): PlanChunk => {
    const c = byId.get(id);
    if (c === undefined || !original.has(id)) throw new PlanChangeError('unknown_chunk', `Cannot ${what} chunk ${id}: the plan has no such chunk`, [id]);
    const status = statusOf(id);
    if (status !== undefined && !allowed.has(status)) throw new PlanChangeError(problem, `Cannot ${what} chunk ${id}: it is ${status}`, [id]);
    return c;
  };
  for (const c of change.add ?? []) addNew(c);
  for (const { chunk, parts } of change.split ?? []) {
    const old = live(chunk, 'split', unfinished, 'chunk_finished');
    if (removed.has(chunk)) throw new PlanChangeError('unknown_chunk', `Chunk ${chunk} is removed twice by one change`, [chunk]);
    const ids = new Set(parts.map((p) => p.sequenceIndex));
    for (const p of parts) addNew({ ...p, dependsOnIndexes: [...new Set([...old.dependsOnIndexes, ...p.dependsOnIndexes])] });
    const inner = new Set(parts.flatMap((p) => p.dependsOnIndexes.filter((d) => ids.has(d))));
    const last = parts.map((p) => p.sequenceIndex).filter((id) => !inner.has(id));
    byId.delete(chunk);
    removed.add(chunk);
    for (const c of byId.values()) {
      if (!c.dependsOnIndexes.includes(chunk)) continue;
      c.dependsOnIndexes = [...new Set(c.dependsOnIndexes.flatMap((d) => (d === chunk ? last : [d])))];
      if (original.has(c.sequenceIndex)) rewired.add(c.sequenceIndex);
    }
  }
  for (const { chunk, dependsOn } of change.rewire ?? []) {
    const c = added.includes(chunk) ? byId.get(chunk)! : live(chunk, 'rewire', notStarted, 'chunk_started');
    c.dependsOnIndexes = [...new Set(dependsOn)];
    if (original.has(chunk)) rewired.add(chunk);
  }
  for (const id of change.cancel ?? []) {
    live(id, 'cancel', unfinished, 'chunk_finished');
    if (removed.has(id)) throw new PlanChangeError('unknown_chunk', `Chunk ${id} is removed twice by one change`, [id]);
    byId.delete(id);
    removed.add(id);
  }
  const result = [...byId.values()];
  checkGraph(result, removed, retired);
  for (const id of rewired) if (removed.has(id)) rewired.delete(id);
  return { chunks: result, added, removed: [...removed], rewired: [...rewired] };
}

/** The changed chunks depend on no removed chunk, on known chunks only, and without a cycle; else a {@link PlanChangeError}. */
function checkGraph(result: PlanChunk[], removed: ReadonlySet<number>, retired: ReadonlySet<number>): void {
  const ids = new Set(result.map((c) => c.sequenceIndex));
  for (const c of result) {
    const dangling = c.dependsOnIndexes.filter((d) => removed.has(d) || retired.has(d));
    if (dangling.length > 0) {
      throw new PlanChangeError('dangling_dependency', `Chunk ${c.sequenceIndex} would still depend on removed chunk${dangling.length > 1 ? 's' : ''} ${dangling.join(', ')}: rewire it in the same change`, [c.sequenceIndex, ...dangling]);
    }
  }
  const index = indexPlan({ planSummary: '', chunks: result });
  if (!index.ok) {
    const { errors } = validatePlan({ planSummary: '', chunks: result });
    const unknown = result.find((c) => c.dependsOnIndexes.some((d) => !ids.has(d) || d === c.sequenceIndex));
    if (unknown) throw new PlanChangeError('unknown_dependency', `Invalid plan change: ${errors.join('; ')}`, [unknown.sequenceIndex]);
    const ordered = new Set(index.order);
    const inCycle = result.filter((_, i) => !ordered.has(i)).map((c) => c.sequenceIndex);
    throw new PlanChangeError('cycle', `The changed plan would have a dependency cycle through chunks ${inCycle.join(', ')}`, inCycle);
  }
}

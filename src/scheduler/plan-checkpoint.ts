/**
 * Everything about plan checkpoints, in one place: the state that
 * `onCheckpoint` and the run's store receive, reading a saved state back
 * (`resumeFrom`, or the run's own checkpoint when the run resumes), and
 * saving — one save at a time, in order, each with the latest state. The
 * scheduler only calls {@link PlanCheckpoints.request} when a chunk reaches a
 * terminal status.
 * @module
 */
import { z } from 'zod';
import type { RunContext } from '../core/context.js';
import { errorMessage } from '../core/errors.js';
import type { OutcomeStatus } from '../core/runnable.js';
import { isFinished, restoreCheckpoint, saveStepCheckpoint, savedOutcomeSchema } from '../core/op-checkpoint.js';
import type { PlanIndex } from './dag.js';
import { planSchema, type Plan } from './plan.js';
import type { ChunkRecord } from './record.js';
import { chunkStatuses, planExecutionStateSchema, type ChunkState, type PlanExecutionState } from './state.js';
import type { PlanOutcome, PlanRunOptions } from './types.js';

/** The saved outcome of a finished plan, checked when a resumed run returns it. */
const planOutcomeSchema = savedOutcomeSchema.extend({
  plan: planSchema,
  results: z.array(z.looseObject({ sequenceIndex: z.number().int(), title: z.string(), role: z.string(), status: z.enum(chunkStatuses), attempts: z.number().int(), durationMs: z.number() })),
  stats: z.looseObject({ succeeded: z.number(), failed: z.number(), skipped: z.number() }),
  instructions: z.array(z.string()),
});

/** What a plan starts from: a finished outcome to return as it is, or a state to continue. */
export interface PlanStart {
  outcome?: Omit<PlanOutcome, 'usage'>;
  state?: PlanExecutionState;
}

/** In a resumed run, the plan's own checkpoint in the run's store; else `resumeFrom`. */
export async function loadPlanStart(ctx: RunContext, resumeFrom: PlanExecutionState | undefined): Promise<PlanStart> {
  const saved = await restoreCheckpoint<typeof planExecutionStateSchema, PlanOutcome>(ctx, 'plan', planExecutionStateSchema, planOutcomeSchema);
  if (saved?.outcome) return { outcome: saved.outcome };
  const state = saved?.state ?? resumeFrom;
  return state ? { state } : {};
}

/** Give the chunks that succeeded in `state` their saved results, and count again the dependencies each chunk waits for. */
export function restoreRecords(records: readonly ChunkRecord[], index: PlanIndex, state: PlanExecutionState): void {
  for (const saved of state.chunks) {
    const i = index.position(saved.sequenceIndex);
    if (i === undefined || saved.status !== 'Succeeded') continue;
    const r = records[i]!;
    r.status = 'Succeeded';
    r.attempts = saved.attempts;
    r.output = saved.output ?? '';
    if (saved.files) r.files = saved.files;
  }
  for (const r of records) {
    let unmet = 0;
    for (const d of index.deps[r.position]!) if (records[d]!.status !== 'Succeeded') unmet++;
    r.unmet = unmet;
  }
}

/** What {@link PlanCheckpoints} saves, and whom it tells. */
export interface PlanCheckpointsOptions {
  /** The plan's op context (its store, clock and signal). */
  ctx: RunContext;
  plan: Plan;
  planId: string;
  records: readonly ChunkRecord[];
  /** The instructions so far. */
  instructions: () => readonly string[];
  /** The caller's hook. */
  onCheckpoint: PlanRunOptions['onCheckpoint'];
  /** Called after every save (or batch of saves) completes. */
  saved: () => void;
}

/** Saves a running plan's state: to the run's store when it has one, then to `onCheckpoint`. */
export class PlanCheckpoints {
  readonly #o: PlanCheckpointsOptions;
  #saving = false;
  #requested = false;

  constructor(options: PlanCheckpointsOptions) {
    this.#o = options;
  }

  /** Whether anything is saved at all (a store or a hook). */
  get enabled(): boolean {
    return this.#o.onCheckpoint !== undefined || this.#o.ctx.store !== undefined;
  }

  /** True when no save runs or waits. */
  get idle(): boolean {
    return !this.#saving && !this.#requested;
  }

  /** Save the state soon; requests made while a save runs are served by one more save after it. */
  request(): void {
    this.#requested = true;
    if (this.#saving) return;
    this.#saving = true;
    void Promise.resolve().then(() => this.#drain());
  }

  /** The state now. */
  state(): PlanExecutionState {
    const { ctx, plan, planId, records, instructions } = this.#o;
    const chunks: ChunkState[] = records.map((r) => {
      const saved: ChunkState = { sequenceIndex: r.chunk.sequenceIndex, status: r.status, attempts: r.attempts };
      if (r.output !== undefined) saved.output = r.output;
      if (r.error !== undefined) saved.error = r.error;
      if (r.files !== undefined) saved.files = [...r.files];
      return saved;
    });
    return { schemaVersion: 1, planId, plan, chunks, instructions: [...instructions()], updatedAt: ctx.clock.now() };
  }

  /** Save the final state with the outcome, so that a resumed run returns it (finished statuses only). */
  async finish(status: OutcomeStatus, outcome: Omit<PlanOutcome, 'usage'>): Promise<void> {
    const ctx = this.#o.ctx;
    if (ctx.store && isFinished(status)) await saveStepCheckpoint(ctx, 'plan', this.state(), outcome);
  }

  async #drain(): Promise<void> {
    const { ctx, onCheckpoint, saved } = this.#o;
    while (this.#requested) {
      this.#requested = false;
      try {
        const state = this.state();
        // The run's store first (when it has one), then the caller's hook.
        await saveStepCheckpoint(ctx, 'plan', state);
        await onCheckpoint?.(state, { signal: ctx.signal });
      } catch (error) {
        ctx.emit('warning', { message: `onCheckpoint failed: ${errorMessage(error)}`, code: 'checkpoint_failed' });
      }
    }
    this.#saving = false;
    saved();
  }
}

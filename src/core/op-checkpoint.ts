/**
 * Automatic checkpoints: when a run has a store, every checkpointing
 * pattern (reflect and orchestrate loops, teams, plan executions,
 * coordinations) saves its state after every step under a key derived from its place in the run
 * (`runs/<runId>/checkpoints<path>`), and, in a resumed run, loads it back.
 * @module
 */
import { z } from 'zod';
import { isCancellation, type RunContext } from './context.js';
import { errorMessage } from './errors.js';
import { outcomeStatuses, type Outcome, type OutcomeStatus } from './outcome.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoint.js';


/** The schema every saved outcome must match; pattern fields pass through. */
export const savedOutcomeSchema = z.looseObject({
  output: z.string(),
  agent: z.string(),
  status: z.enum(outcomeStatuses),
});

/** The document key of the automatic checkpoint at `path` of run `runId`. */
export function opCheckpointKey(runId: string, path: string): string {
  return `runs/${runId}/checkpoints${path}`;
}

/** What a resumed pattern finds: its last state, and its outcome when it had finished. */
export interface RestoredCheckpoint<S, O extends Outcome> {
  state: S;
  outcome?: Omit<O, 'usage'>;
}

/**
 * In a resumed run with a store, load the checkpoint of the pattern running
 * in `ctx` (validated against `schema`, and its outcome against
 * `outcomeSchema`) and emit `checkpoint.restored`. `undefined` when the
 * run is not resumed or the pattern saved nothing; a `StoreError` naming
 * the key and every problem when the document does not match.
 */
export async function restoreCheckpoint<S extends z.ZodType, O extends Outcome>(
  ctx: RunContext,
  kind: string,
  schema: S,
  outcomeSchema: z.ZodType = savedOutcomeSchema,
): Promise<RestoredCheckpoint<z.output<S>, O> | undefined> {
  const store = ctx.store;
  if (!store || !ctx.resuming) return undefined;
  const key = opCheckpointKey(ctx.runId, ctx.checkpointPath);
  const saved = await loadCheckpoint(store, ctx.runId, schema, { kind, key, outcome: outcomeSchema, signal: ctx.signal });
  if (!saved) return undefined;
  ctx.emit('checkpoint.restored', { kind, name: ctx.op.name, path: ctx.checkpointPath, completed: saved.outcome !== undefined });
  const restored: RestoredCheckpoint<z.output<S>, O> = { state: saved.state };
  if (saved.outcome !== undefined) restored.outcome = saved.outcome as Omit<O, 'usage'>;
  return restored;
}

/**
 * Save the state of the pattern running in `ctx` (and its outcome, once it
 * finished) when the run has a store. The save is not cancelled by the
 * run's signal, so that a step that completed is never lost; a store
 * failure becomes a `warning` event (`checkpoint_failed`), not a failed run.
 */
export async function saveStepCheckpoint(ctx: RunContext, kind: string, state: unknown, outcome?: unknown): Promise<void> {
  const store = ctx.store;
  if (!store) return;
  const path = ctx.checkpointPath;
  try {
    await saveCheckpoint(store, ctx.runId, kind, state, {
      clock: ctx.clock,
      key: opCheckpointKey(ctx.runId, path),
      path,
      ...(outcome === undefined ? {} : { outcome: withoutUsage(outcome) }),
    });
  } catch (error) {
    if (isCancellation(error)) throw error;
    ctx.emit('warning', { message: `The checkpoint of ${kind} "${ctx.op.name}" could not be saved: ${errorMessage(error)}`, code: 'checkpoint_failed' });
  }
}

/** Statuses after which a pattern is finished: a resumed run returns its saved outcome instead of running it again. */
export function isFinished(status: OutcomeStatus): boolean {
  return status !== 'cancelled' && status !== 'paused' && status !== 'error-budget' && status !== 'failed';
}

function withoutUsage(outcome: unknown): unknown {
  if (typeof outcome !== 'object' || outcome === null || !('usage' in outcome)) return outcome;
  const { usage: _usage, ...rest } = outcome as Record<string, unknown>;
  return rest;
}

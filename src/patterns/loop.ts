/**
 * What reflect and orchestrate loops share: the runnable around a loop body
 * (paused and cancelled through its run's `LoopControl`, continued from
 * its checkpoint), the iteration driver (error budget with back-off, pause,
 * cancellation, max iterations) and the human summary of how a loop ended.
 * @module
 */
import { sleep } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { errorMessage, isTroupeError } from '../core/errors.js';
import { LoopControl } from '../core/control.js';
import type { RetryOptions } from '../core/retry.js';
import { defineRunnable, type Outcome, type OutcomeStatus, type Runnable } from '../core/runnable.js';
import { legacyOutcome, type OutcomeReason } from '../core/outcome.js';
import { isCancellation } from '../core/context.js';
import { budgetExhaustion } from '../core/budget.js';
import { z } from 'zod';
import { savedOutcomeSchema, type Checkpoint } from '../core/checkpoint.js';
import type { StallDetector } from '../reflection/stall.js';
import { defined } from '../core/defined.js';

/**
 * How a loop ended: `completed` (with a {@link LoopReason}, except a
 * one-pass mode's single pass), `failed` (reason `error-budget`),
 * `cancelled`, `paused` or `budget-exhausted`.
 */
export type LoopStatus = Extract<OutcomeStatus, 'completed' | 'failed' | 'cancelled' | 'paused' | 'budget-exhausted'>;

/** Why a loop ended: `goal-met`, `max-iterations`, `stalled` (status `completed`) or `error-budget` (status `failed`). */
export type LoopReason = Extract<OutcomeReason, 'goal-met' | 'max-iterations' | 'stalled' | 'error-budget'>;

/** How a loop ended: its status and, where the status alone does not say, why. */
export interface LoopEnd {
  status: LoopStatus;
  reason?: LoopReason;
}


/** Thrown inside a loop when its run's control pauses it, at a step boundary. */
export class PauseRequested extends Error {
  constructor() {
    super('The loop was paused');
    this.name = 'PauseRequested';
  }
}

/**
 * The check at a step boundary of a loop in the run of `ctx`: throws
 * {@link PauseRequested} when the run's control (`ctx.control`) is a
 * `LoopControl` that is paused. A run without one never pauses.
 */
export function pauseCheck(ctx: RunContext): () => void {
  const control = ctx.control;
  return () => {
    if (control instanceof LoopControl && control.paused) throw new PauseRequested();
  };
}

/**
 * How a loop retries an iteration that threw: `maxRetries` retries of one
 * iteration after its first failed attempt (default 2: the third failed
 * attempt in a row ends the loop, status `failed`, reason `error-budget`),
 * `delayMs` before each (default 2000, on the run's clock).
 */
export const LOOP_RETRY_DEFAULTS: Readonly<Required<RetryOptions>> = { maxRetries: 2, delayMs: 2000 };

/** What one iteration decided. */
export type StepResult = { exit?: Extract<LoopReason, 'goal-met' | 'stalled'> | 'completed' };

/** The part of a loop state that {@link driveLoop} maintains. */
export interface LoopStateCore {
  /** The loop's kind (`reflect`, `orchestrate`): its checkpoints are saved under it. */
  kind: string;
  /** Iterations completed. */
  iteration: number;
  /** The stall detector's snapshot. */
  stall: { recent: string[]; consecutive: number };
}

/** Options of {@link driveLoop}. */
export interface DriveLoopOptions<S extends LoopStateCore> {
  /** The loop's context: its signal cancels the loop, its control pauses it. */
  ctx: RunContext;
  /** The pause check of the loop's run ({@link LoopRun.checkPause}). */
  checkPause: () => void;
  /** The loop's name, for events. */
  loop: string;
  /** The loop's state; `iteration` (iterations completed) and `stall` are kept up to date. */
  state: S;
  /** The loop's stall detector, snapshotted into the state after each iteration. */
  stall: StallDetector;
  /** The loop's checkpoint: the state is saved after every iteration. */
  checkpoint: Checkpoint<S>;
  maxIterations: number;
  /** How a failed iteration is retried (defaults applied). */
  retry: Required<RetryOptions>;
  /** Which ends count as goal met. Default: reason `goal-met`. */
  goalMetOn?: (end: LoopEnd) => boolean;
  /** Errors that end the run at once instead of counting against the budget. */
  fatal?: (error: unknown) => boolean;
  /** Run iteration `i`. */
  step(iteration: number, signal: AbortSignal): Promise<StepResult>;
  /** After a failed attempt (for example, to drop a session in an unknown state). */
  onError?(iteration: number, error: unknown): void;
}

/** How {@link driveLoop} ended. */
export interface DriveLoopResult extends LoopEnd {
  /** Iterations completed. */
  completed: number;
  goalMet: boolean;
  /** The human summary. */
  summary: string;
  /** The last error's message, when the error budget ran out. */
  error?: string;
}

/**
 * Run iterations until one exits, the maximum is reached, the error budget
 * runs out, the signal aborts, or a pause is in force, then emit
 * `reflect.completed`. An iteration that throws is retried with the same
 * number after the back-off.
 */
export async function driveLoop<S extends LoopStateCore>(options: DriveLoopOptions<S>): Promise<DriveLoopResult> {
  const { ctx, loop } = options;
  const start = ctx.clock.now();
  const ended = await iterate(options);
  const end: LoopEnd = { status: ended.status, ...defined({ reason: ended.reason }) };
  const goalMet = (options.goalMetOn ?? ((e) => e.reason === 'goal-met'))(end);
  const durationMs = ctx.clock.now() - start;
  const summary = loopSummary(end, ended.completed, options.maxIterations, durationMs);
  ctx.emit('reflect.completed', { loop, ...end, goalMet, iterations: ended.completed, summary, durationMs });
  const result: DriveLoopResult = { ...end, completed: ended.completed, goalMet, summary };
  if (ended.error !== undefined) result.error = describeError(ended.error).message;
  return result;
}

async function iterate<S extends LoopStateCore>(options: DriveLoopOptions<S>): Promise<LoopEnd & { completed: number; error?: unknown }> {
  const { ctx, state } = options;
  const { signal } = ctx;
  let completed = state.iteration;
  let errors = 0;
  try {
    while (completed < options.maxIterations) {
      options.checkPause();
      if (signal.aborted) return { status: budgetExhaustion(undefined, signal) ? 'budget-exhausted' : 'cancelled', completed };
      const iteration = completed + 1;
      let result: StepResult;
      try {
        result = await options.step(iteration, signal);
      } catch (error) {
        // A budget ran out (the loop's own, an enclosing one, or a member's): no retry can help.
        const exhausted = budgetExhaustion(error, signal);
        if (exhausted) return { status: 'budget-exhausted', completed, error: exhausted };
        if (error instanceof PauseRequested || signal.aborted || isCancellation(error, signal)) throw error;
        if (options.fatal?.(error)) throw error;
        errors++;
        const { message, code } = describeError(error);
        ctx.emit('reflect.iteration.failed', { loop: options.loop, iteration, error: message, ...defined({ code }), consecutive: errors });
        options.onError?.(iteration, error);
        if (errors > options.retry.maxRetries) return { status: 'failed', reason: 'error-budget', completed, error };
        await sleep(ctx.clock, options.retry.delayMs, signal);
        continue;
      }
      errors = 0;
      completed = iteration;
      state.iteration = iteration;
      state.stall = options.stall.snapshot();
      await options.checkpoint.save(state);
      if (result.exit === 'completed') return { status: 'completed', completed };
      if (result.exit) return { status: 'completed', reason: result.exit, completed };
    }
    return { status: 'completed', reason: 'max-iterations', completed };
  } catch (error) {
    if (error instanceof PauseRequested) return { status: 'paused', completed };
    const exhausted = budgetExhaustion(error, signal);
    if (exhausted) return { status: 'budget-exhausted', completed, error: exhausted };
    if (signal.aborted || isCancellation(error, signal)) return { status: 'cancelled', completed };
    throw error;
  }
}

/** A duration for people: `850 ms`, `12.3 s`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The one-line human summary of how a loop ended, e.g. `✅ Goal met (2/5) in 3.1 s`. */
export function loopSummary(end: LoopEnd, iterations: number, maxIterations: number, durationMs: number): string {
  const heads: Record<LoopStatus | LoopReason, string> = {
    'goal-met': '✅ Goal met',
    'max-iterations': '⏱️ Max iterations',
    stalled: '⚠️ Stalled',
    'error-budget': '❌ Error budget exhausted',
    'budget-exhausted': '💸 Budget exhausted',
    cancelled: '⏹️ Cancelled',
    paused: '⏸️ Paused',
    completed: '✅ Completed',
    failed: '❌ Failed',
  };
  return `${heads[end.reason ?? end.status]} (${iterations}/${maxIterations}) in ${formatDuration(durationMs)}`;
}

/** The limits every loop takes, with defaults (its options description has checked them): 5 iterations, {@link LOOP_RETRY_DEFAULTS}. */
export function loopLimits(options: { maxIterations?: number; retry?: RetryOptions }): { maxIterations: number; retry: Required<RetryOptions> } {
  return { maxIterations: options.maxIterations ?? 5, retry: { ...LOOP_RETRY_DEFAULTS, ...defined(options.retry ?? {}) } };
}

/** A short, readable error for events and state. */
export function describeError(error: unknown): { message: string; code?: string } {
  return { message: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) };
}

/** A loop: a runnable of kind `K`, paused and cancelled through the control of its run (`LoopControl`). */
export type Loop<K extends string, O extends Outcome> = Runnable<O> & { readonly kind: K };

/** One run of a loop body, as {@link loopRunnable} hands it over. */
export interface LoopRun<S> {
  /** Call at step boundaries: throws when the run's control is paused. */
  checkPause: () => void;
  /** The state to continue from (undefined: a fresh start). */
  from: S | undefined;
  /** Forget the stall history (after a pause was lifted). */
  resetStall: boolean;
  /** The loop's checkpoint in the run. */
  checkpoint: Checkpoint<S>;
}

/** What {@link loopRunnable} needs. */
export interface LoopSpec<K extends string, S extends { request: string }, O extends Outcome & { state: S }> {
  name: string;
  kind: K;
  agent?: string;
  /** The state's schema (`schemaVersion: 1`), to validate the loop's checkpoint when the run is resumed. */
  stateSchema: z.ZodType<S>;
  /** Run the loop body. */
  run(input: string, ctx: RunContext, loop: LoopRun<S>): Promise<Omit<O, 'usage'>>;
}

/**
 * Where the loops of a paused run stopped, by control and checkpoint path:
 * the next run with the same control and the same request continues from
 * there once the control is unpaused. The runnable keeps nothing.
 */
const pausedStates = new WeakMap<LoopControl, Map<string, { request: string }>>();

/**
 * Wrap a loop body in a runnable that keeps nothing between runs: the run's
 * control (`ctx.control`, a `LoopControl`) pauses it at a step boundary and
 * cancels it; a run after a pause, with the same control and request,
 * continues where the paused one stopped (with the stall history reset),
 * and a resumed run (`resume()`) continues from the loop's checkpoint.
 */
export function loopRunnable<K extends string, S extends { request: string }, O extends Outcome & { state: S }>(spec: LoopSpec<K, S, O>): Loop<K, O> {
  // The checkpoint's outcome schema, built once per loop rather than on every run.
  const outcome = z.preprocess(legacyOutcome, savedOutcomeSchema.extend({ state: spec.stateSchema }));
  const runnable = defineRunnable<O>({
    name: spec.name,
    kind: spec.kind,
    ...defined({ agent: spec.agent }),
    async run(input, ctx) {
      const control = ctx.control instanceof LoopControl ? ctx.control : undefined;
      const paused = control ? pausedStates.get(control) : undefined;
      const key = ctx.checkpointPath;
      const stopped = paused?.get(key) as S | undefined;
      // After a pause, continue from where it stopped (still paused: stop again at once).
      const fromPause = stopped !== undefined && stopped.request === input && !ctx.resuming;
      const unpaused = fromPause && !control!.paused;
      // In a resumed run, the loop's checkpoint: a finished loop returns its outcome.
      const checkpoint = ctx.checkpoint<S, O>({ kind: spec.kind, version: 1, state: spec.stateSchema, outcome });
      const saved = fromPause ? undefined : await checkpoint.restore();
      if (saved?.outcome) return saved.outcome;
      if (unpaused) paused!.delete(key);
      const from = fromPause ? stopped : saved?.state;
      const ended = await spec.run(input, ctx, { checkPause: pauseCheck(ctx), from, resetStall: unpaused, checkpoint });
      if (ended.status === 'paused' && control) {
        if (!pausedStates.has(control)) pausedStates.set(control, new Map());
        pausedStates.get(control)!.set(key, ended.state);
      }
      await checkpoint.finish(ended.state, ended);
      return ended;
    },
  });
  return { name: runnable.name, kind: spec.kind, run: runnable.run };
}

/**
 * What a runnable produces: the {@link Outcome}, and every status that says
 * why it finished, listed once in {@link outcomeStatuses}.
 * @module
 */
import type { Usage } from './usage.js';

/**
 * Every status an outcome can have, in one list (`OutcomeStatus` is derived
 * from it, and stored outcomes are checked against it):
 *
 * - `completed`: the runnable did its work (an agent answered, a plan's
 *   chunks all succeeded, a one-pass orchestration finished);
 * - `goal-met`: a loop's goal was met (sentinel, evaluator or score);
 * - `max-iterations`: a loop ran out of iterations;
 * - `stalled`: a loop repeated itself;
 * - `error-budget`: too many consecutive failures (a loop's error budget, a
 *   plan's abort threshold);
 * - `paused`: a loop stopped at a step boundary because it was paused;
 * - `consensus`, `coordinator`, `max-rounds`: how a team ended;
 * - `budget-exhausted`: a budget ran out (tokens, cost, model calls or
 *   time); the outcome holds what was done so far;
 * - `cancelled`: its signal aborted;
 * - `failed`: it failed (op nodes and events; `run()` rejects instead).
 */
export const outcomeStatuses = [
  'completed',
  'goal-met',
  'max-iterations',
  'stalled',
  'error-budget',
  'paused',
  'consensus',
  'coordinator',
  'max-rounds',
  'budget-exhausted',
  'cancelled',
  'failed',
] as const;

/** Why a runnable finished: one of {@link outcomeStatuses}. */
export type OutcomeStatus = (typeof outcomeStatuses)[number];

/** What a runnable produces. */
export interface Outcome {
  /** The final answer. */
  output: string;
  /** The terminal agent that owns the answer. */
  agent: string;
  /** Why it finished. */
  status: OutcomeStatus;
  /** Usage rolled up over everything below (set by the kernel from the op tree). */
  usage: Usage;
}

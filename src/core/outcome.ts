/**
 * What a runnable produces: the {@link Outcome}, and every status that says
 * why it finished, listed once in {@link outcomeStatuses}.
 * @module
 */
import type { Usage } from './usage.js';

/**
 * Every status of something that finished, in one list (`OutcomeStatus` is
 * derived from it, and stored outcomes are checked against it;
 * docs/conventions.md):
 *
 * - `completed`: it did its work and has an answer (a loop that met its
 *   goal, ran out of iterations or stalled; a team that reached consensus
 *   or its round limit; a plan whose chunks all completed);
 * - `failed`: it failed (`run()` rejects with the error; a loop that ran
 *   out of retries or a plan past its abort threshold resolves with what it
 *   has, `reason` saying why);
 * - `cancelled`: its signal aborted, or its control cancelled it;
 * - `paused`: a loop stopped at a step boundary because its control paused it;
 * - `budget-exhausted`: a budget ran out (tokens, cost, model calls or
 *   time); the outcome holds what was done so far.
 *
 * A pattern that needs to say more sets {@link Outcome.reason}.
 */
export const outcomeStatuses = ['completed', 'failed', 'cancelled', 'paused', 'budget-exhausted'] as const;

/** How something finished: one of {@link outcomeStatuses}. */
export type OutcomeStatus = (typeof outcomeStatuses)[number];

/**
 * Why a pattern finished, where its status alone does not say (one list):
 *
 * - loops (`reflect`, `orchestrate`): `goal-met`, `max-iterations`,
 *   `stalled` (status `completed`), `error-budget` (status `failed`: too
 *   many consecutive failed iterations);
 * - `team`: `consensus`, `max-rounds`, `lead-decided` (status `completed`);
 * - plans: `abort-threshold` (status `failed`: too many chunks failed),
 *   `budget` (status `budget-exhausted`: the plan's budget ran out).
 */
export const outcomeReasons = ['goal-met', 'max-iterations', 'stalled', 'error-budget', 'consensus', 'max-rounds', 'lead-decided', 'abort-threshold', 'budget'] as const;

/** Why a pattern finished: one of {@link outcomeReasons}. */
export type OutcomeReason = (typeof outcomeReasons)[number];

/** What a runnable produces. */
export interface Outcome {
  /** The final answer. */
  output: string;
  /** The terminal agent that owns the answer. */
  agent: string;
  /** How it finished. */
  status: OutcomeStatus;
  /** Why, where the status alone does not say (a loop met its goal, a team reached consensus). */
  reason?: OutcomeReason;
  /** Usage rolled up over everything below (set by the kernel from the op tree). */
  usage: Usage;
}

/** Statuses that logs and checkpoints written before `reason` existed hold, as the status and reason they mean now. */
const LEGACY_STATUSES: Readonly<Record<string, { status: OutcomeStatus; reason: OutcomeReason }>> = {
  'goal-met': { status: 'completed', reason: 'goal-met' },
  'max-iterations': { status: 'completed', reason: 'max-iterations' },
  stalled: { status: 'completed', reason: 'stalled' },
  'error-budget': { status: 'failed', reason: 'error-budget' },
  consensus: { status: 'completed', reason: 'consensus' },
  'max-rounds': { status: 'completed', reason: 'max-rounds' },
  coordinator: { status: 'completed', reason: 'lead-decided' },
};

/**
 * The status and reason of an outcome as it was written, in today's words:
 * a log or checkpoint written before outcomes had a `reason` says
 * `goal-met` or `coordinator` where one now says `completed` with reason
 * `goal-met` or `lead-decided`. Any other status is returned as it is.
 * @internal
 */
export function loggedOutcome(status: string, reason: OutcomeReason | undefined): { status: OutcomeStatus; reason?: OutcomeReason } {
  const legacy = Object.hasOwn(LEGACY_STATUSES, status) ? LEGACY_STATUSES[status] : undefined;
  if (legacy) return { status: legacy.status, reason: reason ?? legacy.reason };
  return { status: status as OutcomeStatus, ...(reason === undefined ? {} : { reason }) };
}

/**
 * An outcome object saved before 0.1.0 (its status `goal-met`,
 * `coordinator`, ...) with today's status and reason; anything else as it
 * is. For a checkpoint schema's `z.preprocess`.
 * @internal
 */
export function legacyOutcome(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null) return raw;
  const { status, reason } = raw as { status?: unknown; reason?: unknown };
  if (typeof status !== 'string' || !Object.hasOwn(LEGACY_STATUSES, status)) return raw;
  return { ...raw, ...loggedOutcome(status, typeof reason === 'string' ? (reason as OutcomeReason) : undefined) };
}

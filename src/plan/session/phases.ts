/**
 * The phases of a planning session and every move between them, in one
 * table ({@link planningMoves}): the calls a user makes (`submitTask`,
 * `approvePlan`, ...) and the steps the session takes itself (`propose`,
 * `aggregate`, ...). A session checks the table on every move, so a call in
 * a phase that does not allow it is a {@link PlanningPhaseError} and no
 * step can lead anywhere the table does not say.
 * @module
 */
import { ConfigurationError } from '../../core/errors.js';

/** The phases of a `PlanningSession`. */
export const planningPhases = ['idle', 'clarifying', 'planning', 'awaiting-approval', 'executing', 'aggregating', 'completed', 'cancelled'] as const;

/** A phase of a `PlanningSession`. */
export type PlanningPhase = (typeof planningPhases)[number];

/**
 * A move of a session: a method the user calls, or a step the session
 * takes (`ask`: the planner asks questions; `plan`: the planner plans;
 * `propose`: a plan awaits approval; `aggregate`: the execution ended and
 * the aggregator runs; `complete`: the report is written).
 */
export type PlanningMove =
  | 'submitTask'
  | 'answerClarification'
  | 'clarify'
  | 'editPlan'
  | 'approvePlan'
  | 'requestChanges'
  | 'rejectPlan'
  | 'post'
  | 'changePlan'
  | 'snapshot'
  | 'followUp'
  | 'cancel'
  | 'reset'
  | 'ask'
  | 'plan'
  | 'propose'
  | 'aggregate'
  | 'complete';

const stop = { cancel: 'cancelled', reset: 'idle' } as const;

/**
 * Every move a session may make, by phase: the move and the phase it leads
 * to. A move a phase does not list is refused there. The usual way through:
 * `idle` → `clarifying` (questions, answers) → `planning` →
 * `awaiting-approval` → `executing` → `aggregating` → `completed`, then
 * follow-ups; a plan awaiting approval may go back to `clarifying` or
 * `planning`, and `cancel` ends any phase where work goes on.
 */
export const planningMoves: Readonly<Record<PlanningPhase, Readonly<Partial<Record<PlanningMove, PlanningPhase>>>>> = {
  idle: { submitTask: 'clarifying', reset: 'idle' },
  clarifying: { answerClarification: 'clarifying', ask: 'clarifying', plan: 'planning', ...stop },
  planning: { plan: 'planning', ask: 'clarifying', propose: 'awaiting-approval', ...stop },
  'awaiting-approval': {
    clarify: 'clarifying',
    editPlan: 'awaiting-approval',
    approvePlan: 'executing',
    requestChanges: 'planning',
    rejectPlan: 'cancelled',
    snapshot: 'awaiting-approval',
    ...stop,
  },
  executing: { post: 'executing', changePlan: 'executing', snapshot: 'executing', aggregate: 'aggregating', ...stop },
  aggregating: { snapshot: 'aggregating', complete: 'completed', ...stop },
  completed: { followUp: 'planning', snapshot: 'completed', reset: 'idle' },
  cancelled: { reset: 'idle' },
};

/** The phases in which `move` is allowed. */
export function phasesAllowing(move: PlanningMove): PlanningPhase[] {
  return planningPhases.filter((phase) => planningMoves[phase][move] !== undefined);
}

/** A method called (or a step taken) in a phase that does not allow it (code `wrong_phase`). */
export class PlanningPhaseError extends ConfigurationError {
  /** The session's phase when the call was made. */
  readonly phase: PlanningPhase;
  constructor(method: string, phase: PlanningPhase, allowed: readonly PlanningPhase[]) {
    super(`Cannot call ${method}() in phase "${phase}" (allowed in: ${allowed.join(', ') || 'none'})`, { code: 'wrong_phase', details: { method, phase, allowed } });
    this.phase = phase;
  }
}

/** The phase `move` leads to from `phase`, or a {@link PlanningPhaseError}. */
export function nextPhase(phase: PlanningPhase, move: PlanningMove): PlanningPhase {
  const to = planningMoves[phase][move];
  if (to === undefined) throw new PlanningPhaseError(move, phase, phasesAllowing(move));
  return to;
}

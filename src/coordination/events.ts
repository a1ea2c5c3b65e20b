/**
 * The events of lead coordinations (`coord.*`), added to the run's event map
 * (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */
import type { CoordMessage } from './message-bus.js';
import type { TaskStatus } from './task-store.js';

/** What a coordination decided (`coord.decision`). */
export type CoordDecisionKind =
  | 'tasks-planned'
  | 'plan-approved'
  | 'plan-rejected'
  | 'task-blocked'
  | 'task-added'
  | 'task-split'
  | 'task-cancelled'
  | 'task-reassigned'
  | 'status-check'
  | 'worker-stuck'
  | 'worker-spawned'
  | 'worker-stopped'
  | 'worker-added'
  | 'worker-shutdown'
  | 'delegate-mode'
  | 'question-unanswered';

/** The events a `coordinate` runnable emits, by name. Every one carries `coordination`, the coordination's name. */
export interface CoordinationEvents {
  /**
   * A task changed status (it was added, claimed, started, finished,
   * failed, blocked, reassigned, cancelled). `from` is missing for a new
   * task; `worker` is its assignee; `version` is the task list's version
   * after the change.
   */
  'coord.task': { coordination: string; task: string; title: string; from?: TaskStatus; to: TaskStatus; worker?: string; reason?: string; version: number };
  /** A message went over the bus, between the lead and a worker (questions, answers, plans, status, shutdown). */
  'coord.message': { coordination: string; message: CoordMessage };
  /** The coordination decided something: tasks planned, a plan approved or rejected, a worker found stuck, spawned, stopped, added or shut down, delegate mode switched (`detail` `on` or `off`), a task reassigned, added, split or cancelled. */
  'coord.decision': { coordination: string; decision: CoordDecisionKind; task?: string; worker?: string; detail?: string };
  /**
   * The lead's turn did not answer within `leadTurnTimeoutMs` (`timed-out`:
   * its model call was abandoned and its session is opened again for the
   * next turn; the workers carried on, and questions of that turn got the
   * default answer), or the first turn after that answered (`responsive`).
   */
  'coord.lead': { coordination: string; status: 'timed-out' | 'responsive'; timeoutMs: number };
  /** Every task is resolved and the lead wrote its synthesis: the ids of the tasks by final status, and how long it took on the run's clock. */
  'coord.completed': { coordination: string; done: string[]; failed: string[]; cancelled: string[]; blocked: string[]; durationMs: number };
}

declare global {
  interface TroupeLayerEvents extends CoordinationEvents {}
}

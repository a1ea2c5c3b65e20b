/**
 * The events of plans and planning sessions, added to the run's event map
 * (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */
import type { WorkspaceWarning } from '../workspaces/types.js';
import type { LearningRecord } from './learning/learning-record.js';
import type { ChunkRole } from './model/plan.js';
import type { PlanMessage } from './live/messages.js';
import type { PlanChange, PlanChangeSource } from './live/replan.js';
import type { ChunkStatus } from './engine/state.js';
import type { PlanningPhase } from './session/phases.js';

/** One chunk of a plan as `plan.started` describes it: enough to draw the dependency graph. */
export interface PlanGraphNode {
  /** The chunk's id (its sequence index, as text). */
  chunkId: string;
  title: string;
  role: ChunkRole;
  /** Ids of the chunks it depends on. */
  dependsOn: string[];
}

/** The events of plan executions and planning sessions, by name. */
export interface PlanEvents {
  /**
   * A plan starts executing (in its op, after its checkpoint was loaded):
   * `chunks` is its size, `resumed` is true when it continues a checkpoint,
   * and `graph` (present when someone listens) lists every chunk with the
   * chunks it depends on, so views can draw the plan.
   */
  'plan.started': { planId: string; chunks: number; resumed: boolean; graph?: PlanGraphNode[] };
  /**
   * A plan finished executing (before its checkpoint's last save), with its
   * status (`completed`; `failed` when a chunk failed, with `reason`
   * `abort-threshold` when too many did; `budget-exhausted`, with `reason`
   * `budget`, when its budget ran out) and the number of chunks that
   * completed, failed and were skipped. A cancelled plan emits none.
   */
  'plan.completed': { planId: string; status: 'completed' | 'failed' | 'budget-exhausted'; reason?: 'abort-threshold' | 'budget'; completed: number; failed: number; skipped: number };
  /**
   * A chunk changed status: one event per transition of the scheduler's
   * state machine (`pending`/`waiting-for-dependencies` → `queued` → `running`
   * → `completed`, or `retrying` and `queued` again, or `failed`; `skipped`
   * when a dependency failed; `cancelled` when the plan stopped). `attempt`
   * counts the chunk's attempts so far; `error` is set on `failed`,
   * `retrying`, `skipped` and `cancelled` when there is one. Built only when
   * someone listens.
   */
  'chunk.status': {
    planId: string;
    chunkId: string;
    sequenceIndex: number;
    title: string;
    role: ChunkRole;
    attempt: number;
    status: ChunkStatus;
    previous: ChunkStatus;
    error?: string;
  };
  /**
   * A plan given a `learning` record starts (before its checkpoint is
   * loaded): the statistics of earlier runs it uses — estimates and models
   * per role, the planner summary, and the numbers they came from — so the
   * run log says what it used and a resume or replay can use the same.
   */
  'plan.learning': { planId: string; learning: LearningRecord };
  /** A planning session moved to another phase (`idle`, `clarifying`, `planning`, `awaiting-approval`, `executing`, `aggregating`, `completed`, `cancelled`); `runId` is the session's run id. */
  'phase.changed': { from: PlanningPhase; to: PlanningPhase };
  /**
   * An instruction was posted to a planning session while its plan
   * executes (`session.post(text)`): chunks that start later see it in their prompt, and the
   * chunks running now (`running`, their ids) get it at their next turn.
   * `acknowledgement` is what the session answered in its conversation.
   */
  'plan.instruction': { planId: string; instruction: string; running?: string[]; acknowledgement?: string };
  /**
   * Instructions added while a chunk ran reached its worker (at its next
   * turn: with its next tool results, or after its answer), on attempt
   * `attempt`.
   */
  'chunk.instruction': { planId: string; chunkId: string; sequenceIndex: number; attempt: number; instructions: string[]; messages?: string[] };
  /**
   * A running plan was changed (`source`: the API, a planning session, a
   * model's `change_plan` tool, or a replay applying a recorded change):
   * `id` numbers the change in its plan, `after` is how many chunks had
   * completed, and `added`, `removed` and `rewired` list the chunks it
   * touched. The same record is an entry of the plan's checkpoint.
   */
  'plan.changed': { planId: string; id: number; change: PlanChange; source: PlanChangeSource; after: number; added: number[]; removed: number[]; rewired: number[] };
  /**
   * A message was posted in a plan (by a worker's `post_message` tool or
   * the API): it reaches its recipients in their prompt, or at their next
   * turn when they run (`chunk.instruction` lists it by id then).
   */
  'plan.message': { planId: string; message: PlanMessage };
  /**
   * A chunk's work could not be merged: it changed the same lines of
   * `paths` as the chunks in `with`, whose changes were merged first.
   * `outcome` says what happens: `retrying` (the next attempt starts from
   * the merged files and is told about the conflict and the other changes),
   * `failed` (no attempt left), or `resolved` (a later attempt merged).
   */
  'chunk.conflict': {
    planId: string;
    chunkId: string;
    sequenceIndex: number;
    title: string;
    attempt: number;
    paths: string[];
    with: Array<{ chunkId: string; sequenceIndex: number; title: string; paths: string[] }>;
    outcome: 'retrying' | 'failed' | 'resolved';
  };
  /** A plan's workspace strategy fell back to its second strategy in `baseDir` (for example git worktrees where there is no git repository), once per base directory. */
  'workspace.fallback': WorkspaceWarning;
}

declare global {
  interface TroupeLayerEvents extends PlanEvents {}
}

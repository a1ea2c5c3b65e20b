/**
 * The options of a planning session, described once: the plan's own
 * (`planRunnable`'s, but for the instructions and the aggregator, which the
 * session provides) and the session's.
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import type { Clock } from '../../core/clock.js';
import type { TroupeEmitter } from '../../core/context.js';
import { adapter, defineOptions, listOf, nonEmptyString, nonNegativeInteger, oneOf, positiveInteger, required } from '../../core/options.js';
import { runOptions } from '../../core/run.js';
import type { Store } from '../../core/store.js';
import { conversationSettings, planRunOptions } from '../engine/options.js';
import type { ConversationSettings, PlanRunOptions } from '../engine/types.js';
import { chunkRoles, type ChunkRole } from '../model/plan.js';

/** Options of `PlanningSession`: how it plans, and how its plans run (the options of `planRunnable`). */
export interface PlanningSessionOptions extends Omit<PlanRunOptions, 'instructions' | 'aggregate' | 'adapter'> {
  /** The adapter of the planner, the workers and the synthesis. */
  adapter: ModelAdapter;
  /** Adapters by name, for roles that name one. */
  adapters?: Record<string, ModelAdapter>;
  /** The clock. Default: the real clock. */
  clock?: Clock;
  /** Emit on this emitter. Default: a new one (`session.emitter`). */
  emitter?: TroupeEmitter;
  /** The session's run id: its executions run with it, and a store keeps them under it. Default: a random UUID. */
  runId?: string;
  /** Clarifying rounds before the planner must plan. Default: 3. */
  maxClarifyRounds?: number;
  /** Roles the planner may assign. Default: every role. */
  planRoles?: readonly ChunkRole[];
  /** Planner answers tried per plan. Default: 3. */
  maxPlanAttempts?: number;
  /** The planner's session: adapter, model, temperature and system prompt. Default: the Planning role's (after `roles` overrides) on `adapter`. */
  planner?: ConversationSettings;
  /** The aggregator's session: adapter, model, temperature and system prompt. Default: the Synthesis role's (after `roles` overrides) on `adapter`. */
  aggregator?: ConversationSettings;
  /** Cancels the session as `cancel()` does: model calls and the execution stop, and the phase becomes `cancelled`. */
  signal?: AbortSignal;
  /**
   * The store of the executions: each is a run with the session's `runId`,
   * logged and checkpointed here (the session's snapshot, and the plan's
   * chunks), so that `PlanningSession.restore(runId, { store, ... })` can
   * continue an execution that a crash or a restart interrupted.
   */
  store?: Store;
}

const { instructions: _instructions, aggregate: _aggregate, adapter: _adapter, ...planShape } = planRunOptions.shape;

/** The description {@link PlanningSessionOptions} are checked against. */
export const planningSessionOptions = defineOptions<PlanningSessionOptions>('PlanningSession', {
  ...planShape,
  adapter: required(adapter),
  adapters: runOptions.shape.adapters,
  clock: runOptions.shape.clock,
  emitter: runOptions.shape.emitter,
  runId: nonEmptyString,
  maxClarifyRounds: nonNegativeInteger,
  planRoles: listOf(oneOf(chunkRoles)),
  maxPlanAttempts: positiveInteger,
  planner: conversationSettings,
  aggregator: conversationSettings,
  signal: runOptions.shape.signal,
  store: runOptions.shape.store,
});

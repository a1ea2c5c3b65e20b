/**
 * `troupe/coordination`: a lead that keeps coordinating while its workers
 * run — the `coordinate` pattern, its task store, message bus, stuck
 * detection, plan approval and the lead's tools and text protocol.
 * @module troupe/coordination
 * @category Planning and coordination
 */
export { coordinate, coordinationStateSchema, DELEGATE_INSTRUCTION, type CoordinateOptions, type CoordinationOutcome, type CoordinationState } from './coordinate.js';
export type { TurnExecutor, TurnJob, TurnJobData } from './task-job.js';
export {
  TaskStore,
  taskInputSchema,
  taskListSchema,
  RESOLVED_STATUSES,
  type CoordTask,
  type TaskInput,
  type TaskListSnapshot,
  type TaskStatus,
  type TaskStoreOptions,
  type TaskTransition,
} from './task-store.js';
export { CoordinationControl } from './control.js';
export { MessageBus, type CoordMessage, type MessageBusOptions, type MessageInput, type MessageKind } from './message-bus.js';
export { StuckDetector, type StuckAction, type StuckOptions, type WorkerState, type WorkerTiming } from './stuck.js';
export { DEFAULT_PLAN_CRITERIA, resolvePlanApproval, type PlanApprovalOptions, type ResolvedPlanApproval } from './plan-approval.js';
export {
  COORDINATION_TOOL_NAMES,
  LEAD_TEXT_PROTOCOL,
  coordinationTools,
  parseLeadActions,
  parseQuestion,
  type ApplyLeadAction,
  type LeadAction,
  type ParsedLeadActions,
} from './tools.js';
export type { CoordDecisionKind, CoordinationEvents } from './events.js';

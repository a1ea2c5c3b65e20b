/**
 * `troupe/plan`: plans as dependency graphs of chunks — the plan schema and
 * its checks, the decomposer, the DAG scheduler and its executors, roles,
 * the aggregator and the interactive planning session (a plan's approvals
 * are the tool guardrail of `troupe/guardrails`).
 * @module troupe/plan
 * @category Planning and coordination
 */
export {
  planChunkSchema,
  planSchema,
  validatePlan,
  validatePlanJson,
  checkPlanEdit,
  PlanValidationError,
  type ChunkRole,
  type Plan,
  type PlanChunk,
  type PlanJsonValidation,
  type PlanValidation,
  type PlanEditCheck,
} from './model/plan.js';
export { buildStages, criticalPath, toMermaid, type ChunkWeight, type CriticalPath } from './model/dag.js';
export { defaultRoles, resolveRole, type RoleConfig, type RoleOverrides } from './model/roles.js';
export { recordChunkResult } from './engine/checkpoint.js';
export { directExecutor, inProcessExecutor, type ChunkAttemptResult, type ChunkToolCall, type ChunkJob, type ChunkJobData, type Executor, type InProcessExecutorOptions } from './engine/executor.js';
export { sharedPool, type PoolExecutor, type PoolShareOptions, type PoolShareStats, type SharedPool, type SharedPoolOptions } from './engine/pool.js';
export { chunkStatuses, chunkStateSchema, planEntrySchema, planExecutionStateSchema, terminalStatuses, type ChunkState, type ChunkStatus, type PlanEntry, type PlanExecutionState } from './engine/state.js';
export { PlanControl, planChangeTool, planChangesFromLog, type PlanControlCallOptions, type PlanControlOptions } from './live/control.js';
export {
  applyPlanChange,
  PlanChangeError,
  planChangeRecordSchema,
  planChangeSchema,
  type AppliedChange,
  type ChunkRewire,
  type ChunkSplit,
  type PlanChange,
  type PlanChangeProblem,
  type PlanChangeRecord,
  type PlanChangeSource,
} from './live/replan.js';
export {
  PlanMessageError,
  planMessageSchema,
  postMessageTool,
  type MessageLimits,
  type MessageRecipient,
  type PlanMessage,
  type PlanMessageInput,
  type PlanMessageProblem,
} from './live/messages.js';
export {
  executePlan,
  planRunnable,
  type ChunkResult,
  type ChunkRunInput,
  type ChunkRunner,
  type ConversationSettings,
  type ExecutePlanOptions,
  type MergeConflict,
  type PlanBudgets,
  type PlanOutcome,
  type PlanRetryOptions,
  type PlanRunOptions,
} from './engine/execute.js';
export { aggregate, type AggregateOptions, type AggregateReport, type PlanStats } from './session/aggregate.js';
export type { ConversationOptions, TextSession } from './session/conversation.js';
export { decompose, type DecomposeOptions } from './session/decompose.js';
export {
  PlanningPhaseError,
  PlanningSession,
  type InstructionAcknowledgement,
  type PlanningMessage,
  type PlanningPhase,
  type PlanningRun,
  type PlanningSessionOptions,
  type PlanningSnapshot,
  type PlanningStep,
} from './session/planning-session.js';
export { planningMoves, planningPhases, type PlanningMove } from './session/phases.js';
export type { PlanEvents, PlanGraphNode } from './events.js';
export {
  TemplateError,
  checkPlanTemplate,
  fillPlaceholders,
  formatTemplateIssues,
  instantiatePlanTemplate,
  parsePlanTemplateText,
  planTemplateSchema,
  scanPlaceholders,
  templateParameterTypes,
  type InstantiatedTemplate,
  type PlanTemplate,
  type TemplateCheck,
  type TemplateIssue,
  type TemplateParameter,
  type TemplateParameterType,
  type TemplatePlaceholder,
  type TemplateValue,
} from './templates/template.js';
export { TEMPLATE_DOCUMENT_VERSION, TEMPLATE_KEY_PREFIX, templateRegistry, type TemplateRegistry } from './templates/registry.js';
export {
  OUTCOME_STATS_KEY,
  OUTCOME_STATS_VERSION,
  emptyOutcomeStats,
  emptyTally,
  loadOutcomeStats,
  mergeOutcomes,
  parseOutcomeStats,
  recordOutcomes,
  type OutcomeDelta,
  type OutcomeStats,
  type OutcomeStatsOptions,
  type OutcomeTally,
} from './learning/outcome-stats.js';
export { outcomeCollector, recordRunOutcomes, type OutcomeCollector } from './learning/outcome-collector.js';
export {
  applyLearning,
  learnFromStats,
  learningRecordSchema,
  outcomeSummary,
  parseLearningRecord,
  usedLearning,
  type LearningRecord,
  type LearnOptions,
  type OutcomeSummaryOptions,
} from './learning/learning.js';

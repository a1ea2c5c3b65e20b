/**
 * `troupe/plan`: plans as dependency graphs of chunks — the plan schema and
 * its checks, the decomposer, the DAG scheduler and its executors, roles,
 * the aggregator, approvals and the interactive planning session.
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
} from './plan.js';
export { buildStages, criticalPath, toMermaid, type ChunkWeight, type CriticalPath } from './dag.js';
export { defaultRoles, resolveRole, type RoleConfig, type RoleOverrides } from './roles.js';
export { recordChunkResult } from './plan-checkpoint.js';
export { directExecutor, inProcessExecutor, type ChunkAttemptResult, type ChunkToolCall, type ChunkJob, type ChunkJobData, type Executor, type InProcessExecutorOptions } from './executor.js';
export { sharedPool, type PoolExecutor, type PoolShareOptions, type PoolShareStats, type SharedPool, type SharedPoolOptions } from './pool.js';
export { chunkStatuses, chunkStateSchema, planEntrySchema, planExecutionStateSchema, terminalStatuses, type ChunkState, type ChunkStatus, type PlanEntry, type PlanExecutionState } from './state.js';
export { PlanControl, planChangeTool, planChangesFromLog, type PlanControlOptions } from './plan-control.js';
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
} from './replan.js';
export {
  PlanMessageError,
  planMessageSchema,
  postMessageTool,
  type MessageLimits,
  type MessageRecipient,
  type PlanMessage,
  type PlanMessageInput,
  type PlanMessageProblem,
} from './messages.js';
export {
  executePlan,
  planRunnable,
  type ChunkResult,
  type ChunkRunInput,
  type ChunkRunner,
  type ConversationSettings,
  type ExecutePlanOptions,
  type MergeConflict,
  type PlanOutcome,
  type PlanRunOptions,
  type RetryOptions,
} from './execute.js';
export { aggregate, type AggregateOptions, type AggregateReport, type PlanStats } from './aggregate.js';
export type { ConversationOptions, TextSession } from './conversation.js';
export { decompose, type DecomposeOptions } from './decompose.js';
export {
  PlanningPhaseError,
  PlanningSession,
  type InstructionAcknowledgement,
  type PlanningMessage,
  type PlanningPhase,
  type PlanningRun,
  type PlanningSessionOptions,
  type PlanningStep,
} from './planning-session.js';
export {
  ApprovalQueue,
  toolRisks,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalQueueEvents,
  type ApprovalQueueOptions,
  type ApprovalRequest,
  type ApprovalScope,
  type ApprovalSource,
  type GuardOptions,
  type ToolRisk,
} from './approvals.js';
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
} from './template.js';
export { TEMPLATE_DOCUMENT_VERSION, TEMPLATE_KEY_PREFIX, templateRegistry, type TemplateRegistry } from './template-registry.js';
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
} from './outcome-stats.js';
export { outcomeCollector, recordRunOutcomes, type OutcomeCollector } from './outcome-collector.js';
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
} from './learning.js';

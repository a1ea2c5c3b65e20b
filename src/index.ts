/**
 * troupe: composable multi-agent orchestration for TypeScript.
 *
 * The root export is a curated list with no side effects. Test doubles live
 * in `troupe/testing`; vendor adapters in `troupe/adapters/<name>`.
 * @module
 */

// The adapter contract
export type {
  AdapterCapabilities,
  JsonSchema,
  ModelAdapter,
  ModelSession,
  ModelTurn,
  SendOptions,
  SessionEvent,
  SessionSpec,
  ToolCall,
  ToolResult,
  ToolSchema,
} from './core/adapter.js';

// Runnables and the run kernel
export { defineRunnable, type Outcome, type OutcomeStatus, type Runnable, type RunnableSpec } from './core/runnable.js';
export { run, startRun, type RunHandle, type RunOptions, type RunResult } from './core/run.js';
export { RunContext, isCancellation, type EnterOptions, type TroupeEmitter } from './core/context.js';
export type { ChunkStatusName, EventBase, TroupeEvent, TroupeEventName, TroupeEventPayloads, TroupeEventListeners } from './core/events.js';
export { formatOpTree, totalUsage, usageByAgent, usageByKind, walk, type OpNode } from './core/ops.js';
export { addUsage, emptyUsage, totalTokens, type Usage } from './core/usage.js';

// Sessions and tools
export { SessionHandle, type SessionHandleOptions } from './core/session.js';
export { runToolLoop, executeToolCall, type ToolLoopOptions, type ToolLoopResult } from './core/tool-loop.js';
export { defineTool, toJsonSchema, toToolSchema, type ToolContext, type ToolDefinition } from './core/tools.js';

// Time and cancellation
export { realClock, sleep, abortError, type Clock } from './core/clock.js';
export { combineSignals, raceAbort, throwIfAborted, timeoutSignal, withTimeout, type TimeoutSignal } from './core/abort.js';

// Errors
export {
  AdapterError,
  CancelledError,
  ConfigurationError,
  MaxTurnsExceededError,
  ModelBehaviorError,
  ParseError,
  SessionBusyError,
  StoreError,
  TimeoutError,
  TroupeError,
  WorkspaceError,
  describeValue,
  errorMessage,
  isTroupeError,
  type TroupeErrorCode,
  type TroupeErrorOptions,
} from './core/errors.js';

// Patterns
export { agent, resolveAdapter, type Agent, type AgentOptions, type Conversation, type ConversationReply, type ConverseOptions } from './patterns/agent.js';

// Workspaces (the contract; strategies are added by their own modules)
export { noWorkspace, type MergeResult, type Workspace, type WorkspaceChunk, type WorkspaceStrategy } from './workspaces/types.js';

// Persistence (the contract; stores are added by their own modules)
export type { Store, StoreCallOptions, StoreReadOptions, StoreReadResult } from './persistence/store.js';

// Planning and the DAG scheduler
export {
  chunkRoles,
  extractJson,
  planChunkSchema,
  planSchema,
  validatePlan,
  validatePlanJson,
  PlanValidationError,
  type ChunkRole,
  type Plan,
  type PlanChunk,
  type PlanJsonValidation,
  type PlanValidation,
} from './scheduler/plan.js';
export { buildStages, complexityWeight, criticalPath, remainingCriticalPaths, toMermaid, type ChunkWeight, type CriticalPath } from './scheduler/dag.js';
export { defaultRoles, resolveRole, type RoleConfig, type RoleOverrides } from './scheduler/roles.js';
export { directExecutor, inProcessExecutor, type ChunkAttemptResult, type ChunkJob, type Executor, type InProcessExecutorOptions } from './scheduler/executor.js';
export {
  chunkStatuses,
  chunkStateSchema,
  planExecutionStateSchema,
  terminalStatuses,
  type ChunkState,
  type ChunkStatus,
  type PlanExecutionState,
} from './scheduler/state.js';
export {
  executePlan,
  planRunnable,
  renderResults,
  type ChunkResult,
  type ChunkRunInput,
  type ChunkRunner,
  type ExecutePlanOptions,
  type PlanOutcome,
  type PlanRunOptions,
  type RetryOptions,
} from './scheduler/execute.js';
export { aggregate, countResults, synthesisPrompt, type AggregateOptions, type AggregateReport, type PlanStats } from './scheduler/aggregate.js';
export type { ConversationOptions, TextSession } from './scheduler/conversation.js';
export { decompose, planningPrompt, type DecomposeOptions } from './scheduler/decompose.js';
export {
  PlanningPhaseError,
  PlanningSession,
  type PlanningPhase,
  type PlanningRun,
  type PlanningSessionOptions,
  type PlanningStep,
} from './scheduler/planning-session.js';
export {
  ApprovalQueue,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalQueueEvents,
  type ApprovalRequest,
  type ApprovalScope,
} from './scheduler/approvals.js';

/**
 * `troupe/kernel`: the contracts and the run kernel, for authors of
 * patterns, adapters and stores. Everything a runnable, an adapter or a
 * store is built on: the run context, the event map, the op tree and usage,
 * sessions and the tool loop, the clock and signal helpers, and every
 * error class. Applications rarely need more than the root `troupe`.
 * @module troupe/kernel
 * @category Kernel
 */

// The adapter contract
export type {
  AdapterCapabilities,
  JsonSchema,
  ListModelsOptions,
  ModelAdapter,
  ModelSession,
  ModelTurn,
  SendOptions,
  OpenSessionOptions,
  SessionEvent,
  SessionSpec,
  ToolCall,
  ToolResult,
  ToolSchema,
  CliToolList,
  McpServerConfig,
  McpServerSpec,
} from './adapter.js';
export { CLI_SYSTEM_PROMPT_KEY, CLI_TOOLS_KEY, MCP_SERVERS_KEY } from './adapter.js';

// Runnables, the run and its context
export { outcomeReasons, outcomeStatuses, type Outcome, type OutcomeReason, type OutcomeStatus } from './outcome.js';
export { LoopControl, NotRunningError, RunControl, type ControlledRun } from './control.js';
export { defineRunnable, type Runnable, type RunnableSpec } from './runnable.js';
export { run, startRun, type RunHandle, type RunOptions, type RunResult } from './run.js';
export { resume, type ResumeOptions } from './resume.js';
export { ContextKey, RunContext, isCancellation, type BudgetEntry, type CreateContextOptions, type EnterOptions, type TroupeEmitter } from './context.js';
export type {
  EventBase,
  KernelEvents,
  RunParent,
  TroupeEvent,
  TroupeEventListeners,
  TroupeEventName,
  TroupeEventPayloads,
} from './events.js';
export { formatOpTree, totalUsage, usageByAgent, usageByKind, walk, type OpBudget, type OpNode } from './ops.js';
export { addUsage, emptyUsage, totalTokens, type Usage } from './usage.js';

// Budgets on the op tree, and context budgets of sessions
export {
  BudgetChain,
  BudgetExhaustedError,
  BudgetMeter,
  budgetExhaustion,
  budgetLimitKeys,
  isBudgetExhausted,
  type Budget,
  type BudgetExhaustedInfo,
  type BudgetExhaustion,
  type BudgetLimitKey,
  type BudgetLimits,
  type BudgetSpend,
} from './budget.js';
export {
  ContextWindow,
  estimateTokens,
  type CompactionStrategy,
  type ContextBudget,
  type ContextInputKind,
  type ContextWindowOptions,
  type TokenCounter,
} from './context-window.js';
export type { ParseIssue, SafeParseResult } from './parse-result.js';
export type { TurnRecord } from './turn-record.js';

// Sessions and tools
export { SessionHandle, openSession, type SendGuard, type SendWatch, type SessionHandleOptions } from './session.js';
export { runToolLoop, executeToolCall, type ToolLoopOptions, type ToolLoopResult } from './tool-loop.js';
export { defineTool, enabledTools, toToolSchema, type ToolContext, type ToolDefinition } from './tools.js';

// Guardrails and delegation hooks: the contracts and where the kernel enforces them
export {
  GuardrailTripError,
  defineGuardrail,
  defineToolGuardrail,
  validateGuardrailOptions,
  type Guardrail,
  type GuardrailCheckContext,
  type GuardrailOptions,
  type GuardrailStage,
  type GuardrailVerdict,
  type ToolGuardrail,
  type ToolGuardrailContext,
  type ToolGuardrailDecision,
  type TripVerdict,
} from './guardrails.js';
export { checkText, guardScope, guardToolCall, runGuarded, scopeChain, sendGuard, unguarded, type GuardScope } from './guard-scope.js';
export type { Delegation, DelegationDecision, DelegationHooks, DelegationKind, DelegationMessage, DelegationTarget } from './delegation.js';
export { delegate, delegationHooks, enabledTargets, type DelegateResult } from './delegate.js';

// The store contract (stores are in troupe/persistence, troupe/redis and troupe/testing)
export {
  supportsCompareAndSet,
  type CompareAndSetStore,
  type SetIfResult,
  type Store,
  type StoreCallOptions,
  type StoreReadOptions,
  type StoreReadResult,
  type StoreSetIfOptions,
  type VersionedDocument,
} from './store.js';

// Checkpoints: how a pattern saves its state and finds it again when the run is resumed
export {
  CHECKPOINT_SCHEMA_VERSION,
  Checkpoint,
  savedOutcomeSchema,
  type CheckpointDocument,
  type CheckpointSpec,
  type RestoredCheckpoint,
} from './checkpoint.js';

// Optional peers: a vendor package loaded on first use
export { loadPeer } from './peer.js';

// Time and cancellation
export { realClock, sleep, abortError, type Clock } from './clock.js';
export { combineSignals, raceAbort, throwIfAborted, timeoutSignal, withTimeout, type TimeoutSignal } from './abort.js';

// Errors
export {
  AdapterError,
  CancelledError,
  ConfigurationError,
  MaxTurnsExceededError,
  ModelBehaviorError,
  ParseError,
  RateLimitError,
  RoutingError,
  SessionBusyError,
  StoreError,
  TimeoutError,
  TroupeError,
  WorkspaceError,
  isTroupeError,
  type TroupeErrorCode,
  type TroupeErrorOptions,
} from './errors.js';

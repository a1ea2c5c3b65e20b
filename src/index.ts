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
export type { EventBase, TroupeEvent, TroupeEventName, TroupeEventPayloads, TroupeEventListeners } from './core/events.js';
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

// Persistence: stores, checkpoints, run logs and the team registry
export { memoryStore, type MemoryStore } from './persistence/memory-store.js';
export { fileStore, encodeKey, decodeKey, type FileStore, type FileStoreOptions } from './persistence/file-store.js';
export {
  CHECKPOINT_SCHEMA_VERSION,
  checkpointKey,
  loadCheckpoint,
  saveCheckpoint,
  type Checkpoint,
  type LoadCheckpointOptions,
  type SaveCheckpointOptions,
} from './persistence/checkpoint.js';
export {
  exportRun,
  pruneRuns,
  readRun,
  runEventsStream,
  runMetaKey,
  timeline,
  type ExportedRun,
  type PruneRunsOptions,
  type RunLog,
  type RunMeta,
  type TimelineEntry,
} from './persistence/run-log.js';
export {
  TEAM_REGISTRY_SCHEMA_VERSION,
  deleteGroup,
  emptyTeamRegistry,
  isMultiAgentGroup,
  parseTeamRegistry,
  reconcile,
  safeParseTeamRegistry,
  teamRegistry,
  type DeleteGroupResult,
  type LoadedTeamRegistry,
  type ReconcileAgent,
  type ReconcileChange,
  type ReconcileResult,
  type TeamGroup,
  type TeamMember,
  type TeamRegistry,
  type TeamRegistryOptions,
  type TeamRegistryParseResult,
  type TeamRegistryState,
} from './persistence/team-registry.js';
export type { TurnRecord } from './core/turn-record.js';

/**
 * `troupe/kernel`: the contracts and the run kernel, for authors of
 * patterns, adapters and stores. What a runnable, an adapter or a store is
 * built on: the adapter and store contracts, runnables and the run, the run
 * context, the event map, the op tree and usage, sessions and the tool
 * loop, checkpoints, the clock and signal helpers, and the error classes.
 * Budgets and context windows are in `troupe/patterns`, guardrails and
 * delegation hooks in `troupe/guardrails`; where the kernel enforces them
 * is marked internal and left out of the published declarations.
 * Applications rarely need more than the root `troupe`.
 * @module troupe/kernel
 * @category Kernel
 */

// The adapter contract
export type {
  AdapterCapabilities,
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
} from './adapter.js';

// Runnables, the run and its context
export { outcomeReasons, outcomeStatuses, type Outcome, type OutcomeReason, type OutcomeStatus } from './outcome.js';
export { LoopControl, NotRunningError, RunControl } from './control.js';
export { defineRunnable, type Runnable, type RunnableSpec } from './runnable.js';
export { run, startRun, type RunHandle, type RunOptions, type RunResult } from './run.js';
export { resume, type ResumeOptions } from './resume.js';
export { RunContext, isCancellation, type EnterOptions, type TroupeEmitter } from './context.js';
export type { TroupeEvent, TroupeEventName, TroupeEventPayloads } from './events.js';
export { formatOpTree, totalUsage, usageByAgent, usageByKind, walk, type OpNode } from './ops.js';
export { addUsage, emptyUsage, totalTokens, type Usage } from './usage.js';

// Sessions and tools
export { SessionHandle, openSession, type SessionHandleOptions } from './session.js';
export { runToolLoop, type ToolLoopOptions, type ToolLoopResult } from './tool-loop.js';
export { defineTool, type ToolContext, type ToolDefinition } from './tools.js';

// The store contract (stores are in troupe/persistence, troupe/redis and troupe/testing)
export type {
  CompareAndSetStore,
  SetIfResult,
  Store,
  StoreCallOptions,
  StoreReadOptions,
  StoreReadResult,
  StoreSetIfOptions,
  VersionedDocument,
} from './store.js';

// Checkpoints: how a pattern saves its state and finds it again when the run is resumed
export { Checkpoint, type CheckpointDocument, type CheckpointSpec, type RestoredCheckpoint } from './checkpoint.js';

// Time and cancellation
export { realClock, sleep, abortError, type Clock } from './clock.js';
export { combineSignals, throwIfAborted, timeoutSignal } from './abort.js';

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
} from './errors.js';

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

// Squad team folders and presets
export {
  DEFAULT_TEAM_MODE,
  TEAM_MODES,
  formatPresetIssues,
  parseTeamPreset,
  safeParseTeamPreset,
  teamPresetSchema,
  type PresetSource,
  type PresetWorker,
  type RosterMember,
  type SquadPreset,
  type TeamMode,
  type TeamPreset,
  type TeamPresetInput,
  type TeamPresetParseResult,
} from './squad/preset.js';
export { SQUAD_DIR_NAMES, findSquadDir } from './squad/find.js';
export { DEFAULT_INFRASTRUCTURE, squadSlug } from './squad/slug.js';
export { DEFAULT_TEAM_NAME, parseTeamMd, type RosterForm, type TeamMd, type TeamMdMember } from './squad/team-md.js';
export { CHARTER_CAP, CONTEXT_CAP, capAtLine, capEntries, splitEntries, type CappedText, type SplitEntries } from './squad/caps.js';
export { MAX_FILE_BYTES } from './squad/files.js';
export { TROUPE_CHARTER_MARKER, discoverSquad, genericCharter, parseSquad, type ParseSquadOptions } from './squad/parse.js';
export { roleFromPrompt, writeSquad, type WriteSquadOptions } from './squad/write.js';
export {
  PRESET_KEY_PREFIX,
  builtInPresets,
  loadUserPresets,
  mergePresets,
  presetKey,
  saveTeamAsPreset,
  type LoadUserPresetsOptions,
  type SavedPreset,
  type SaveTeamAsPresetOptions,
} from './squad/presets.js';

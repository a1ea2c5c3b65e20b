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
export { RunContext, isCancellation, type CreateContextOptions, type EnterOptions, type TroupeEmitter } from './core/context.js';
export type { ChunkStatusName, InputKind, CoordDecisionKind, CoordMessageKind, CoordMessageRecord, CoordTaskStatus, EventBase, PlanGraphNode, TroupeEvent, TroupeEventName, TroupeEventPayloads, TroupeEventListeners } from './core/events.js';
export { formatOpTree, totalUsage, usageByAgent, usageByKind, walk, type OpNode } from './core/ops.js';
export { addUsage, emptyUsage, totalTokens, type Usage } from './core/usage.js';

// Sessions and tools
export { SessionHandle, type SessionHandleOptions } from './core/session.js';
export { runToolLoop, executeToolCall, type ToolLoopOptions, type ToolLoopResult } from './core/tool-loop.js';
export { defineTool, toJsonSchema, toToolSchema, type ToolContext, type ToolDefinition } from './core/tools.js';

// Time and cancellation
export { realClock, sleep, abortError, type Clock } from './core/clock.js';
export { combineSignals, raceAbort, throwIfAborted, timeoutSignal, withTimeout, type TimeoutSignal } from './core/abort.js';
export { expectNonNegativeInteger, expectPositiveInteger, expectPositiveNumber } from './core/options.js';

// Errors
export {
  AdapterError,
  CancelledError,
  ConfigurationError,
  MaxTurnsExceededError,
  ModelBehaviorError,
  ParseError,
  RateLimitError,
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
export { noWorkspace, type MergeResult, type Workspace, type WorkspaceChunk, type WorkspaceStrategy, type WorkspaceWarning } from './workspaces/types.js';

// Persistence (the contract; stores are added by their own modules)
export type {
  CompareAndSetStore,
  SetIfResult,
  Store,
  StoreCallOptions,
  StoreReadOptions,
  StoreReadResult,
  StoreSetIfOptions,
  VersionedDocument,
} from './persistence/store.js';
export { supportsCompareAndSet } from './persistence/store.js';

// Team: members deliberating over a shared channel
export { team, TeamFailedError, type Team, type TeamOptions, type TeamOutcome, type TeamVote } from './patterns/team.js';
export type { TeamChannelMessage } from './core/events.js';
export { teamMessageSchema, teamStateSchema, type TeamMessage, type TeamState, type TeamStatus, type TerminationMode } from './patterns/team-state.js';
export { parseTeamReply, VOTE_MARKER, CONCLUDE_MARKER, type ParsedReply } from './patterns/team-protocol.js';
// Workspace strategies
export { gitWorktree, type GitWorktreeOptions, type GitWorktreeStrategy, type StaleCleanupResult } from './workspaces/git-worktree.js';
export { fileLocking, scopesOverlap, staticPrefix, type FileLockingOptions } from './workspaces/file-locking.js';
export { inMemory } from './workspaces/in-memory.js';
export { withFallback, type WithFallbackOptions, type WorkspaceFallbackWarning } from './workspaces/fallback.js';
// Agent files, graph validation, and the handoff / router / advisors / broadcast / sequential patterns
export { type AgentDefinition, type AgentIssue, type AgentParseResult, type TeamDefinition } from './agents/definition.js';
export { defineAgent, type AgentDefinitionInput } from './agents/define.js';
export { parseAgentFile, safeParseAgentFile, MAX_AGENT_FILE_BYTES, type ParseAgentFileOptions } from './agents/parse.js';
export { MAX_FRONT_MATTER_CHARS, MAX_YAML_ALIASES, readFrontMatterData, splitFrontMatter, type FrontMatter, type SplitFrontMatterOptions } from './agents/front-matter.js';
export { loadAgents, type LoadAgentsOptions } from './agents/load.js';
export { validateAgents, terminalsOf, agentEdges, type AgentEdge, type AgentEdgeKind, type AgentValidation } from './agents/validate.js';
export { compileAgents, type CompileAgentsOptions } from './agents/compile.js';
export { handoff, formatHandoff, type HandoffOptions, type HandoffOutcome } from './patterns/handoff.js';
export { router, type RouterOptions, type RouterOutcome } from './patterns/router.js';
export { advisors, consultAdvisors, formatAdvice, type AdvisorResult, type AdvisorsOptions, type AdvisorsOutcome } from './patterns/advisors.js';
export { broadcast, type BroadcastOptions, type BroadcastOutcome } from './patterns/broadcast.js';
export { sequential, formatEarlierAnswers, type SequentialOptions, type SequentialOutcome } from './patterns/sequential.js';
export { RoutingError } from './core/errors.js';
// Reading model output and files: line ends, the one fence scanner, JSON candidates
export { normalizeText } from './text/lines.js';
export { NameMatcher, nameKey, sameName, type NameMatch } from './text/names.js';
export { fencedBlocks, scanLines, type Fence, type FencedBlock, type LineKind, type ScannedLine } from './text/fences.js';
export {
  MAX_JSON_CANDIDATES,
  MAX_JSON_DEPTH,
  MAX_REPAIR_CHARS,
  findJson,
  safeFindJson,
  type FindJsonOptions,
  type FoundJson,
  type JsonIssue,
  type JsonKind,
  type JsonSource,
  type JsonValidator,
} from './text/json.js';
// Reflection: sentinel, assignment and evaluation parsers, stall detection,
// quality trend, and the reflect / orchestrate loops
export type { ParseIssue, SafeParseResult } from './core/parse-result.js';
export { GROUP_REFLECT_COMPLETE, NEEDS_ITERATION, REFLECTION_COMPLETE, parseSentinels, scanMarkerLines, stripSentinels, type Sentinels } from './reflection/sentinels.js';
export { TASK_SEPARATOR, parseAssignments, requireAssignments, safeParseAssignments, type Assignment, type ParsedAssignments } from './reflection/assignments.js';
export { StallDetector, jaccard, tokenSet, type StallCheck, type StallDetectorOptions } from './reflection/stall.js';
export { QUALITY_STEP, QualityTracker, qualityTrend, type QualityRecord, type QualityScore, type QualityTrend } from './reflection/quality.js';
export {
  DEFAULT_SCORE,
  NEEDS_ITERATION_SCORE,
  SELF_EVALUATION_SCORE,
  normaliseScore,
  parseEvaluation,
  parseScore,
  parseVerdict,
  safeParseScore,
  type Evaluation,
  type Verdict,
} from './reflection/evaluation.js';
export {
  DEFAULT_MIN_ANSWER_CHARS,
  feedbackAdjustments,
  type AdjustmentKind,
  type AdjustmentWorkerResult,
  type FeedbackInput,
  type LoopAdjustment,
} from './reflection/adjust.js';
export { formatDuration, loopSummary, type ControllableLoop, type ErrorBudgetOptions, type LoopControls, type LoopStatus } from './patterns/loop.js';
export { reflect, reflectPrompt, reflectStateSchema, DEFAULT_EVALUATION_PROMPT, type ReflectOptions, type ReflectOutcome, type ReflectState, type Reflection } from './patterns/reflect.js';
export { orchestrate, type Orchestration, type OrchestrateOptions, type OrchestrateOutcome } from './patterns/orchestrate.js';
export { DELEGATE_TOOL, DEFAULT_EVALUATOR_ANSWER_CHARS, DEFAULT_WORKER_TIMEOUT_MS, GENERIC_WORKER_INSTRUCTION, workerPrompt } from './patterns/orchestrate-dispatch.js';
export {
  loopAdjustmentSchema,
  loopEvaluationSchema,
  orchestrateModes,
  orchestrateStateSchema,
  stallSnapshotSchema,
  workerResultSchema,
  type LoopEvaluation,
  type OrchestrateMode,
  type OrchestrateState,
  type WorkerResult,
} from './patterns/orchestrate-state.js';
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
  type SkippedRecord,
  type TimelineEntry,
  type TimelineOptions,
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
export { SQUAD_DIR_NAMES, findSquadDir, type FindSquadDirOptions } from './squad/find.js';
export { DEFAULT_INFRASTRUCTURE, squadSlug } from './squad/slug.js';
export { DEFAULT_TEAM_NAME, MAX_ROSTER, parseTeamMd, type RosterForm, type TeamMd, type TeamMdMember } from './squad/team-md.js';
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
export { buildStages, complexityWeight, criticalPath, remainingCriticalPaths, toMermaid, type ChunkWeight, type CriticalPath, type PlanIndex } from './scheduler/dag.js';
export { defaultRoles, resolveRole, type RoleConfig, type RoleOverrides } from './scheduler/roles.js';
export { directExecutor, inProcessExecutor, type ChunkAttemptResult, type ChunkJob, type ChunkJobData, type Executor, type InProcessExecutorOptions } from './scheduler/executor.js';
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
export {
  defaultEvaluatorPrompt,
  defaultOrchestratorPrompt,
  fromPreset,
  isPresetTeam,
  presetFromTeam,
  type FromPresetInput,
  type FromPresetOptions,
  type OrchestratedTeamOptions,
  type PresetTeam,
} from './squad/from-preset.js';
// Checkpoints and resume
export { resume, type ResumeOptions, type ResumeRunOptions } from './persistence/resume.js';
export {
  isFinished,
  opCheckpointKey,
  restoreCheckpoint,
  saveStepCheckpoint,
  savedOutcomeSchema,
  type RestoredCheckpoint,
} from './persistence/op-checkpoint.js';


// lead coordination
export {
  coordinate,
  coordinationStateSchema,
  DELEGATE_INSTRUCTION,
  type CoordinateOptions,
  type CoordinationOutcome,
  type CoordinationState,
} from './coordination/coordinate.js';
export {
  TaskStore,
  taskInputSchema,
  taskListSchema,
  RESOLVED_STATUSES,
  type CoordTask,
  type TaskInput,
  type TaskStatus,
  type TaskStoreOptions,
  type TaskTransition,
  type TaskListSnapshot,
} from './coordination/task-store.js';
export { MessageBus, type CoordMessage, type MessageBusOptions, type MessageInput, type MessageKind } from './coordination/message-bus.js';
export { StuckDetector, type StuckAction, type StuckOptions, type WorkerState, type WorkerTiming } from './coordination/stuck.js';
export { DEFAULT_PLAN_CRITERIA, resolvePlanApproval, type PlanApprovalOptions, type ResolvedPlanApproval } from './coordination/plan-approval.js';
export {
  COORDINATION_TOOL_NAMES,
  LEAD_TEXT_PROTOCOL,
  coordinationTools,
  parseLeadActions,
  parseQuestion,
  askLeadTool,
  type LeadAction,
  type ParsedLeadActions,
  type ApplyLeadAction,
} from './coordination/tools.js';

// ─── Agent files of every format, sub-agents as tools, hand-off choices, squad names ───
// One block, so that moving these names into a subpath is one edit.
export { CLI_TOOLS_KEY, MCP_SERVERS_KEY, type CliToolList, type McpServerConfig, type McpServerSpec } from './core/adapter.js';
export { MCP_SERVER_NAME_PATTERN, resolveAgentMcpServers, type ResolvedMcpServers } from './agents/mcp-servers.js';
export {
  AGENT_FORMATS,
  AGENT_NAME_PATTERN,
  isAgentName,
  isPathReference,
  type AgentFormat,
  type ApprovalPolicy,
  type HandoffChoiceDefinition,
  type McpServerReference,
  type ToolDecision,
} from './agents/definition.js';
export {
  AGENT_FILE_SUFFIXES,
  FORMAT_DETECTION,
  agentFormats,
  detectFormatByFields,
  detectFormatByPlace,
  nameFromFileName,
  type AgentFileInput,
  type AgentFileOutput,
  type AgentFormatModule,
  type FormatClues,
  type FormatEvidence,
  type FormatRule,
} from './agents/formats/index.js';
export { CLAUDE_PERMISSION_MODES } from './agents/formats/claude-code.js';
export { readFrontMatterLeniently, reopenDoubledFence, startsWithYamlKey, type LenientFrontMatter, type LenientLine } from './agents/front-matter.js';
export { AGENT_FILE_EXTENSIONS, loadAgentFolder, type LoadedAgents } from './agents/load.js';
export { resolveReferences } from './agents/references.js';
export {
  resolveAgentModel,
  resolveAgentTools,
  runsOnCli,
  subAgentToolName,
  toolDecision,
  type AgentResolutionOptions,
  type ResolvedModel,
  type ResolvedTool,
  type ResolvedTools,
} from './agents/resolve.js';
export { agentGraph, subAgentsOf } from './agents/validate.js';
export { writeAgentFile } from './agents/write.js';
export { inspectAgents, type AgentInspection } from './agents/inspect.js';
export { asTool, type AsToolArguments, type AsToolOptions } from './patterns/as-tool.js';
export {
  HANDOFF_TOOL,
  formatHandoffChoice,
  handoffChoices,
  parseHandoffLine,
  type HandoffApprover,
  type HandoffChoice,
  type HandoffChoicesOptions,
  type HandoffChoicesOutcome,
  type TakenHandoff,
} from './patterns/handoff-choices.js';
export { SLUG_PATTERN, displayName, isSlug } from './squad/slug.js';
export { headingDate } from './squad/caps.js';

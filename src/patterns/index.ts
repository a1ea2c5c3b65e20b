/**
 * `troupe/patterns`: every pattern with its options, outcome and state
 * types, the message formats the patterns share, and the team protocol.
 * The root `troupe` re-exports the pattern functions and their options.
 * @module troupe/patterns
 * @category Patterns
 */
export { agent, type Agent, type AgentCliOptions, type AgentOptions, type Conversation, type ConversationContextLabel, type ConversationReply, type ConverseOptions } from './agent.js';
export type { ConversationMessage } from '../core/adapter.js';
export {
  WorkingMemoryError,
  applyJsonPatch,
  readWorkingMemory,
  updateWorkingMemory,
  workingMemory,
  type JsonPatchOperation,
  type UpdateWorkingMemoryOptions,
  type WorkingMemory,
  type WorkingMemoryCallOptions,
  type WorkingMemoryOptions,
  type WorkingMemoryScope,
  type WorkingMemoryState,
  type WorkingMemoryUpdate,
} from './working-memory.js';
export { withBudget, type WithBudgetOptions } from './with-budget.js';

// Budgets: limits on a run, an op or a pattern's work (\`withBudget\`, \`RunOptions.budget\`, \`EnterOptions.budget\`)
export {
  BudgetExhaustedError,
  budgetLimitKeys,
  isBudgetExhausted,
  type Budget,
  type BudgetExhaustedInfo,
  type BudgetExhaustion,
  type BudgetLimitKey,
  type BudgetLimits,
  type BudgetSpend,
} from '../core/budget.js';
export type { OpBudget } from '../core/ops.js';

// Context windows: an agent's context budget (\`AgentOptions.context\`) and its compaction
export {
  ContextWindow,
  estimateTokens,
  type CompactionStrategy,
  type ContextBudget,
  type ContextInputKind,
  type ContextWindowOptions,
  type TokenCounter,
} from '../core/context-window.js';
export { handoff, formatHandoff, type HandoffOptions, type HandoffOutcome } from './handoff.js';
export { router, type RouterOptions, type RouterOutcome } from './router.js';
export { advisors, consultAdvisors, formatAdvice, type AdvisorResult, type AdvisorsOptions, type AdvisorsOutcome } from './advisors.js';
export { broadcast, type BroadcastOptions, type BroadcastOutcome } from './broadcast.js';
export { sequential, formatEarlierAnswers, type SequentialOptions, type SequentialOutcome } from './sequential.js';
export { asTool, type AsToolArguments, type AsToolOptions } from './as-tool.js';
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
} from './handoff-choices.js';

// Teams: members deliberating over a shared channel
export { team, TeamControl, TeamFailedError, type Team, type TeamOptions, type TeamOutcome, type TeamVote } from './team.js';
export { teamMessageSchema, teamStateSchema, terminationModes, type TeamMessage, type TeamReason, type TeamState, type TeamStatus, type TerminationMode } from './team-state.js';
export { parseTeamReply, VOTE_MARKER, CONCLUDE_MARKER, type ParsedReply } from './team-protocol.js';

// Loops: reflect and orchestrate
export type { Loop, LoopReason, LoopStatus } from './loop.js';
export { LoopControl } from '../core/control.js';
export { reflect, reflectPrompt, reflectStateSchema, DEFAULT_EVALUATION_PROMPT, type ReflectOptions, type ReflectOutcome, type ReflectState, type Reflection } from './reflect.js';
export { orchestrate, type Orchestration, type OrchestrateOptions, type OrchestrateOutcome } from './orchestrate.js';
export { DELEGATE_TOOL, DEFAULT_EVALUATOR_ANSWER_CHARS, DEFAULT_WORKER_TIMEOUT_MS, GENERIC_WORKER_INSTRUCTION, workerPrompt } from './orchestrate-dispatch.js';
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
} from './orchestrate-state.js';
export type { PatternEvents } from './events.js';

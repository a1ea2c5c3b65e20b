/**
 * The types the plan executor's modules share: what a chunk runner gets,
 * the options of `executePlan` and `planRunnable`, and what comes back.
 * Types only; every other scheduler module imports from here, never from
 * `execute.ts`, so the modules form no ring.
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import type { Budget } from '../../core/budget.js';
import type { Clock } from '../../core/clock.js';
import type { RunContext, TroupeEmitter } from '../../core/context.js';
import type { TroupeEvent } from '../../core/events.js';
import type { Outcome } from '../../core/runnable.js';
import type { ToolDefinition } from '../../core/tools.js';
import type { RetryOptions } from '../../core/retry.js';
import type { Usage } from '../../core/usage.js';
import type { Store } from '../../core/store.js';
import type { Workspace, WorkspaceStrategy } from '../../workspaces/types.js';
import type { ApprovalQueue, ToolRisk } from '../../guardrails/approvals.js';
import type { ChunkWeight, PlanIndex } from '../model/dag.js';
import type { ChunkAttemptResult, ChunkToolCall, Executor } from './executor.js';
import type { GuardrailOptions } from '../../core/guardrails.js';
import type { LearningRecord } from '../learning/learning-record.js';
import type { ChunkRole, Plan, PlanChunk } from '../model/plan.js';
import type { RoleConfig, RoleOverrides } from '../model/roles.js';
import type { ChunkStatus } from './state.js';
import type { MessageLimits, MessageRecipient, PlanMessage } from '../live/messages.js';
import type { PlanControl } from '../live/control.js';
import type { PlanChangeRecord } from '../live/replan.js';

/** What a {@link ChunkRunner} receives for one attempt. */
export interface ChunkRunInput {
  planId: string;
  chunk: PlanChunk;
  /** The full prompt of the attempt. */
  prompt: string;
  /** The resolved role configuration. */
  role: RoleConfig;
  /** 1-based attempt number. */
  attempt: number;
  /** The workspace prepared for the chunk. */
  workspace: Workspace;
  /** Aborts on time-out, cancellation or the abort threshold (created on first use). */
  readonly signal: AbortSignal;
  /** The plan's run context with the attempt's signal: open ops and run agents in it so usage rolls up. */
  readonly ctx: RunContext;
  /**
   * Instructions the user added since this attempt's prompt was built and
   * that it has not taken yet (each is returned once, and a
   * `chunk.instruction` event says it reached the chunk). A running worker
   * takes them at its next turn: the default runner adds them to the next
   * tool results, or sends them after the worker's answer.
   */
  takeInstructions(): string[];
  /**
   * Messages other workers (or the application) posted to this chunk since
   * its prompt was built and that it has not taken yet, each returned once;
   * taken with the instructions, at the worker's next turn. Absent when the
   * runner got a hand-made input.
   */
  takeMessages?(): PlanMessage[];
  /** Post a message from this chunk to a chunk, a role or everyone in the plan (the default runner's `post_message` tool). */
  post?(to: MessageRecipient, text: string): PlanMessage;
}

/** Runs one attempt of a chunk. */
export type ChunkRunner = (input: ChunkRunInput) => Promise<string | ChunkAttemptResult>;

/**
 * How a plan retries a failed attempt of a chunk: the `retry` group every
 * retrying part of troupe takes (`maxRetries`: retries after the first
 * attempt, default 2; `delayMs`: the wait between attempts on the run's
 * clock, default 1000), and `reprompt`.
 */
export interface PlanRetryOptions extends RetryOptions {
  /** Tell the next attempt why the last one failed (its error, in the prompt). Default: true. */
  reprompt?: boolean;
}

/**
 * The budgets of a plan (see `Budget`): the whole plan's, each chunk's, and
 * those of single chunks or subtrees. Each execution has its own meters.
 */
export interface PlanBudgets {
  /**
   * The plan's (its op): when it runs out (or refuses a chunk's call), no
   * chunk starts any more; a running chunk whose call completed keeps its
   * answer and completes (calls in flight were admitted, so they are paid
   * for), the others are `cancelled`, and the plan ends with status
   * `budget-exhausted` (reason `budget`) and the results so far.
   */
  run?: Budget;
  /**
   * Each chunk's, shared by its attempts. A chunk that runs out fails
   * without a retry (its dependents are skipped, as for any failed chunk)
   * and keeps its last answer as `output`.
   */
  chunk?: Budget;
  /**
   * Budgets of single chunks, or of a chunk and every chunk that depends
   * on it (`subtree: true`, one budget they all spend from): when one runs
   * out, its chunks stop and fail while the rest of the plan goes on.
   */
  chunks?: ChunkBudget[];
}

/** Options of `planRunnable`. */
export interface PlanRunOptions {
  /** The adapter chunks use (a role's `adapter` wins). Default: the run's adapter. */
  adapter?: ModelAdapter;
  /** Chunks running at once (ignored when `executor` is given). Default: 5. */
  maxParallel?: number;
  /** Time limit of one attempt, on the run's clock. Default: 600000. */
  chunkTimeoutMs?: number;
  /** How a failed attempt is retried: `{ maxRetries, delayMs, reprompt }` (see {@link PlanRetryOptions}). */
  retry?: PlanRetryOptions;
  /** Stop when this many chunks have failed. Default: 3. */
  abortThreshold?: number;
  /** At the abort threshold: cancel running chunks, or let them finish. Default: `cancel-running`. */
  onAbortThreshold?: 'cancel-running' | 'finish-running';
  /** The workspace strategy. Default: `noWorkspace()`. */
  workspace?: WorkspaceStrategy;
  /** The directory workspaces are prepared from. Default: `process.cwd()`. */
  baseDir?: string;
  /** Overrides of the built-in role configurations (a role's `estimatedMs` is the default estimate of its chunks). */
  roles?: RoleOverrides;
  /** Where attempts run (at most its `maxParallel` at once). Default: `directExecutor({ maxParallel })`; pass a `sharedPool` executor to share a pool between plans by weight. */
  executor?: Executor;
  /** Run a chunk yourself instead of as an agent session built from its role. */
  runChunk?: ChunkRunner;
  /** Tools every chunk worker may call (the default runner; a role's `preferredTools` stay hints). */
  tools?: readonly ToolDefinition[];
  /**
   * Guardrails on every attempt of every chunk, whatever runs it (the
   * default role agent or `runChunk`): input guardrails on the attempt's
   * prompt, output guardrails on its answer, stream and tool guardrails on
   * everything it runs. A trip ends the whole run. Chunks sent to another
   * process by an executor are guarded by that worker's own runnables.
   */
  guardrails?: GuardrailOptions;
  /**
   * Ask this queue before every tool call of every chunk, whatever runs it
   * (the default role agent or `runChunk`, and everything they run): the
   * plan puts `approvals.guardrail({ risks: toolRisks })` on every attempt,
   * as `guardrails` are. Read-only tools are approved without asking.
   */
  approvals?: ApprovalQueue;
  /**
   * The risk level of each of `tools`, by name (see {@link ToolRisk}), for
   * `approvals`. Default: `writes`. A `dangerous` tool needs `approvals`.
   */
  toolRisks?: Record<string, ToolRisk>;
  /**
   * Estimated duration of a chunk, for the critical-path priority; when given it is the only estimate used.
   * Default: the chunk's `estimatedMs`, else its role's `estimatedMs`, else learned while the plan runs
   * from the chunks of the same role that finished (scaled by complexity).
   */
  weight?: ChunkWeight;
  /** The plan's id (events, workspaces, checkpoints). Default: `plan`. */
  planId?: string;
  /**
   * What to use from earlier runs (from `learnFromStats`): learned estimates
   * and models fill the roles that `roles` leaves open, and the record is
   * logged as a `plan.learning` event when the plan starts. Default: none
   * (nothing learned is used).
   */
  learning?: LearningRecord;
  /**
   * Give the workers of the default runner the `post_message` tool, so they
   * tell each other what they find (`true`, or the limits: the size of one
   * message and the number per plan, default 4000 characters and 100
   * messages, which also bound what `control.post` sends). Default: false.
   */
  workerMessages?: boolean | MessageLimits;
  /** Instructions added while the plan runs; read when each chunk starts. */
  instructions?: () => readonly string[];
  /**
   * Summarise the results with a synthesis session (`true`: the chunks'
   * adapter, with the Synthesis role's system prompt, model and
   * temperature, after `roles` overrides). Default: false.
   */
  aggregate?: boolean | ConversationSettings;
  /** The plan's budgets: `{ run, chunk, chunks }` (the plan's, each chunk's, per chunk or subtree; see {@link PlanBudgets}). Default: none. */
  budget?: PlanBudgets;
}

/** A budget of one chunk, or of a chunk and everything that depends on it: see {@link PlanBudgets.chunks}. */
export interface ChunkBudget extends Budget {
  /** The chunk's `sequenceIndex`. */
  chunk: number;
  /** Also cover every chunk that depends on it, directly or not (one budget for them all). Default: false. */
  subtree?: boolean;
}

/** The settings of a planner's or an aggregator's session; each falls back on its role (Planning, Synthesis). */
export interface ConversationSettings {
  /** The adapter. Default: the plan's (or the session's). */
  adapter?: ModelAdapter;
  /** The system prompt. Default: the role's. */
  system?: string;
  /** The model. Default: the role's, else the adapter's. */
  model?: string;
  /** The sampling temperature. Default: the role's. */
  temperature?: number;
}

/** Options of `executePlan`: scheduling, plus how to run standalone or inside a context. */
export interface ExecutePlanOptions extends PlanRunOptions {
  /** Adapters by name, for roles that name one. */
  adapters?: Record<string, ModelAdapter>;
  /** Cancels the execution. */
  signal?: AbortSignal;
  /** The clock. Default: the real clock. */
  clock?: Clock;
  /** The task the plan serves (for aggregation). Default: the plan's summary. */
  task?: string;
  /** Receives every event. */
  onEvent?: (event: TroupeEvent) => void;
  /** Emit on this emitter. */
  emitter?: TroupeEmitter;
  /** Run inside this context (a nested plan) instead of starting a run. */
  ctx?: RunContext;
  /** Log the run to this store and checkpoint the plan after every chunk (see `run`); resume it with `resume(planRunnable(plan, options), runId, { store })`. */
  store?: Store;
  /** The run's id (with `store`, the id to resume). Default: a random UUID. */
  runId?: string;
  /**
   * Change the plan while it runs (add, cancel, split, rewire chunks), post
   * messages to its workers, or cancel it: see `PlanControl`. One control
   * per execution. (A plan run with `run(planRunnable(plan), input, {
   * control })` takes it from its run.)
   */
  control?: PlanControl;
}

/** What happened to one chunk. */
export interface ChunkResult {
  sequenceIndex: number;
  title: string;
  role: ChunkRole;
  status: ChunkStatus;
  attempts: number;
  output?: string;
  error?: string;
  /** The files the chunk changed (from its workspace's diff, or as its runner reported them). */
  files?: string[];
  /** Clock time from its first start to its end (0 when it never ran). */
  durationMs: number;
  /** The model usage of its attempts, when known (the default runner always reports it). */
  usage?: Usage;
  /** The tool calls of its attempts, in order, when known. */
  toolCalls?: ChunkToolCall[];
  /** Merges of its work that conflicted with another chunk's, in order; the last one `resolved` when a later attempt merged. */
  mergeConflicts?: MergeConflict[];
}

/** A chunk's work could not be merged: its change and another chunk's change touch the same lines. */
export interface MergeConflict {
  /** The attempt whose merge conflicted. */
  attempt: number;
  /** The conflicting paths. */
  paths: string[];
  /** The chunks whose merged changes it conflicted with (those that changed the paths before), with their change of each path. */
  with: Array<{ sequenceIndex: number; title: string; paths: string[]; patch?: string }>;
  /** True once a later attempt of the chunk merged cleanly. */
  resolved: boolean;
}

/** Numbers of a plan's execution: chunks by how they ended. */
export interface PlanStats {
  total: number;
  completed: number;
  failed: number;
  /** Chunks that needed more than one attempt. */
  retried: number;
  skipped: number;
  cancelled: number;
  durationMs: number;
  usage: Usage;
}

/** The aggregator's report. */
export interface AggregateReport {
  /** The conversational summary. */
  summary: string;
  stats: PlanStats;
  /** Files that more than one chunk touched, with the chunks that touched them. */
  conflicts: Array<{ file: string; chunks: number[] }>;
  /** Merges that conflicted, by chunk: the paths, the other chunks, and whether a later attempt resolved it. */
  mergeConflicts: Array<{ chunk: number; attempt: number; paths: string[]; with: number[]; resolved: boolean }>;
}

/** The outcome of a plan. */
export interface PlanOutcome extends Outcome {
  plan: Plan;
  results: ChunkResult[];
  stats: PlanStats;
  /** The synthesis, when `aggregate` was asked for. */
  report?: AggregateReport;
  /** Instructions added while the plan ran (recorded with the run). */
  instructions: string[];
  /**
   * Why it stopped early, if it did: `abort-threshold` (status `failed`:
   * too many chunks failed) or `budget` (status `budget-exhausted`).
   */
  reason?: 'abort-threshold' | 'budget';
  /** The changes applied while it ran, in order (`plan` is the changed plan; removed chunks have no result). */
  changes?: PlanChangeRecord[];
  /** The messages its workers posted. */
  messages?: PlanMessage[];
}

/** The options of a plan execution after validation, with the plan's index. */
export interface PlanSettings {
  index: PlanIndex;
  maxParallel: number;
  chunkTimeoutMs: number;
  maxRetries: number;
  delayMs: number;
  reprompt: boolean;
  abortThreshold: number;
}

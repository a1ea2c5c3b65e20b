/**
 * `executePlan`: run a validated plan as a dependency graph. A ready queue
 * starts each chunk as soon as its dependencies have succeeded and a slot is
 * free, highest remaining critical path first (never stage by stage), with
 * retries, per-attempt time-outs, skipped dependents, an abort threshold, a
 * workspace per chunk, one `chunk.status` event per transition and a
 * checkpoint after every chunk that finishes.
 * @module
 */
import { z } from 'zod';
import type { ModelAdapter } from '../core/adapter.js';
import type { Clock } from '../core/clock.js';
import type { RunContext, TroupeEmitter } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { expectNonNegativeInteger, expectPositiveInteger, expectPositiveNumber } from '../core/options.js';
import type { TroupeEvent } from '../core/events.js';
import { run } from '../core/run.js';
import type { ToolDefinition } from '../core/tools.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { agent } from '../patterns/agent.js';
import type { Workspace, WorkspaceStrategy } from '../workspaces/types.js';
import type { AggregateReport, PlanStats } from './aggregate.js';
import { ApprovalQueue } from './approvals.js';
import { indexPlan, type ChunkWeight, type PlanIndex } from './dag.js';
import type { ChunkAttemptResult, Executor } from './executor.js';
import { planSchema, validatePlan, type ChunkRole, type Plan, type PlanChunk } from './plan.js';
import type { RoleConfig, RoleOverrides } from './roles.js';
import { schedule } from './schedule.js';
import { restoreCheckpoint, savedOutcomeSchema } from '../persistence/op-checkpoint.js';
import type { Store } from '../persistence/store.js';
import { chunkStatuses, planExecutionStateSchema, type ChunkStatus, type PlanExecutionState } from './state.js';

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
}

/** Runs one attempt of a chunk. */
export type ChunkRunner = (input: ChunkRunInput) => Promise<string | ChunkAttemptResult>;

/** Retry settings of {@link executePlan}. */
export interface RetryOptions {
  /** Retries after the first attempt. Default: 2. */
  maxRetriesPerChunk?: number;
  /** Wait between attempts, on the run's clock. Default: 1000. */
  retryDelayMs?: number;
  /** Add the previous attempt's error to the prompt. Default: true. */
  repromptOnRetry?: boolean;
}

/** Options of {@link planRunnable}. */
export interface PlanRunOptions {
  /** The adapter chunks use (a role's `adapter` wins). Default: the run's adapter. */
  adapter?: ModelAdapter;
  /** Chunks running at once (ignored when `executor` is given). Default: 5. */
  maxParallel?: number;
  /** Time limit of one attempt, on the run's clock. Default: 600000. */
  chunkTimeoutMs?: number;
  /** Retries. */
  retry?: RetryOptions;
  /** Stop when this many chunks have failed. Default: 3. */
  abortThreshold?: number;
  /** At the abort threshold: cancel running chunks, or let them finish. Default: `cancel-running`. */
  onAbortThreshold?: 'cancel-running' | 'finish-running';
  /** The workspace strategy. Default: {@link noWorkspace}. */
  workspace?: WorkspaceStrategy;
  /** The directory workspaces are prepared from. Default: `process.cwd()`. */
  baseDir?: string;
  /** Overrides of the built-in role configurations. */
  roles?: RoleOverrides;
  /** Where attempts run. Default: `directExecutor({ maxParallel })`; pass an `inProcessExecutor` to share a pool between plans. */
  executor?: Executor;
  /** Run a chunk yourself instead of as an agent session built from its role. */
  runChunk?: ChunkRunner;
  /** Tools every chunk worker may call (the default runner; a role's `preferredTools` stay hints). */
  tools?: readonly ToolDefinition[];
  /** Ask this queue before every call of `tools` (see {@link ApprovalQueue.guard}). */
  approvals?: ApprovalQueue;
  /** Estimated duration of a chunk, for the critical-path priority. Default: by complexity. */
  weight?: ChunkWeight;
  /** The plan's id (events, workspaces, checkpoints). Default: `plan`. */
  planId?: string;
  /** Instructions added while the plan runs; read when each chunk starts. */
  instructions?: () => readonly string[];
  /** Summarise the results with a synthesis session (`true`: the chunks' adapter). Default: false. */
  aggregate?: boolean | { adapter?: ModelAdapter; system?: string };
  /** Called (and awaited) with the state after every chunk that reaches a terminal status. */
  onCheckpoint?: (state: PlanExecutionState, options: { signal: AbortSignal }) => void | Promise<void>;
  /** Continue a saved execution: chunks that succeeded there are not run again. */
  resumeFrom?: PlanExecutionState;
}

/** Options of {@link executePlan}: scheduling, plus how to run standalone or inside a context. */
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
  files?: string[];
  /** Clock time from its first start to its end (0 when it never ran). */
  durationMs: number;
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
  /** Why it stopped early, if it did. */
  stoppedBy?: 'abort-threshold';
}

/** The saved outcome of a finished plan, checked when a resumed run returns it. */
const planOutcomeSchema = savedOutcomeSchema.extend({
  plan: planSchema,
  results: z.array(z.looseObject({ sequenceIndex: z.number().int(), title: z.string(), role: z.string(), status: z.enum(chunkStatuses), attempts: z.number().int(), durationMs: z.number() })),
  stats: z.looseObject({ succeeded: z.number(), failed: z.number(), skipped: z.number() }),
  instructions: z.array(z.string()),
});

/**
 * A plan as a {@link Runnable} (kind `plan`), so plans nest in other
 * patterns; the input is the task the plan serves.
 */
export function planRunnable(plan: Plan, options: PlanRunOptions = {}): Runnable<PlanOutcome> {
  const settings = validateOptions(plan, options);
  const planId = options.planId ?? options.resumeFrom?.planId ?? 'plan';
  return {
    name: planId,
    kind: 'plan',
    run: (input, parent) =>
      parent.enter<PlanOutcome>({ kind: 'plan', name: planId }, async (ctx) => {
        // In a resumed run, the run's own checkpoint: a finished plan returns its outcome, chunks that succeeded keep their results.
        const saved = await restoreCheckpoint<typeof planExecutionStateSchema, PlanOutcome>(ctx, 'plan', planExecutionStateSchema, planOutcomeSchema);
        if (saved?.outcome) return saved.outcome;
        const resumeFrom = saved?.state ?? options.resumeFrom;
        return schedule(plan, input, ctx, { ...options, ...settings, planId, runner: options.runChunk ?? roleRunner(options.adapter, workerTools(options)), ...(resumeFrom ? { resumeFrom } : {}) });
      }),
  };
}

/**
 * Execute a plan: standalone (it starts a run) or inside `options.ctx`.
 *
 * @example
 * ```ts
 * const outcome = await executePlan(plan, { adapter, maxParallel: 4, retry: { maxRetriesPerChunk: 1 } });
 * for (const r of outcome.results) console.log(r.sequenceIndex, r.status);
 * ```
 */
export function executePlan(plan: Plan, options: ExecutePlanOptions = {}): Promise<PlanOutcome> {
  const { adapters, signal, clock, task, onEvent, emitter, ctx, store, runId, ...rest } = options;
  let runnable: Runnable<PlanOutcome>;
  try {
    runnable = planRunnable(plan, rest);
  } catch (error) {
    return Promise.reject(error);
  }
  const input = task ?? plan.planSummary;
  if (ctx) return runnable.run(input, ctx);
  return run(runnable, input, {
    ...(rest.adapter === undefined ? {} : { adapter: rest.adapter }),
    ...(adapters === undefined ? {} : { adapters }),
    ...(signal === undefined ? {} : { signal }),
    ...(clock === undefined ? {} : { clock }),
    ...(onEvent === undefined ? {} : { onEvent }),
    ...(emitter === undefined ? {} : { emitter }),
    ...(store === undefined ? {} : { store }),
    ...(runId === undefined ? {} : { runId }),
  });
}

/** Validated options and the plan's index. */
export interface Settings {
  index: PlanIndex;
  capacity: number;
  chunkTimeoutMs: number;
  maxRetries: number;
  retryDelayMs: number;
  reprompt: boolean;
  abortThreshold: number;
}

function validateOptions(plan: Plan, o: PlanRunOptions): Settings {
  const index = plan && Array.isArray(plan.chunks) ? indexPlan(plan) : undefined;
  if (!index?.ok) {
    const checked = index ? validatePlan(plan) : { errors: ['expected a plan with a `chunks` array'] };
    throw new ConfigurationError(`Invalid plan: ${checked.errors.join('; ')}`, { code: 'invalid_graph', details: { errors: checked.errors } });
  }
  if (o.tools !== undefined && !(Array.isArray(o.tools) && o.tools.every((t) => typeof t?.name === 'string' && typeof t.execute === 'function'))) {
    throw new ConfigurationError(`Expected \`tools\` to be an array of tool definitions, got ${describeValue(o.tools)}`);
  }
  if (o.approvals !== undefined && !(o.approvals instanceof ApprovalQueue)) {
    throw new ConfigurationError(`Expected \`approvals\` to be an ApprovalQueue, got ${describeValue(o.approvals)}`);
  }
  if (o.resumeFrom !== undefined && !planExecutionStateSchema.safeParse(o.resumeFrom).success) {
    throw new ConfigurationError('Expected `resumeFrom` to be a plan execution state (schemaVersion 1)');
  }
  return {
    index,
    capacity: o.executor ? o.executor.capacity : (expectPositiveInteger('maxParallel', o.maxParallel) ?? 5),
    chunkTimeoutMs: expectPositiveNumber('chunkTimeoutMs', o.chunkTimeoutMs) ?? 600_000,
    maxRetries: expectNonNegativeInteger('retry.maxRetriesPerChunk', o.retry?.maxRetriesPerChunk) ?? 2,
    retryDelayMs: expectNonNegativeInteger('retry.retryDelayMs', o.retry?.retryDelayMs) ?? 1000,
    reprompt: o.retry?.repromptOnRetry ?? true,
    abortThreshold: expectPositiveInteger('abortThreshold', o.abortThreshold) ?? 3,
  };
}

/** The tools of chunk workers, guarded by the approval queue when there is one. */
function workerTools(o: PlanRunOptions): ToolDefinition[] {
  const tools = [...(o.tools ?? [])];
  return o.approvals ? tools.map((t) => o.approvals!.guard(t)) : tools;
}

/** Run a chunk as an agent session built from its role. */
function roleRunner(fallback: ModelAdapter | undefined, tools: ToolDefinition[]): ChunkRunner {
  return async (input) => {
    const { role, chunk } = input;
    const adapter = role.adapter ?? fallback;
    const worker = agent({
      name: chunk.role,
      system: role.system,
      workspace: input.workspace.path,
      metadata: { planId: input.planId, chunk: chunk.sequenceIndex, attempt: input.attempt, preferredTools: role.preferredTools },
      ...(role.model === undefined ? {} : { model: role.model }),
      ...(role.temperature === undefined ? {} : { temperature: role.temperature }),
      ...(adapter === undefined ? {} : { adapter }),
      ...(tools.length === 0 ? {} : { tools }),
    });
    const out = await worker.run(input.prompt, input.ctx);
    return { output: out.output };
  };
}

/** The results as markdown, one section per chunk (the output when nothing aggregates them). */
export function renderResults(results: readonly ChunkResult[]): string {
  return results
    .map((r) => `## ${r.sequenceIndex}. ${r.title} (${r.role}): ${r.status}\n\n${r.output ?? r.error ?? ''}`.trimEnd())
    .join('\n\n');
}

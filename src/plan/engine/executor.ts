/**
 * The executor: where chunks actually run. The scheduler decides what runs
 * next; an {@link Executor} runs it. In process there are two: the default
 * {@link directExecutor} (the scheduler's own slot count is the limit) and
 * {@link inProcessExecutor} (a p-limit pool that several plans can share). A
 * queue-backed executor can replace them without touching scheduling.
 * @module
 */
import pLimit from 'p-limit';
import type { BudgetLimits } from '../../core/budget.js';
import type { Usage } from '../../core/usage.js';
import type { RunContext } from '../../core/context.js';
import { check, defineOptions, positiveInteger, type OptionCheck } from '../../core/options.js';
import type { PlanChunk } from '../model/plan.js';
import type { RoleConfig } from '../model/roles.js';

/** What a chunk attempt produced. */
export interface ChunkAttemptResult {
  /** The worker's answer. */
  output: string;
  /** Files the worker touched, when known (a workspace strategy's diff adds to them). */
  files?: string[];
  /** The attempt's model usage, when known. */
  usage?: Usage;
  /** The attempt's tool calls, when known. */
  toolCalls?: ChunkToolCall[];
  /**
   * The executor already recorded this result in the plan's checkpoint
   * (a worker called `recordChunkResult`), so the scheduler does not write
   * it again.
   */
  recorded?: boolean;
}

/** One tool call a chunk's worker made. */
export interface ChunkToolCall {
  /** The tool's name. */
  name: string;
  /** The arguments, as the model gave them. */
  arguments?: unknown;
  /** True when the call failed or was refused (its result was an error). */
  isError?: boolean;
}

/**
 * The serialisable part of a {@link ChunkJob}: plain JSON data, what a
 * queue-backed executor sends to a worker (`JSON.stringify(job)` gives
 * exactly this). A worker resolves the role to an agent from its own
 * registry, and reports the attempt's result (or error) back.
 */
export interface ChunkJobData {
  /** The run the plan belongs to. */
  runId: string;
  /** The plan's id. */
  planId: string;
  /** The chunk, as in the plan. */
  chunk: PlanChunk;
  /** The full prompt of this attempt (dependency results, instructions, previous error included). */
  prompt: string;
  /** The resolved role configuration; an adapter given as an object stays behind (only a registered name travels). */
  role: Omit<RoleConfig, 'adapter'> & { adapter?: string };
  /** 1-based attempt number. */
  attempt: number;
  /**
   * The plan's checkpoint path in the run: with `runId`, where a worker
   * records the attempt's result (`recordChunkResult`) so that a resumed
   * run counts the chunk as done.
   */
  checkpointPath: string;
  /**
   * What is left of every budget the attempt spends from (the plan's, its
   * chunk's and subtree's, and every enclosing one), the tightest of each
   * limit, when any applies. A worker runs the attempt under it
   * (`run(..., { budget })`) and reports the usage back; the executor
   * records it in the attempt's context (`job.ctx.recordUsage`), so it
   * counts once toward every budget of the run.
   */
  budget?: BudgetLimits;
  /**
   * The agent to run, by name, when the job is not a plan's chunk but a
   * turn of a named agent (a `coordinate` worker's task). A worker runs the
   * agent of its registry with that name, else one built from `role` under
   * that name; it records nothing in the plan's checkpoint.
   */
  agent?: string;
}

/**
 * One attempt of one chunk, handed to an {@link Executor}; its result is the
 * output text or a {@link ChunkAttemptResult}. The data fields are
 * serialisable ({@link ChunkJobData}); `signal` and `execute` are what an
 * in-process executor uses instead of sending them, and `ctx` is where a
 * remote executor reports what happened on the worker.
 */
export interface ChunkJob {
  /** The run the plan belongs to. */
  readonly runId: string;
  /** The plan's id. */
  readonly planId: string;
  /** The chunk (serialisable). */
  readonly chunk: PlanChunk;
  /** The full prompt of this attempt (dependency results, instructions, previous error included; built on first read). */
  readonly prompt: string;
  /** The resolved role configuration. */
  readonly role: RoleConfig;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Aborts on time-out, cancellation or the abort threshold (created on first use). */
  readonly signal: AbortSignal;
  /**
   * The attempt's context (created on first use): the plan's op, the run's
   * emitter, clock and store, and the chunk's checkpoint path
   * (`<plan path>/chunk-<n>`). A remote executor emits the worker's events
   * and adds the worker's ops here, so the run looks as if the attempt ran in
   * this process.
   */
  readonly ctx: RunContext;
  /** Run the attempt in this process (a remote executor sends {@link ChunkJob.toJSON} instead). */
  execute(): Promise<string | ChunkAttemptResult>;
  /**
   * Record usage of model calls the attempt made elsewhere (a remote
   * worker's turns, as it reported them) in the attempt's op context, once:
   * it rolls up into the op tree and counts toward every budget of the run
   * (the chunk's, its subtree's, the plan's, the run's).
   */
  recordUsage(usage: Partial<Usage>): void;
  /** The job's data, for sending to another process. */
  toJSON(): ChunkJobData;
}

/** Runs chunk attempts; the scheduler never dispatches more than `maxParallel` at once. */
export interface Executor {
  /** A short name (`in-process`, `bullmq`, ...). */
  readonly kind: string;
  /** The most attempts it runs at the same time. */
  readonly maxParallel: number;
  /**
   * Run one attempt and report its result, or reject with its error. When
   * `job.signal` aborts (time-out, cancellation) the scheduler stops waiting for
   * the attempt; the executor should stop it.
   */
  dispatch(job: ChunkJob): Promise<string | ChunkAttemptResult>;
}

/** Options of {@link inProcessExecutor} and {@link directExecutor}. */
export interface InProcessExecutorOptions {
  /** The most attempts running at once. Default: 5. */
  maxParallel?: number;
}

/** The check of an option that takes an {@link Executor} (a plan's `executor`, a shared pool's). */
export const executorCheck: OptionCheck = check('an Executor (a positive integer `maxParallel` and `dispatch`)', (v) => {
  const e = v as Partial<Executor> | null;
  return typeof e === 'object' && e !== null && typeof e.dispatch === 'function' && Number.isInteger(e.maxParallel) && e.maxParallel! > 0;
});

/** The description both in-process executors check their options against. */
const executorOptions = defineOptions<InProcessExecutorOptions>('inProcessExecutor', { maxParallel: positiveInteger });

/**
 * An in-process pool: runs attempts in this process, at most `maxParallel`
 * at once (p-limit), also when several plans share it.
 *
 * @example
 * ```ts
 * const pool = inProcessExecutor({ maxParallel: 8 }); // two plans, eight slots in all
 * await Promise.all([executePlan(a, { adapter, executor: pool }), executePlan(b, { adapter, executor: pool })]);
 * ```
 */
export function inProcessExecutor(options: InProcessExecutorOptions = {}): Executor {
  const maxParallel = executorOptions.check(options).maxParallel ?? 5;
  const limit = pLimit(maxParallel);
  return {
    kind: 'in-process',
    maxParallel,
    dispatch(job) {
      return limit(() => job.execute());
    },
  };
}

/**
 * The default executor of a plan: runs each attempt in this process as soon
 * as the scheduler dispatches it. The scheduler never dispatches more than
 * `maxParallel` at once, so no second queue is needed; use
 * {@link inProcessExecutor} to share one pool between several plans.
 */
export function directExecutor(options: InProcessExecutorOptions = {}): Executor {
  const maxParallel = executorOptions.check(options, '', 'directExecutor').maxParallel ?? 5;
  return { kind: 'direct', maxParallel, dispatch: (job) => job.execute() };
}

/**
 * `executePlan`: run a validated plan as a dependency graph. A ready queue
 * starts each chunk as soon as its dependencies have succeeded and a slot is
 * free, highest remaining critical path first (never stage by stage), with
 * retries, per-attempt time-outs, skipped dependents, an abort threshold, a
 * workspace per chunk, one `chunk.status` event per transition and a
 * checkpoint after every chunk that finishes.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { abortError, type Clock } from '../core/clock.js';
import type { RunContext, TroupeEmitter } from '../core/context.js';
import { CancelledError, ConfigurationError, TimeoutError, WorkspaceError, describeValue, errorMessage } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { totalUsage } from '../core/ops.js';
import { run } from '../core/run.js';
import type { Outcome, OutcomeStatus, Runnable } from '../core/runnable.js';
import type { Usage } from '../core/usage.js';
import { agent } from '../patterns/agent.js';
import { noWorkspace, type Workspace, type WorkspaceStrategy } from '../workspaces/types.js';
import { aggregate, countResults, type AggregateReport, type PlanStats } from './aggregate.js';
import { complexityWeight, remainingCriticalPaths, type ChunkWeight } from './dag.js';
import { inProcessExecutor, type ChunkAttemptResult, type ChunkJob, type Executor } from './executor.js';
import { validatePlan, type ChunkRole, type Plan, type PlanChunk } from './plan.js';
import { ReadyQueue } from './ready-queue.js';
import { resolveRole, type RoleConfig, type RoleOverrides } from './roles.js';
import { planExecutionStateSchema, type ChunkStatus, type PlanExecutionState } from './state.js';

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
  /** Aborts on time-out, cancellation or the abort threshold. */
  signal: AbortSignal;
}

/** Runs one attempt of a chunk in `ctx` (the chunk's op context; its signal is the attempt's). */
export type ChunkRunner = (input: ChunkRunInput, ctx: RunContext) => Promise<string | ChunkAttemptResult>;

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
  /** Where attempts run. Default: `inProcessExecutor({ maxParallel })`. */
  executor?: Executor;
  /** Run a chunk yourself instead of as an agent session built from its role. */
  runChunk?: ChunkRunner;
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
  /** The final state (what a checkpoint holds). */
  state: PlanExecutionState;
  /** Why it stopped early, if it did. */
  stoppedBy?: 'abort-threshold';
}

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
      parent.enter<PlanOutcome>({ kind: 'plan', name: planId }, (ctx) => schedule(plan, input, ctx, { ...options, ...settings, planId })),
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
  const { adapters, signal, clock, task, onEvent, emitter, ctx, ...rest } = options;
  const runnable = planRunnable(plan, rest);
  const input = task ?? plan.planSummary;
  if (ctx) return runnable.run(input, ctx);
  return run(runnable, input, {
    ...(rest.adapter === undefined ? {} : { adapter: rest.adapter }),
    ...(adapters === undefined ? {} : { adapters }),
    ...(signal === undefined ? {} : { signal }),
    ...(clock === undefined ? {} : { clock }),
    ...(onEvent === undefined ? {} : { onEvent }),
    ...(emitter === undefined ? {} : { emitter }),
  });
}

interface Settings {
  capacity: number;
  chunkTimeoutMs: number;
  maxRetries: number;
  retryDelayMs: number;
  reprompt: boolean;
  abortThreshold: number;
}

function validateOptions(plan: Plan, o: PlanRunOptions): Settings {
  const checked = validatePlan(plan);
  if (!checked.valid) {
    throw new ConfigurationError(`Invalid plan: ${checked.errors.join('; ')}`, { code: 'invalid_graph', details: { errors: checked.errors } });
  }
  const int = (name: string, value: unknown, min: number): number => {
    if (!Number.isInteger(value) || (value as number) < min) {
      throw new ConfigurationError(`Expected \`${name}\` to be ${min > 0 ? 'a positive' : 'a non-negative'} integer, got ${describeValue(value)}`);
    }
    return value as number;
  };
  const num = (name: string, value: unknown): number => {
    if (typeof value !== 'number' || !(value > 0)) throw new ConfigurationError(`Expected \`${name}\` to be a positive number, got ${describeValue(value)}`);
    return value;
  };
  if (o.resumeFrom !== undefined && !planExecutionStateSchema.safeParse(o.resumeFrom).success) {
    throw new ConfigurationError('Expected `resumeFrom` to be a plan execution state (schemaVersion 1)');
  }
  return {
    capacity: o.executor ? o.executor.capacity : int('maxParallel', o.maxParallel ?? 5, 1),
    chunkTimeoutMs: num('chunkTimeoutMs', o.chunkTimeoutMs ?? 600_000),
    maxRetries: int('retry.maxRetriesPerChunk', o.retry?.maxRetriesPerChunk ?? 2, 0),
    retryDelayMs: int('retry.retryDelayMs', o.retry?.retryDelayMs ?? 1000, 0),
    reprompt: o.retry?.repromptOnRetry ?? true,
    abortThreshold: int('abortThreshold', o.abortThreshold ?? 3, 1),
  };
}

/** Run a chunk as an agent session built from its role. */
function roleRunner(fallback: ModelAdapter | undefined): ChunkRunner {
  return async (input, ctx) => {
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
    });
    const out = await worker.run(input.prompt, ctx);
    return { output: out.output };
  };
}

type Full = PlanRunOptions & Settings & { planId: string };

async function schedule(plan: Plan, task: string, ctx: RunContext, o: Full): Promise<Omit<PlanOutcome, 'usage'>> {
  const chunks = plan.chunks;
  const n = chunks.length;
  const clock = ctx.clock;
  const strategy = o.workspace ?? noWorkspace();
  const baseDir = o.baseDir ?? process.cwd();
  const executor = o.executor ?? inProcessExecutor({ maxParallel: o.capacity });
  const runner = o.runChunk ?? roleRunner(o.adapter);
  const roles = new Map<ChunkRole, RoleConfig>();
  const roleOf = (c: PlanChunk): RoleConfig => roles.get(c.role) ?? roles.set(c.role, resolveRole(c.role, o.roles)).get(c.role)!;

  const status: ChunkStatus[] = new Array<ChunkStatus>(n).fill('Pending');
  const attempts = new Int32Array(n);
  const outputs: Array<string | undefined> = new Array<string | undefined>(n);
  const errors: Array<string | undefined> = new Array<string | undefined>(n);
  const files: Array<string[] | undefined> = new Array<string[] | undefined>(n);
  const started = new Float64Array(n).fill(-1);
  const ended = new Float64Array(n).fill(-1);
  const position = new Map<number, number>();
  chunks.forEach((c, i) => position.set(c.sequenceIndex, i));
  const deps: number[][] = chunks.map((c) => c.dependsOnIndexes.map((d) => position.get(d)!));
  const dependents: number[][] = Array.from({ length: n }, () => []);
  const unmet = new Int32Array(n);
  const queue = new ReadyQueue(remainingCriticalPaths(plan, o.weight ?? complexityWeight));
  const baseInstructions = o.resumeFrom?.instructions ?? [];
  const instructions = (): readonly string[] => {
    const live = o.instructions?.() ?? [];
    return baseInstructions.length === 0 ? live : [...baseInstructions, ...live];
  };

  const emitter = ctx.emitter;
  const listening = () => emitter.listenerCount('chunk.status') > 0 || emitter.listenerCount('*') > 0;
  const setStatus = (i: number, next: ChunkStatus): void => {
    const previous = status[i]!;
    status[i] = next;
    if (!listening()) return;
    const c = chunks[i]!;
    const error = errors[i];
    ctx.emit('chunk.status', {
      planId: o.planId,
      chunkId: String(c.sequenceIndex),
      sequenceIndex: c.sequenceIndex,
      title: c.title,
      role: c.role,
      attempt: attempts[i]!,
      status: next,
      previous,
      ...(error !== undefined && (next === 'Failed' || next === 'Retrying' || next === 'Skipped' || next === 'Aborted') ? { error } : {}),
    });
  };

  // Resume: chunks that succeeded keep their results.
  if (o.resumeFrom) {
    for (const saved of o.resumeFrom.chunks) {
      const i = position.get(saved.sequenceIndex);
      if (i === undefined || saved.status !== 'Succeeded') continue;
      status[i] = 'Succeeded';
      attempts[i] = saved.attempts;
      outputs[i] = saved.output ?? '';
      if (saved.files) files[i] = saved.files;
    }
  }
  for (let i = 0; i < n; i++) {
    for (const d of deps[i]!) {
      dependents[d]!.push(i);
      if (status[d] !== 'Succeeded') unmet[i]!++;
    }
  }

  const snapshot = (): PlanExecutionState => ({
    schemaVersion: 1,
    planId: o.planId,
    plan,
    chunks: chunks.map((c, i) => ({
      sequenceIndex: c.sequenceIndex,
      status: status[i]!,
      attempts: attempts[i]!,
      ...(outputs[i] === undefined ? {} : { output: outputs[i] }),
      ...(errors[i] === undefined ? {} : { error: errors[i] }),
      ...(files[i] === undefined ? {} : { files: [...files[i]!] }),
    })),
    instructions: [...instructions()],
    updatedAt: clock.now(),
  });

  let running = 0;
  let retrying = 0;
  let checkpointing = 0;
  let failures = 0;
  let stopping: 'abort-threshold' | 'cancelled' | undefined;
  let finished = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  // Running attempts: their controllers, and whether the scheduler still waits for them.
  const controllers: Array<AbortController | undefined> = new Array<AbortController | undefined>(n);
  const live = new Uint8Array(n);
  const retryTimers = new Map<number, () => void>();
  const noWorkspaceAt = o.workspace === undefined;

  // Per-attempt time-outs: every attempt has the same limit, so deadlines come
  // in start order; one clock timer watches the earliest (no timer per chunk).
  const deadlines: Array<{ i: number; attempt: number; at: number }> = [];
  let head = 0;
  let cancelTimer: (() => void) | undefined;
  const arm = (): void => {
    if (cancelTimer || head >= deadlines.length) return;
    cancelTimer = clock.setTimer(onDeadline, deadlines[head]!.at - clock.now());
  };
  const onDeadline = (): void => {
    cancelTimer = undefined;
    const now = clock.now();
    while (head < deadlines.length) {
      const d = deadlines[head]!;
      const current = live[d.i] === 1 && attempts[d.i] === d.attempt;
      if (current && d.at > now) break;
      head++;
      if (current) {
        const c = chunks[d.i]!;
        abandon(d.i, new TimeoutError(`Chunk ${c.sequenceIndex} ("${c.title}") timed out after ${o.chunkTimeoutMs} ms`, { details: { timeoutMs: o.chunkTimeoutMs } }));
      }
    }
    if (head > 1024 && head * 2 > deadlines.length) {
      deadlines.splice(0, head);
      head = 0;
    }
    arm();
  };

  const buildPrompt = (i: number): string => {
    const c = chunks[i]!;
    let prompt = `# Chunk ${c.sequenceIndex}: ${c.title}\n\n${c.prompt}`;
    if (deps[i]!.length > 0) {
      prompt += '\n\n## Results from dependencies';
      for (const d of deps[i]!) {
        const dc = chunks[d]!;
        prompt += `\n\n### ${dc.sequenceIndex}. ${dc.title} (${dc.role})\n\n${outputs[d] ?? ''}`;
      }
    }
    const extra = instructions();
    if (extra.length > 0) prompt += `\n\n## Additional instructions from the user\n\n${extra.map((x) => `- ${x}`).join('\n')}`;
    if (attempts[i]! > 1 && o.reprompt && errors[i] !== undefined) {
      prompt += `\n\n## Previous attempt failed\n\nAttempt ${attempts[i]! - 1} failed with this error:\n${errors[i]}\nAvoid the cause of this failure.`;
    }
    return prompt;
  };

  const execute = (i: number, prompt: string, role: RoleConfig, number: number, signal: AbortSignal): Promise<ChunkAttemptResult> => {
    const c = chunks[i]!;
    const child = ctx.withSignal(signal);
    const runWith = async (workspace: Workspace): Promise<ChunkAttemptResult> => {
      const out = await runner({ planId: o.planId, chunk: c, prompt, role, attempt: number, workspace, signal }, child);
      return typeof out === 'string' ? { output: out } : out;
    };
    if (noWorkspaceAt) return runWith({ kind: 'none', path: baseDir, chunkId: String(c.sequenceIndex), baseDir });
    return (async () => {
      const scope = { id: String(c.sequenceIndex), planId: o.planId, title: c.title, ...(c.workingScope ? { workingScope: c.workingScope } : {}) };
      const workspace = await strategy.prepare(scope, baseDir, signal);
      try {
        const result = await runWith(workspace);
        const merged = await strategy.merge(workspace, baseDir, signal);
        if (merged.status === 'conflict') {
          throw new WorkspaceError(`Merging chunk ${c.sequenceIndex} conflicted in ${merged.conflicts.join(', ')}`, { details: { conflicts: merged.conflicts } });
        }
        return result;
      } finally {
        await strategy.cleanup(workspace).catch((error: unknown) => ctx.emit('warning', { message: `Workspace cleanup failed: ${errorMessage(error)}`, code: 'workspace_error' }));
      }
    })();
  };

  const start = (i: number): void => {
    running++;
    const number = ++attempts[i]!;
    if (started[i]! < 0) started[i] = clock.now();
    setStatus(i, 'Running');
    const controller = new AbortController();
    controllers[i] = controller;
    live[i] = 1;
    deadlines.push({ i, attempt: number, at: clock.now() + o.chunkTimeoutMs });
    arm();
    const c = chunks[i]!;
    const role = roleOf(c);
    const prompt = buildPrompt(i);
    const job: ChunkJob = { planId: o.planId, chunk: c, prompt, role, attempt: number, execute: (signal) => execute(i, prompt, role, number, signal) };
    let dispatched: Promise<ChunkAttemptResult>;
    try {
      dispatched = executor.dispatch(job, controller.signal);
    } catch (error) {
      dispatched = Promise.reject(error);
    }
    dispatched.then(
      (result) => {
        if (live[i] === 1 && attempts[i] === number) succeeded(i, result);
      },
      (error: unknown) => {
        if (live[i] === 1 && attempts[i] === number) failed(i, error, false);
      },
    );
  };

  /** Stop waiting for a running attempt and abort its signal. */
  const abandon = (i: number, reason: Error): void => {
    if (live[i] !== 1) return;
    controllers[i]!.abort(reason);
    failed(i, reason, stopping !== undefined);
  };

  const pump = (): void => {
    while (stopping === undefined && running < o.capacity && queue.size > 0) start(queue.pop()!);
    if (!finished && running === 0 && retrying === 0 && checkpointing === 0 && (queue.size === 0 || stopping !== undefined)) {
      finished = true;
      resolveDone();
    }
  };

  const settle = (): void => {
    if (!o.onCheckpoint) return pump();
    checkpointing++;
    Promise.resolve()
      .then(() => o.onCheckpoint!(snapshot(), { signal: ctx.signal }))
      .catch((error: unknown) => ctx.emit('warning', { message: `onCheckpoint failed: ${errorMessage(error)}`, code: 'checkpoint_failed' }))
      .finally(() => {
        checkpointing--;
        pump();
      });
  };

  const terminal = (i: number, next: ChunkStatus): void => {
    ended[i] = clock.now();
    setStatus(i, next);
  };

  const release = (i: number): void => {
    live[i] = 0;
    controllers[i] = undefined;
    running--;
  };

  const succeeded = (i: number, result: ChunkAttemptResult): void => {
    release(i);
    outputs[i] = result.output;
    errors[i] = undefined;
    if (result.files) files[i] = result.files;
    terminal(i, 'Succeeded');
    for (const d of dependents[i]!) {
      if (--unmet[d]! === 0 && status[d] === 'WaitingForDependencies' && stopping === undefined) {
        setStatus(d, 'Queued');
        queue.push(d);
      }
    }
    settle();
  };

  const failed = (i: number, error: unknown, aborted: boolean): void => {
    release(i);
    errors[i] = errorMessage(error);
    if (aborted) {
      terminal(i, 'Aborted');
      return settle();
    }
    if (stopping === undefined && attempts[i]! <= o.maxRetries) {
      setStatus(i, 'Retrying');
      retrying++;
      const requeue = (): void => {
        retryTimers.delete(i);
        retrying--;
        if (stopping !== undefined) {
          terminal(i, 'Aborted');
          return settle();
        }
        setStatus(i, 'Queued');
        queue.push(i);
        pump();
      };
      if (o.retryDelayMs === 0) queueMicrotask(requeue);
      else {
        const cancel = clock.setTimer(requeue, o.retryDelayMs);
        retryTimers.set(i, () => {
          cancel();
          requeue();
        });
      }
      return pump();
    }
    terminal(i, 'Failed');
    failures++;
    skipDependents(i);
    if (failures >= o.abortThreshold) stop('abort-threshold');
    settle();
  };

  const skipDependents = (i: number): void => {
    const stack = [...dependents[i]!];
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (status[d] !== 'WaitingForDependencies' && status[d] !== 'Pending') continue;
      errors[d] = `Skipped: dependency ${chunks[i]!.sequenceIndex} ("${chunks[i]!.title}") failed`;
      terminal(d, 'Skipped');
      stack.push(...dependents[d]!);
    }
  };

  const stop = (why: 'abort-threshold' | 'cancelled'): void => {
    if (stopping !== undefined) return;
    stopping = why;
    queue.drain();
    for (let i = 0; i < n; i++) {
      const s = status[i]!;
      if (s === 'Queued' || s === 'WaitingForDependencies' || s === 'Pending') terminal(i, 'Aborted');
    }
    for (const cancelRetry of [...retryTimers.values()]) cancelRetry();
    if (why === 'cancelled' || o.onAbortThreshold !== 'finish-running') {
      const reason = why === 'cancelled' ? abortError(ctx.signal) : new CancelledError(`Plan stopped: ${failures} chunks failed (abortThreshold ${o.abortThreshold})`);
      for (let i = 0; i < n; i++) if (live[i] === 1) abandon(i, reason);
    }
  };

  const onAbort = (): void => {
    stop('cancelled');
    settle();
  };

  ctx.emit('plan.started', { planId: o.planId, chunks: n, resumed: o.resumeFrom !== undefined });
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (ctx.signal.aborted) onAbort();
    for (let i = 0; i < n; i++) {
      if (status[i] === 'Succeeded' || stopping !== undefined) continue;
      if (unmet[i] === 0) {
        setStatus(i, 'Queued');
        queue.push(i);
      } else setStatus(i, 'WaitingForDependencies');
    }
    pump();
    await done;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    cancelTimer?.();
  }
  if (stopping === 'cancelled') throw abortError(ctx.signal);

  const results: ChunkResult[] = chunks.map((c, i) => ({
    sequenceIndex: c.sequenceIndex,
    title: c.title,
    role: c.role,
    status: status[i]!,
    attempts: attempts[i]!,
    ...(outputs[i] === undefined ? {} : { output: outputs[i] }),
    ...(errors[i] === undefined ? {} : { error: errors[i] }),
    ...(files[i] === undefined ? {} : { files: files[i] }),
    durationMs: started[i]! < 0 || ended[i]! < 0 ? 0 : ended[i]! - started[i]!,
  }));
  const durationMs = clock.now() - ctx.op.start;
  const usageSoFar = (): Usage => totalUsage(ctx.op);
  let report: AggregateReport | undefined;
  if (o.aggregate) {
    const settings = o.aggregate === true ? {} : o.aggregate;
    const adapter = settings.adapter ?? o.adapter;
    report = await aggregate(plan, results, {
      ctx,
      task,
      durationMs,
      ...(adapter === undefined ? {} : { adapter }),
      ...(settings.system === undefined ? {} : { system: settings.system }),
    });
  }
  const stats = report?.stats ?? { ...countResults(results), durationMs, usage: usageSoFar() };
  const outcomeStatus: OutcomeStatus = stopping === 'abort-threshold' ? 'error-budget' : stats.succeeded === n ? 'completed' : 'failed';
  ctx.emit('plan.completed', { planId: o.planId, status: outcomeStatus, succeeded: stats.succeeded, failed: stats.failed, skipped: stats.skipped });
  return {
    output: report?.summary ?? renderResults(results),
    agent: report ? 'synthesis' : o.planId,
    status: outcomeStatus,
    plan,
    results,
    stats,
    state: snapshot(),
    ...(report ? { report } : {}),
    ...(stopping === 'abort-threshold' ? { stoppedBy: 'abort-threshold' as const } : {}),
  };
}

/** The results as markdown, one section per chunk (the output when nothing aggregates them). */
export function renderResults(results: readonly ChunkResult[]): string {
  return results
    .map((r) => `## ${r.sequenceIndex}. ${r.title} (${r.role}): ${r.status}\n\n${r.output ?? r.error ?? ''}`.trimEnd())
    .join('\n\n');
}

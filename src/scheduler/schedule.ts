/**
 * The scheduling loop behind `executePlan`: a ready queue ordered by
 * remaining critical path, a slot count, retries, one deadline timer for
 * every attempt's time-out, skipped dependents, the abort threshold, status
 * events and checkpoints. Everything is indexed by chunk position, so a
 * step costs O(log n) and no scan of the plan.
 * @module
 */
import { abortError } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { CancelledError, TimeoutError, WorkspaceError, errorMessage } from '../core/errors.js';
import { totalUsage } from '../core/ops.js';
import type { OutcomeStatus } from '../core/runnable.js';
import { noWorkspace } from '../workspaces/types.js';
import { aggregate, countResults, type AggregateReport } from './aggregate.js';
import { complexityWeight, remainingCriticalPaths } from './dag.js';
import { Attempt } from './attempt.js';
import { Deadlines } from './deadlines.js';
import type { ChunkResult, ChunkRunner, PlanOutcome, PlanRunOptions, Settings } from './execute.js';
import { directExecutor, type ChunkAttemptResult } from './executor.js';
import type { ChunkRole, Plan, PlanChunk } from './plan.js';
import { ReadyQueue } from './ready-queue.js';
import { resolveRole, type RoleConfig } from './roles.js';
import type { ChunkStatus, PlanExecutionState } from './state.js';
import { isFinished, saveStepCheckpoint } from '../persistence/op-checkpoint.js';

/** Everything the loop needs: validated options, the plan's index and the runner. */
export type ScheduleOptions = PlanRunOptions & Settings & { planId: string; runner: ChunkRunner };

/** Run the plan in `ctx` (the plan's op context). */
export async function schedule(plan: Plan, task: string, ctx: RunContext, o: ScheduleOptions): Promise<Omit<PlanOutcome, 'usage'>> {
  const chunks = plan.chunks;
  const n = chunks.length;
  const clock = ctx.clock;
  const strategy = o.workspace ?? noWorkspace();
  const baseDir = o.baseDir ?? process.cwd();
  const executor = o.executor ?? directExecutor({ maxParallel: o.capacity });
  const runner = o.runner;
  const roles = new Map<ChunkRole, RoleConfig>();
  const roleOf = (c: PlanChunk): RoleConfig => roles.get(c.role) ?? roles.set(c.role, resolveRole(c.role, o.roles)).get(c.role)!;

  const status: ChunkStatus[] = new Array<ChunkStatus>(n).fill('Pending');
  const attempts = new Int32Array(n);
  const outputs: Array<string | undefined> = new Array<string | undefined>(n);
  const errors: Array<string | undefined> = new Array<string | undefined>(n);
  const files: Array<string[] | undefined> = new Array<string[] | undefined>(n);
  const started = new Float64Array(n).fill(-1);
  const ended = new Float64Array(n).fill(-1);
  const { position, deps, dependents } = o.index;
  const unmet = new Int32Array(n);
  const queue = new ReadyQueue(remainingCriticalPaths(plan, o.weight ?? complexityWeight, o.index));
  const baseInstructions = o.resumeFrom?.instructions ?? [];
  const instructions = (): readonly string[] => {
    const live = o.instructions?.() ?? none;
    return baseInstructions.length === 0 ? live : [...baseInstructions, ...live];
  };

  const emitter = ctx.emitter;
  // Whether anyone listens, refreshed at every scheduling step: no event objects are built for nobody.
  const listening = (): boolean => emitter.listenerCount('chunk.status') > 0 || emitter.listenerCount('*') > 0;
  let listens = listening();
  const none: readonly string[] = [];
  const setStatus = (i: number, next: ChunkStatus): void => {
    const previous = status[i]!;
    status[i] = next;
    if (!listens) return;
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
      const i = position(saved.sequenceIndex);
      if (i === undefined || saved.status !== 'Succeeded') continue;
      status[i] = 'Succeeded';
      attempts[i] = saved.attempts;
      outputs[i] = saved.output ?? '';
      if (saved.files) files[i] = saved.files;
    }
  }
  for (let i = 0; i < n; i++) for (const d of deps[i]!) if (status[d] !== 'Succeeded') unmet[i]!++;

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
  const current: Array<Attempt | undefined> = new Array<Attempt | undefined>(n);
  const live = new Uint8Array(n);
  const retryTimers = new Map<number, () => void>();
  const noWorkspaceAt = o.workspace === undefined;

  const deadlines = new Deadlines(
    clock,
    (i, attempt) => live[i] === 1 && attempts[i] === attempt,
    (i) => {
      const c = chunks[i]!;
      abandon(i, new TimeoutError(`Chunk ${c.sequenceIndex} ("${c.title}") timed out after ${o.chunkTimeoutMs} ms`, { details: { timeoutMs: o.chunkTimeoutMs } }));
    },
  );

  const buildPrompt = (a: Attempt): string => {
    const c = a.chunk;
    const i = position(c.sequenceIndex)!;
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
    if (a.attempt > 1 && o.reprompt && a.previousError !== undefined) {
      prompt += `\n\n## Previous attempt failed\n\nAttempt ${a.attempt - 1} failed with this error:\n${a.previousError}\nAvoid the cause of this failure.`;
    }
    return prompt;
  };

  const inWorkspace = async (a: Attempt): Promise<ChunkAttemptResult> => {
    const c = a.chunk;
    const scope = { id: String(c.sequenceIndex), planId: o.planId, title: c.title, ...(c.workingScope ? { workingScope: c.workingScope } : {}) };
    const workspace = await strategy.prepare(scope, baseDir, a.signal);
    a.workspace = workspace;
    try {
      const result = normalise(await runner(a));
      const merged = await strategy.merge(workspace, baseDir, a.signal);
      if (merged.status === 'conflict') {
        throw new WorkspaceError(`Merging chunk ${c.sequenceIndex} conflicted in ${merged.conflicts.join(', ')}`, { details: { conflicts: merged.conflicts } });
      }
      return result;
    } finally {
      await strategy.cleanup(workspace).catch((error: unknown) => ctx.emit('warning', { message: `Workspace cleanup failed: ${errorMessage(error)}`, code: 'workspace_error' }));
    }
  };
  const execute = noWorkspaceAt ? runner : inWorkspace;

  const start = (i: number): void => {
    running++;
    const number = ++attempts[i]!;
    const now = clock.now();
    if (started[i]! < 0) started[i] = now;
    setStatus(i, 'Running');
    live[i] = 1;
    deadlines.add(i, number, now + o.chunkTimeoutMs);
    const c = chunks[i]!;
    const a = new Attempt(o.planId, c, roleOf(c), number, ctx, baseDir, errors[i], buildPrompt, execute);
    current[i] = a;
    let dispatched: Promise<string | ChunkAttemptResult>;
    try {
      dispatched = executor.dispatch(a);
    } catch (error) {
      dispatched = Promise.reject(error);
    }
    dispatched.then(
      (result) => {
        if (current[i] === a && live[i] === 1) succeeded(i, result);
      },
      (error: unknown) => {
        if (current[i] === a && live[i] === 1) failed(i, error, false);
      },
    );
  };

  /** Stop waiting for a running attempt and abort its signal. */
  const abandon = (i: number, reason: Error): void => {
    if (live[i] !== 1) return;
    current[i]!.abort(reason);
    failed(i, reason, stopping !== undefined);
  };

  const pump = (): void => {
    listens = listening();
    while (stopping === undefined && running < o.capacity && queue.size > 0) start(queue.pop()!);
    if (!finished && running === 0 && retrying === 0 && checkpointing === 0 && (queue.size === 0 || stopping !== undefined)) {
      finished = true;
      resolveDone();
    }
  };

  const settle = (): void => {
    if (!o.onCheckpoint && !ctx.store) return pump();
    checkpointing++;
    Promise.resolve()
      .then(async () => {
        const state = snapshot();
        // The run's store first (when it has one), then the caller's hook.
        await saveStepCheckpoint(ctx, 'plan', state);
        await o.onCheckpoint?.(state, { signal: ctx.signal });
      })
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
    current[i] = undefined;
    running--;
  };

  const succeeded = (i: number, out: string | ChunkAttemptResult): void => {
    release(i);
    const result = typeof out === 'string' ? { output: out } : out;
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

  ctx.emit('plan.started', {
    planId: o.planId,
    chunks: n,
    resumed: o.resumeFrom !== undefined,
    ...(emitter.listenerCount('plan.started') > 0 || emitter.listenerCount('*') > 0 ? { graph: chunks.map((c, i) => ({ chunkId: String(c.sequenceIndex), title: c.title, role: c.role, dependsOn: deps[i]!.map((d) => String(chunks[d]!.sequenceIndex)) })) } : {}),
  });
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const unsubscribe = strategy.onWarning?.((warning) => ctx.emit('workspace.fallback', warning));
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
    unsubscribe?.();
    deadlines.stop();
  }
  if (stopping === 'cancelled') throw abortError(ctx.signal);

  const results: ChunkResult[] = new Array<ChunkResult>(n);
  for (let i = 0; i < n; i++) {
    const c = chunks[i]!;
    const r: ChunkResult = {
      sequenceIndex: c.sequenceIndex,
      title: c.title,
      role: c.role,
      status: status[i]!,
      attempts: attempts[i]!,
      durationMs: started[i]! < 0 || ended[i]! < 0 ? 0 : ended[i]! - started[i]!,
    };
    if (outputs[i] !== undefined) r.output = outputs[i];
    if (errors[i] !== undefined) r.error = errors[i];
    if (files[i] !== undefined) r.files = files[i];
    results[i] = r;
  }
  const durationMs = clock.now() - ctx.op.start;
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
  const stats = report?.stats ?? { ...countResults(results), durationMs, usage: totalUsage(ctx.op) };
  const outcomeStatus: OutcomeStatus = stopping === 'abort-threshold' ? 'error-budget' : stats.succeeded === n ? 'completed' : 'failed';
  ctx.emit('plan.completed', { planId: o.planId, status: outcomeStatus, succeeded: stats.succeeded, failed: stats.failed, skipped: stats.skipped });
  const outcome: Omit<PlanOutcome, 'usage'> = {
    output: report?.summary ?? finalOutput(results, dependents),
    agent: report ? 'synthesis' : o.planId,
    status: outcomeStatus,
    plan,
    results,
    stats,
    instructions: [...instructions()],
    ...(report ? { report } : {}),
    ...(stopping === 'abort-threshold' ? { stoppedBy: 'abort-threshold' as const } : {}),
  };
  if (isFinished(outcomeStatus)) await saveStepCheckpoint(ctx, 'plan', snapshot(), outcome);
  return outcome;
}

function normalise(out: string | ChunkAttemptResult): ChunkAttemptResult {
  return typeof out === 'string' ? { output: out } : out;
}

/** The plan's answer without an aggregator: the outputs of the chunks nothing depends on (or their errors). */
function finalOutput(results: readonly ChunkResult[], dependents: readonly number[][]): string {
  const parts: string[] = [];
  for (let i = 0; i < results.length; i++) {
    if (dependents[i]!.length > 0) continue;
    const r = results[i]!;
    parts.push(r.status === 'Succeeded' ? (r.output ?? '') : `${r.sequenceIndex}. ${r.title}: ${r.status}${r.error ? ` (${r.error})` : ''}`);
  }
  return parts.join('\n\n');
}

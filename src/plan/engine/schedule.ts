/**
 * One execution of a plan inside its op context: set up the chunk records,
 * the duration estimates, the checkpoints and the attempts, run the
 * {@link PlanMachine} to the end, and build the outcome. Nothing here starts
 * or resumes a run: `execute.ts` does that and calls {@link schedule}.
 * @module
 */
import { abortError } from '../../core/clock.js';
import type { RunContext } from '../../core/context.js';
import type { PlanGraphNode } from '../events.js';
import { budgetExhaustion } from '../../core/budget.js';
import { errorMessage } from '../../core/errors.js';
import { totalUsage } from '../../core/ops.js';
import type { OutcomeStatus } from '../../core/runnable.js';
import { MergeConflictError, MergedChanges } from '../../workspaces/conflict.js';
import type { WorkspaceStrategy } from '../../workspaces/types.js';
import { aggregate, countResults } from '../session/aggregate.js';
import { Attempt, type AttemptHost } from './attempt.js';
import { chunkBudgets } from './budgets.js';
import type { PlanIndex } from '../model/dag.js';
import { DurationEstimates } from './estimates.js';
import { directExecutor, type ChunkAttemptResult } from './executor.js';
import { PlanMachine } from './machine.js';
import type { ChunkRole, Plan } from '../model/plan.js';
import { PlanCheckpoints, restoreRecords, type PlanCheckpoint } from './checkpoint.js';
import type { PlanExecutionState } from './state.js';
import { chunkPrompt } from './prompt.js';
import { chunkRecord, chunkResult, type ChunkRecord } from './record.js';
import { resolveRole, type RoleConfig, type RoleOverrides } from '../model/roles.js';
import type { ChunkRunner, MergeConflict, PlanOutcome, PlanRunOptions, PlanSettings } from './types.js';
import { defined } from '../../core/defined.js';
import { LivePlan } from '../live/live-plan.js';
import { addressedTo } from '../live/messages.js';
import type { PlanControl } from '../live/control.js';

/** Everything an execution needs: the options, validated settings, the plan's id, the runner, its checkpoint and the state it continues. */
export type ScheduleOptions = PlanRunOptions &
  PlanSettings & { planId: string; runner: ChunkRunner; checkpoint: PlanCheckpoint; resumeFrom?: PlanExecutionState | undefined; control: PlanControl | undefined };

const none: readonly string[] = [];

/** Run `plan` for `task` in `ctx` (the plan's op context), continuing `o.resumeFrom` (restored from its checkpoint) when given. */
export async function schedule(plan: Plan, task: string, ctx: RunContext, o: ScheduleOptions): Promise<Omit<PlanOutcome, 'usage'>> {
  const records = plan.chunks.map((c, i) => chunkRecord(i, c, o.index.deps[i]!.length));
  if (o.resumeFrom) restoreRecords(records, o.index, o.resumeFrom);
  const roleOf = roleResolver(o.roles);
  // A resumed plan takes its instructions from the caller when it gives them, else from its checkpoint.
  const saved = o.resumeFrom?.instructions ?? none;
  const instructions = o.instructions ?? ((): readonly string[] => saved);
  const limits = typeof o.workerMessages === 'object' ? o.workerMessages : undefined;
  const live = new LivePlan({
    ctx, planId: o.planId, plan, records, index: () => o.index, limits,
    changes: o.resumeFrom?.changes, messages: o.resumeFrom?.messages, replay: o.control?.replaying,
  });
  const checkpoints = new PlanCheckpoints({
    ctx, checkpoint: o.checkpoint, plan, planId: o.planId, records, instructions,
    live: () => live.plan(), changes: () => live.changes(), messages: () => live.messages(),
  });
  const host = attemptHost(ctx, o, records, instructions, chunkBudgets(plan, o.index, o.budget), live);
  const machine = new PlanMachine({
    ctx,
    planId: o.planId,
    records,
    settings: o,
    finishRunning: o.onAbortThreshold === 'finish-running',
    executor: o.executor ?? directExecutor({ maxParallel: o.maxParallel }),
    estimates: new DurationEstimates(plan, o.index, (c) => roleOf(c.role), o.weight),
    checkpoints: checkpoints.enabled ? checkpoints : undefined,
    attempt: (r) => new Attempt(host, r.chunk, roleOf(r.chunk.role), r.attempts, r.error, unresolvedConflict(r)),
    // Only a replay applies changes when chunks succeed.
    completed: o.control?.replaying.length ? () => live.completed() : undefined,
  });
  live.attach(machine, checkpoints.enabled ? checkpoints : undefined);
  if (checkpoints.enabled) await checkpoints.start();
  await drive(machine, plan, ctx, o, live);
  // A cancellation rejects; when the plan's budget (or an enclosing one) ran out, the plan ends with what it did.
  if (machine.stopping === 'cancelled') throw abortError(ctx.signal);
  const outcome = await planOutcome(live, task, ctx, o, records, machine, instructions(), machine.stopping === 'budget');
  await checkpoints.finish(outcome);
  return outcome;
}

/** Run the machine to its end, cancelling it when the run's signal aborts. */
async function drive(machine: PlanMachine, plan: Plan, ctx: RunContext, o: ScheduleOptions, live: LivePlan): Promise<void> {
  const onAbort = (): void => {
    const exhausted = budgetExhaustion(undefined, ctx.signal);
    if (exhausted) machine.budgetRanOut(exhausted);
    else machine.cancel();
  };
  ctx.emit('plan.started', { planId: o.planId, chunks: o.index.deps.length, resumed: o.resumeFrom !== undefined, ...(listening(ctx) ? { graph: planGraph(plan, o.index) } : {}) });
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const unsubscribe = o.workspace?.onWarning?.((warning) => ctx.emit('workspace.fallback', warning));
  const detach = o.control?.attach(live);
  try {
    if (ctx.signal.aborted) onAbort();
    machine.start();
    live.applyDue();
    await machine.done;
  } finally {
    detach?.();
    ctx.signal.removeEventListener('abort', onAbort);
    unsubscribe?.();
    machine.close();
  }
}

function listening(ctx: RunContext): boolean {
  return ctx.emitter.listenerCount('plan.started') > 0 || ctx.emitter.listenerCount('*') > 0;
}

/** Every chunk with the chunks it depends on, for views that draw the plan (`plan.started`). */
function planGraph(plan: Plan, index: PlanIndex): PlanGraphNode[] {
  const { chunks } = plan;
  return chunks.map((c, i) => ({ chunkId: String(c.sequenceIndex), title: c.title, role: c.role, dependsOn: index.deps[i]!.map((d) => String(chunks[d]!.sequenceIndex)) }));
}

/** The resolved configuration of each role, resolved once per role. */
function roleResolver(overrides: RoleOverrides | undefined): (role: ChunkRole) => RoleConfig {
  const roles = new Map<ChunkRole, RoleConfig>();
  return (role) => {
    let config = roles.get(role);
    if (!config) roles.set(role, (config = resolveRole(role, overrides)));
    return config;
  };
}

/** The merge conflict a record's last attempt failed with, when that is why it failed. */
function unresolvedConflict(r: ChunkRecord): MergeConflict | undefined {
  const last = r.mergeConflicts?.at(-1);
  return last !== undefined && !last.resolved && last.attempt === r.attempts - 1 ? last : undefined;
}

/** How attempts of this execution build their prompt and run (in a workspace when there is a strategy). */
function attemptHost(
  ctx: RunContext, o: ScheduleOptions, records: readonly ChunkRecord[], instructions: () => readonly string[], budgets: AttemptHost['budgets'], live: LivePlan,
): AttemptHost {
  const baseDir = o.baseDir ?? process.cwd();
  const strategy = o.workspace;
  const runner = o.runner;
  const merges = new MergedChanges();
  return {
    planId: o.planId,
    ctx,
    baseDir,
    prompt: (a) => {
      const deps = o.index.deps[o.index.position(a.chunk.sequenceIndex)!]!;
      const all = live.messages();
      const messages = all.length === 0 ? all : all.filter((m) => addressedTo(m, a.chunk));
      return chunkPrompt(a, deps.map((d) => records[d]!), instructions(), o.reprompt, messages);
    },
    instructions,
    delivered: (a, list, messages) => {
      const c = a.chunk;
      const ids = messages && messages.length > 0 ? { messages: messages.map((m) => m.id) } : {};
      ctx.emit('chunk.instruction', { planId: o.planId, chunkId: String(c.sequenceIndex), sequenceIndex: c.sequenceIndex, attempt: a.attempt, instructions: [...list], ...ids });
    },
    messages: () => live.messages(),
    post: (a, to, text) => live.post({ from: a.chunk.sequenceIndex, to, text }),
    run: strategy === undefined ? runner : (a) => runInWorkspace(a, { strategy, baseDir, runner, ctx, merges }),
    position: (chunk) => o.index.position(chunk.sequenceIndex)!,
    budgets,
  };
}

/**
 * Prepare the attempt's workspace, run it there, read what it changed,
 * merge (a conflict fails the attempt with a {@link MergeConflictError}
 * naming the chunks whose merged changes it conflicts with), and always
 * clean up.
 */
async function runInWorkspace(
  a: Attempt,
  where: { strategy: WorkspaceStrategy; baseDir: string; runner: ChunkRunner; ctx: RunContext; merges: MergedChanges },
): Promise<string | ChunkAttemptResult> {
  const { strategy, baseDir, runner, ctx, merges } = where;
  const c = a.chunk;
  const scope = { id: String(c.sequenceIndex), planId: a.planId, title: c.title, baseDir, ...(c.workingScope ? { workingScope: c.workingScope } : {}) };
  const workspace = await strategy.prepare(scope, { signal: a.signal });
  a.workspace = workspace;
  try {
    const result = await runner(a);
    const changed = strategy.changes ? (await strategy.changes(workspace, { signal: a.signal })).files : [];
    const merged = await strategy.merge(workspace, { signal: a.signal });
    if (merged.status === 'conflict') {
      const others = merges.conflictsWith(merged.conflicts);
      const names = others.map((o) => `chunk ${o.id}`).join(', ');
      throw new MergeConflictError(`Merging chunk ${c.sequenceIndex} conflicted in ${merged.conflicts.join(', ')}${names ? ` with ${names}` : ''}`, merged.conflicts, others);
    }
    merges.merged(String(c.sequenceIndex), c.title, changed);
    if (changed.length === 0) return result;
    const out: ChunkAttemptResult = typeof result === 'string' ? { output: result } : { ...result };
    out.files = [...new Set([...(out.files ?? []), ...changed.map((f) => f.path)])];
    return out;
  } finally {
    await strategy.cleanup(workspace).catch((error: unknown) => ctx.emit('warning', { message: `Workspace cleanup failed: ${errorMessage(error)}`, code: 'workspace_error' }));
  }
}

/** The outcome: every chunk's result (chunks a change removed left out), the aggregate when asked for, and the plan's status. */
async function planOutcome(
  live: LivePlan,
  task: string,
  ctx: RunContext,
  o: ScheduleOptions,
  records: readonly ChunkRecord[],
  machine: PlanMachine,
  instructions: readonly string[],
  budgetStopped: boolean,
): Promise<Omit<PlanOutcome, 'usage'>> {
  let exhausted = budgetStopped;
  const changes = live.changes();
  const plan = live.plan();
  const kept = changes.length === 0 ? records : records.filter((r) => !r.removed);
  const results = kept.map(chunkResult);
  const durationMs = ctx.clock.now() - ctx.op.start;
  let report: PlanOutcome['report'];
  if (o.aggregate && !exhausted) {
    const settings = o.aggregate === true ? {} : o.aggregate;
    const adapter = settings.adapter ?? o.adapter;
    const { adapter: _a, ...session } = settings;
    report = await aggregate(plan, results, { ...session, ctx, task, durationMs, ...defined({ adapter, roles: o.roles }) });
  }
  const stats = report?.stats ?? { ...countResults(results), durationMs, usage: totalUsage(ctx.op) };
  const stopped = machine.stopping === 'abort-threshold';
  const done = stats.completed === results.length;
  // A budget that ran out once every chunk had completed stopped nothing.
  if (done) exhausted = false;
  const status: Extract<OutcomeStatus, 'completed' | 'failed' | 'budget-exhausted'> = exhausted ? 'budget-exhausted' : stopped ? 'failed' : done ? 'completed' : 'failed';
  const reason = stopped ? ('abort-threshold' as const) : exhausted ? ('budget' as const) : undefined;
  ctx.emit('plan.completed', { planId: o.planId, status, ...defined({ reason }), completed: stats.completed, failed: stats.failed, skipped: stats.skipped });
  const messages = live.messages();
  return {
    output: report?.summary ?? finalOutput(kept, o.index.dependents, changes.length > 0 ? records : undefined),
    agent: report ? 'synthesis' : o.planId,
    status,
    plan,
    results,
    stats,
    instructions: [...instructions],
    ...(report ? { report } : {}),
    ...defined({ reason }),
    ...(changes.length > 0 ? { changes: [...changes] } : {}),
    ...(messages.length > 0 ? { messages: [...messages] } : {}),
  };
}

/** The plan's answer without an aggregator: the outputs of the chunks nothing depends on (or their errors). */
function finalOutput(kept: readonly ChunkRecord[], dependents: readonly number[][], records: readonly ChunkRecord[] | undefined): string {
  const parts: string[] = [];
  for (const r of kept) {
    const next = dependents[r.position]!;
    if (next.length > 0 && (records === undefined || next.some((d) => !records[d]!.removed))) continue;
    const c = r.chunk;
    parts.push(r.status === 'completed' ? (r.output ?? '') : `${c.sequenceIndex}. ${c.title}: ${r.status}${r.error ? ` (${r.error})` : ''}`);
  }
  return parts.join('\n\n');
}

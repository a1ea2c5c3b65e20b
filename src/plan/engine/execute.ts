/**
 * `executePlan` and `planRunnable`: run a validated plan as a dependency
 * graph. A ready queue starts each chunk as soon as its dependencies have
 * completed and a slot is free, highest remaining critical path first (never
 * stage by stage), with retries, per-attempt time-outs, skipped dependents,
 * an abort threshold, a workspace per chunk, one `chunk.status` event per
 * transition and a checkpoint after every chunk that finishes. This module
 * checks the options and enters the plan's op (starting a run when
 * `executePlan` is called without a context); the scheduling itself is
 * `schedule.ts` and the state machine in `machine.ts`.
 * @module
 */
import { combineSignals } from '../../core/abort.js';
import { run } from '../../core/run.js';
import { runGuarded } from '../../core/guard-scope.js';
import type { RunContext } from '../../core/context.js';
import type { GuardrailOptions, ToolGuardrail } from '../../core/guardrails.js';
import { defineRunnable, type Runnable } from '../../core/runnable.js';
import { indexPlan } from '../model/dag.js';
import type { Plan } from '../model/plan.js';
import { applyLearning, parseLearningRecord } from '../learning/learning.js';
import { loadPlanStart, planCheckpoint } from './checkpoint.js';
import { schedule } from './schedule.js';
import { roleRunner } from './worker.js';
import { Attempt } from './attempt.js';
import type { ChunkAttemptResult } from './executor.js';
import { executePlanOptions, planRunOptions, planSettings } from './options.js';
import type { ChunkResult, ChunkRunInput, ChunkRunner, ExecutePlanOptions, PlanOutcome, PlanRunOptions } from './types.js';
import { defined } from '../../core/defined.js';
import { POST_MESSAGE, type MessageRecipient } from '../live/messages.js';
import { PlanControl } from '../live/control.js';

export type {
  ChunkResult,
  ChunkRunInput,
  ChunkRunner,
  ConversationSettings,
  ExecutePlanOptions,
  MergeConflict,
  PlanBudgets,
  PlanOutcome,
  PlanRetryOptions,
  PlanRunOptions,
} from './types.js';

/**
 * A plan as a {@link Runnable} (kind `plan`), so plans nest in other
 * patterns; the input is the task the plan serves. The runnable holds no
 * state of a run: a run's `PlanControl` is its `control`
 * (`run(planRunnable(plan), task, { control })`).
 *
 * @example
 * ```ts
 * const control = new PlanControl();
 * const running = run(planRunnable(plan, { maxParallel: 4 }), 'Fix the leaks', { adapter, control });
 * await control.post({ to: 'all', text: 'The cache module moved to src/cache/.' });
 * const outcome = await running;
 * ```
 */
export function planRunnable(plan: Plan, options: PlanRunOptions = {}): Runnable<PlanOutcome> {
  planRunOptions.check(options);
  return planRunnableOf(plan, options);
}

/** {@link planRunnable} with checked options; `given` is the control `executePlan` was given when it runs in a context. */
function planRunnableOf(plan: Plan, given: PlanRunOptions, explicit?: PlanControl): Runnable<PlanOutcome> {
  const learning = given.learning === undefined ? undefined : parseLearningRecord(given.learning);
  const options = learning ? { ...given, roles: applyLearning(given.roles, learning) } : given;
  const settings = planSettings(plan, options);
  const planId = options.planId ?? 'plan';
  return defineRunnable<PlanOutcome>({
    name: planId,
    kind: 'plan',
    ...defined({ budget: options.budget?.run }),
    async run(input, ctx) {
      // In a resumed run, the plan's checkpoint: a finished plan returns its outcome, chunks that completed keep their results.
      if (learning) ctx.emit('plan.learning', { planId, learning });
      const checkpoint = planCheckpoint(ctx);
      const start = await loadPlanStart(checkpoint, plan, planId);
      if (start.outcome) return start.outcome;
      const runner = guardedRunner(options.runChunk ?? roleRunner(options.adapter, options.tools ?? [], options.workerMessages !== undefined && options.workerMessages !== false), chunkGuards(options));
      // A plan changed while it ran continues as changed.
      const changed = start.state?.changes?.length ? start.state.plan : undefined;
      const index = changed ? indexPlan(changed) : settings.index;
      return withControl(ctx, explicit, (inner, control) =>
        schedule(changed ?? plan, input, inner, { ...options, ...settings, index, planId, runner, checkpoint, resumeFrom: start.state, control }),
      );
    },
  });
}

/**
 * Run `body` with the plan's control: the one `executePlan` was given (in a
 * context: the plan attaches it as its run, so `cancel()` ends the plan),
 * else the run's `PlanControl` (`ctx.control`) while no other plan of the
 * run holds it.
 */
async function withControl<T>(ctx: RunContext, explicit: PlanControl | undefined, body: (ctx: RunContext, control: PlanControl | undefined) => Promise<T>): Promise<T> {
  if (explicit === undefined) {
    const control = ctx.control instanceof PlanControl && !ctx.control.controlsPlan ? ctx.control : undefined;
    return body(ctx, control);
  }
  const local = new AbortController();
  const inner = ctx.withSignal(combineSignals(ctx.signal, local.signal));
  const release = explicit.attachRun({ cancel: (reason) => local.abort(reason) });
  try {
    return await body(inner, explicit);
  } finally {
    release();
  }
}

/**
 * Execute a plan: standalone (it starts a run) or inside `options.ctx`.
 *
 * @example
 * ```ts
 * const outcome = await executePlan(plan, { adapter, maxParallel: 4, retry: { maxRetries: 1 } });
 * for (const r of outcome.results) console.log(r.sequenceIndex, r.status);
 * ```
 */
export function executePlan(plan: Plan, options: ExecutePlanOptions = {}): Promise<PlanOutcome> {
  let runnable: Runnable<PlanOutcome>;
  try {
    executePlanOptions.check(options);
    const { adapters: _a, signal: _s, clock: _c, task: _t, onEvent: _o, emitter: _e, ctx, store: _st, runId: _r, control, ...rest } = options;
    runnable = planRunnableOf(plan, rest, ctx ? control : undefined);
  } catch (error) {
    return Promise.reject(error);
  }
  const { adapters, signal, clock, task, onEvent, emitter, ctx, store, runId, control } = options;
  const input = task ?? plan.planSummary;
  if (ctx) return runnable.run(input, ctx);
  return run(runnable, input, {
    ...defined({ adapter: options.adapter, adapters, signal, clock, onEvent, emitter, store, runId, control }),
  });
}

/**
 * Every attempt of `runner` guarded by `guards` (input: the attempt's
 * prompt; output: its answer; stream and tool guardrails on everything it
 * runs). Without guardrails, `runner` itself.
 */
function guardedRunner(runner: ChunkRunner, guards: GuardrailOptions | undefined): ChunkRunner {
  if (guards === undefined) return runner;
  return async (input) => {
    let extra: Omit<ChunkAttemptResult, 'output'> = {};
    const done = await runGuarded(input.ctx, `chunk ${input.chunk.sequenceIndex}`, guards, input.prompt, async (ctx) => {
      const { planId, chunk, prompt, role, attempt, workspace, signal } = input;
      const spent = input instanceof Attempt ? input.spent : undefined;
      const takeMessages = input.takeMessages === undefined ? undefined : () => input.takeMessages!();
      const post = input.post === undefined ? undefined : (to: MessageRecipient, text: string) => input.post!(to, text);
      const result = await runner({ planId, chunk, prompt, role, attempt, workspace, signal, ctx, takeInstructions: () => input.takeInstructions(), ...defined({ spent, takeMessages, post }) } as ChunkRunInput);
      if (typeof result === 'string') return { output: result };
      const { output, ...rest } = result;
      extra = rest;
      return { output };
    });
    return { ...extra, output: done.output };
  };
}

/**
 * The guardrails of every attempt: the `guardrails` option, and with
 * `approvals` the queue's tool guardrail (at the `toolRisks` levels), so
 * that every tool call under a chunk asks, whatever runs the chunk. The
 * plan's own `post_message` tool is not asked about.
 */
function chunkGuards(o: PlanRunOptions): GuardrailOptions | undefined {
  const approvals = o.approvals;
  if (!approvals) return o.guardrails;
  const asks = approvals.guardrail(defined({ risks: o.toolRisks }));
  const approval: ToolGuardrail = { name: asks.name, beforeCall: (call, context) => (call.name === POST_MESSAGE ? { action: 'allow' } : asks.beforeCall!(call, context)) };
  return { ...o.guardrails, tools: [...(o.guardrails?.tools ?? []), approval] };
}

/** The results as markdown, one section per chunk (the output when nothing aggregates them). */
export function renderResults(results: readonly ChunkResult[]): string {
  return results
    .map((r) => `## ${r.sequenceIndex}. ${r.title} (${r.role}): ${r.status}\n\n${r.output ?? r.error ?? ''}`.trimEnd())
    .join('\n\n');
}

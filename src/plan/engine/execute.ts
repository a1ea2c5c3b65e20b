/**
 * `executePlan` and `planRunnable`: run a validated plan as a dependency
 * graph. A ready queue starts each chunk as soon as its dependencies have
 * succeeded and a slot is free, highest remaining critical path first (never
 * stage by stage), with retries, per-attempt time-outs, skipped dependents,
 * an abort threshold, a workspace per chunk, one `chunk.status` event per
 * transition and a checkpoint after every chunk that finishes. This module
 * checks the options and enters the plan's op (starting a run when
 * `executePlan` is called without a context); the scheduling itself is
 * `schedule.ts` and the state machine in `machine.ts`.
 * @module
 */
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { expectNonNegativeInteger, expectPositiveInteger, expectPositiveNumber } from '../../core/options.js';
import { run } from '../../core/run.js';
import { runGuarded } from '../../core/guard-scope.js';
import { validateGuardrailOptions, type GuardrailOptions } from '../../core/guardrails.js';
import type { ToolDefinition } from '../../core/tools.js';
import { defineRunnable, type Runnable } from '../../core/runnable.js';
import { ApprovalQueue, toolRisks } from '../approvals.js';
import { indexPlan } from '../model/dag.js';
import { chunkRoles, validatePlan, type Plan } from '../model/plan.js';
import { applyLearning, parseLearningRecord } from '../learning/learning.js';
import { loadPlanStart, planCheckpoint } from './checkpoint.js';
import { schedule } from './schedule.js';
import { validatePlanBudgets } from './budgets.js';
import { roleRunner } from './worker.js';
import { Attempt } from './attempt.js';
import type { ChunkAttemptResult } from './executor.js';
import type { ChunkResult, ChunkRunInput, ChunkRunner, ExecutePlanOptions, PlanOutcome, PlanRunOptions, PlanSettings } from './types.js';
import { defined } from '../../core/defined.js';
import type { MessageRecipient } from '../live/messages.js';
import { PlanControl } from '../live/control.js';

export type { ChunkResult, ChunkRunInput, ChunkRunner, ConversationSettings, ExecutePlanOptions, MergeConflict, PlanOutcome, PlanRunOptions, RetryOptions } from './types.js';

/**
 * A plan as a {@link Runnable} (kind `plan`), so plans nest in other
 * patterns; the input is the task the plan serves.
 */
export function planRunnable(plan: Plan, given: PlanRunOptions = {}): Runnable<PlanOutcome> {
  const learning = given.learning === undefined ? undefined : parseLearningRecord(given.learning);
  const options = learning ? { ...given, roles: applyLearning(given.roles, learning) } : given;
  const settings = validateOptions(plan, options);
  const planId = options.planId ?? 'plan';
  return defineRunnable<PlanOutcome>({
    name: planId,
    kind: 'plan',
    ...defined({ budget: options.budget }),
    async run(input, ctx) {
      // In a resumed run, the plan's checkpoint: a finished plan returns its outcome, chunks that succeeded keep their results.
      if (learning) ctx.emit('plan.learning', { planId, learning });
      const checkpoint = planCheckpoint(ctx);
      const start = await loadPlanStart(checkpoint, plan, planId);
      if (start.outcome) return start.outcome;
      const runner = guardedRunner(options.runChunk ?? roleRunner(options.adapter, workerTools(options), options.workerMessages !== undefined && options.workerMessages !== false), options.guardrails);
      // A plan changed while it ran continues as changed.
      const changed = start.state?.changes?.length ? start.state.plan : undefined;
      const index = changed ? indexPlan(changed) : settings.index;
      return schedule(changed ?? plan, input, ctx, { ...options, ...settings, index, planId, runner, checkpoint, resumeFrom: start.state });
    },
  });
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
    ...defined({ adapter: rest.adapter, adapters, signal, clock, onEvent, emitter, store, runId }),
  });
}

function validateOptions(plan: Plan, o: PlanRunOptions): PlanSettings {
  const index = plan && Array.isArray(plan.chunks) ? indexPlan(plan) : undefined;
  if (!index?.ok) {
    const checked = index ? validatePlan(plan) : { errors: ['expected a plan with a `chunks` array'] };
    throw new ConfigurationError(`Invalid plan: ${checked.errors.join('; ')}`, { code: 'invalid_graph', details: { errors: checked.errors } });
  }
  // An unknown role would run as Generic here and be refused by a queue's workers: refuse it before anything is dispatched.
  const unknownRoles = plan.chunks.filter((c) => !(chunkRoles as readonly unknown[]).includes(c.role));
  if (unknownRoles.length > 0) {
    const errors = unknownRoles.map((c) => `chunk ${c.sequenceIndex} has unknown role ${describeValue(c.role)}`);
    throw new ConfigurationError(`Invalid plan: ${errors.join('; ')} (roles: ${chunkRoles.join(', ')})`, { code: 'invalid_argument', details: { errors } });
  }
  if (o.tools !== undefined && !(Array.isArray(o.tools) && o.tools.every((t) => typeof t?.name === 'string' && typeof t.execute === 'function'))) {
    throw new ConfigurationError(`Expected \`tools\` to be an array of tool definitions, got ${describeValue(o.tools)}`);
  }
  if (o.approvals !== undefined && !(o.approvals instanceof ApprovalQueue)) {
    throw new ConfigurationError(`Expected \`approvals\` to be an ApprovalQueue, got ${describeValue(o.approvals)}`);
  }
  validateToolPolicy(o);
  if (o.control !== undefined && !(o.control instanceof PlanControl)) {
    throw new ConfigurationError(`Expected \`control\` to be a PlanControl, got ${describeValue(o.control)}`);
  }
  if (o.workerMessages !== undefined && typeof o.workerMessages !== 'boolean' && (typeof o.workerMessages !== 'object' || o.workerMessages === null)) {
    throw new ConfigurationError(`Expected \`workerMessages\` to be a boolean or { maxChars?, maxMessages? }, got ${describeValue(o.workerMessages)}`);
  }
  if (o.weight !== undefined && typeof o.weight !== 'function') {
    throw new ConfigurationError(`Expected \`weight\` to be a function of a chunk, got ${describeValue(o.weight)}`);
  }
  for (const [role, config] of Object.entries(o.roles ?? {})) expectPositiveNumber(`roles.${role}.estimatedMs`, config?.estimatedMs);
  validatePlanBudgets(index, o);
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

/** Risk levels name tools of `tools`, role allow-lists name tools of `tools`, and a dangerous tool is never run without an approval queue. */
function validateToolPolicy(o: PlanRunOptions): void {
  const names = new Set((o.tools ?? []).map((t) => t.name));
  if (o.toolRisks !== undefined && (typeof o.toolRisks !== 'object' || o.toolRisks === null)) {
    throw new ConfigurationError(`Expected \`toolRisks\` to map tool names to risk levels, got ${describeValue(o.toolRisks)}`);
  }
  for (const [name, risk] of Object.entries(o.toolRisks ?? {})) {
    if (!names.has(name)) throw new ConfigurationError(`\`toolRisks\` names tool "${name}", which is not in \`tools\``, { details: { tool: name } });
    if (!toolRisks.includes(risk)) throw new ConfigurationError(`Expected the risk of tool "${name}" to be one of ${toolRisks.join(', ')}, got ${describeValue(risk)}`);
    if (risk === 'dangerous' && !o.approvals) {
      throw new ConfigurationError(`Tool "${name}" is dangerous: give an approval queue (\`approvals\`) so that a person decides each call`, { details: { tool: name } });
    }
  }
  for (const [role, config] of Object.entries(o.roles ?? {})) {
    const allowed = config?.tools;
    if (allowed === undefined) continue;
    if (!Array.isArray(allowed) || allowed.some((t) => typeof t !== 'string')) throw new ConfigurationError(`Expected \`roles.${role}.tools\` to be a list of tool names, got ${describeValue(allowed)}`);
    for (const t of allowed) if (!names.has(t)) throw new ConfigurationError(`\`roles.${role}.tools\` names tool "${t}", which is not in \`tools\``, { details: { role, tool: t } });
  }
}

/**
 * Every attempt of `runner` guarded by `guards` (input: the attempt's
 * prompt; output: its answer; stream and tool guardrails on everything it
 * runs). Without guardrails, `runner` itself.
 */
function guardedRunner(runner: ChunkRunner, guards: GuardrailOptions | undefined): ChunkRunner {
  if (guards === undefined) return runner;
  validateGuardrailOptions(guards);
  return async (input) => {
    let extra: Omit<ChunkAttemptResult, 'output'> = {};
    const done = await runGuarded(input.ctx, `chunk ${input.chunk.sequenceIndex}`, guards, input.prompt, async (ctx) => {
      const { planId, chunk, prompt, role, attempt, workspace, signal } = input;
      const spent = input instanceof Attempt ? input.spent : undefined;
      const takeMessages = input.takeMessages === undefined ? undefined : () => input.takeMessages!();
      const postMessage = input.postMessage === undefined ? undefined : (to: MessageRecipient, text: string) => input.postMessage!(to, text);
      const result = await runner({ planId, chunk, prompt, role, attempt, workspace, signal, ctx, takeInstructions: () => input.takeInstructions(), ...defined({ spent, takeMessages, postMessage }) } as ChunkRunInput);
      if (typeof result === 'string') return { output: result };
      const { output, ...rest } = result;
      extra = rest;
      return { output };
    });
    return { ...extra, output: done.output };
  };
}

/** The tools of chunk workers, guarded by the approval queue (at their risk level) when there is one. */
function workerTools(o: PlanRunOptions): ToolDefinition[] {
  const tools = [...(o.tools ?? [])];
  const approvals = o.approvals;
  if (!approvals) return tools;
  return tools.map((t) => {
    const risk = o.toolRisks?.[t.name];
    return approvals.guard(t, defined({ risk }));
  });
}

/** The results as markdown, one section per chunk (the output when nothing aggregates them). */
export function renderResults(results: readonly ChunkResult[]): string {
  return results
    .map((r) => `## ${r.sequenceIndex}. ${r.title} (${r.role}): ${r.status}\n\n${r.output ?? r.error ?? ''}`.trimEnd())
    .join('\n\n');
}

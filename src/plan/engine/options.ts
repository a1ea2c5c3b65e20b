/**
 * The options of a plan execution, described once (docs/conventions.md,
 * "Options"): {@link planRunOptions} (`planRunnable`), and
 * {@link executePlanOptions} (`executePlan`: those, and how to run
 * standalone or in a context). A description checks each option on its
 * own and refuses unknown keys; {@link planSettings} then checks what
 * depends on the plan or on other options (roles and tools, budgets of
 * chunks) and resolves the defaults.
 * @module
 */
import { validateBudget, type Budget } from '../../core/budget.js';
import { RunContext } from '../../core/context.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { guardrailOptions } from '../../core/guardrails.js';
import {
  adapter,
  boolean,
  check,
  defineOptions,
  finiteNumber,
  func,
  listOf,
  nonEmptyString,
  oneOf,
  positiveInteger,
  positiveNumber,
  string,
  type OptionCheck,
  type OptionsDescription,
} from '../../core/options.js';
import { retryOptions } from '../../core/retry.js';
import { runOptions } from '../../core/run.js';
import { approvalQueue, toolRisks, type ToolRisk } from '../../guardrails/approvals.js';
import { parseLearningRecord } from '../learning/learning.js';
import { PlanControl } from '../live/control.js';
import type { MessageLimits } from '../live/messages.js';
import { indexPlan } from '../model/dag.js';
import { executorCheck } from './executor.js';
import { chunkRoles, validatePlan, type Plan } from '../model/plan.js';
import type { RoleOverrides } from '../model/roles.js';
import type { ChunkBudget, ConversationSettings, ExecutePlanOptions, PlanBudgets, PlanRetryOptions, PlanRunOptions, PlanSettings } from './types.js';

/** A plan's `retry` group: the shared {@link retryOptions}, and `reprompt`. */
export const planRetryOptions = defineOptions<PlanRetryOptions>('retry', { ...retryOptions.shape, reprompt: boolean });

/** A budget (limits, `name`, `shared`), checked by the kernel's rule. */
const budget: OptionCheck = (name, value) => void validateBudget(name, value as Budget | undefined);

/** One entry of `budget.chunks`: a budget with the chunk it covers (checked against the plan by {@link planSettings}). */
const chunkBudget: OptionCheck = (name, value) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a chunk budget ({ chunk, subtree?, ...limits }), got ${describeValue(value)}`);
  const { chunk, subtree, ...limits } = value as ChunkBudget;
  if (!Number.isInteger(chunk)) throw new ConfigurationError(`Expected \`${name}.chunk\` to be the sequenceIndex of a chunk of the plan, got ${describeValue(chunk)}`);
  boolean(`${name}.subtree`, subtree);
  validateBudget(name, limits);
};

/** A plan's `budget` group: the plan's, each chunk's, per chunk or subtree. */
export const planBudgetOptions = defineOptions<PlanBudgets>('budget', { run: budget, chunk: budget, chunks: listOf(chunkBudget) });

/** The session settings of a planner or an aggregator (the planning session's `planner` and `aggregator`, a plan's `aggregate`). */
export const conversationSettings = defineOptions<ConversationSettings>('aggregate', { adapter, system: string, model: nonEmptyString, temperature: finiteNumber });

/** `true`/`false`, or an object checked against `description` (`workerMessages`, `aggregate`). */
function booleanOr<T extends object>(what: string, description: OptionsDescription<T>): OptionCheck {
  return (name, value) => {
    if (value === undefined || typeof value === 'boolean') return;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be ${what}, got ${describeValue(value)}`);
    description.check(value as T, `${name}.`, description.of);
  };
}

/** Limits of a plan's messages (`workerMessages`). */
const messageLimitOptions = defineOptions<MessageLimits>('workerMessages', { maxChars: positiveInteger, maxMessages: positiveInteger });

const workspaceStrategy = check('a workspace strategy (prepare, merge and cleanup)', (v) => hasMethods(v, ['prepare', 'merge', 'cleanup']));
const tool = check('a tool definition (a `name` and `execute`)', (v) => typeof (v as { name?: unknown } | null)?.name === 'string' && hasMethods(v, ['execute']));

/** `roles`: by role, each a role configuration; an `estimatedMs` positive, `tools` a list of names. */
export const roleOverrides: OptionCheck = (name, value) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to map roles to role settings, got ${describeValue(value)}`);
  for (const [role, config] of Object.entries(value as RoleOverrides)) {
    if (!(chunkRoles as readonly string[]).includes(role)) throw new ConfigurationError(`Expected \`${name}\` to be keyed by chunk role, got "${role}" (roles: ${chunkRoles.join(', ')})`);
    if (config === undefined) continue;
    positiveNumber(`${name}.${role}.estimatedMs`, config.estimatedMs);
    listOf(string)(`${name}.${role}.tools`, config.tools);
  }
};

/** `toolRisks`: a risk level by tool name. */
const toolRiskMap: OptionCheck = (name, value) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to map tool names to risk levels, got ${describeValue(value)}`);
  const level = oneOf(toolRisks);
  for (const [tool, risk] of Object.entries(value as Record<string, ToolRisk>)) level(`${name}.${tool}`, risk);
};

/** The description of {@link PlanRunOptions}: what `planRunnable` takes. */
export const planRunOptions = defineOptions<PlanRunOptions>('planRunnable', {
  adapter,
  maxParallel: positiveInteger,
  chunkTimeoutMs: positiveNumber,
  retry: planRetryOptions,
  abortThreshold: positiveInteger,
  onAbortThreshold: oneOf(['cancel-running', 'finish-running']),
  workspace: workspaceStrategy,
  baseDir: nonEmptyString,
  roles: roleOverrides,
  executor: executorCheck,
  runChunk: func,
  tools: listOf(tool),
  guardrails: guardrailOptions,
  approvals: approvalQueue,
  toolRisks: toolRiskMap,
  weight: func,
  planId: nonEmptyString,
  learning: (_name, value) => void (value === undefined || parseLearningRecord(value)),
  workerMessages: booleanOr('a boolean or { maxChars?, maxMessages? }', messageLimitOptions),
  instructions: func,
  aggregate: booleanOr('a boolean or { adapter?, system?, model?, temperature? }', conversationSettings),
  budget: planBudgetOptions,
});

/** The description of {@link ExecutePlanOptions}: `planRunnable`'s options, and those of the run it starts (or the context it runs in). */
export const executePlanOptions = defineOptions<ExecutePlanOptions>('executePlan', {
  ...planRunOptions.shape,
  adapters: runOptions.shape.adapters,
  signal: runOptions.shape.signal,
  clock: runOptions.shape.clock,
  onEvent: runOptions.shape.onEvent,
  emitter: runOptions.shape.emitter,
  store: runOptions.shape.store,
  runId: runOptions.shape.runId,
  task: string,
  ctx: check('a RunContext', (v) => v instanceof RunContext),
  control: check('a PlanControl', (v) => v instanceof PlanControl),
});

/**
 * What depends on the plan or on several options, checked once the options
 * are: the plan is a valid graph of known roles; risk levels, role
 * allow-lists and chunk budgets name tools and chunks that exist; a
 * dangerous tool has an approval queue. Returns the settings with their
 * defaults.
 */
export function planSettings(plan: Plan, o: PlanRunOptions): PlanSettings {
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
  toolPolicy(o);
  (o.budget?.chunks ?? []).forEach((b, i) => {
    if (index.position(b.chunk) === undefined) throw new ConfigurationError(`Expected \`budget.chunks[${i}].chunk\` to be the sequenceIndex of a chunk of the plan, got ${describeValue(b.chunk)}`);
  });
  return {
    index,
    maxParallel: o.executor ? o.executor.maxParallel : (o.maxParallel ?? 5),
    chunkTimeoutMs: o.chunkTimeoutMs ?? 600_000,
    maxRetries: o.retry?.maxRetries ?? 2,
    delayMs: o.retry?.delayMs ?? 1000,
    reprompt: o.retry?.reprompt ?? true,
    abortThreshold: o.abortThreshold ?? 3,
  };
}

/**
 * Risk levels name tools of `tools`, role allow-lists name tools of `tools`
 * (unless the plan has an executor and no `tools`: the tools are then the
 * workers', who give a role's agent only those its allow-list names), and a
 * dangerous tool is never run without an approval queue.
 */
function toolPolicy(o: PlanRunOptions): void {
  const names = new Set((o.tools ?? []).map((t) => t.name));
  for (const [name, risk] of Object.entries(o.toolRisks ?? {})) {
    if (!names.has(name)) throw new ConfigurationError(`\`toolRisks\` names tool "${name}", which is not in \`tools\``, { details: { tool: name } });
    if (risk === 'dangerous' && !o.approvals) {
      throw new ConfigurationError(`Tool "${name}" is dangerous: give an approval queue (\`approvals\`) so that a person decides each call`, { details: { tool: name } });
    }
  }
  if (o.executor !== undefined && o.tools === undefined) return;
  for (const [role, config] of Object.entries(o.roles ?? {})) {
    for (const t of config?.tools ?? []) if (!names.has(t)) throw new ConfigurationError(`\`roles.${role}.tools\` names tool "${t}", which is not in \`tools\``, { details: { role, tool: t } });
  }
}

function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  return methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

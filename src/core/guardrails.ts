/**
 * The guardrail contract: checks on a runnable's input, its output (whole,
 * and as it streams) and each tool call, any of which can end the run (a
 * "trip"). The kernel enforces them where every model call and tool call
 * already passes (the session handle and the tool loop), for everything a
 * guarded runnable runs, nested agents included; see `guard-scope.ts`.
 * @module
 */
import { defined } from './defined.js';
import type { ToolCall, ToolResult } from './adapter.js';
import type { RunContext } from './context.js';
import { ConfigurationError, TroupeError, describeValue } from './errors.js';
import { boolean, defineOptions, object, type OptionCheck } from './options.js';
import type { OpNode } from './ops.js';
import type { DelegationHooks } from './delegation.js';

/** Where a guardrail looks: the input, the final output, the output as it streams, or a tool call. */
export type GuardrailStage = 'input' | 'output' | 'stream' | 'tool';

/** What a guardrail decided about a text. */
export interface GuardrailVerdict {
  /** True: the guardrail trips and the run ends with a {@link GuardrailTripError}. */
  tripped: boolean;
  /** Why, for people and logs. */
  reason?: string;
  /** Structured findings (a classifier's label and score, the rule that matched); kept in events, so JSON only. */
  info?: Record<string, unknown>;
}

/** What a text guardrail's `check` receives besides the text. */
export interface GuardrailCheckContext {
  /** The guarded runnable's context: run a classifier in it so its usage and ops are the run's. */
  ctx: RunContext;
  /** Which stage is being checked. */
  stage: 'input' | 'output' | 'stream';
  /** The guarded runnable's name. */
  runnable: string;
  /** For `stream`: the agent whose reply is streaming. */
  agent?: string;
  /** For `stream`: the text that arrived since the last check (`text` is everything so far). */
  delta?: string;
  /** Aborts when the run does. */
  signal: AbortSignal;
}

/**
 * A check on text: a runnable's input, its final output, or a model reply
 * as it streams (the text so far, each time more arrives). A plain function
 * or an agent asked to classify (see `classifierGuardrail` in
 * `troupe/guardrails`). A check that throws fails closed: the run ends as
 * if it had tripped, with the error as `cause`.
 */
export interface Guardrail {
  /** Names the guardrail in events, the run log and the trip error. */
  readonly name: string;
  /** Decide on `text`. */
  check(text: string, context: GuardrailCheckContext): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/**
 * What a tool guardrail decides about one call or its result: let it
 * through, replace the result with a refusal the model sees (an error
 * result; before the call, the tool does not run), or stop the run.
 */
export type ToolGuardrailDecision =
  | { action: 'allow'; info?: Record<string, unknown> }
  | { action: 'refuse'; message: string; info?: Record<string, unknown> }
  | { action: 'stop'; reason: string; info?: Record<string, unknown> };

/** What a tool guardrail receives besides the call. */
export interface ToolGuardrailContext {
  /** The calling agent's context. */
  ctx: RunContext;
  /** The agent that made the call. */
  agent: string;
  /** Aborts when the run does. */
  signal: AbortSignal;
}

/** A check around each tool call: before it runs, after it returns, or both. */
export interface ToolGuardrail {
  /** Names the guardrail in events, the run log and the trip error. */
  readonly name: string;
  /** The tools it watches, by name. Default: every tool. */
  readonly tools?: readonly string[];
  /** Before the tool runs (its arguments are already valid). */
  beforeCall?(call: ToolCall, context: ToolGuardrailContext): ToolGuardrailDecision | Promise<ToolGuardrailDecision>;
  /** After the tool returned, before the model sees the result. */
  afterCall?(call: ToolCall, result: ToolResult, context: ToolGuardrailContext): ToolGuardrailDecision | Promise<ToolGuardrailDecision>;
}

/**
 * The guardrails and delegation hooks of a guarded runnable; they apply to
 * everything it runs, nested agents and sub-agents included, together with
 * those of guarded runnables around it.
 */
export interface GuardrailOptions {
  /** Checks on the runnable's input, before anything runs (or alongside the first model call, with `parallelInput`). */
  input?: readonly Guardrail[];
  /**
   * Run the input guardrails alongside the first model call instead of
   * before it: the call may start, but its reply is held (no text returned,
   * no tool run, no second call) until every input guardrail has passed,
   * and discarded if one trips. Saves the guardrails' latency. Default: false.
   */
  parallelInput?: boolean;
  /** Checks on the runnable's final output. */
  output?: readonly Guardrail[];
  /** Checks on every model reply inside the runnable as it streams (the whole reply when the adapter does not stream); a trip stops the reply. */
  stream?: readonly Guardrail[];
  /** Checks around every tool call inside the runnable. */
  tools?: readonly ToolGuardrail[];
  /** Hooks on every handoff, route, delegation and agent-as-tool call inside the runnable. */
  delegation?: DelegationHooks;
}

/** The verdict a {@link GuardrailTripError} carries: a text guardrail's, or a tool guardrail's `stop`. */
export type TripVerdict = GuardrailVerdict | Extract<ToolGuardrailDecision, { action: 'stop' }>;

/**
 * A guardrail tripped: the run ended. Names the guardrail and the stage,
 * carries its verdict and the run's trace at the trip (`trace`, live).
 *
 * @example
 * ```ts
 * try { await run(guarded, input, { adapter }) } catch (e) {
 *   if (e instanceof GuardrailTripError) console.log(e.guardrail, e.verdict.reason);
 * }
 * ```
 */
export class GuardrailTripError extends TroupeError {
  /** The guardrail that tripped. */
  readonly guardrail: string;
  /** Where it tripped. */
  readonly stage: GuardrailStage;
  /** Its verdict. */
  readonly verdict: TripVerdict;
  /** The run's op tree at the trip (its root is the run). */
  readonly trace: OpNode;

  constructor(
    trip: { guardrail: string; stage: GuardrailStage; verdict: TripVerdict; trace: OpNode; runnable?: string; agent?: string; tool?: string },
    options: { cause?: unknown } = {},
  ) {
    const reason = 'reason' in trip.verdict && trip.verdict.reason ? `: ${trip.verdict.reason}` : '';
    const where = trip.tool ? ` on tool "${trip.tool}"` : trip.runnable ? ` of "${trip.runnable}"` : '';
    super('guardrail_tripped', `Guardrail "${trip.guardrail}" tripped at the ${trip.stage} stage${where}${reason}`, {
      ...defined({ cause: options.cause }),
      details: {
        guardrail: trip.guardrail,
        stage: trip.stage,
        verdict: trip.verdict,
        ...defined({ runnable: trip.runnable }),
        ...defined({ agent: trip.agent }),
        ...defined({ tool: trip.tool }),
      },
    });
    this.guardrail = trip.guardrail;
    this.stage = trip.stage;
    this.verdict = trip.verdict;
    this.trace = trip.trace;
  }
}

/**
 * Declare a text guardrail from a name and a check.
 *
 * @example
 * ```ts
 * const noSecrets = defineGuardrail({
 *   name: 'no-secrets',
 *   check: (text) => ({ tripped: /api[_-]?key/i.test(text), reason: 'mentions an API key' }),
 * });
 * ```
 */
export function defineGuardrail(guardrail: Guardrail): Guardrail {
  if (!guardrail || typeof guardrail !== 'object') throw new ConfigurationError(`Expected a guardrail object, got ${describeValue(guardrail)}`);
  expectName(guardrail.name);
  if (typeof guardrail.check !== 'function') throw new ConfigurationError(`Guardrail "${guardrail.name}" needs a \`check\` function`);
  return guardrail;
}

/**
 * Declare a tool guardrail: a name, the tools it watches (default all), and
 * `beforeCall`, `afterCall` or both.
 *
 * @example
 * ```ts
 * const readOnly = defineToolGuardrail({
 *   name: 'read-only', tools: ['write_file'],
 *   beforeCall: () => ({ action: 'refuse', message: 'Writing files is not allowed here.' }),
 * });
 * ```
 */
export function defineToolGuardrail(guardrail: ToolGuardrail): ToolGuardrail {
  if (!guardrail || typeof guardrail !== 'object') throw new ConfigurationError(`Expected a tool guardrail object, got ${describeValue(guardrail)}`);
  expectName(guardrail.name);
  if (typeof guardrail.beforeCall !== 'function' && typeof guardrail.afterCall !== 'function') {
    throw new ConfigurationError(`Tool guardrail "${guardrail.name}" needs \`beforeCall\`, \`afterCall\` or both`);
  }
  if (guardrail.tools !== undefined && !(Array.isArray(guardrail.tools) && guardrail.tools.every((t) => typeof t === 'string'))) {
    throw new ConfigurationError(`Expected \`tools\` of tool guardrail "${guardrail.name}" to be a list of tool names, got ${describeValue(guardrail.tools)}`);
  }
  return guardrail;
}

function expectName(name: unknown): void {
  if (typeof name !== 'string' || name.trim() === '') throw new ConfigurationError(`Expected a guardrail \`name\` to be a non-empty string, got ${describeValue(name)}`);
}

/** A stage's guardrails: a list of guardrails with unique names. */
const guardrailList: OptionCheck = (name, value) => {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a list of guardrails, got ${describeValue(value)}`);
  const names = new Set<string>();
  for (const g of value as readonly Guardrail[]) {
    defineGuardrail(g);
    if (names.has(g.name)) throw new ConfigurationError(`Guardrail "${g.name}" is listed twice in \`${name}\``);
    names.add(g.name);
  }
};

/** The description {@link GuardrailOptions} are checked against (`withGuardrails`, a plan's and a worker's `guardrails`). */
export const guardrailOptions = defineOptions<GuardrailOptions>('withGuardrails', {
  input: guardrailList,
  parallelInput: boolean,
  output: guardrailList,
  stream: guardrailList,
  tools: (name, value) => {
    if (value === undefined) return;
    if (!Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a list of tool guardrails, got ${describeValue(value)}`);
    for (const g of value as readonly ToolGuardrail[]) defineToolGuardrail(g);
  },
  delegation: object,
});

/**
 * Check a {@link GuardrailOptions} object against {@link guardrailOptions}:
 * known keys, lists of guardrails with unique names per stage.
 * @internal
 */
export function validateGuardrailOptions(options: GuardrailOptions): GuardrailOptions {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected guardrail options to be an object, got ${describeValue(options)}`);
  return guardrailOptions.check(options);
}

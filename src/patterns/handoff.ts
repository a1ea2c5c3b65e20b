/**
 * handoff: run one runnable, then hand its output to the next, which owns
 * the final answer.
 * @module
 */
import type { RunContext } from '../core/context.js';
import { isCancellation } from '../core/context.js';
import { ConfigurationError, TroupeError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { delegate, delegationHooks } from '../core/delegate.js';
import type { DelegationHooks, DelegationMessage } from '../core/delegation.js';
import type { TroupeEvent } from '../core/events.js';
import { walk } from '../core/ops.js';
import { handoffHeading, section, requestSection } from '../text/headings.js';
import { defineOptions, func, nonEmptyString } from '../core/options.js';
import { delegationOption } from './checks.js';

/** Options of {@link handoff}. */
export interface HandoffOptions {
  /** The op name. Default: `"<from> -> <to>"`. */
  name?: string;
  /** Build the message `to` receives. Default: {@link formatHandoff}. */
  format?: (request: string, fromName: string, fromOutput: string) => string;
  /**
   * Hooks on the handoff (with those of guarded runnables around it): an
   * input filter on what `to` receives (its history holds the request, the
   * answers of the chain so far and the results of tools the sending side
   * called), a hook that may change or refuse it, and whether `to` is
   * enabled. A refused or disabled handoff leaves the sending side's answer
   * as the answer (a `handoff.declined` event says so).
   */
  delegation?: DelegationHooks;
}

/** What a handoff produces: the receiving side's outcome, plus the sending side's. */
export interface HandoffOutcome extends Outcome {
  /** The outcome of the sending side. */
  from: Outcome;
}

/**
 * The message the receiving side of a handoff gets: the original request
 * and the output of the side that handed off.
 */
export function formatHandoff(request: string, fromName: string, fromOutput: string): string {
  return `${requestSection(request)}\n\n${section(handoffHeading(fromName), fromOutput)}`;
}

/**
 * Run `from`, then `to` with the original request and `from`'s output; `to`
 * owns the answer. A failure names the stage that failed (`details.stage`);
 * the run's signal cancels the whole chain.
 *
 * A longer chain is a list: `handoff(draft, review, approve)` (or
 * `handoff([draft, review, approve])`) is `handoff(handoff(draft, review),
 * approve)`; each step gets the request and the output of the step before
 * it, and the last one owns the answer. Options come last: `format` applies
 * to every step, `name` to the whole chain.
 *
 * @example
 * ```ts
 * const chain = handoff(draft, review, approve);
 * const { output, agent } = await run(chain, 'Refund order 42', { adapter });
 * // agent === 'approve'
 * ```
 */
export function handoff(from: Runnable, to: Runnable, options?: HandoffOptions): Runnable<HandoffOutcome>;
export function handoff(...chain: [Runnable, Runnable, Runnable, ...Runnable[]]): Runnable<HandoffOutcome>;
export function handoff(...chain: [Runnable, Runnable, Runnable, ...Runnable[], HandoffOptions]): Runnable<HandoffOutcome>;
export function handoff(chain: readonly Runnable[], options?: HandoffOptions): Runnable<HandoffOutcome>;
export function handoff(...args: ReadonlyArray<Runnable | readonly Runnable[] | HandoffOptions | undefined>): Runnable<HandoffOutcome> {
  const [steps, options] = chainOf(args);
  // The format applies to every step; the name is the whole chain's.
  const inner: HandoffOptions = options.format === undefined ? {} : { format: options.format };
  let chain = pair(steps[0]!, steps[1]!, steps.length === 2 ? options : inner);
  for (let i = 2; i < steps.length; i++) chain = pair(chain, steps[i]!, i === steps.length - 1 ? options : inner);
  return chain;
}

/** The description {@link handoff} checks its options against. */
const handoffOptions = defineOptions<HandoffOptions>('handoff', { name: nonEmptyString, format: func, delegation: delegationOption });

/** The steps and options of a call of {@link handoff}, checked. */
function chainOf(args: ReadonlyArray<Runnable | readonly Runnable[] | HandoffOptions | undefined>): [Runnable[], HandoffOptions] {
  let steps: unknown[];
  let options: unknown;
  if (Array.isArray(args[0])) {
    if (args.length > 2) throw new ConfigurationError(`Expected handoff([steps], options?), got ${args.length} arguments`);
    steps = [...(args[0] as readonly unknown[])];
    options = args[1];
  } else {
    // Trailing options: an object that is not a runnable (or `undefined` after at least two steps).
    const last = args.at(-1);
    const hasOptions = (last === undefined && args.length > 2) || (typeof last === 'object' && last !== null && typeof (last as Runnable).run !== 'function');
    steps = hasOptions ? args.slice(0, -1) : [...args];
    options = hasOptions ? last : undefined;
  }
  if (steps.length < 2) throw new ConfigurationError(`Expected a handoff of at least two runnables, got ${steps.length}`);
  steps.forEach((r, i) => {
    if (!r || typeof (r as Runnable).run !== 'function') {
      const side = steps.length === 2 ? (i === 0 ? '`from`' : '`to`') : `step ${i + 1}`;
      throw new ConfigurationError(`Expected ${side} of a handoff to be a runnable, got ${describeValue(r)}`);
    }
  });
  return [steps as Runnable[], handoffOptions.check((options ?? {}) as HandoffOptions)];
}

/** One handoff: `from`, then `to`. */
function pair(from: Runnable, to: Runnable, options: HandoffOptions): Runnable<HandoffOutcome> {
  const name = options.name ?? `${from.name} -> ${to.name}`;
  const format = options.format ?? formatHandoff;
  return defineRunnable<HandoffOutcome>({
    name,
    kind: 'handoff',
    async run(input, ctx) {
      const hooked = delegationHooks(ctx, options.delegation).length > 0;
      const { outcome: first, tools } = hooked
        ? await withToolResults(ctx, () => stage(ctx, from, input, from.name, to.name))
        : { outcome: await stage(ctx, from, input, from.name, to.name), tools: [] };
      const built = format(input, first.agent, first.output);
      const history: DelegationMessage[] = [{ role: 'user', content: input }, ...answersOf((first as Partial<HandoffOutcome>).from), ...tools, { role: 'assistant', name: first.agent, content: first.output }];
      const decided = hooked ? await delegate(ctx, { kind: 'handoff', from: first.agent, to: to.name, input: built, history }, options.delegation) : { input: built };
      if ('refused' in decided) {
        ctx.emit('handoff.declined', { from: first.agent, to: to.name, reason: decided.disabled ? 'disabled' : 'refused' });
        return { output: first.output, agent: first.agent, status: first.status, from: first };
      }
      ctx.emit('handoff.started', { from: first.agent, to: to.name });
      const second = await stage(ctx, to, decided.input, from.name, to.name);
      ctx.emit('handoff.completed', { from: first.agent, to: to.name, agent: second.agent });
      return { output: second.output, agent: second.agent, status: second.status, from: first };
    },
  });
}

/** The answers of a handoff chain's earlier stages (an outcome's `from`, recursively), oldest first. */
function answersOf(outcome: Outcome | undefined): DelegationMessage[] {
  if (!outcome) return [];
  return [...answersOf((outcome as Partial<HandoffOutcome>).from), { role: 'assistant', name: outcome.agent, content: outcome.output }];
}

/** Run `body` (one runnable in `ctx`) and collect the results of the tools called under the op it opens. */
async function withToolResults(ctx: RunContext, body: () => Promise<Outcome>): Promise<{ outcome: Outcome; tools: DelegationMessage[] }> {
  const seen: Array<TroupeEvent<'tool.completed'>> = [];
  const listen = (event: TroupeEvent<'tool.completed'>) => void seen.push(event);
  const before = ctx.op.children.length;
  ctx.emitter.on('tool.completed', listen);
  try {
    const outcome = await body();
    const ops = new Set<string>();
    for (const child of ctx.op.children.slice(before)) walk(child, (node) => void ops.add(node.id));
    const tools = seen
      .filter((e) => e.opId !== undefined && ops.has(e.opId) && !e.isError)
      .map((e): DelegationMessage => ({ role: 'tool', name: e.name, content: e.content }));
    return { outcome, tools };
  } finally {
    ctx.emitter.off('tool.completed', listen);
  }
}

async function stage(ctx: RunContext, runnable: Runnable, input: string, fromName: string, toName: string): Promise<Outcome> {
  try {
    return await runnable.run(input, ctx);
  } catch (error) {
    if (isCancellation(error, ctx.signal)) throw error;
    // The innermost handoff names the stage; outer ones pass the error on.
    if (isTroupeError(error) && typeof error.details.stage === 'string') throw error;
    const code = isTroupeError(error) ? error.code : 'execution_failed';
    ctx.emit('handoff.failed', { from: fromName, to: toName, stage: runnable.name, error: errorMessage(error), code });
    if (isTroupeError(error, 'timeout')) throw error;
    throw new TroupeError(code, `Handoff stage "${runnable.name}" failed: ${errorMessage(error)}`, {
      cause: error,
      details: { ...(isTroupeError(error) ? error.details : {}), stage: runnable.name },
    });
  }
}

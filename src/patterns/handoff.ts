/**
 * handoff: run one runnable, then hand its output to the next, which owns
 * the final answer.
 * @module
 */
import type { RunContext } from '../core/context.js';
import { isCancellation } from '../core/context.js';
import { ConfigurationError, TroupeError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';

/** Options of {@link handoff}. */
export interface HandoffOptions {
  /** The op name. Default: `"<from> -> <to>"`. */
  name?: string;
  /** Build the message `to` receives. Default: {@link formatHandoff}. */
  format?: (request: string, fromName: string, fromOutput: string) => string;
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
  return `## ORIGINAL USER REQUEST\n${request}\n\n## HANDOFF FROM ${fromName}\n${fromOutput}`;
}

/**
 * Run `from`, then `to` with the original request and `from`'s output; `to`
 * owns the answer. A failure names the stage that failed (`details.stage`);
 * the run's signal cancels the whole chain. Nest handoffs for longer chains.
 *
 * @example
 * ```ts
 * const chain = handoff(handoff(draft, review), approve);
 * const { output, agent } = await run(chain, 'Refund order 42', { adapter });
 * // agent === 'approve'
 * ```
 */
export function handoff(from: Runnable, to: Runnable, options: HandoffOptions = {}): Runnable<HandoffOutcome> {
  for (const [side, r] of [['from', from], ['to', to]] as const) {
    if (!r || typeof r.run !== 'function') throw new ConfigurationError(`Expected \`${side}\` of a handoff to be a runnable, got ${describeValue(r)}`);
  }
  const name = options.name ?? `${from.name} -> ${to.name}`;
  const format = options.format ?? formatHandoff;
  return defineRunnable<HandoffOutcome>({
    name,
    kind: 'handoff',
    async run(input, ctx) {
      const first = await stage(ctx, from, input, from.name, to.name);
      ctx.emit('handoff.started', { from: first.agent, to: to.name });
      const second = await stage(ctx, to, format(input, first.agent, first.output), from.name, to.name);
      ctx.emit('handoff.completed', { from: first.agent, to: to.name, agent: second.agent });
      return { output: second.output, agent: second.agent, status: second.status, from: first };
    },
  });
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

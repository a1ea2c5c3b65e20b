/**
 * advisors: consult several runnables in parallel on the same input, then
 * give the main runnable the request enriched with their analysis.
 * @module
 */
import { withTimeout } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import { defineOptions, nonEmptyString, oneOf, positiveInteger, positiveNumber } from '../core/options.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import type { Usage } from '../core/usage.js';
import { fanOut } from './fan-out.js';
import { PROMPT_HEADINGS, fromHeading, section, requestSection } from '../text/headings.js';

/** Options of {@link advisors} and {@link consultAdvisors}. */
export interface AdvisorsOptions {
  /** `tolerate` (default): a failed advisor becomes a note; `fail`: the first failure fails the whole step. */
  onFailure?: 'tolerate' | 'fail';
  /** Most advisors running at once. Default: all of them. */
  maxParallel?: number;
  /** Time limit of each advisor, in ms, on the run's clock. Default: none. */
  timeoutMs?: number;
  /** The op name. Default: `"<main> + advisors"`. */
  name?: string;
}

/** The result of one advisor. */
export interface AdvisorResult {
  /** The advisor's name. */
  advisor: string;
  /** Whether it answered. */
  ok: boolean;
  /** Its answer, or the failure note. */
  output: string;
  /** Why it failed, when it did. */
  error?: string;
  /** Its usage. */
  usage?: Usage;
}

/** What an advisors step produces: the main runnable's outcome and the advice it got. */
export interface AdvisorsOutcome extends Outcome {
  /** Every advisor's result, in the order given. */
  advice: AdvisorResult[];
}

/**
 * The enriched message the main runnable receives: the request, then one
 * section per advisor.
 */
export function formatAdvice(request: string, advice: readonly AdvisorResult[]): string {
  const sections = advice.map((a) => section(fromHeading(a.advisor), a.output)).join('\n\n');
  return `${requestSection(request)}\n\n${PROMPT_HEADINGS.analysis}\n\n${sections}`;
}

/**
 * Run `list` in parallel on `input` (at most `maxParallel` at once, each with
 * its own time-out) and return their results in order. Used by
 * {@link advisors}, and by routers that consult advisors before choosing.
 */
export async function consultAdvisors(
  main: string,
  list: readonly Runnable[],
  input: string,
  ctx: RunContext,
  options: AdvisorsOptions = {},
): Promise<AdvisorResult[]> {
  advisorsOptions.check(options, '', 'consultAdvisors');
  const onFailure = options.onFailure ?? 'tolerate';
  const consult = async (advisor: Runnable, branch: RunContext): Promise<AdvisorResult> => {
    try {
      // Without a time-out the advisor runs in the branch as it is.
      const outcome =
        options.timeoutMs === undefined
          ? await advisor.run(input, branch)
          : await withTimeout((s) => advisor.run(input, branch.withSignal(s)), {
              signal: branch.signal,
              clock: ctx.clock,
              timeoutMs: options.timeoutMs,
              message: `Advisor "${advisor.name}" timed out after ${options.timeoutMs} ms`,
            });
      ctx.emit('advisor.completed', { main, advisor: advisor.name, output: outcome.output, usage: outcome.usage });
      return { advisor: advisor.name, ok: true, output: outcome.output, usage: outcome.usage };
    } catch (error) {
      // Cancelled: the run was, or (with `onFailure: 'fail'`) a sibling failed first.
      if (branch.signal.aborted) throw error;
      const reason = errorMessage(error);
      ctx.emit('advisor.failed', { main, advisor: advisor.name, error: reason, ...(isTroupeError(error) ? { code: error.code } : {}) });
      if (onFailure === 'fail') throw error;
      return { advisor: advisor.name, ok: false, output: `Advisor consultation failed for ${advisor.name}: ${reason}`, error: reason };
    }
  };
  return fanOut(ctx, list, consult, { maxParallel: options.maxParallel });
}

/**
 * Consult `list` in parallel on the same input, then run `main` with the
 * enriched message (`## ORIGINAL USER REQUEST` / `## ANALYSIS GATHERED` /
 * `### From <advisor>`). `main` owns the answer.
 *
 * @example
 * ```ts
 * const manager = advisors(lead, [risk, compliance], { timeoutMs: 30_000 });
 * const { output, advice } = await run(manager, 'Should we ship Friday?', { adapter });
 * ```
 */
export function advisors(main: Runnable, list: Runnable[], options: AdvisorsOptions = {}): Runnable<AdvisorsOutcome> {
  validateAdvisorsOptions(main.name, list, options);
  const name = options.name ?? `${main.name} + advisors`;
  return defineRunnable<AdvisorsOutcome>({
    name,
    kind: 'advisors',
    async run(input, ctx) {
      const advice = await consultAdvisors(main.name, list, input, ctx, options);
      const outcome = await main.run(formatAdvice(input, advice), ctx);
      return { output: outcome.output, agent: outcome.agent, status: outcome.status, advice };
    },
  });
}

/** The description {@link advisors} and {@link consultAdvisors} check their options against. */
export const advisorsOptions = defineOptions<AdvisorsOptions>('advisors', {
  onFailure: oneOf(['tolerate', 'fail']),
  maxParallel: positiveInteger,
  timeoutMs: positiveNumber,
  name: nonEmptyString,
});

/** Check the options of {@link advisors} eagerly. */
export function validateAdvisorsOptions(main: string, list: readonly Runnable[], options: AdvisorsOptions, of = 'advisors'): void {
  if (!Array.isArray(list) || list.some((a) => !a || typeof a.run !== 'function')) {
    throw new ConfigurationError(`Expected the advisors of "${main}" to be a list of runnables, got ${describeValue(list)}`);
  }
  advisorsOptions.check(options, '', of);
}

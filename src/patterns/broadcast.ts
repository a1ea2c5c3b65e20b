/**
 * broadcast: the same input to several runnables in parallel; the answer
 * is their labelled answers.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineOptions, nonEmptyString, positiveInteger } from '../core/options.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { fanOut } from './fan-out.js';
import { fromHeading, section } from '../text/headings.js';

/** Options of {@link broadcast}. */
export interface BroadcastOptions {
  /** The op name and the outcome's `agent`. Default: `broadcast`. */
  name?: string;
  /** Most runnables at once. Default: all of them. */
  maxParallel?: number;
}

/** What a broadcast produces: the labelled answers, and each outcome. */
export interface BroadcastOutcome extends Outcome {
  /** Each runnable's outcome, in the order given. */
  results: Array<{ name: string; outcome: Outcome }>;
}

/**
 * Send the same input to every runnable in parallel; the output is their
 * answers, each under a `### From <name>` heading, in the order given. The first
 * failure cancels the others and fails the broadcast.
 *
 * @example
 * ```ts
 * const panel = broadcast([optimist, pessimist], { name: 'panel' });
 * const { output } = await run(panel, 'Will it rain?', { adapter });
 * ```
 */
export function broadcast(list: Runnable[], options: BroadcastOptions = {}): Runnable<BroadcastOutcome> {
  broadcastOptions.check(options);
  const name = options.name ?? 'broadcast';
  checkList(name, list);
  const { maxParallel } = options;
  return defineRunnable<BroadcastOutcome>({
    name,
    kind: 'broadcast',
    async run(input, ctx) {
      const outcomes = await fanOut(ctx, list, (r, branch) => r.run(input, branch), { maxParallel });
      const results = outcomes.map((outcome, i) => ({ name: list[i]!.name, outcome }));
      ctx.emit('broadcast.completed', { name, answered: results.map((r) => r.name) });
      const output = results.map((r) => section(fromHeading(r.name), r.outcome.output)).join('\n\n');
      return { output, agent: name, status: 'completed', results };
    },
  });
}

/** The description {@link broadcast} checks its options against. */
const broadcastOptions = defineOptions<BroadcastOptions>('broadcast', { name: nonEmptyString, maxParallel: positiveInteger });

/** Check that `list` is a non-empty list of runnables. */
export function checkList(name: string, list: readonly Runnable[]): void {
  if (!Array.isArray(list) || list.length === 0 || list.some((r) => !r || typeof r.run !== 'function')) {
    throw new ConfigurationError(`Expected "${name}" to get a non-empty list of runnables, got ${describeValue(list)}`);
  }
}

/**
 * `withBudget`: any runnable under a budget of its own, ending with a
 * partial answer instead of an error when the budget runs out.
 * @module
 */
import { budgetExhaustion, validateBudget, type Budget } from '../core/budget.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { defineOptions, nonEmptyString } from '../core/options.js';

/** The description {@link withBudget} checks its options against. */
const withBudgetOptions = defineOptions<WithBudgetOptions>('withBudget', { name: nonEmptyString });

/** Options of {@link withBudget}. */
export interface WithBudgetOptions {
  /** The op's name. Default: the runnable's name. */
  name?: string;
}

/**
 * Run `runnable` under `budget` (tokens, cost, model calls, wall-clock
 * time; on top of every enclosing budget) in an op of kind `budget`. When a
 * budget stops it, the op resolves with status `budget-exhausted` and the
 * answer so far (the last answer of the agent that was stopped, or the
 * runnable's own outcome when it ends with `budget-exhausted` itself, as
 * loops and plans do) instead of rejecting; cancellations and other
 * failures reject as before.
 *
 * @example
 * ```ts
 * const capped = withBudget(orchestrate({ lead, workers }), { totalTokens: 50_000, costUsd: 0.25 });
 * const result = await run(capped, 'Write the release notes', { adapter });
 * if (result.status === 'budget-exhausted') console.log('Partial:', result.output);
 * ```
 */
export function withBudget(runnable: Runnable, budget: Budget, options: WithBudgetOptions = {}): Runnable<Outcome> {
  if (!runnable || typeof runnable.run !== 'function') throw new ConfigurationError(`Expected a runnable for withBudget, got ${describeValue(runnable)}`);
  validateBudget('budget', budget);
  withBudgetOptions.check(options);
  const name = options.name ?? runnable.name;
  return {
    name,
    kind: 'budget',
    run: (input, parent) =>
      parent.enter<Outcome>({ kind: 'budget', name, budget }, async (ctx) => {
        try {
          const outcome = await runnable.run(input, ctx);
          return { output: outcome.output, agent: outcome.agent, status: outcome.status };
        } catch (error) {
          const exhausted = budgetExhaustion(error, ctx.signal);
          if (!exhausted) throw error;
          return { output: exhausted.partial ?? '', agent: runnable.name, status: 'budget-exhausted' };
        }
      }),
  };
}

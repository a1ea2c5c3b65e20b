/**
 * withGuardrails: any runnable with guardrails on its input, its output
 * (whole and as it streams) and its tool calls, and hooks on its
 * delegations — for everything it runs, nested agents included.
 * @module
 */
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { runGuarded } from '../core/guard-scope.js';
import { validateGuardrailOptions, type GuardrailOptions } from '../core/guardrails.js';
import type { Outcome, Runnable } from '../core/runnable.js';

/**
 * Guard `runnable`. Its input guardrails run first (or alongside the first
 * model call, with `parallelInput`), its stream and tool guardrails watch
 * every model reply and tool call of everything it runs (nested agents,
 * sub-agents, agents called as tools), and its output guardrails check its
 * answer. A trip ends the whole run with a `GuardrailTripError` that names
 * the guardrail and carries its verdict and the trace so far; nothing
 * after the trip reaches a model or a tool. Opens a `guarded` op. The
 * guardrails are part of the runnable, so they go wherever it is run — a
 * plan chunk, a team, a worker process that has it in its registry.
 *
 * @example
 * ```ts
 * const safe = withGuardrails(assistant, {
 *   input: [defineGuardrail({ name: 'no-homework', check: (t) => ({ tripped: /homework/i.test(t) }) })],
 *   tools: [defineToolGuardrail({ name: 'no-deletes', tools: ['delete_file'], beforeCall: () => ({ action: 'stop', reason: 'deleting' }) })],
 * });
 * await run(safe, 'Summarise the report', { adapter });
 * ```
 */
export function withGuardrails<O extends Outcome>(runnable: Runnable<O>, options: GuardrailOptions): Runnable<O> {
  if (!runnable || typeof runnable.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable for withGuardrails, got ${describeValue(runnable)}`);
  }
  const guards = validateGuardrailOptions(options);
  const name = runnable.name;
  return {
    name,
    kind: 'guarded',
    run(input: string, parent: RunContext): Promise<O> {
      return parent.enter<O>({ kind: 'guarded', name }, (ctx) =>
        runGuarded(ctx, name, guards, input, async (inner) => {
          const { usage: _usage, ...rest } = await runnable.run(input, inner);
          return rest as Omit<O, 'usage'>;
        }),
      );
    },
  };
}

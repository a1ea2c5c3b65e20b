/**
 * asTool: a runnable offered to a model as a tool. The model calls it with
 * a task; the runnable runs nested in the caller's op (so its ops, events
 * and usage are part of the caller's), and its answer is the tool's result.
 * @module
 */
import { z } from 'zod';
import { ConfigurationError, TroupeError, describeValue } from '../core/errors.js';
import { delegate, enabledTargets } from '../core/delegate.js';
import type { DelegationHooks, DelegationMessage } from '../core/delegation.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { defineOptions, nonEmptyString, string } from '../core/options.js';
import { delegationOption } from './checks.js';

/** Options of {@link asTool}. */
export interface AsToolOptions {
  /** The tool's name (`[a-zA-Z0-9_-]{1,64}`). Default: the runnable's name with every other character written `_`. */
  name?: string;
  /** What the tool does, for the model. Default: `Ask <runnable> to do a task; returns its answer.` */
  description?: string;
  /**
   * Hooks on each call (with those of guarded runnables around it):
   * `enabled` decides, each time a session that has the tool opens, whether
   * it is offered at all; `inputFilter` and `beforeDelegation` shape or
   * refuse the task the runnable gets. A refusal is an error result the
   * calling model sees.
   */
  delegation?: DelegationHooks;
}

/** The description {@link asTool} checks its options against. */
const asToolOptions = defineOptions<AsToolOptions>('asTool', { name: nonEmptyString, description: string, delegation: delegationOption });

/** The arguments of a tool made by {@link asTool}. */
export interface AsToolArguments {
  /** What the runnable is asked to do: its whole input. */
  task: string;
}

/**
 * Offer `runnable` to a model as a tool. A call runs `runnable` on the
 * call's `task` inside a `subagent` op under the calling agent's op, with
 * the call's signal: its trace, events and usage roll up into the caller's.
 * Its output is the result; a failure becomes an error result the model
 * sees (the run goes on), a cancellation cancels.
 *
 * @example
 * ```ts
 * const researcher = agent({ name: 'researcher', system: 'Find sources.' });
 * const lead = agent({ name: 'lead', tools: [asTool(researcher, { description: 'Find sources on a topic' })] });
 * const { usage } = await run(lead, 'Write about tides', { adapter }); // the researcher's turns included
 * ```
 */
export function asTool(runnable: Runnable, options: AsToolOptions = {}): ToolDefinition<AsToolArguments> {
  if (!runnable || typeof runnable.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable for asTool, got ${describeValue(runnable)}`);
  }
  asToolOptions.check(options);
  const name = options.name ?? runnable.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return defineTool<AsToolArguments>({
    name,
    description: options.description ?? `Ask ${runnable.name} to do a task; returns its answer.`,
    parameters: z.object({ task: z.string().min(1).describe(`What ${runnable.name} should do, with everything it needs to know`) }),
    enabled: async ({ ctx, agent }) => (await enabledTargets(ctx, 'agent-tool', agent, [runnable.name], options.delegation)).length > 0,
    async execute({ task }, { ctx, agent, signal }) {
      const history: DelegationMessage[] = [{ role: 'assistant', name: agent, content: task }];
      const decided = await delegate(ctx, { kind: 'agent-tool', from: agent, to: runnable.name, input: task, history }, options.delegation);
      // Thrown, so that the calling model gets the refusal as an error result.
      if ('refused' in decided) throw new TroupeError('execution_failed', `Delegation refused: ${decided.refused}`);
      const outcome = await ctx.withSignal(signal).enter<Outcome>({ kind: 'subagent', name }, async (inner) => {
        const result = await runnable.run(decided.input, inner);
        return { output: result.output, agent: result.agent, status: result.status };
      });
      return outcome.output;
    },
  });
}

/**
 * sequential: runnables one after another, each seeing the request and the
 * answers before it; the last one owns the answer.
 * @module
 */
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { PROMPT_HEADINGS, fromHeading, section, requestSection } from '../text/headings.js';
import { checkList } from './broadcast.js';
import { defineOptions, nonEmptyString } from '../core/options.js';

/** The description {@link sequential} checks its options against. */
const sequentialOptions = defineOptions<SequentialOptions>('sequential', { name: nonEmptyString });

/** Options of {@link sequential}. */
export interface SequentialOptions {
  /** The op name. Default: `sequential`. */
  name?: string;
}

/** What a sequence produces: the last outcome, and every step's. */
export interface SequentialOutcome extends Outcome {
  /** Each step's outcome, in order. */
  steps: Array<{ name: string; outcome: Outcome }>;
}

/** The message step `n` receives: the request, then the earlier answers. */
export function formatEarlierAnswers(request: string, earlier: ReadonlyArray<{ name: string; outcome: Outcome }>): string {
  if (earlier.length === 0) return request;
  const sections = earlier.map((s) => section(fromHeading(s.name), s.outcome.output)).join('\n\n');
  return `${requestSection(request)}\n\n${PROMPT_HEADINGS.earlierAnswers}\n\n${sections}`;
}

/**
 * Run `list` in order; each step gets the request and every earlier answer.
 * The last step owns the answer.
 *
 * @example
 * ```ts
 * const pipeline = sequential([research, outline, write]);
 * const { output, agent } = await run(pipeline, 'A post on tide pools', { adapter });
 * ```
 */
export function sequential(list: Runnable[], options: SequentialOptions = {}): Runnable<SequentialOutcome> {
  sequentialOptions.check(options);
  const name = options.name ?? 'sequential';
  checkList(name, list);
  return defineRunnable<SequentialOutcome>({
    name,
    kind: 'sequential',
    async run(input, ctx) {
      const steps: Array<{ name: string; outcome: Outcome }> = [];
      for (const [i, step] of list.entries()) {
        const outcome = await step.run(formatEarlierAnswers(input, steps), ctx);
        steps.push({ name: step.name, outcome });
        ctx.emit('sequential.step', { name, step: i + 1, agent: outcome.agent });
      }
      const last = steps.at(-1)!.outcome;
      return { output: last.output, agent: last.agent, status: last.status, steps };
    },
  });
}

/**
 * Ready-made input filters for delegation hooks: build what the receiving
 * agent sees from the delegation's history.
 * @module
 */
import type { Delegation, DelegationMessage } from '../core/delegation.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { boolean, defineOptions } from '../core/options.js';
import { PROMPT_HEADINGS, fromHeading, section } from '../text/headings.js';

/**
 * Render messages as the sections a receiver reads, in the patterns'
 * headings: the request under `## ORIGINAL USER REQUEST`, then the
 * answers under `## EARLIER ANSWERS`, each under `### From <agent>` (a
 * tool's result under `### From <tool> (tool result)`).
 */
export function renderHistory(messages: readonly DelegationMessage[]): string {
  const parts: string[] = [];
  let answers = false;
  for (const m of messages) {
    if (m.role === 'user') {
      parts.push(section(PROMPT_HEADINGS.request, m.content));
      answers = false;
      continue;
    }
    if (!answers) parts.push(PROMPT_HEADINGS.earlierAnswers);
    answers = true;
    const heading = m.role === 'tool' ? fromHeading(m.name ?? 'a tool', 'tool result') : fromHeading(m.name ?? 'assistant');
    parts.push(section(heading, m.content));
  }
  return parts.join('\n\n');
}

/** Options of {@link lastMessages}. */
export interface LastMessagesOptions {
  /** Keep the first `user` message (the request) even when it is older than the last `n`. Default: true. */
  keepRequest?: boolean;
  /** Keep tool results. Default: true. */
  toolOutput?: boolean;
}

const lastMessagesOptions = defineOptions<LastMessagesOptions>('lastMessages', { keepRequest: boolean, toolOutput: boolean });

/**
 * An input filter: the receiver sees only the last `n` messages of the
 * delegation's history (after dropping tool results, with `toolOutput:
 * false`), and the request.
 *
 * @example
 * ```ts
 * handoff(research, writer, { delegation: { inputFilter: lastMessages(1, { keepRequest: false }) } });
 * ```
 */
export function lastMessages(n: number, options: LastMessagesOptions = {}): (delegation: Delegation) => string {
  if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(`Expected \`n\` of lastMessages to be a positive integer, got ${describeValue(n)}`);
  lastMessagesOptions.check(options);
  const keepRequest = options.keepRequest ?? true;
  return (delegation) => {
    const history = options.toolOutput === false ? delegation.history.filter((m) => m.role !== 'tool') : delegation.history;
    const request = keepRequest ? history.find((m) => m.role === 'user') : undefined;
    const last = history.slice(-n);
    return renderHistory(request && !last.includes(request) ? [request, ...last] : last);
  };
}

/**
 * An input filter: the receiver sees the whole history without tool results.
 *
 * @example
 * ```ts
 * handoff(researcher, writer, { delegation: { inputFilter: withoutToolOutput() } });
 * ```
 */
export function withoutToolOutput(): (delegation: Delegation) => string {
  return (delegation) => renderHistory(delegation.history.filter((m) => m.role !== 'tool'));
}

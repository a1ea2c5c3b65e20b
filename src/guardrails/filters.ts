/**
 * Ready-made input filters for delegation hooks: build what the receiving
 * agent sees from the delegation's history.
 * @module
 */
import type { Delegation, DelegationMessage } from '../core/delegation.js';
import { ConfigurationError, describeValue } from '../core/errors.js';

/** Render messages as the sections a receiver reads: `## REQUEST`, `## FROM <agent>`, `## TOOL RESULT <tool>`. */
export function renderHistory(messages: readonly DelegationMessage[]): string {
  return messages
    .map((m) => {
      const title = m.role === 'user' ? 'REQUEST' : m.role === 'tool' ? `TOOL RESULT${m.name ? ` ${m.name}` : ''}` : `FROM ${m.name ?? 'assistant'}`;
      return `## ${title}\n${m.content}`;
    })
    .join('\n\n');
}

/** Options of {@link lastMessages}. */
export interface LastMessagesOptions {
  /** Keep the first `user` message (the request) even when it is older than the last `n`. Default: true. */
  keepRequest?: boolean;
  /** Keep tool results. Default: true. */
  toolOutput?: boolean;
}

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

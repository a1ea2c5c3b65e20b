/**
 * `a2aAdapter(url)`: a remote A2A agent as a model adapter, so an `agent()`
 * can be one: an orchestrate worker, a team member, a plan role
 * (`roles: { Review: { adapter } }`). Each session is one A2A context (the
 * remote keeps the conversation); each turn is one task.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ConversationMessage, ModelAdapter, ModelSession, OpenSessionOptions, SessionEvent, SessionSpec } from '../../core/adapter.js';
import { throwIfAborted } from '../../core/abort.js';
import { A2AConnection } from './client.js';
import type { RemoteAgentCard } from './remote.js';
import { checkRemoteOptions, summary, type A2AAnswer } from './remote.js';
import type { A2AConnectionOptions } from './client.js';
import { connectionShape } from './options.js';
import { anything, defineOptions } from '../../core/options.js';

/** Options of {@link a2aAdapter}. */
export interface A2AAdapterOptions extends A2AConnectionOptions {
  /** Answers the remote agent's requests for input; without it such a turn fails with a `RemoteAgentError` (`input_required`). */
  answer?: A2AAnswer;
}

const a2aAdapterOptions = defineOptions<A2AAdapterOptions>('a2aAdapter', { ...connectionShape, answer: anything });

/** A model adapter whose model is a remote A2A agent. */
export interface A2AModelAdapter extends ModelAdapter {
  /** Read and check the agent's card (once; the first turn does it). */
  card(signal?: AbortSignal): Promise<RemoteAgentCard>;
}

/**
 * An adapter whose sessions talk to the A2A agent at `url`: each session
 * is one A2A context, each turn one task (its artifacts are the turn's
 * text, its reported usage the turn's usage, its updates streamed as
 * session events). The agent answers in text: no tool calls (agents on it
 * use the text forms of troupe's protocols). The card is checked as
 * {@link a2aAgent} checks it; aborting a turn cancels the remote task.
 *
 * @example
 * ```ts
 * const reviewer = agent({ name: 'reviewer', adapter: a2aAdapter('http://127.0.0.1:4100/reviewers') });
 * const loop = orchestrate({ lead, workers: [coder, reviewer] });
 * ```
 */
export function a2aAdapter(url: string, options: A2AAdapterOptions = {}): A2AModelAdapter {
  const href = checkRemoteOptions(url, options, a2aAdapterOptions);
  const { answer, ...connection } = options;
  const conn = new A2AConnection(href, connection);
  return {
    id: `a2a:${href}`,
    capabilities: { tools: false, streaming: true },
    card: async (signal) => summary(await conn.card(signal)),
    async openSession(spec: SessionSpec, opening: OpenSessionOptions = {}): Promise<ModelSession> {
      throwIfAborted(opening.signal);
      await conn.card(opening.signal);
      const contextId = randomUUID();
      const history = spec.history ?? [];
      let first = true;
      return {
        id: `a2a-${spec.agent}-${contextId}`,
        async send(input, opts = {}) {
          const signal = opts.signal ?? new AbortController().signal;
          const emit = (event: SessionEvent) => opts.onEvent?.(event);
          const said = typeof input === 'string' ? input : input.map((r) => `[${r.name}] ${r.content}`).join('\n\n');
          // A remote agent keeps its own context: a conversation continued from earlier runs (a thread) goes in the first message.
          const text = first && history.length > 0 ? `${renderHistory(history)}${said}` : said;
          first = false;
          const result = await conn.runTask(text, {
            signal,
            contextId,
            onUpdate: (update) => {
              if (update.kind === 'artifact') emit({ type: 'text-delta', text: update.text });
              else if (update.kind === 'status') emit({ type: 'log', message: `a2a task ${update.taskId}: ${update.state}`, data: update });
            },
            ...(answer ? { ask: (request) => answer({ ...request, signal }) } : {}),
          });
          return { text: result.output, toolCalls: [], ...(result.usage ? { usage: result.usage } : {}) };
        },
        async close() {},
      };
    },
  };
}

/** A continued conversation's earlier messages, before the first message to a remote agent. */
function renderHistory(history: readonly ConversationMessage[]): string {
  const lines = history.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.text}`);
  return `The conversation so far:\n\n${lines.join('\n\n')}\n\nUser: `;
}

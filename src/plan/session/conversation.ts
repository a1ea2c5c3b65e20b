/**
 * One helper shared by the decomposer and the aggregator: hold a text
 * conversation with a planning or synthesis agent, on a session the caller
 * gives, inside a run context, or in a run of its own.
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import type { Clock } from '../../core/clock.js';
import { RunContext } from '../../core/context.js';
import { ConfigurationError } from '../../core/errors.js';
import { totalUsage } from '../../core/ops.js';
import { run } from '../../core/run.js';
import { defineRunnable } from '../../core/runnable.js';
import { emptyUsage, type Usage } from '../../core/usage.js';
import { agent } from '../../patterns/agent.js';
import { defined } from '../../core/defined.js';
import { abortSignal, adapter, check, clock, finiteNumber, nonEmptyString, type OptionsShape } from '../../core/options.js';

/** Anything that answers text with text (an agent's `Conversation` is one). */
export interface TextSession {
  send(input: string, options?: { signal?: AbortSignal }): Promise<{ text: string }>;
}

/** Where a planning or synthesis conversation runs. */
export interface ConversationOptions {
  /** Use this session (you own it: it is not closed). */
  session?: TextSession;
  /** Or open an agent session on this adapter (default: the context's adapter). */
  adapter?: ModelAdapter;
  /** Run inside this context, so usage rolls up into its op tree. */
  ctx?: RunContext;
  /** Cancels the conversation. */
  signal?: AbortSignal;
  /** The clock, when running standalone. */
  clock?: Clock;
  /** The model of the session this opens. Default: the adapter's. */
  model?: string;
  /** The sampling temperature of the session this opens. */
  temperature?: number;
}

/** How {@link ConversationOptions} are checked: the shape the decomposer's and the aggregator's descriptions extend. */
export const conversationShape: OptionsShape<ConversationOptions> = {
  session: check('a text session (with send())', (v) => typeof (v as TextSession | null)?.send === 'function'),
  adapter,
  ctx: check('a RunContext', (v) => v instanceof RunContext),
  signal: abortSignal,
  clock,
  model: nonEmptyString,
  temperature: finiteNumber,
};

/** Run `body` with a conversation with agent `name`; returns its value and the conversation's usage. */
export async function withConversation<T>(
  name: string,
  system: string,
  options: ConversationOptions,
  body: (session: TextSession, signal: AbortSignal | undefined, ctx: RunContext | undefined) => Promise<T>,
): Promise<{ value: T; usage: Usage }> {
  if (options.session) return { value: await body(options.session, options.signal ?? options.ctx?.signal, options.ctx), usage: emptyUsage() };
  const speaker = agent({ name, system, ...defined({ adapter: options.adapter, model: options.model, temperature: options.temperature }) });
  let value: T | undefined;
  const runnable = defineRunnable({
    name,
    kind: 'agent',
    agent: name,
    async run(_input, ctx) {
      const conversation = await speaker.converse(ctx);
      try {
        value = await body(conversation, ctx.signal, ctx);
      } finally {
        await conversation.close().catch(() => undefined);
      }
      return { output: '', agent: name, status: 'completed' };
    },
  });
  if (options.ctx) {
    const ctx = options.signal ? options.ctx.withSignal(options.signal) : options.ctx;
    const before = ctx.op.children.length;
    await runnable.run('', ctx);
    const node = ctx.op.children[before];
    return { value: value as T, usage: node ? totalUsage(node) : emptyUsage() };
  }
  if (!options.adapter) throw new ConfigurationError(`Expected \`session\`, \`adapter\` or \`ctx\` for the ${name} conversation`);
  const result = await run(runnable, '', {
    adapter: options.adapter,
    ...defined({ signal: options.signal, clock: options.clock }),
  });
  return { value: value as T, usage: result.usage };
}

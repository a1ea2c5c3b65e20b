/**
 * The Vercel AI SDK adapter: one adapter for every provider the AI SDK
 * supports. The `ai` package is an optional peer, loaded on first use.
 * @module troupe/adapters/ai-sdk
 * @category Adapters
 */
import type { LanguageModel, ModelMessage, ToolSet } from 'ai';
import type { ModelAdapter, ModelSession, ModelTurn, OpenSessionOptions, SendOptions, SessionSpec, ToolCall, ToolResult } from '../core/adapter.js';
import { abortError, raceAbort, throwIfAborted } from '../core/abort.js';
import { AdapterError, ConfigurationError, RateLimitError, errorMessage } from '../core/errors.js';
import { retryAfterMs, type HeaderSource } from './retry-after.js';
import type { Usage } from '../core/usage.js';
import { defineOptions } from '../core/options.js';
import { loadPeer } from './peer.js';
import { defined } from '../core/defined.js';
import { aiSdkSettings, type AiSdkSettings } from './ai-sdk-options.js';

export type { AiSdkSettings } from './ai-sdk-options.js';

/**
 * Picks the language model for a session from the agent's `model` (or the
 * adapter's `defaultModel` when the agent names none). A provider instance
 * such as `anthropic` or `openai` is one.
 */
export type AiSdkModelResolver = (modelId: string) => LanguageModel | Promise<LanguageModel>;

/** Options of {@link aiSdkAdapter}. */
export interface AiSdkAdapterOptions extends AiSdkSettings {
  /**
   * The language model (`openai('gpt-4.1')`, `anthropic('claude-sonnet-4-5')`, a
   * gateway id string), or a function from the agent's `model` (else
   * `defaultModel`) to one: a provider instance such as `anthropic` is such a
   * function.
   */
  model: LanguageModel | AiSdkModelResolver;
}

const aiSdkAdapterOptions = defineOptions<AiSdkAdapterOptions>('aiSdkAdapter', {
  ...aiSdkSettings.shape,
  model: (_name, value) => {
    if (value === undefined || value === null) throw new ConfigurationError('aiSdkAdapter needs a `model`: a language model, a model id, or a function of the agent\'s model');
  },
});

/** The parts of the `ai` module this adapter uses. */
type AiModule = typeof import('ai');

/** A tool call as the AI SDK reports it (the fields shared by its 5.x and 6.x releases). */
interface SdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid?: boolean;
}

/** A step's usage as the AI SDK reports it (6.x has `inputTokenDetails`, 5.x `cachedInputTokens`). */
interface SdkUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  cachedInputTokens?: number | undefined;
  inputTokenDetails?: { cacheReadTokens?: number | undefined };
}

/**
 * An adapter over a Vercel AI SDK language model (install `ai` and a
 * provider package, e.g. `npm install ai @ai-sdk/openai`). Tools are passed
 * to the model without `execute`: troupe runs the tool loop.
 *
 * @example
 * ```ts
 * import { anthropic } from '@ai-sdk/anthropic';
 * // One model for every agent:
 * const fixed = aiSdkAdapter({ model: anthropic('claude-sonnet-4-5') });
 * // The agent's `model` through the provider, with a default for agents that name none:
 * const perAgent = aiSdkAdapter({ model: anthropic, defaultModel: 'claude-sonnet-4-5' });
 * ```
 */
export function aiSdkAdapter(options: AiSdkAdapterOptions): ModelAdapter {
  // Left out, the options still need a model.
  aiSdkAdapterOptions.check(options ?? ({} as AiSdkAdapterOptions));
  const streaming = options.streaming ?? true;
  let ai: Promise<AiModule> | undefined;
  let nextSession = 1;

  const resolveModel = async (spec: SessionSpec): Promise<LanguageModel> => {
    const { model } = options;
    const modelId = spec.model ?? options.defaultModel;
    if (typeof model === 'function') {
      if (modelId === undefined) {
        throw new ConfigurationError(
          `aiSdkAdapter: the agent "${spec.agent}" names no model; set \`model\` on the agent or \`defaultModel\` in the adapter options`,
          { details: { agent: spec.agent } },
        );
      }
      return model(modelId);
    }
    if (typeof model === 'string') return modelId ?? model;
    return model;
  };

  return {
    id: options.id ?? 'ai-sdk',
    capabilities: { tools: true, streaming, contextUsage: true },
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      throwIfAborted(signal);
      ai ??= loadPeer('ai', () => import('ai'), 'aiSdkAdapter');
      ai.catch(() => (ai = undefined));
      const sdk = await ai;
      const model = await resolveModel(spec);
      const tools: ToolSet = {};
      for (const t of spec.tools ?? []) tools[t.name] = sdk.tool({ description: t.description, inputSchema: sdk.jsonSchema(t.parameters) });
      // A conversation continued from earlier runs (a thread): its messages come before the first send.
      const messages: ModelMessage[] = (spec.history ?? []).map((m): ModelMessage => (m.role === 'user' ? { role: 'user', content: m.text } : { role: 'assistant', content: m.text }));
      const id = `ai-sdk-${nextSession++}`;

      const call = (turnMessages: ModelMessage[], turnSignal: AbortSignal | undefined) => ({
        model,
        messages: turnMessages,
        ...(spec.system !== undefined && { system: spec.system }),
        ...(spec.tools?.length && { tools }),
        ...(spec.temperature !== undefined && { temperature: spec.temperature }),
        ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
        ...(options.providerOptions !== undefined && { providerOptions: options.providerOptions as never }),
        ...(options.headers !== undefined && { headers: options.headers }),
        ...(turnSignal !== undefined && { abortSignal: turnSignal }),
      });

      return {
        id,
        async send(input: string | ToolResult[], sendOptions: SendOptions = {}): Promise<ModelTurn> {
          const turnSignal = sendOptions.signal;
          throwIfAborted(turnSignal);
          const added = toMessages(input);
          const turnMessages = [...messages, ...added];
          let reply: SdkReply;
          try {
            // raceAbort: reject at once on abort even if a provider ignores the signal.
            reply = await raceAbort(exchange(sdk, call(turnMessages, turnSignal), streaming, sendOptions), turnSignal);
          } catch (error) {
            throw sdkFailure(error, turnSignal);
          }
          const { text, calls, usage, response } = reply;
          // Keep the model's own assistant messages (they may carry reasoning and
          // provider metadata); tool results come from troupe in the next send.
          messages.push(...added, ...response.filter((m) => m.role === 'assistant'));
          const toolCalls = calls.map(toToolCall);
          for (const c of toolCalls) sendOptions.onEvent?.({ type: 'tool-call', call: c });
          return { text, toolCalls, usage: toUsage(usage) };
        },
        async close() {
          messages.length = 0;
        },
      };
    },
  };
}

/** What one exchange with the AI SDK gives back. */
interface SdkReply {
  text: string;
  calls: SdkToolCall[];
  usage: SdkUsage;
  response: ModelMessage[];
}

/** One call of `generateText`, or of `streamText` with its text deltas reported as they arrive. */
async function exchange(sdk: AiModule, request: Parameters<AiModule['generateText']>[0], streaming: boolean, sendOptions: SendOptions): Promise<SdkReply> {
  if (!streaming) {
    const result = await sdk.generateText(request);
    return { text: result.text, calls: result.toolCalls as SdkToolCall[], usage: result.usage as SdkUsage, response: result.response.messages };
  }
  // Errors arrive as `error` parts and are thrown below; keep the AI SDK from also logging them.
  const result = sdk.streamText({ ...(request as Parameters<AiModule['streamText']>[0]), onError: () => undefined });
  let text = '';
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') {
      text += part.text;
      sendOptions.onEvent?.({ type: 'text-delta', text: part.text });
    } else if (part.type === 'error') {
      throw part.error;
    } else if (part.type === 'abort') {
      throw abortError(sendOptions.signal);
    }
  }
  const [calls, usage, { messages: response }] = await Promise.all([result.toolCalls, result.usage, result.response]);
  return { text, calls: calls as SdkToolCall[], usage: usage as SdkUsage, response };
}

/** A failed AI SDK call as a troupe error: the abort's reason, a `RateLimitError` for HTTP 429, else an `AdapterError`. */
function sdkFailure(error: unknown, turnSignal: AbortSignal | undefined): Error {
  if (turnSignal?.aborted) return abortError(turnSignal);
  // An APICallError, or the last one of the AI SDK's own retries (RetryError.lastError).
  const failure = (error as { lastError?: unknown } | null)?.lastError ?? error;
  const status = (failure as { statusCode?: unknown } | null)?.statusCode;
  if (status === 429) {
    const wait = retryAfterMs((failure as { responseHeaders?: HeaderSource }).responseHeaders);
    return new RateLimitError(`AI SDK call was rate limited (HTTP 429): ${errorMessage(error)}`, {
      cause: error,
      details: { status },
      ...defined({ retryAfterMs: wait }),
    });
  }
  return new AdapterError(`AI SDK call failed: ${errorMessage(error)}`, {
    cause: error,
    ...(typeof status === 'number' && { details: { status } }),
  });
}

function toMessages(input: string | ToolResult[]): ModelMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (input.length === 0) return [];
  return [
    {
      role: 'tool',
      content: input.map((r) => ({
        type: 'tool-result' as const,
        toolCallId: r.callId,
        toolName: r.name,
        output: r.isError ? { type: 'error-text' as const, value: r.content } : { type: 'text' as const, value: r.content },
      })),
    },
  ];
}

function toToolCall(c: SdkToolCall): ToolCall {
  if (c.invalid) {
    return { id: c.toolCallId, name: c.toolName, arguments: undefined, rawArguments: typeof c.input === 'string' ? c.input : JSON.stringify(c.input) };
  }
  return { id: c.toolCallId, name: c.toolName, arguments: c.input ?? {} };
}

function toUsage(u: SdkUsage): Partial<Usage> {
  return {
    inputTokens: u.inputTokens ?? 0,
    outputTokens: u.outputTokens ?? 0,
    cachedTokens: u.inputTokenDetails?.cacheReadTokens ?? u.cachedInputTokens ?? 0,
  };
}

/**
 * The OpenAI-compatible adapter: Chat Completions through the official
 * `openai` package (an optional peer, loaded on first use). With `baseURL`
 * it speaks to any compatible server: OpenAI, Ollama, vLLM, the llama.cpp
 * server, LM Studio, OpenRouter.
 * @module troupe/adapters/openai
 * @category Adapters
 */
import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ModelAdapter, ModelSession, ModelTurn, OpenSessionOptions, SendOptions, SessionSpec, ToolCall, ToolResult } from '../core/adapter.js';
import { abortError, throwIfAborted } from '../core/abort.js';
import { AdapterError, ConfigurationError, RateLimitError, errorMessage } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import { defineOptions, object } from '../core/options.js';
import { loadPeer, parseArguments } from './peer.js';
import { retryAfterMs, type HeaderSource } from './retry-after.js';
import { defined } from '../core/defined.js';
import { openAISettings, type OpenAISettings } from './openai-options.js';

export type { OpenAISettings } from './openai-options.js';

/** Options of {@link openaiAdapter}. */
export interface OpenAIAdapterOptions extends OpenAISettings {
  /** A ready client; `baseURL`, `apiKey`, `maxRetries`, `timeoutMs` and `headers` are then ignored. */
  client?: OpenAI;
}

const openaiAdapterOptions = defineOptions<OpenAIAdapterOptions>('openaiAdapter', { ...openAISettings.shape, client: object });

/**
 * An adapter for any Chat Completions server, through the official `openai`
 * package (install it: `npm install openai`).
 *
 * @example
 * ```ts
 * const adapter = openaiAdapter({ baseURL: 'http://localhost:11434/v1', model: 'llama3.2' });
 * await run(agent({ name: 'helper' }), 'Hello', { adapter });
 * ```
 */
export function openaiAdapter(options: OpenAIAdapterOptions = {}): ModelAdapter {
  openaiAdapterOptions.check(options);
  const streaming = options.streaming ?? true;
  let client: Promise<OpenAI> | undefined;
  let nextSession = 1;

  const getClient = (): Promise<OpenAI> => {
    if (options.client) return Promise.resolve(options.client);
    client ??= loadPeer('openai', () => import('openai'), 'openaiAdapter').then((mod) => {
      const Client = (mod.default ?? (mod as unknown as { OpenAI: typeof OpenAI }).OpenAI) as typeof OpenAI;
      const apiKey = options.apiKey ?? process.env['OPENAI_API_KEY'] ?? (options.baseURL ? 'not-needed' : undefined);
      return new Client({
        ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
        ...(apiKey !== undefined && { apiKey }),
        ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
        ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
        ...(options.headers !== undefined && { defaultHeaders: options.headers }),
      });
    });
    client.catch(() => (client = undefined));
    return client;
  };

  return {
    id: options.id ?? 'openai',
    capabilities: { tools: true, streaming, contextUsage: true },
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      throwIfAborted(signal);
      const model = spec.model ?? options.model;
      if (!model) {
        throw new ConfigurationError(`openaiAdapter needs a model: set \`model\` on the agent "${spec.agent}" or in the adapter options`);
      }
      const openai = await getClient();
      const messages: ChatCompletionMessageParam[] = spec.system ? [{ role: 'system', content: spec.system }] : [];
      // A conversation continued from earlier runs (a thread): its messages come before the first send.
      for (const m of spec.history ?? []) messages.push({ role: m.role, content: m.text });
      const tools: ChatCompletionFunctionTool[] = (spec.tools ?? []).map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      const id = `openai-${nextSession++}`;
      return {
        id,
        async send(input: string | ToolResult[], sendOptions: SendOptions = {}): Promise<ModelTurn> {
          const turnSignal = sendOptions.signal;
          throwIfAborted(turnSignal);
          const added = toMessages(input);
          const body: ChatCompletionCreateParamsNonStreaming = {
            ...(options.extraBody as object),
            model,
            messages: [...messages, ...added],
            ...(tools.length > 0 && { tools }),
            ...(spec.temperature !== undefined && { temperature: spec.temperature }),
          };
          // The SDK adds an abort listener to the signal it is given and never removes it: give it
          // a signal of this call only, so a long-lived signal (a run's) does not collect one per turn.
          const call = turnSignal ? new AbortController() : undefined;
          const forward = () => call?.abort(turnSignal?.reason);
          turnSignal?.addEventListener('abort', forward, { once: true });
          const requestOptions = call ? { signal: call.signal } : {};
          let turn: ModelTurn;
          try {
            if (streaming) {
              const stream = await openai.chat.completions.create(
                { ...body, stream: true, stream_options: { include_usage: true } },
                requestOptions,
              );
              turn = await collectStream(stream, sendOptions);
            } else {
              const completion = await openai.chat.completions.create(body, requestOptions);
              turn = fromCompletion(completion);
            }
          } catch (error) {
            throw toAdapterError(error, turnSignal, endpoint(openai.baseURL));
          } finally {
            turnSignal?.removeEventListener('abort', forward);
          }
          // History grows only once the turn succeeded, so a failed turn may be sent again.
          messages.push(...added, assistantMessage(turn));
          return turn;
        },
        async close() {
          messages.length = 0;
        },
      };
    },
  };
}

function toMessages(input: string | ToolResult[]): ChatCompletionMessageParam[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return input.map((r) => ({ role: 'tool', tool_call_id: r.callId, content: r.content }));
}

function assistantMessage(turn: ModelTurn): ChatCompletionMessageParam {
  if (turn.toolCalls.length === 0) return { role: 'assistant', content: turn.text };
  return {
    role: 'assistant',
    content: turn.text || null,
    tool_calls: turn.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments ?? {}) },
    })),
  };
}

function toolCall(id: string, name: string, raw: string): ToolCall {
  return { id, name, ...parseArguments(raw) };
}

function fromUsage(usage: CompletionUsage | null | undefined): Partial<Usage> | undefined {
  if (!usage) return undefined;
  return {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

function fromCompletion(completion: ChatCompletion): ModelTurn {
  const message = completion.choices[0]?.message;
  const toolCalls: ToolCall[] = [];
  for (const c of message?.tool_calls ?? []) {
    if (c.type === 'function') toolCalls.push(toolCall(c.id, c.function.name, c.function.arguments));
  }
  const usage = fromUsage(completion.usage);
  return { text: message?.content ?? '', toolCalls, ...(usage && { usage }) };
}

/** Assemble a streamed turn: text deltas are reported as they come, tool calls are put together from their fragments. */
async function collectStream(stream: AsyncIterable<ChatCompletionChunk>, sendOptions: SendOptions): Promise<ModelTurn> {
  let text = '';
  let usage: Partial<Usage> | undefined;
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for await (const chunk of stream) {
    if (chunk.usage) usage = fromUsage(chunk.usage);
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      text += delta.content;
      sendOptions.onEvent?.({ type: 'text-delta', text: delta.content });
    }
    for (const part of delta.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', args: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.args += part.function.arguments;
      calls.set(part.index, call);
    }
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => toolCall(c.id || `call_${index}`, c.name, c.args));
  for (const call of toolCalls) sendOptions.onEvent?.({ type: 'tool-call', call });
  return { text, toolCalls, ...(usage && { usage }) };
}

/** The base URL for a message: no user name, password, query or fragment, so no credential a URL may carry is shown. */
function endpoint(baseURL: string): string {
  if (!URL.canParse(baseURL)) return '(an unparsable base URL)';
  const url = new URL(baseURL);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.href.replace(/\/$/, '');
}

/** The error of a failed request, naming the server it went to (never the key). */
function toAdapterError(error: unknown, signal: AbortSignal | undefined, baseURL: string): Error {
  if (signal?.aborted) return abortError(signal);
  const status = (error as { status?: unknown } | null)?.status;
  const request = `Chat Completions request to ${baseURL}`;
  if (status === 429) {
    const wait = retryAfterMs((error as { headers?: HeaderSource }).headers);
    return new RateLimitError(`${request} was rate limited (HTTP 429)${wait === undefined ? '' : `; retry after ${wait} ms`}: ${errorMessage(error)}`, {
      cause: error,
      details: { status, baseURL },
      ...defined({ retryAfterMs: wait }),
    });
  }
  if (typeof status === 'number') {
    return new AdapterError(`${request} failed with HTTP ${status}: ${errorMessage(error)}`, {
      cause: error,
      details: { status, baseURL },
    });
  }
  return new AdapterError(`${request} failed: ${errorMessage(error)}`, { cause: error, details: { baseURL } });
}

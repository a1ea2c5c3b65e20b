/**
 * The scripted adapter: a deterministic model for tests, examples and the
 * demo. Replies come from per-agent queues, rules (agent name, a pattern on
 * the input) or a fallback; latency runs on the injected clock; faults can
 * be injected.
 * @module troupe/adapters/scripted
 * @category Adapters
 */
import type {
  AdapterCapabilities,
  ListModelsOptions,
  ModelAdapter,
  ModelSession,
  ModelTurn,
  OpenSessionOptions,
  SendOptions,
  SessionSpec,
  ToolCall,
  ToolResult,
} from '../core/adapter.js';
import { raceAbort } from '../core/abort.js';
import { abortError, realClock, sleep, type Clock } from '../core/clock.js';
import { AdapterError } from '../core/errors.js';
import { anything, clock as clockCheck, defineOptions, listOf, nonNegativeNumber, object, string } from '../core/options.js';
import type { Usage } from '../core/usage.js';

/** A scripted turn. A plain string is a text reply. */
export interface ScriptedTurn {
  /** The reply text. */
  text?: string;
  /** Tool calls to request (ids are generated when absent). */
  toolCalls?: Array<{ name: string; arguments?: unknown; id?: string }>;
  /** Usage to report; default: estimated from the text (4 characters a token). */
  usage?: Partial<Usage>;
  /** Extra latency for this turn, on the adapter's clock. */
  delayMs?: number;
  /**
   * Stream the reply in these pieces (the text is their concatenation when
   * `text` is absent), one `text-delta` event each, `chunkDelayMs` apart on
   * the adapter's clock: for tests of what watches a stream.
   */
  chunks?: string[];
  /** Wait between two `chunks`, on the adapter's clock. Default: 0. */
  chunkDelayMs?: number;
  /**
   * Inject a fault: `throw` rejects with an `AdapterError` (message from
   * `error`); `hang` waits until the send is aborted; `malformed-tool-call`
   * returns a tool call whose arguments are not JSON; `empty` returns an
   * empty reply.
   */
  fault?: 'throw' | 'hang' | 'malformed-tool-call' | 'empty';
  /** The error to throw for `fault: 'throw'`. */
  error?: string | Error;
}

/** What a reply function receives. */
export interface ScriptedRequest {
  /** The agent the session speaks for. */
  agent: string;
  /** The session's id. */
  sessionId: string;
  /** The raw input. */
  input: string | ToolResult[];
  /** The input as text (tool results rendered one per line). */
  text: string;
  /** 1-based turn number within the session. */
  turn: number;
  /** The session's spec. */
  spec: SessionSpec;
  /** Earlier inputs of the same session, as text. */
  history: readonly string[];
}

/** A reply: text, a turn, or a function of the request returning either. */
export type ScriptedReply = string | ScriptedTurn | ((request: ScriptedRequest) => string | ScriptedTurn | Promise<string | ScriptedTurn>);

/** A rule: when it matches, its reply is used. */
export interface ScriptedRule {
  /** The agent name (exact) or a pattern on it. Absent: any agent. */
  agent?: string | RegExp;
  /** A substring of the input text, a pattern on it, or a predicate. Absent: any input. */
  match?: string | RegExp | ((request: ScriptedRequest) => boolean);
  /** The reply; a list is used in order, its last entry repeating. */
  reply: ScriptedReply | ScriptedReply[];
  /** How many times the rule may fire. Default: unlimited. */
  times?: number;
}

/** Options of {@link scriptedAdapter}. */
export interface ScriptedAdapterOptions {
  /** The adapter's id. Default: `scripted`. */
  id?: string;
  /** Per-agent queues, consumed first, one reply per turn. */
  replies?: Record<string, ScriptedReply[]>;
  /** Rules, tried in order after the queues. */
  rules?: ScriptedRule[];
  /** The reply when nothing else matches. Default: an `AdapterError` naming the agent and input. */
  fallback?: ScriptedReply;
  /** Latency of every turn, on `clock`. Default: 0. */
  latencyMs?: number;
  /** The clock for latency. Default: the real clock. */
  clock?: Clock;
  /** Capability flags. Default: tools and streaming. */
  capabilities?: Partial<AdapterCapabilities>;
  /** The models `listModels` reports. Default: none, and the adapter has no `listModels` (it cannot tell). */
  models?: readonly string[];
}

/** One call the scripted adapter received, for assertions. */
export interface ScriptedCall {
  /** The agent of the session. */
  agent: string;
  /** The session's id. */
  sessionId: string;
  /** 1-based turn number within the session. */
  turn: number;
  /** What the turn received. */
  input: string | ToolResult[];
  /** The input as text (tool results rendered as lines). */
  text: string;
  /** The spec the session was opened with. */
  spec: SessionSpec;
}

/** The scripted adapter, with what it received. */
export interface ScriptedAdapter extends ModelAdapter {
  /** Every send, in order. */
  readonly calls: ScriptedCall[];
  /** Every session spec opened, in order. */
  readonly sessions: SessionSpec[];
  /** Number of sessions closed. */
  readonly closedSessions: number;
  /** The inputs (as text) sent to one agent, in order. */
  inputsOf(agent: string): string[];
  /** Add replies to an agent's queue. */
  enqueue(agent: string, ...replies: ScriptedReply[]): void;
}

/** Render an input as text: strings as they are, tool results one per line. */
export function inputText(input: string | ToolResult[]): string {
  if (typeof input === 'string') return input;
  return input.map((r) => `[${r.isError ? 'tool error' : 'tool result'} ${r.name}#${r.callId}] ${r.content}`).join('\n');
}

/** Estimated tokens of a text (4 characters a token, at least 1 for non-empty text). */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

const scriptedAdapterOptions = defineOptions<ScriptedAdapterOptions>('scriptedAdapter', {
  id: string,
  replies: object,
  rules: listOf(object),
  fallback: anything,
  latencyMs: nonNegativeNumber,
  clock: clockCheck,
  capabilities: object,
  models: listOf(string),
});

/**
 * Create a scripted adapter.
 *
 * @example
 * ```ts
 * const adapter = scriptedAdapter({
 *   replies: { triage: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'billing' } }] }] },
 *   rules: [{ agent: 'billing', reply: 'Refund issued.' }],
 * });
 * ```
 */
export function scriptedAdapter(options: ScriptedAdapterOptions = {}): ScriptedAdapter {
  scriptedAdapterOptions.check(options);
  const clock = options.clock ?? realClock;
  const queues = new Map<string, ScriptedReply[]>(Object.entries(options.replies ?? {}).map(([k, v]) => [k, [...v]]));
  const rules = (options.rules ?? []).map((rule) => ({ rule, fired: 0 }));
  const calls: ScriptedCall[] = [];
  const sessions: SessionSpec[] = [];
  let closedSessions = 0;
  let nextSession = 1;
  let nextCall = 1;

  const pick = (req: ScriptedRequest): ScriptedReply | undefined => {
    const queue = queues.get(req.agent);
    if (queue && queue.length > 0) return queue.shift();
    for (const entry of rules) {
      const { rule } = entry;
      if (rule.times !== undefined && entry.fired >= rule.times) continue;
      if (!matchesAgent(rule.agent, req.agent) || !matchesInput(rule.match, req)) continue;
      const index = entry.fired++;
      if (Array.isArray(rule.reply)) return rule.reply[Math.min(index, rule.reply.length - 1)];
      return rule.reply;
    }
    return options.fallback;
  };

  const adapter: ScriptedAdapter = {
    id: options.id ?? 'scripted',
    capabilities: { tools: true, streaming: true, ...options.capabilities },
    calls,
    sessions,
    get closedSessions() {
      return closedSessions;
    },
    inputsOf(agent) {
      return calls.filter((c) => c.agent === agent).map((c) => c.text);
    },
    enqueue(agent, ...replies) {
      const q = queues.get(agent) ?? [];
      q.push(...replies);
      queues.set(agent, q);
    },
    ...(options.models === undefined
      ? {}
      : {
          async listModels({ signal }: ListModelsOptions = {}): Promise<readonly string[]> {
            if (signal?.aborted) throw abortError(signal);
            return [...options.models!];
          },
        }),
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      if (signal?.aborted) throw abortError(signal);
      sessions.push(spec);
      const id = `scripted-${nextSession++}`;
      const history: string[] = [];
      let turn = 0;
      return {
        id,
        async send(input: string | ToolResult[], sendOptions: SendOptions = {}): Promise<ModelTurn> {
          const { signal: turnSignal } = sendOptions;
          if (turnSignal?.aborted) throw abortError(turnSignal);
          turn++;
          const text = inputText(input);
          const req: ScriptedRequest = { agent: spec.agent, sessionId: id, input, text, turn, spec, history: [...history] };
          calls.push({ agent: spec.agent, sessionId: id, turn, input, text, spec });
          history.push(text);
          const chosen = pick(req);
          if (chosen === undefined) {
            throw new AdapterError(
              `Scripted adapter has no reply for agent "${spec.agent}" (turn ${turn}); input: ${JSON.stringify(text.slice(0, 120))}`,
              { details: { agent: spec.agent, turn } },
            );
          }
          const resolved = typeof chosen === 'function' ? await chosen(req) : chosen;
          const scripted: ScriptedTurn = typeof resolved === 'string' ? { text: resolved } : resolved;
          const delay = (options.latencyMs ?? 0) + (scripted.delayMs ?? 0);
          if (delay > 0) await sleep(clock, delay, turnSignal);
          if (scripted.chunks && adapter.capabilities.streaming) {
            await streamChunks(scripted.chunks, scripted.chunkDelayMs ?? 0, clock, sendOptions);
            return scriptedTurn({ ...scripted, text: scripted.text ?? scripted.chunks.join('') }, req, { streaming: false, sendOptions, callId: () => `call_${nextCall++}` });
          }
          return scriptedTurn(scripted, req, { streaming: adapter.capabilities.streaming, sendOptions, callId: () => `call_${nextCall++}` });
        },
        async close() {
          closedSessions++;
        },
      };
    },
  };
  return adapter;
}

/** Emit `chunks` as text deltas, `delayMs` apart on `clock`; an abort stops the stream. */
async function streamChunks(chunks: readonly string[], delayMs: number, clock: Clock, sendOptions: SendOptions): Promise<void> {
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && delayMs > 0) await sleep(clock, delayMs, sendOptions.signal);
    if (sendOptions.signal?.aborted) throw abortError(sendOptions.signal);
    sendOptions.onEvent?.({ type: 'text-delta', text: chunks[i]! });
  }
}

/** The model turn a scripted reply stands for: its fault, or its text and tool calls with usage (estimated when not given). */
function scriptedTurn(
  scripted: ScriptedTurn,
  req: ScriptedRequest,
  how: { streaming: boolean; sendOptions: SendOptions; callId: () => string },
): ModelTurn | Promise<ModelTurn> {
  const { spec, text, turn } = req;
  switch (scripted.fault) {
    case 'throw':
      throw scripted.error instanceof Error ? scripted.error : new AdapterError(scripted.error ?? `Scripted fault for agent "${spec.agent}"`);
    case 'hang':
      return raceAbort(new Promise<ModelTurn>(() => undefined), how.sendOptions.signal);
    case 'empty':
      return { text: '', toolCalls: [], usage: { inputTokens: estimateTokens(text), outputTokens: 0 } };
    case 'malformed-tool-call':
      return { text: '', toolCalls: [{ id: how.callId(), name: scripted.toolCalls?.[0]?.name ?? 'unknown', arguments: undefined, rawArguments: '{"broken": ' }] };
    default:
      break;
  }
  const outText = scripted.text ?? '';
  const toolCalls: ToolCall[] = (scripted.toolCalls ?? []).map((c) => ({ id: c.id ?? how.callId(), name: c.name, arguments: c.arguments ?? {} }));
  if (outText && how.streaming) how.sendOptions.onEvent?.({ type: 'text-delta', text: outText });
  const usage: Partial<Usage> = scripted.usage ?? {
    inputTokens: estimateTokens(text) + (turn === 1 ? estimateTokens(spec.system ?? '') + (spec.history ?? []).reduce((n, m) => n + estimateTokens(m.text), 0) : 0),
    outputTokens: estimateTokens(outText) + toolCalls.length * 8,
  };
  return { text: outText, toolCalls, usage };
}

function matchesAgent(pattern: string | RegExp | undefined, agent: string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? pattern === agent : pattern.test(agent);
}

function matchesInput(match: ScriptedRule['match'], req: ScriptedRequest): boolean {
  if (match === undefined) return true;
  if (typeof match === 'string') return req.text.includes(match);
  if (match instanceof RegExp) return match.test(req.text);
  return match(req);
}

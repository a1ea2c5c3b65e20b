/**
 * A connection to a remote A2A agent: its card read and checked first,
 * then tasks sent over the SDK's client (JSON-RPC or HTTP+JSON, A2A 1.0 or
 * 0.3), followed to their end through streams (or polling, for agents that
 * do not stream), with the remote's input requests handed to the caller,
 * cancellation carried to the remote task, and every failure a
 * {@link RemoteAgentError}.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { AgentCard, Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { abortError, realClock, sleep, type Clock } from '../../core/clock.js';
import { combineSignals, timeoutSignal, type TimeoutSignal } from '../../core/abort.js';
import { readBodyText } from '../http/body.js';
import { TroupeError, errorMessage } from '../../core/errors.js';
import type { Usage } from '../../core/usage.js';
import { AGENT_CARD_PATH } from './card.js';
import { RemoteAgentError, type RemoteAgentErrorReason } from './errors.js';
import type { A2ATaskState } from './events.js';
import { loadA2AClientSdk, type A2AClientSdk } from './sdk.js';
import { TROUPE_EVENT_KEY } from './stream.js';
import { artifactText, dataPart, isInterruptedState, isTerminalState, message, partsText, stateName, textPart } from './wire.js';

/** Headers for every request to the agent (its card included): fixed, or made per request (a fresh token). */
export type A2AHeaders = Record<string, string> | ((signal: AbortSignal) => Record<string, string> | Promise<Record<string, string>>);

/** How to reach a remote agent and what to expect of it. */
export interface A2AConnectionOptions {
  /** The skill (id or name) the card must list, or several; a card without them is refused. */
  skill?: string | readonly string[];
  /** Headers for every request (authentication). */
  headers?: A2AHeaders;
  /** Origins other than the card's where its endpoint may be (a card naming another origin is refused). */
  allowedOrigins?: readonly string[];
  /** The card's path under the agent's URL, when `url` is not the card's own URL. Default: `/.well-known/agent-card.json`. */
  cardPath?: string;
  /** The time-out of each request but the task's own stream (the card, cancel, get), in ms. Default: 10000. */
  requestTimeoutMs?: number;
  /** The largest card read, in bytes. Default: 1048576. */
  maxCardBytes?: number;
  /** How often a task of an agent that does not stream is read, in ms. Default: 500. */
  pollMs?: number;
  /** Times a broken stream is reconnected (SubscribeToTask) while the agent still answers. Default: 3. */
  reconnects?: number;
  /** The clock of polling. Default: the real clock. */
  clock?: Clock;
}

/** The card, as checked, and the interface used. */
export interface CheckedCard {
  card: AgentCard;
  cardUrl: string;
  endpoint: string;
  binding: string;
  version: string;
  streaming: boolean;
}

/** What a remote task ended with. */
export interface RemoteTaskResult {
  taskId: string;
  contextId: string;
  /** The artifacts' text (or the last message's, when there is no artifact). */
  output: string;
  /** The usage the agent reported, if it did. */
  usage?: Usage;
  /** The troupe status a troupe agent reported (`goal-met`, `max-iterations` ...). */
  status?: string;
}

/** A request of the remote agent for input. */
export interface RemoteInputRequest {
  taskId: string;
  contextId: string;
  /** The agent's message, as text. */
  prompt: string;
  /** The message's first data part (a troupe agent's request: kind, answer schema ...). */
  data?: unknown;
}

/** What a task run reports while it goes. */
export interface TaskHooks {
  signal: AbortSignal;
  /** Every update as it arrives (after it was applied). */
  onUpdate?: (update: TaskUpdate) => void;
  /** Answer the agent's request for input: text, or a structured answer (a data part). */
  ask?: (request: RemoteInputRequest) => Promise<string | Record<string, unknown>>;
  /** The remote task was asked to stop, and whether it took it. */
  onCancelled?: (taskId: string, acknowledged: boolean, error?: string) => void;
  /** The context to send the task in (a conversation). Default: a new one. */
  contextId?: string;
}

/** One update of a remote task, as troupe reads it. */
export type TaskUpdate =
  | { kind: 'status'; taskId: string; contextId: string; state: A2ATaskState; text?: string; changed: boolean }
  | { kind: 'artifact'; taskId: string; artifactId: string; name?: string; text: string; append: boolean }
  | { kind: 'troupe-event'; taskId: string; event: { type: string } & Record<string, unknown> };

const ACCEPTED_OUTPUT = ['text/plain', 'application/json'];

/** A connection to one remote agent (its card is read once, on first use). */
export class A2AConnection {
  readonly url: string;
  readonly #options: A2AConnectionOptions;
  #checked: Promise<{ checked: CheckedCard; client: Client; sdk: A2AClientSdk }> | undefined;

  constructor(url: string, options: A2AConnectionOptions) {
    this.url = url;
    this.#options = options;
  }

  get #clock(): Clock {
    return this.#options.clock ?? realClock;
  }

  /** A signal that times one request out after `requestTimeoutMs`, on the clock; clear it when the request is done. */
  #requestTimeout(): TimeoutSignal {
    return timeoutSignal(this.#options.requestTimeoutMs ?? 10_000, this.#clock);
  }

  /** The card, read and checked (once; a failure is tried again next time). */
  async card(signal?: AbortSignal): Promise<CheckedCard> {
    return (await this.#connect(signal)).checked;
  }

  #connect(signal?: AbortSignal) {
    const pending = (this.#checked ??= this.#open(signal));
    pending.catch(() => {
      if (this.#checked === pending) this.#checked = undefined;
    });
    return pending;
  }

  async #open(signal?: AbortSignal) {
    const sdk = await loadA2AClientSdk('a2aAgent');
    const fetchImpl = this.#fetch();
    const { json, cardUrl } = await this.#fetchCard(fetchImpl, signal);
    const checked = checkCard(sdk, json, cardUrl, this.#options);
    const options = sdk.ClientFactoryOptions.createFrom(sdk.ClientFactoryOptions.default, {
      transports: [new sdk.JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }), new sdk.RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      clientConfig: { polling: !checked.streaming, acceptedOutputModes: ACCEPTED_OUTPUT },
    });
    const only: AgentCard = { ...checked.card, supportedInterfaces: checked.card.supportedInterfaces.filter((i) => i.url === checked.endpoint && i.protocolBinding === checked.binding) };
    const client = await new sdk.ClientFactory(options).createFromAgentCard(only);
    return { checked, client, sdk };
  }

  /** `fetch` with the connection's headers. */
  #fetch(): typeof fetch {
    const headers = this.#options.headers;
    return async (input, init) => {
      let request = init;
      if (headers !== undefined) {
        const extra = typeof headers === 'function' ? await headers(init?.signal ?? new AbortController().signal) : headers;
        const merged = new Headers(init?.headers);
        for (const [name, value] of Object.entries(extra)) merged.set(name, value);
        request = { ...init, headers: merged };
      }
      const response = await fetch(input, request);
      // A refusal of the credentials is the same on every binding: said here, before the SDK reads the body.
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel().catch(() => undefined);
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        throw new RemoteAgentError('auth_required', `${url} refused the request (HTTP ${response.status}): give \`headers\` to authenticate`, { details: { url: this.url, status: response.status } });
      }
      return response;
    };
  }

  async #fetchCard(fetchImpl: typeof fetch, signal?: AbortSignal): Promise<{ json: unknown; cardUrl: string }> {
    const cardUrl = cardUrlOf(this.url, this.#options.cardPath);
    const timeout = this.#requestTimeout();
    const max = this.#options.maxCardBytes ?? 1_048_576;
    let text: string;
    try {
      const response = await fetchImpl(cardUrl, { headers: { accept: 'application/json', 'A2A-Version': '1.0' }, signal: combineSignals(signal, timeout.signal) });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new RemoteAgentError('card_unreachable', `The agent card at ${cardUrl} could not be read: HTTP ${response.status}${response.status === 401 || response.status === 403 ? ' (give `headers` to authenticate)' : ''}`, { details: { url: cardUrl, status: response.status } });
      }
      const body = await readBodyText(response, max);
      if (body === undefined) throw new RemoteAgentError('card_unreachable', `The agent card at ${cardUrl} is larger than ${max} bytes`, { details: { url: cardUrl } });
      text = body;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      if (error instanceof RemoteAgentError && error.reason === 'auth_required') {
        throw new RemoteAgentError('card_unreachable', `The agent card at ${cardUrl} could not be read: HTTP ${String(error.details['status'])} (give \`headers\` to authenticate)`, { cause: error, details: { url: cardUrl, status: error.details['status'] } });
      }
      if (error instanceof RemoteAgentError) throw error;
      throw new RemoteAgentError('card_unreachable', `The agent card at ${cardUrl} could not be read: ${timeout.signal.aborted ? `no answer within ${this.#options.requestTimeoutMs ?? 10_000} ms` : networkMessage(error)}`, { cause: error, details: { url: cardUrl } });
    } finally {
      timeout.clear();
    }
    try {
      return { json: JSON.parse(text) as unknown, cardUrl };
    } catch (error) {
      throw new RemoteAgentError('card_invalid', `${cardUrl} is not an agent card: its body is not JSON`, { cause: error, details: { url: cardUrl } });
    }
  }

  /**
   * Run one task to its end: send `input`, follow the task (answering its
   * input requests through `hooks.ask`), and return its output. Aborting
   * `hooks.signal` cancels the remote task.
   */
  async runTask(input: string, hooks: TaskHooks): Promise<RemoteTaskResult> {
    const { checked, client, sdk } = await this.#connect(hooks.signal);
    const tracker = new TaskTracker(hooks.onUpdate);
    let next: Message = message('user', randomUUID(), [textPart(input)], { contextId: hooks.contextId ?? randomUUID() });
    try {
      for (;;) {
        await this.#drive(client, checked, next, tracker, hooks.signal);
        const { state, taskId, contextId } = tracker;
        if (state === 'completed') return tracker.result();
        if (isTerminalState(state)) throw new RemoteAgentError('task_failed', `${checked.card.name}: task ${taskId} ended ${state}${tracker.text ? `: ${tracker.text}` : ''}`, { details: { url: this.url, taskId, state } });
        if (state === 'auth-required') throw new RemoteAgentError('auth_required', `${checked.card.name}: task ${taskId} asks for authentication${tracker.text ? `: ${tracker.text}` : ''}`, { details: { url: this.url, taskId } });
        if (!hooks.ask) throw new RemoteAgentError('input_required', `${checked.card.name}: task ${taskId} asks for input, and nothing here can answer it${tracker.text ? `: ${tracker.text}` : ''}`, { details: { url: this.url, taskId } });
        const answer = await hooks.ask({ taskId, contextId, prompt: tracker.text ?? '', ...(tracker.data === undefined ? {} : { data: tracker.data }) });
        next = message('user', randomUUID(), [typeof answer === 'string' ? textPart(answer) : dataPart(answer)], { taskId, contextId });
      }
    } catch (error) {
      if (hooks.signal.aborted) {
        await this.#cancel(client, tracker, hooks);
        throw abortError(hooks.signal);
      }
      throw toRemoteError(sdk, error, checked, this.url, tracker);
    }
  }

  /** Send `next` and follow the task until it ends, waits, or cannot be followed any more. */
  async #drive(client: Client, checked: CheckedCard, next: Message, tracker: TaskTracker, signal: AbortSignal): Promise<void> {
    const params = { tenant: '', message: next, configuration: { acceptedOutputModes: ACCEPTED_OUTPUT, taskPushNotificationConfig: undefined, returnImmediately: !checked.streaming }, metadata: undefined };
    if (!checked.streaming) {
      tracker.apply(wrap(await client.sendMessage(params, { signal })));
      while (!tracker.settled) {
        await sleep(this.#clock, this.#options.pollMs ?? 500, signal);
        tracker.apply({ payload: { $case: 'task', value: await client.getTask({ tenant: '', id: tracker.taskId, historyLength: 0 }, { signal }) } });
      }
      return;
    }
    let reconnects = this.#options.reconnects ?? 3;
    let stream: AsyncGenerator<StreamResponse> = client.sendMessageStream(params, { signal });
    for (;;) {
      try {
        for await (const update of stream) {
          tracker.apply(update);
          if (tracker.settled) return;
        }
      } catch (error) {
        if (signal.aborted || tracker.taskId === '' || reconnects <= 0 || !isNetworkError(error)) throw error;
        tracker.lost = error;
      }
      if (tracker.taskId === '') throw new RemoteAgentError('protocol', `${checked.card.name} ended its stream before naming a task`, { details: { url: this.url } });
      // The stream ended (or broke) before the task did: read the task, and follow it again.
      const timeout = this.#requestTimeout();
      const task = await client
        .getTask({ tenant: '', id: tracker.taskId, historyLength: 0 }, { signal: combineSignals(signal, timeout.signal) })
        .catch((error: unknown) => {
          throw tracker.lost !== undefined && isNetworkError(error) ? tracker.lost : error;
        })
        .finally(() => timeout.clear());
      tracker.apply({ payload: { $case: 'task', value: task } });
      if (tracker.settled || reconnects-- <= 0) return;
      stream = client.resubscribeTask({ tenant: '', id: tracker.taskId }, { signal });
    }
  }

  async #cancel(client: Client, tracker: TaskTracker, hooks: TaskHooks): Promise<void> {
    if (tracker.taskId === '' || isTerminalState(tracker.state)) return;
    const timeout = this.#requestTimeout();
    try {
      await client.cancelTask({ tenant: '', id: tracker.taskId, metadata: undefined }, { signal: timeout.signal });
      hooks.onCancelled?.(tracker.taskId, true);
    } catch (error) {
      hooks.onCancelled?.(tracker.taskId, false, errorMessage(error));
    } finally {
      timeout.clear();
    }
  }
}

/** The task's state as its updates tell it. */
class TaskTracker {
  taskId = '';
  contextId = '';
  state: A2ATaskState = 'submitted';
  /** The text of the last status message (or message reply). */
  text: string | undefined;
  /** The first data part of the last status message. */
  data: unknown;
  /** A stream error met while following the task (reported if it cannot be followed again). */
  lost: unknown;
  readonly #artifacts = new Map<string, { name?: string; text: string }>();
  #usage: Usage | undefined;
  #status: string | undefined;
  #reply: string | undefined;
  readonly #onUpdate: TaskHooks['onUpdate'];

  constructor(onUpdate: TaskHooks['onUpdate']) {
    this.#onUpdate = onUpdate;
  }

  /** The task ended or waits for the client. */
  get settled(): boolean {
    return isTerminalState(this.state) || isInterruptedState(this.state);
  }

  apply(update: StreamResponse): void {
    const payload = update.payload;
    if (!payload) return;
    if (payload.$case === 'message') {
      // A reply without a task: the answer itself.
      this.#reply = partsText(payload.value.parts);
      this.text = this.#reply;
      this.contextId ||= payload.value.contextId;
      this.taskId ||= payload.value.taskId || `message-${payload.value.messageId}`;
      this.#setState('completed', this.text);
      return;
    }
    if (payload.$case === 'task') return this.#task(payload.value);
    if (payload.$case === 'artifactUpdate') {
      const { artifact, append, taskId } = payload.value;
      if (!artifact) return;
      this.taskId ||= taskId;
      this.#artifact(artifact.artifactId, artifact.name, artifactText(artifact.parts), append);
      return;
    }
    const { status, metadata, taskId, contextId } = payload.value;
    this.taskId ||= taskId;
    this.contextId ||= contextId;
    this.#metadata(metadata);
    const event = metadata?.[TROUPE_EVENT_KEY] as unknown;
    if (looksLikeEvent(event)) this.#onUpdate?.({ kind: 'troupe-event', taskId: this.taskId, event });
    if (status) this.#status_(status.state, status.message);
  }

  #task(task: Task): void {
    this.taskId = task.id;
    this.contextId = task.contextId;
    this.#metadata(task.metadata);
    for (const artifact of task.artifacts) if (!this.#artifacts.has(artifact.artifactId)) this.#artifact(artifact.artifactId, artifact.name, artifactText(artifact.parts), false);
    if (task.status) this.#status_(task.status.state, task.status.message);
  }

  #status_(state: TaskState, statusMessage: Message | undefined): void {
    const name = stateName(state);
    const text = statusMessage ? partsText(statusMessage.parts) : undefined;
    this.data = statusMessage?.parts.find((p) => p.content?.$case === 'data')?.content?.value;
    if (text !== undefined) this.text = text;
    this.#setState(name, text);
  }

  #setState(state: A2ATaskState, text: string | undefined): void {
    const changed = state !== this.state;
    this.state = state;
    if (changed || text !== undefined) this.#onUpdate?.({ kind: 'status', taskId: this.taskId, contextId: this.contextId, state, changed, ...(text === undefined ? {} : { text }) });
  }

  #artifact(artifactId: string, name: string | undefined, text: string, append: boolean): void {
    const current = this.#artifacts.get(artifactId);
    this.#artifacts.set(artifactId, { ...(name ? { name } : current?.name ? { name: current.name } : {}), text: append && current ? current.text + text : text });
    this.#onUpdate?.({ kind: 'artifact', taskId: this.taskId, artifactId, text, append, ...(name ? { name } : {}) });
  }

  #metadata(metadata: Record<string, unknown> | undefined): void {
    if (!metadata) return;
    const usage = readUsage(metadata['troupe.usage'] ?? metadata['usage']);
    if (usage) this.#usage = usage;
    if (typeof metadata['troupe.status'] === 'string') this.#status = metadata['troupe.status'];
  }

  result(): RemoteTaskResult {
    const texts = [...this.#artifacts.values()].map((a) => a.text).filter((t) => t !== '');
    const output = texts.length > 0 ? texts.join('\n\n') : (this.#reply ?? this.text ?? '');
    return { taskId: this.taskId, contextId: this.contextId, output, ...(this.#usage ? { usage: this.#usage } : {}), ...(this.#status ? { status: this.#status } : {}) };
  }
}

function wrap(result: Message | Task): StreamResponse {
  return 'messageId' in result ? { payload: { $case: 'message', value: result } } : { payload: { $case: 'task', value: result } };
}

/** A remote's `troupe.event` metadata: an object with a `type` (not a run log's record: see the kernel's run-log reader for those). */
function looksLikeEvent(value: unknown): value is { type: string } & Record<string, unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** Usage a remote reported: troupe's fields, or the common `input_tokens`/`prompt_tokens` spellings. */
function readUsage(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const u = value as Record<string, unknown>;
  const num = (...keys: string[]) => {
    for (const k of keys) if (typeof u[k] === 'number' && Number.isFinite(u[k]) && (u[k] as number) >= 0) return u[k] as number;
    return 0;
  };
  const usage: Usage = {
    inputTokens: num('inputTokens', 'input_tokens', 'promptTokens', 'prompt_tokens'),
    outputTokens: num('outputTokens', 'output_tokens', 'completionTokens', 'completion_tokens'),
    cachedTokens: num('cachedTokens', 'cached_tokens'),
    costUsd: num('costUsd', 'cost_usd'),
    turns: num('turns'),
  };
  return usage.inputTokens + usage.outputTokens + usage.costUsd + usage.turns > 0 ? usage : undefined;
}

/** The card's URL: `url` itself when it names a JSON file, else `url` plus the card path. */
export function cardUrlOf(url: string, cardPath = AGENT_CARD_PATH): string {
  const parsed = new URL(url);
  if (parsed.pathname.endsWith('.json')) return parsed.href;
  const base = parsed.pathname.endsWith('/') ? parsed.pathname.slice(0, -1) : parsed.pathname;
  parsed.pathname = `${base}${cardPath.startsWith('/') ? '' : '/'}${cardPath}`;
  return parsed.href;
}

const BINDINGS = ['JSONRPC', 'HTTP+JSON'];
const VERSIONS = ['1.0', '0.3'];

/**
 * Check a card: a named agent, an interface troupe speaks over http(s),
 * on the card's own origin (or one allowed), listing every skill asked
 * for. A card that fails is refused before any message is sent.
 */
export function checkCard(sdk: A2AClientSdk, json: unknown, cardUrl: string, options: A2AConnectionOptions): CheckedCard {
  const invalid = (why: string) => new RemoteAgentError('card_invalid', `${cardUrl} is not an agent card troupe can use: ${why}`, { details: { url: cardUrl } });
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw invalid('expected a JSON object');
  const raw = json as Record<string, unknown>;
  if (typeof raw['name'] !== 'string' || raw['name'].trim() === '') throw invalid('it has no `name`');
  if (raw['skills'] !== undefined && !Array.isArray(raw['skills'])) throw invalid('`skills` is not a list');
  let card: AgentCard;
  try {
    card = Array.isArray(raw['supportedInterfaces']) ? sdk.AgentCard.fromJSON(raw) : new sdk.DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(raw);
  } catch (error) {
    throw invalid(errorMessage(error));
  }
  const interfaces = (card.supportedInterfaces ?? []).filter((i) => typeof i?.url === 'string' && i.url !== '');
  if (interfaces.length === 0) throw invalid('it names no interface (`supportedInterfaces`)');
  const usable = interfaces.filter((i) => BINDINGS.includes(i.protocolBinding) && VERSIONS.includes(versionOf(i.protocolVersion)));
  const chosen = BINDINGS.flatMap((b) => VERSIONS.map((v) => usable.find((i) => i.protocolBinding === b && versionOf(i.protocolVersion) === v))).find((i) => i !== undefined);
  if (!chosen) throw invalid(`none of its interfaces is JSONRPC or HTTP+JSON of A2A 1.0 or 0.3 (it offers ${interfaces.map((i) => `${i.protocolBinding || '?'} ${i.protocolVersion || '?'}`).join(', ')})`);
  const mismatch = (why: string) => new RemoteAgentError('card_mismatch', `The agent card at ${cardUrl} (${card.name}) ${why}`, { details: { url: cardUrl, agent: card.name } });
  let endpoint: URL;
  try {
    endpoint = new URL(chosen.url);
  } catch {
    throw mismatch(`names an endpoint that is not a URL: ${chosen.url.slice(0, 200)}`);
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') throw mismatch(`names an endpoint that is not http(s): ${chosen.url.slice(0, 200)}`);
  const origin = new URL(cardUrl).origin;
  if (endpoint.origin !== origin && !(options.allowedOrigins ?? []).includes(endpoint.origin)) {
    throw mismatch(`names its endpoint on another origin (${endpoint.origin}, the card is on ${origin}); pass \`allowedOrigins: ['${endpoint.origin}']\` if you trust it`);
  }
  const wanted = options.skill === undefined ? [] : typeof options.skill === 'string' ? [options.skill] : [...options.skill];
  const missing = wanted.filter((w) => !card.skills.some((s) => s.id === w || s.name === w));
  if (missing.length > 0) {
    throw mismatch(`does not list the skill${missing.length === 1 ? '' : 's'} ${missing.map((m) => `"${m}"`).join(', ')} (its skills: ${card.skills.map((s) => s.id).join(', ') || 'none'})`);
  }
  return { card, cardUrl, endpoint: chosen.url, binding: chosen.protocolBinding, version: versionOf(chosen.protocolVersion), streaming: card.capabilities?.streaming === true };
}

function versionOf(version: string): string {
  const [major, minor] = (version || '0.3').split('.');
  return `${major}.${minor ?? '0'}`;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A failure of the connection (refused, reset, closed mid-body), not an answer. */
function isNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (e.name === 'TypeError' && (e.message === 'fetch failed' || e.message === 'terminated')) return true;
    if (e.message === 'other side closed' || e.message.startsWith('SocketError')) return true;
  }
  return false;
}

function networkMessage(error: unknown): string {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return `${code} (${e.message})`;
  }
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${errorMessage(error)}${cause}`;
}

/** What a failure of the SDK's client (or of the network under it) means, as a {@link RemoteAgentError}. */
function toRemoteError(sdk: A2AClientSdk, error: unknown, checked: CheckedCard, url: string, tracker: TaskTracker): unknown {
  if (error instanceof TroupeError) return error;
  const name = checked.card.name;
  const details = { url, endpoint: checked.endpoint, ...(tracker.taskId ? { taskId: tracker.taskId } : {}) };
  const make = (reason: RemoteAgentErrorReason, message: string, extra: Record<string, unknown> = {}) => new RemoteAgentError(reason, message, { cause: error, details: { ...details, ...extra } });
  const cause = error instanceof Error && error.cause instanceof sdk.A2AError ? error.cause : error;
  if (cause instanceof sdk.A2AError) return make('rejected', `${name} refused the request: ${cause.message} (${cause.reason})`, { remoteCode: cause.reason });
  if (isNetworkError(error) || (error instanceof Error && error.name === 'TimeoutError')) {
    return tracker.taskId
      ? make('connection_lost', `The connection to ${name} (${checked.endpoint}) was lost while task ${tracker.taskId} was ${tracker.state}, and the agent no longer answers: ${networkMessage(error)}`)
      : make('unreachable', `${name} could not be reached at ${checked.endpoint}, the endpoint its card names: ${networkMessage(error)}`);
  }
  const text = errorMessage(error);
  const status = /Status: (\d{3})|: (\d{3}) /.exec(text);
  const code = status ? Number(status[1] ?? status[2]) : undefined;
  if (code === 401 || code === 403) return make('auth_required', `${name} refused the credentials (HTTP ${code}); give \`headers\` to authenticate`, { status: code });
  if (code !== undefined || /Content-Type|not JSON|Unexpected token/.test(text)) {
    const first = (text.split('\n', 1)[0] ?? '').replace(/ Response: .*$/, '').slice(0, 200);
    return make('endpoint', `The card of ${name} names ${checked.endpoint} as its ${checked.binding} endpoint, but it does not answer A2A there: ${first}`, code === undefined ? {} : { status: code });
  }
  return make('protocol', `${name} answered outside the protocol: ${text.slice(0, 300)}`);
}

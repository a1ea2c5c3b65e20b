/**
 * `a2aServer`: any runnable served as an A2A agent, on web standards
 * (`Request` in, `Response` out): its Agent Card at
 * `/.well-known/agent-card.json`, the protocol's JSON-RPC methods (message
 * send and stream over SSE, task get, list, cancel and resubscribe) at the
 * base path, behind the same `authorize` hook and tenants as `troupe/http`.
 * @module
 */
import type { Message } from '@a2a-js/sdk';
import type { AgentDefinition } from '../../agents/definition.js';
import { combineSignals } from '../../core/abort.js';
import { CancelledError, ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import { defined } from '../../core/defined.js';
import { anything, defineOptions, expectPositiveInteger, expectPositiveNumber } from '../../core/options.js';
import { startRun, type RunOptions } from '../../core/run.js';
import type { Runnable } from '../../core/runnable.js';
import { supportsCompareAndSet, type Store } from '../../core/store.js';
import { cancellationSignal } from '../http/cancel.js';
import { errorResponse, jsonResponse, principalOf, type Authorize, type Principal } from '../http/handler.js';
import { namespacedStore } from '../http/namespace.js';
import { readBodyText } from '../http/body.js';
import { SSE_HEADERS, sseOptions, sseStream, type SseOptions } from '../http/sse.js';
import { AGENT_CARD_PATH, A2A_PROTOCOL_VERSION, buildAgentCard, type A2AAgentCard, type AgentCardOptions } from './card.js';
import { SCOPE_KEY, TroupeRequestHandler, type RequestScope } from './handler.js';
import { expectFunction } from './options.js';
import { loadA2AServerSdk, type A2AServerSdk } from './sdk.js';

/** The run options every task of the server gets (the store, run id and signal are the server's). */
export type A2ARunOptions = Pick<RunOptions, 'adapter' | 'adapters' | 'timeoutMs' | 'maxDepth' | 'budget' | 'onEvent'>;

/** What `start` receives to start a task's run. */
export interface StartTaskRequest {
  principal: Principal;
  /** The tenant's namespaced store: run with `{ store, runId }`, and watch `cancellationSignal(runId, { store })`. */
  store: Store;
  /** The run's id: the task's id. */
  runId: string;
  /** The text of the client's message (text parts, data parts as JSON). */
  input: string;
  /** The client's message: its id, context and metadata. */
  message: { messageId: string; contextId: string; metadata?: Record<string, unknown> };
  /** The HTTP request. */
  request: Request;
}

/** Options of {@link a2aServer}. */
export interface A2AServerOptions extends SseOptions {
  /** What each task runs (unless `start` is given): started in this process, with the tenant's store, the task id as run id, and a signal that aborts when any process cancels the task. */
  runnable?: Runnable;
  /** Start a task's run yourself (elsewhere, on a queue ...) instead of `runnable`; return once it is started. */
  start?: (request: StartTaskRequest) => void | Promise<void>;
  /** The store every task logs to; each tenant sees it through `namespacedStore(store, tenant)`. It needs compare-and-set (memory, file and Redis stores have it). */
  store: Store;
  /** Decides who is calling (every JSON-RPC request; the card is public), as for `troupe/http`. */
  authorize: Authorize;
  /** Run options of the tasks `runnable` runs (adapter, budget, time-out ...). */
  run?: A2ARunOptions;
  /** What the card says beyond what is generated. */
  card?: AgentCardOptions;
  /** The agent files the runnable was compiled from and its entry agent: the card's name, description and skills come from them. */
  agents?: { defs: readonly AgentDefinition[]; entry: string };
  /** The endpoint's public URL, for the card. Default: the origin of each card request plus `basePath` and `/`. */
  url?: string;
  /** Where the agent lives, e.g. `/a2a` (its card at `/a2a/.well-known/agent-card.json`). Default: `''`. */
  basePath?: string;
  /** How often streams and waits look for new events, in ms. Default: 250. */
  pollMs?: number;
  /** The largest request body, in bytes. Default: 1048576. */
  maxBodyBytes?: number;
  /** The largest part of a message, in bytes. Default: 262144. */
  maxPartBytes?: number;
  /** The most parts a message may have. Default: 64. */
  maxParts?: number;
  /** How long a send waits for a started run's log, in ms. Default: 10000. */
  startTimeoutMs?: number;
  /** How long CancelTask waits for the run to stop before it answers, in ms. Default: 5000. */
  cancelWaitMs?: number;
}

const a2aRunOptions = defineOptions<A2ARunOptions>('a2aServer', { adapter: anything, adapters: anything, timeoutMs: anything, maxDepth: anything, budget: anything, onEvent: anything });
/** The values `anything` lets through are checked by `checkOptions`. */
const a2aServerOptions = defineOptions<A2AServerOptions>('a2aServer', {
  ...sseOptions.shape,
  runnable: anything,
  start: anything,
  store: anything,
  authorize: anything,
  run: a2aRunOptions,
  card: anything,
  agents: anything,
  url: anything,
  basePath: anything,
  pollMs: anything,
  maxBodyBytes: anything,
  maxPartBytes: anything,
  maxParts: anything,
  startTimeoutMs: anything,
  cancelWaitMs: anything,
});

/** A running A2A server. */
export interface A2AServer {
  /** Answer one HTTP request (mount it with `toNodeListener`, Hono, Next.js ...). */
  handle(request: Request): Promise<Response>;
  /** The card, with the endpoint at `url` (default: the `url` option, else `http://localhost<basePath>`). */
  card(url?: string): A2AAgentCard;
  /** Runs this server started that have not ended. */
  readonly running: number;
  /** Stop starting runs, cancel those running here and wait for them to end. Safe to call twice. */
  close(): Promise<void>;
}

/** JSON-RPC codes troupe answers before a request reaches a method. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const VERSION_NOT_SUPPORTED = -32009;

/**
 * Serve a runnable (an agent, a pattern, a plan, an agent folder's entry
 * agent) as an A2A agent. Each message without a task id starts a task:
 * a run in the caller's tenant whose id is the task id. A run that asks a
 * person (`remoteApprovals()`, `askPersonTool()` of `troupe/http`) puts its
 * task in `input-required`; the client's next message on the task answers
 * it. The output is the task's artifact; its history is read from the run
 * log. Loads `@a2a-js/sdk` (an optional peer).
 *
 * @example
 * ```ts
 * const server = await a2aServer({ runnable: panel, store: fileStore('.troupe'), authorize: () => ({ tenant: 'default' }), run: { adapter } });
 * http.createServer(toNodeListener((request) => server.handle(request))).listen(8080, '127.0.0.1');
 * ```
 */
export async function a2aServer(options: A2AServerOptions): Promise<A2AServer> {
  const o = checkOptions(options);
  const sdk = await loadA2AServerSdk('troupe/a2a');
  const base = o.basePath;
  const closing = new AbortController();
  const running = new Set<Promise<unknown>>();
  const cardAt = (url: string) => buildAgentCard({ runnable: options.runnable?.name ?? 'troupe', url, ...defined({ agents: options.agents }) }, options.card);
  const defaultUrl = options.url ?? `http://localhost${base}/`;

  const start = async (scope: RequestScope, runId: string, input: string, message: Message) => {
    if (closing.signal.aborted) throw new Error('The A2A server is closing');
    if (options.start) {
      await options.start({ principal: scope.principal, store: scope.store, runId, input, message: { messageId: message.messageId, contextId: message.contextId, ...defined({ metadata: message.metadata as Record<string, unknown> | undefined }) }, request: scope.request });
      return;
    }
    const watch = cancellationSignal(runId, { store: scope.store, ...defined({ clock: options.clock, pollMs: options.pollMs }) });
    const handle = startRun(options.runnable!, input, { ...options.run, ...defined({ clock: options.clock }), store: scope.store, runId, signal: combineSignals(watch.signal, closing.signal) });
    const settled: Promise<unknown> = handle.result.catch(() => undefined).finally(() => {
      watch.close();
      running.delete(settled);
    });
    running.add(settled);
  };

  const handler = new TroupeRequestHandler({
    sdk,
    card: () => sdk.AgentCard.fromJSON(cardAt(defaultUrl)),
    start,
    maxPartBytes: o.maxPartBytes,
    maxParts: o.maxParts,
    cancelWaitMs: o.cancelWaitMs,
    ...defined({ clock: options.clock, pollMs: options.pollMs, startTimeoutMs: options.startTimeoutMs }),
  });
  const transport = new sdk.JsonRpcTransportHandler(handler);

  return {
    card: (url) => cardAt(url ?? defaultUrl),
    get running() {
      return running.size;
    },
    async close() {
      closing.abort(new CancelledError('The A2A server closed'));
      await Promise.all([...running]);
    },
    async handle(request) {
      const url = new URL(request.url);
      const endpoint = options.url ?? `${url.origin}${base}/`;
      if (url.pathname === `${base}${AGENT_CARD_PATH}`) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return errorResponse(405, 'method_not_allowed', `${request.method} is not allowed here`);
        return jsonResponse(200, cardAt(endpoint), { 'access-control-allow-origin': '*' });
      }
      if (url.pathname !== (base || '/') && url.pathname !== `${base}/`) return errorResponse(404, 'not_found', 'No such route');
      if (request.method !== 'POST') return errorResponse(405, 'method_not_allowed', `${request.method} is not allowed here: JSON-RPC requests are POSTed`);
      try {
        return await rpc(sdk, transport, options, o, request);
      } catch (error) {
        if (request.signal.aborted) return errorResponse(499, 'client_closed', 'The client went away');
        return rpcError(null, -32603, `Internal error: ${errorMessage(error)}`, 500);
      }
    },
  };
}

interface Checked {
  basePath: string;
  maxBodyBytes: number;
  maxPartBytes: number;
  maxParts: number;
  cancelWaitMs: number;
}

function checkOptions(options: A2AServerOptions): Checked {
  a2aServerOptions.check(options);
  if (typeof options.store?.get !== 'function') throw new ConfigurationError(`Expected \`store\` to be a store, got ${describeValue(options.store)}`);
  if (!supportsCompareAndSet(options.store)) throw new ConfigurationError('Expected `store` to have compare-and-set (getVersioned and setIf), which answers need: memoryStore, fileStore and redisStore have it');
  if (typeof options.authorize !== 'function') throw new ConfigurationError(`Expected \`authorize\` to be a function, got ${describeValue(options.authorize)}`);
  expectFunction('start', options.start);
  if (options.start === undefined && typeof options.runnable?.run !== 'function') throw new ConfigurationError(`Expected \`runnable\` to be a runnable (or \`start\` to be given), got ${describeValue(options.runnable)}`);
  if (options.url !== undefined && !/^https?:\/\//.test(String(options.url))) throw new ConfigurationError(`Expected \`url\` to be an http(s) URL, got ${describeValue(options.url)}`);
  if (options.agents !== undefined && (!Array.isArray(options.agents.defs) || typeof options.agents.entry !== 'string')) throw new ConfigurationError(`Expected \`agents\` to be { defs, entry }, got ${describeValue(options.agents)}`);
  const basePath = trimSlashes(options.basePath ?? '');
  if (basePath !== '' && !basePath.startsWith('/')) throw new ConfigurationError(`Expected \`basePath\` to start with "/", got ${describeValue(options.basePath)}`);
  expectPositiveNumber('pollMs', options.pollMs);
  expectPositiveNumber('startTimeoutMs', options.startTimeoutMs);
  const checked = {
    basePath,
    maxBodyBytes: expectPositiveInteger('maxBodyBytes', options.maxBodyBytes) ?? 1_048_576,
    maxPartBytes: expectPositiveInteger('maxPartBytes', options.maxPartBytes) ?? 262_144,
    maxParts: expectPositiveInteger('maxParts', options.maxParts) ?? 64,
    cancelWaitMs: expectPositiveNumber('cancelWaitMs', options.cancelWaitMs) ?? 5000,
  };
  // The card is built once up front, so a bad `card` option fails here, not on the first request.
  buildAgentCard({ runnable: options.runnable?.name ?? 'troupe', url: options.url ?? 'http://localhost/', ...defined({ agents: options.agents }) }, options.card);
  return checked;
}

function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

type RpcId = string | number | null;

function rpcError(id: RpcId, code: number, message: string, status = 200): Response {
  return jsonResponse(status, { jsonrpc: '2.0', id, error: { code, message } });
}

/** One JSON-RPC request: authorized, bounded, parsed and checked here; the method is the SDK transport's. */
async function rpc(sdk: A2AServerSdk, transport: InstanceType<A2AServerSdk['JsonRpcTransportHandler']>, options: A2AServerOptions, o: Checked, request: Request): Promise<Response> {
  const principal = await principalOf(options.authorize, request);
  if (principal instanceof Response) return principal;
  const type = request.headers.get('content-type');
  if (type !== null && !/^application\/(json|a2a\+json)\b/i.test(type)) return rpcError(null, INVALID_REQUEST, `Expected a JSON body (application/json), got ${type.slice(0, 100)}`, 415);
  const text = await readBodyText(request, o.maxBodyBytes);
  if (text === undefined) return rpcError(null, INVALID_REQUEST, `The request is larger than ${o.maxBodyBytes} bytes`, 413);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return rpcError(null, PARSE_ERROR, 'Parse error: the body is not JSON');
  }
  const envelope = checkEnvelope(body);
  if (typeof envelope === 'string') return rpcError(idOf(body), INVALID_REQUEST, `Invalid Request: ${envelope}`);
  const shape = paramsProblem(envelope);
  if (shape !== undefined) return rpcError(envelope.id, INVALID_PARAMS, `Invalid params: ${shape}`);
  const version = request.headers.get('a2a-version')?.trim();
  if (version && version !== A2A_PROTOCOL_VERSION) return rpcError(envelope.id, VERSION_NOT_SUPPORTED, `A2A version ${version.slice(0, 20)} is not supported; this agent speaks ${A2A_PROTOCOL_VERSION}`);
  const scope: RequestScope = { principal, store: namespacedStore(options.store, principal.tenant), request };
  const context = new sdk.ServerCallContext({
    requestedVersion: A2A_PROTOCOL_VERSION,
    user: { isAuthenticated: true, userName: principal.subject ?? principal.tenant },
    state: new Map<string, unknown>([[SCOPE_KEY, scope]]),
  });
  // Tenants come from `authorize`, never from the request.
  if (envelope.params && typeof envelope.params === 'object' && !Array.isArray(envelope.params)) delete (envelope.params as Record<string, unknown>)['tenant'];
  const result = await transport.handle(envelope as unknown as Record<string, unknown>, context);
  if (!isAsyncIterable(result)) return jsonResponse(isInternal(result.error) ? 500 : 200, result);
  return streamResponse(sdk, result, envelope.id, options, request);
}

interface Envelope {
  jsonrpc: '2.0';
  id: RpcId;
  method: string;
  params?: unknown;
}

/** The JSON-RPC 2.0 request object, or what is wrong with it. */
function checkEnvelope(body: unknown): Envelope | string {
  if (Array.isArray(body)) return 'batches are not supported';
  if (body === null || typeof body !== 'object') return 'expected an object';
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0') return '`jsonrpc` must be "2.0"';
  if (id !== undefined && id !== null && typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) return '`id` must be a string, an integer or null';
  if (typeof id === 'string' && id.length > 256) return '`id` is longer than 256 characters';
  if (typeof method !== 'string' || method === '') return '`method` must be a non-empty string';
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) return '`params` must be an object';
  return { jsonrpc, id: (id ?? null) as RpcId, method, ...(params === undefined ? {} : { params }) };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with the shape of a send's params, if anything: the SDK
 * reads the message and its parts as objects, so anything else there is
 * refused here (`-32602`) rather than failing inside it.
 */
function paramsProblem(envelope: Envelope): string | undefined {
  if (envelope.method !== 'SendMessage' && envelope.method !== 'SendStreamingMessage') return undefined;
  const params = envelope.params as Record<string, unknown> | undefined;
  const { message, configuration } = params ?? {};
  if (message !== undefined && !isObject(message)) return '`message` must be an object';
  if (configuration !== undefined && configuration !== null && !isObject(configuration)) return '`configuration` must be an object';
  if (isObject(configuration) && configuration['taskPushNotificationConfig'] !== undefined && !isObject(configuration['taskPushNotificationConfig'])) return '`configuration.taskPushNotificationConfig` must be an object';
  const parts = isObject(message) ? message['parts'] : undefined;
  if (parts !== undefined && !Array.isArray(parts)) return '`message.parts` must be a list';
  const index = Array.isArray(parts) ? parts.findIndex((part) => !isObject(part)) : -1;
  return index >= 0 ? `part ${index} of the message must be an object` : undefined;
}

function idOf(body: unknown): RpcId {
  const id = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length <= 256 ? id : typeof id === 'number' && Number.isInteger(id) ? id : null;
}

function isInternal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === -32603;
}

function isAsyncIterable<T>(value: unknown): value is AsyncGenerator<T> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** A streaming method's answer: a JSON error if it fails before its first event, else SSE of JSON-RPC responses. */
async function streamResponse(sdk: A2AServerSdk, stream: AsyncGenerator<unknown>, id: RpcId, options: A2AServerOptions, request: Request): Promise<Response> {
  const first = await stream.next().then(
    (r) => r,
    (error: unknown) => ({ error }),
  );
  if (!isIteratorResult(first)) {
    const error = sdk.JsonRpcTransportHandler.mapToJSONRPCError(first.error);
    return jsonResponse(isInternal(error) ? 500 : 200, { jsonrpc: '2.0', id, error });
  }
  const sse = sseStream(
    async (sink) => {
      const stop = () => void stream.return(undefined).catch(() => undefined);
      sink.signal.addEventListener('abort', stop, { once: true });
      try {
        if (!first.done) await sink.send(`data: ${JSON.stringify(first.value)}\n\n`);
        for (let next = await stream.next(); !next.done; next = await stream.next()) {
          const value = next.value as { error?: unknown };
          await sink.send(`${value.error ? 'event: error\n' : ''}data: ${JSON.stringify(value)}\n\n`);
        }
      } catch (error) {
        if (!sink.signal.aborted) await sink.send(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error: sdk.JsonRpcTransportHandler.mapToJSONRPCError(error) })}\n\n`);
      } finally {
        sink.signal.removeEventListener('abort', stop);
      }
    },
    { signal: request.signal, ...defined({ clock: options.clock, heartbeatMs: options.heartbeatMs, bufferBytes: options.bufferBytes, drainTimeoutMs: options.drainTimeoutMs, retryMs: options.retryMs }) },
  );
  return new Response(sse, { headers: SSE_HEADERS });
}

function isIteratorResult(value: unknown): value is IteratorResult<unknown> {
  return typeof value === 'object' && value !== null && 'done' in value && typeof (value as { done?: unknown }).done === 'boolean';
}


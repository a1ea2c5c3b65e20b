/**
 * The HTTP handler of runs: list, start, read, stream (troupe events or
 * AG-UI), answer and cancel, each behind the application's `authorize`
 * hook and inside the principal's tenant namespace. Web-standard `Request`
 * in, `Response` out: usable from `node:http` (see `toNodeListener`), Hono,
 * Next.js route handlers and Express.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { describeValue, errorMessage, isTroupeError } from '../../core/errors.js';
import { check, defineOptions, either, func, listOf, positiveNumber, required, store as storeCheck, string } from '../../core/options.js';
import { readRunEvents } from '../../core/run-log-reader.js';
import type { Store } from '../../core/store.js';
import { listRuns } from '../../persistence/runs.js';
import { deleteThread, listThreads, readThread } from '../../persistence/threads.js';
import { threadState } from '../../core/thread.js';
import { supportsCompareAndSet } from '../../core/store.js';
import { aguiInputSchema, lastUserText, type AguiInput } from './agui.js';
import { requestCancel } from './cancel.js';
import { isSafeId } from './ids.js';
import { namespacedStore } from './namespace.js';
import { answerRequest, pendingRequests, readRequest } from './requests.js';
import { MAX_INSTRUCTION_LENGTH, sendInstruction } from './instructions.js';
import { renderRunReport } from '../../views/report/render.js';
import { SSE_HEADERS, sseOptions, type SseOptions } from './sse.js';
import { aguiEventStream, aguiEvents, parseAguiEventId, positionAfter, positionAfterRequests, runEventStream, runState, waitForRun } from './streams.js';
import { defined } from '../../core/defined.js';
import { readBodyText } from './body.js';
import { isJsonMediaType, originAllowed, type AllowedOrigins } from './guards.js';
import { RunIds } from './create.js';
import { realClock } from '../../core/clock.js';

/** Who is calling: the tenant whose namespace every handler works in, and whatever else the application keeps. */
export interface Principal {
  /** The tenant: an id of `A-Z a-z 0-9 - _ .` (see `isSafeId`). */
  tenant: string;
  /** The caller within the tenant (for the application's own use). */
  subject?: string;
}

/** A refusal: 401 (who are you?) or 403 (not you), with a message for the JSON body. */
export interface Refusal {
  status: 401 | 403;
  message?: string;
}

/**
 * Decides who is calling. Return the principal, or a {@link Refusal};
 * `null` or `undefined` is a 401.
 */
export type Authorize = (request: Request) => Principal | Refusal | null | undefined | Promise<Principal | Refusal | null | undefined>;

/** What `start` receives to start a run. */
export interface StartRunRequest {
  principal: Principal;
  /** The tenant's namespaced store: run with `{ store, runId }`. */
  store: Store;
  /** The run's id (start it with this one). */
  runId: string;
  /** The text to run. */
  input: string;
  /**
   * The thread the run continues (`POST /runs` with a `thread`, and every
   * AG-UI request: the AG-UI thread): start it with `run(..., { store,
   * runId, thread })`, so that its entry agent gets the thread's earlier
   * exchanges and the thread's next run finds this one.
   */
  thread?: string;
  /** The request body as parsed (for the application's own fields). */
  body: unknown;
  /** The HTTP request. */
  request: Request;
}

/** Options of {@link runHandler}. */
export interface RunHandlerOptions extends SseOptions {
  /** The store every run logs to; each tenant sees it through `namespacedStore(store, tenant)`. */
  store: Store;
  /** Decides who is calling (every route). */
  authorize: Authorize;
  /**
   * Start a run (`POST /runs`, and AG-UI requests for a thread that does not
   * exist yet): start it with `run(..., { store, runId })` and return without
   * waiting for it to end. Without it, runs are started elsewhere.
   */
  start?: (request: StartRunRequest) => void | Promise<void>;
  /** Where the routes live, e.g. `/api`. Default: `''`. */
  basePath?: string;
  /** How often streams and waits look for new events, in ms. Default: 250. */
  pollMs?: number;
  /** The largest request body of the routes other than `POST /agui`, in bytes. Default: 65536. */
  maxBodyBytes?: number;
  /**
   * The largest body of `POST /agui`, in bytes, or a function of the
   * principal for a limit per tenant. An AG-UI client sends the whole
   * thread (every message and tool result) with each request, so this is
   * sized for real threads. Read only once `authorize` accepted; keep
   * `toNodeListener`'s `maxBodyBytes` (8 MiB) at least as large.
   * Default: 8 MiB.
   */
  maxAguiBodyBytes?: number | ((principal: Principal) => number);
  /** How long `POST /runs` waits for the started run's log, in ms. Default: 10000. */
  startTimeoutMs?: number;
  /**
   * Origins whose pages may send requests that carry a cookie, besides the
   * server's own (the origin of the `Host` the request names): a list
   * (`['https://console.example']`) or a function of the origin. A request
   * with a `Cookie` header from any other origin is refused with 403
   * (`forbidden_origin`) before `authorize` is called; requests without a
   * cookie (a bearer token) are not concerned.
   */
  allowedOrigins?: AllowedOrigins;
}

const runHandlerOptions = defineOptions<RunHandlerOptions>('runHandler', {
  ...sseOptions.shape,
  store: required(storeCheck),
  authorize: required(func),
  start: func,
  basePath: check('a path starting with "/" (or "")', (v) => typeof v === 'string' && (trimSlashes(v) === '' || v.startsWith('/'))),
  pollMs: positiveNumber,
  maxBodyBytes: positiveNumber,
  maxAguiBodyBytes: either('a positive number or a function of the principal', positiveNumber, func),
  startTimeoutMs: positiveNumber,
  allowedOrigins: either('a list of origins or a function', listOf(string), func),
});

/** A route handler. */
export type Handler = (request: Request) => Promise<Response>;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON response. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** A JSON error response: `{ error: { code, message, ...details } }`. */
export function errorResponse(status: number, code: string, message: string, details: Record<string, unknown> = {}): Response {
  return jsonResponse(status, { error: { code, message, ...details } });
}

class HttpFailure extends Error {
  constructor(readonly response: Response) {
    super('http failure');
  }
}

/**
 * The handler of every run route (paths under `basePath`):
 *
 * | route | what |
 * | --- | --- |
 * | `GET /runs` | the tenant's runs (their meta documents) |
 * | `POST /runs` | start a run (`{ "input": "..." }`; needs `start`) → 201 `{ runId }` |
 * | `GET /runs/:id` | the run's meta and its pending requests |
 * | `GET /runs/:id/events` | SSE of the run's events; `Last-Event-ID` resumes; `?protocol=ag-ui` for AG-UI |
 * | `GET /runs/:id/requests` | the requests that wait for a person |
 * | `POST /runs/:id/requests/:requestId` | answer one (exactly once: 409 for a second answer) |
 * | `POST /runs/:id/cancel` | ask the run to stop → 202 |
 * | `POST /runs/:id/instructions` | an instruction for the run's working workers (`{ "text": "..." }`) → 202 |
 * | `GET /runs/:id/report` | the run's HTML report (`troupe/report`) |
 * | `GET /threads` | the tenant's threads (`listThreads`) |
 * | `GET /threads/:id` | a thread and its messages (`readThread`) |
 * | `DELETE /threads/:id` | delete a thread (409 while a run holds it) |
 * | `POST /agui` | AG-UI `HttpAgent` endpoint: the AG-UI thread is a troupe thread; a message on a thread whose run ended starts its next run |
 *
 * Every route first checks the origin of a request that carries a cookie
 * (`allowedOrigins`, 403 otherwise), then calls `authorize`; a refusal is a
 * 401 or 403 with a JSON body. Only then is a body read, and only a JSON one
 * (`application/json` or `+json`, 415 otherwise). Everything a route reads or writes is in the principal's tenant
 * namespace, so a principal never reaches another tenant's runs: they read
 * as 404. Ids from the request are checked (`isSafeId`) before they reach a
 * store key (400 otherwise).
 *
 * @example
 * ```ts
 * const handle = runHandler({ store, authorize: (req) => (req.headers.get('x-tenant') ? { tenant: req.headers.get('x-tenant')! } : null), start });
 * http.createServer(toNodeListener(handle)).listen(8080);
 * ```
 */
export function runHandler(options: RunHandlerOptions): Handler {
  runHandlerOptions.check(options ?? ({} as RunHandlerOptions));
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const base = trimSlashes(options.basePath ?? '');
  const runIds = new RunIds();

  return async (request) => {
    try {
      const url = new URL(request.url);
      if (!url.pathname.startsWith(`${base}/`)) return errorResponse(404, 'not_found', 'No such route');
      const parts = url.pathname.slice(base.length + 1).split('/');
      const route = matchRoute(request.method, parts);
      if (!route) return errorResponse(404, 'not_found', 'No such route');
      if (route === 'method') return errorResponse(405, 'method_not_allowed', `${request.method} is not allowed here`);
      if (!originAllowed(request, options.allowedOrigins)) return errorResponse(403, 'forbidden_origin', 'A request with a cookie from another origin');
      const principal = await authorizeRequest(options.authorize, request);
      const store = namespacedStore(options.store, principal.tenant);
      const ids = route.ids;
      for (const id of ids) if (!isSafeId(id)) return errorResponse(400, 'invalid_id', `Not a valid id: ${describeValue(id)}`);
      const [runId, requestId] = ids as [string, string];
      switch (route.name) {
        case 'list':
          return jsonResponse(200, { runs: await listRuns({ store, signal: request.signal }) });
        case 'start':
          return await startRoute(options, runIds, principal, store, request, maxBodyBytes);
        case 'run': {
          const state = await runState(runId, { store, signal: request.signal });
          if (!state.exists) return notFound(runId);
          return jsonResponse(200, { runId, meta: state.meta ?? null, ended: state.ended, pending: await pendingRequests(runId, { store, signal: request.signal }) });
        }
        case 'events':
          return await eventsRoute(options, store, runId, request, url);
        case 'requests': {
          if (!(await runState(runId, { store, signal: request.signal })).exists) return notFound(runId);
          return jsonResponse(200, { requests: await pendingRequests(runId, { store, signal: request.signal }) });
        }
        case 'answer': {
          const body = await readJson(request, maxBodyBytes);
          const result = await answerRequest(runId, requestId, body, { store, signal: request.signal, ...defined({ clock: options.clock }) });
          if (result.ok) return jsonResponse(200, { answered: true, request: result.request });
          if (result.reason === 'not-found') return errorResponse(404, 'not_found', `No request ${requestId} in run ${runId}`);
          if (result.reason === 'invalid') return errorResponse(400, 'invalid_answer', 'The answer does not fit the request', { issues: result.issues });
          return errorResponse(409, result.reason === 'answered' ? 'already_answered' : 'withdrawn', `Request ${requestId} was ${result.reason} already`);
        }
        case 'cancel': {
          const type = request.headers.get('content-type');
          if (type !== null && !isJsonMediaType(type)) throw new HttpFailure(unsupportedMediaType(type));
          const state = await runState(runId, { store, signal: request.signal });
          if (!state.exists) return notFound(runId);
          if (state.ended) return errorResponse(409, 'run_ended', `Run ${runId} has ended`);
          await requestCancel(runId, { store, signal: request.signal, ...defined({ clock: options.clock }) });
          return jsonResponse(202, { cancelling: true });
        }
        case 'instructions':
          return await instructionsRoute(options, store, runId, request, maxBodyBytes);
        case 'report': {
          const { events } = await readRunEvents(runId, { store, signal: request.signal });
          if (events.length === 0) return notFound(runId);
          return new Response(renderRunReport(events), { status: 200, headers: REPORT_HEADERS });
        }
        case 'agui':
          return await aguiRoute(options, runIds, principal, store, request, aguiBodyLimit(options, principal));
        case 'threads':
          return jsonResponse(200, { threads: await listThreads({ store, signal: request.signal }) });
        case 'thread': {
          const thread = await readThread(runId, { store, signal: request.signal });
          return thread ? jsonResponse(200, thread) : errorResponse(404, 'not_found', `No thread ${runId}`);
        }
        case 'delete-thread': {
          const state = await threadState(store, runId, { signal: request.signal });
          if (state.busy) return threadBusy(runId, state.heldBy);
          return (await deleteThread(runId, { store, signal: request.signal })) ? jsonResponse(200, { deleted: true }) : errorResponse(404, 'not_found', `No thread ${runId}`);
        }
      }
    } catch (error) {
      if (error instanceof HttpFailure) return error.response;
      if (request.signal.aborted) return errorResponse(499, 'client_closed', 'The client went away');
      if (isTroupeError(error, 'invalid_argument')) return errorResponse(400, 'invalid_argument', error.message);
      if (isTroupeError(error, 'thread_busy')) return errorResponse(409, 'thread_busy', error.message);
      return errorResponse(500, 'internal', errorMessage(error));
    }
  };
}

function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

type RouteName = 'list' | 'start' | 'run' | 'events' | 'requests' | 'answer' | 'cancel' | 'instructions' | 'report' | 'agui' | 'threads' | 'thread' | 'delete-thread';

function matchRoute(method: string, parts: string[]): { name: RouteName; ids: string[] } | 'method' | undefined {
  const is = (m: string, name: RouteName, ids: string[] = []) => (method === m ? { name, ids } : 'method');
  const decoded = parts.map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [a, id, c, rid, ...rest] = decoded;
  if (rest.length > 0) return undefined;
  if (a === 'agui' && id === undefined) return is('POST', 'agui');
  if (a === 'threads') {
    if (c !== undefined) return undefined;
    if (id === undefined || id === '') return is('GET', 'threads');
    return method === 'GET' ? { name: 'thread', ids: [id] } : method === 'DELETE' ? { name: 'delete-thread', ids: [id] } : 'method';
  }
  if (a !== 'runs') return undefined;
  if (id === undefined || id === '') return method === 'GET' ? { name: 'list', ids: [] } : method === 'POST' ? { name: 'start', ids: [] } : 'method';
  if (c === undefined) return is('GET', 'run', [id]);
  if (c === 'events' && rid === undefined) return is('GET', 'events', [id]);
  if (c === 'requests' && rid === undefined) return is('GET', 'requests', [id]);
  if (c === 'requests' && rid !== undefined) return is('POST', 'answer', [id, rid]);
  if (c === 'cancel' && rid === undefined) return is('POST', 'cancel', [id]);
  if (c === 'instructions' && rid === undefined) return is('POST', 'instructions', [id]);
  if (c === 'report' && rid === undefined) return is('GET', 'report', [id]);
  return undefined;
}

async function authorizeRequest(authorize: Authorize, request: Request): Promise<Principal> {
  const principal = await principalOf(authorize, request);
  if (principal instanceof Response) throw new HttpFailure(principal);
  return principal;
}

/**
 * Call `authorize` for `request`: the principal, or the response that
 * refuses it — 401 or 403 with a JSON body, 500 when the hook throws or
 * names a tenant that is not a safe id. Every server of runs (HTTP, A2A,
 * MCP) authorizes through it, so a hook behaves the same behind each.
 */
export async function principalOf(authorize: Authorize, request: Request): Promise<Principal | Response> {
  let result: Principal | Refusal | null | undefined;
  try {
    result = await authorize(request);
  } catch (error) {
    return errorResponse(500, 'authorize_failed', `The authorize hook failed: ${errorMessage(error)}`);
  }
  if (result === null || result === undefined) return errorResponse(401, 'unauthorized', 'Authentication required');
  if ('status' in result) {
    const status = result.status === 403 ? 403 : 401;
    return errorResponse(status, status === 403 ? 'forbidden' : 'unauthorized', result.message ?? (status === 403 ? 'Forbidden' : 'Authentication required'));
  }
  if (!isSafeId(result.tenant)) {
    return errorResponse(500, 'invalid_tenant', `The authorize hook returned a tenant that is not a valid id: ${describeValue(result.tenant)}`);
  }
  return result;
}

/** The body limit of `POST /agui` for `principal`. */
function aguiBodyLimit(options: RunHandlerOptions, principal: Principal): number {
  const limit = options.maxAguiBodyBytes ?? DEFAULT_AGUI_BODY_BYTES;
  if (typeof limit === 'number') return limit;
  const chosen = limit(principal);
  if (typeof chosen !== 'number' || !(chosen > 0)) throw new Error(`maxAguiBodyBytes returned ${describeValue(chosen)} for tenant ${principal.tenant}, not a positive number`);
  return chosen;
}

/** The default body limit of `POST /agui`: 8 MiB. */
const DEFAULT_AGUI_BODY_BYTES = 8 * 1_048_576;

function notFound(runId: string): Response {
  return errorResponse(404, 'not_found', `No run ${runId}`);
}

function unsupportedMediaType(type: string | null): Response {
  return errorResponse(415, 'unsupported_media_type', `Expected a JSON body (application/json), got ${type === null ? 'no Content-Type' : describeValue(type.slice(0, 100))}`);
}

/** Read a JSON body of at most `max` bytes (415 when it is not said to be JSON, 413 past the limit, 400 when it is not JSON). */
async function readJson(request: Request, max: number): Promise<unknown> {
  const type = request.headers.get('content-type');
  if (!isJsonMediaType(type)) {
    await request.body?.cancel().catch(() => undefined);
    throw new HttpFailure(unsupportedMediaType(type));
  }
  const text = await readBodyText(request, max);
  if (text === undefined) throw new HttpFailure(errorResponse(413, 'body_too_large', `The body is larger than ${max} bytes`));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpFailure(errorResponse(400, 'invalid_json', 'The body is not JSON'));
  }
}

async function startRoute(options: RunHandlerOptions, ids: RunIds, principal: Principal, store: Store, request: Request, max: number): Promise<Response> {
  if (!options.start) return errorResponse(405, 'method_not_allowed', 'This server does not start runs');
  const body = await readJson(request, max);
  const { input, runId: wanted, thread } = (body ?? {}) as { input?: unknown; runId?: unknown; thread?: unknown };
  if (typeof input !== 'string' || input.trim() === '') return errorResponse(400, 'invalid_input', 'Expected `input` to be a non-empty string');
  if (wanted !== undefined && !isSafeId(wanted)) return errorResponse(400, 'invalid_id', `Not a valid id: ${describeValue(wanted)}`);
  if (thread !== undefined && !isSafeId(thread)) return errorResponse(400, 'invalid_id', `Not a valid thread id: ${describeValue(thread)}`);
  const runId = wanted ?? randomUUID();
  if (wanted !== undefined && (await runState(runId, { store, signal: request.signal })).exists) return runExists(runId);
  if (thread !== undefined) {
    // A check before the start; the run itself takes the thread atomically (a run that loses fails with thread_busy).
    if (!supportsCompareAndSet(store)) return errorResponse(501, 'threads_unsupported', 'The store of this server has no compare-and-set: it keeps no threads');
    const state = await threadState(store, thread, { signal: request.signal });
    if (state.busy) return threadBusy(thread, state.heldBy);
  }
  const started = await startNew(options, ids, { principal, store, runId, input, body, request, ...defined({ thread }) });
  return started ?? jsonResponse(201, { runId, ...defined({ thread }) });
}

function threadBusy(thread: string, heldBy: string | undefined): Response {
  return errorResponse(409, 'thread_busy', heldBy === undefined ? `Thread ${thread} is being deleted` : `Thread ${thread} is busy: run ${heldBy} holds it`, { thread, ...defined({ heldBy }) });
}

function runExists(runId: string): Response {
  return errorResponse(409, 'run_exists', `Run ${runId} exists already`);
}

/**
 * Start a run under an id no run has: take the id (of concurrent requests
 * for one id, exactly one does; the others get 409), call `start`, and wait
 * until the run has logged. Undefined once it has; the response otherwise.
 */
async function startNew(options: RunHandlerOptions, ids: RunIds, start: StartRunRequest): Promise<Response | undefined> {
  const { principal, store, runId, request } = start;
  if (!(await ids.take(store, principal.tenant, runId, request.signal, (options.clock ?? realClock).now()))) return runExists(runId);
  try {
    await options.start!(start);
  } catch (error) {
    await ids.release(store, runId);
    throw error;
  }
  const started = await waitForRun(runId, {
    store,
    signal: request.signal,
    ...defined({ clock: options.clock, timeoutMs: options.startTimeoutMs }),
  });
  return started ? undefined : errorResponse(504, 'start_timeout', `Run ${runId} was started but logged nothing in time`);
}

function streamOptions(options: RunHandlerOptions, request: Request) {
  return {
    signal: request.signal,
    ...defined({ clock: options.clock, heartbeatMs: options.heartbeatMs, bufferBytes: options.bufferBytes, drainTimeoutMs: options.drainTimeoutMs, retryMs: options.retryMs, pollMs: options.pollMs }),
  };
}

async function eventsRoute(options: RunHandlerOptions, store: Store, runId: string, request: Request, url: URL): Promise<Response> {
  const protocol = url.searchParams.get('protocol') ?? 'troupe';
  if (protocol !== 'troupe' && protocol !== 'ag-ui') return errorResponse(400, 'invalid_protocol', 'Expected `protocol` to be troupe or ag-ui');
  const lastEventId = request.headers.get('last-event-id') ?? url.searchParams.get('lastEventId');
  if (protocol === 'ag-ui') return await aguiEventsRoute(options, store, runId, request, url, lastEventId);
  const from = positionAfter(lastEventId);
  if (from === undefined) return errorResponse(400, 'invalid_last_event_id', 'Expected `Last-Event-ID` to be an event id (digits)');
  const state = await runState(runId, { store, signal: request.signal });
  if (!state.exists) return notFound(runId);
  if (state.ended && from > 0) {
    // Nothing left after the last event a client saw of an ended run: 204 stops EventSource reconnecting.
    const { next } = await readRunEvents(runId, { store, from, signal: request.signal });
    if (next <= from) return new Response(null, { status: 204 });
  }
  return new Response(runEventStream(runId, { ...streamOptions(options, request), store, from }), { headers: SSE_HEADERS });
}

/** `Last-Event-ID` of an AG-UI request: undefined without one, a 400 response when it is not an AG-UI event id. */
function aguiLastEventId(lastEventId: string | null): string | undefined | Response {
  if (lastEventId === null || lastEventId.trim() === '') return undefined;
  if (parseAguiEventId(lastEventId) === undefined) return errorResponse(400, 'invalid_last_event_id', 'Expected `Last-Event-ID` to be an AG-UI event id (`<position>.<index>`)');
  return lastEventId;
}

/**
 * `GET /runs/:id/events?protocol=ag-ui`: the run from its start as one AG-UI
 * run (id `?runId=`, else `watch-<runId>`, the same on every reconnect),
 * resumed after `Last-Event-ID`; 204 once an ended run has nothing more.
 */
async function aguiEventsRoute(options: RunHandlerOptions, store: Store, runId: string, request: Request, url: URL, header: string | null): Promise<Response> {
  const lastEventId = aguiLastEventId(header);
  if (lastEventId instanceof Response) return lastEventId;
  const aguiRunId = url.searchParams.get('runId') ?? `watch-${runId}`;
  if (!isSafeId(aguiRunId)) return errorResponse(400, 'invalid_id', `Not a valid run id: ${describeValue(aguiRunId)}`);
  const state = await runState(runId, { store, signal: request.signal });
  if (!state.exists) return notFound(runId);
  const stream = { ...streamOptions(options, request), store, aguiRunId, ...defined({ lastEventId }) };
  if (state.ended && lastEventId !== undefined) {
    // Nothing left after the last event a client saw of an ended run: 204 stops EventSource reconnecting.
    const rest = aguiEvents(runId, stream, request.signal);
    const next = await rest.next();
    await rest.return(undefined);
    if (next.done) return new Response(null, { status: 204 });
  }
  return new Response(aguiEventStream(runId, stream), { headers: SSE_HEADERS });
}

/** The run report: a self-contained page whose only script and styles are its own, inline. */
const REPORT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
};

async function instructionsRoute(options: RunHandlerOptions, store: Store, runId: string, request: Request, max: number): Promise<Response> {
  const body = await readJson(request, max);
  const text = (body as { text?: unknown } | null)?.text;
  if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_INSTRUCTION_LENGTH) {
    return errorResponse(400, 'invalid_instruction', `Expected \`text\` to be a string of 1-${MAX_INSTRUCTION_LENGTH} characters`);
  }
  const state = await runState(runId, { store, signal: request.signal });
  if (!state.exists) return notFound(runId);
  if (state.ended) return errorResponse(409, 'run_ended', `Run ${runId} has ended`);
  const record = await sendInstruction(runId, text, { store, signal: request.signal, ...defined({ clock: options.clock }) });
  return jsonResponse(202, { queued: true, id: record.id });
}

const RESUME_ANSWERS: Record<string, (status: 'resolved' | 'cancelled', payload: unknown) => unknown> = {
  approval: (status, payload) => (status === 'cancelled' ? { approved: false } : payload),
  question: (status, payload) => (status === 'cancelled' ? { text: 'The person declined to answer.' } : payload),
  'plan-approval': (status, payload) => (status === 'cancelled' ? { decision: 'reject' } : payload),
};

async function aguiRoute(options: RunHandlerOptions, ids: RunIds, principal: Principal, store: Store, request: Request, max: number): Promise<Response> {
  const parsed = aguiInputSchema.safeParse(await readJson(request, max));
  if (!parsed.success) return errorResponse(400, 'invalid_input', 'Expected an AG-UI RunAgentInput', { issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
  const input: AguiInput = parsed.data;
  const threadId = input.threadId;
  if (!isSafeId(threadId)) return errorResponse(400, 'invalid_id', `Not a valid thread id: ${describeValue(threadId)}`);
  // The thread's current run: its latest (a thread's first run has the thread's id).
  const runId = (supportsCompareAndSet(store) ? (await threadState(store, threadId, { signal: request.signal })).lastRunId : undefined) ?? threadId;
  for (const entry of input.resume ?? []) {
    if (!isSafeId(entry.interruptId)) return errorResponse(400, 'invalid_id', `Not a valid interrupt id: ${describeValue(entry.interruptId)}`);
    const doc = await readRequest(runId, entry.interruptId, { store, signal: request.signal });
    if (!doc) return errorResponse(404, 'not_found', `No interrupt ${entry.interruptId} in thread ${threadId}`);
    const result = await answerRequest(runId, entry.interruptId, RESUME_ANSWERS[doc.request.kind]!(entry.status, entry.payload), { store, signal: request.signal, ...defined({ clock: options.clock }) });
    if (!result.ok && result.reason === 'invalid') return errorResponse(400, 'invalid_answer', 'The resume payload does not fit the interrupt', { issues: result.issues });
  }
  const lastEventId = aguiLastEventId(request.headers.get('last-event-id'));
  if (lastEventId instanceof Response) return lastEventId;
  const state = await runState(runId, { store, signal: request.signal });
  // A reconnect (Last-Event-ID) or an answer goes on with the current run; a new message after it ended continues the thread in a new run.
  const continuing = (input.resume?.length ?? 0) > 0 || lastEventId !== undefined;
  let streamed = runId;
  let from = 0;
  if (!state.exists || (state.ended && !continuing)) {
    if (!options.start) return state.exists ? errorResponse(405, 'method_not_allowed', 'This server does not start runs') : notFound(threadId);
    const text = lastUserText(input);
    if (text === undefined || text.trim() === '') return errorResponse(400, 'invalid_input', `${state.exists ? 'The next run of a thread' : 'A new thread'} needs a user message`);
    streamed = state.exists ? randomUUID() : threadId;
    const refused = await startNew(options, ids, { principal, store, runId: streamed, input: text, thread: threadId, body: input, request });
    if (refused) return refused;
  } else {
    from = await positionAfterRequests(runId, (input.resume ?? []).map((r) => r.interruptId), { store, signal: request.signal });
  }
  const stream = { ...streamOptions(options, request), store, aguiRunId: input.runId, threadId, from, ...defined({ lastEventId }) };
  return new Response(aguiEventStream(streamed, stream), { headers: SSE_HEADERS });
}

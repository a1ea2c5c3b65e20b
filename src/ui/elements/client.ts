/**
 * The elements' client of a server: troupe's run routes (`troupe/http`:
 * list, start, stream with `EventSource`, answer, cancel, instruct, the
 * report) and `troupe dev`'s catalogue, replay and fork; and an AG-UI
 * endpoint (`POST`, the answer streamed back). Nothing here knows the
 * engine: only URLs and JSON.
 * @module
 */
import { TroupeError } from '../../core/errors.js';
import { SseReader } from '../sse.js';
import type { Catalog, CheckpointSummary, RunSummary } from '../types.js';

/** Where a server is and how to be let in. */
export interface Connection {
  /** The base URL of the routes (`/api`, or a full URL). */
  endpoint: string;
  /** Sent as `?token=` on every request (an `EventSource` sends no headers). */
  token?: string | undefined;
  /** Extra headers of every `fetch` (not of the event stream). */
  headers?: Record<string, string> | undefined;
}

/** A request to the server failed: its HTTP status, the server's error code and message, and the problems it listed. */
export class UiRequestError extends TroupeError {
  readonly status: number;
  readonly issues: string[];
  constructor(status: number, message: string, details: { code?: string; issues?: string[] } = {}) {
    super('request_failed', message, { details: { status, ...details } });
    this.status = status;
    this.issues = details.issues ?? [];
  }
}

/** What starting a run asks for: the input, and what to run (`troupe dev`'s catalogue entries). */
export interface StartRequest {
  input: string;
  target?: { kind: string; name: string; source?: string; values?: Record<string, unknown> };
}

/** The URL of `path` under the endpoint, with the token. */
export function urlOf(connection: Connection, path: string, query: Record<string, string> = {}): string {
  const base = connection.endpoint.endsWith('/') ? connection.endpoint.slice(0, -1) : connection.endpoint;
  const url = new URL(`${base}${path}`, location.href);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  if (connection.token) url.searchParams.set('token', connection.token);
  return url.href;
}

/** A JSON request; a non-2xx answer rejects with a {@link UiRequestError}. */
export async function requestJson<T>(connection: Connection, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(urlOf(connection, path), {
      method,
      credentials: 'same-origin',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), accept: 'application/json', ...connection.headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    throw new UiRequestError(0, `The server could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    json = {};
  }
  if (!response.ok) {
    const error = (json as { error?: { code?: unknown; message?: unknown; issues?: unknown } }).error ?? {};
    const issues = Array.isArray(error.issues) ? error.issues.map(String) : [];
    throw new UiRequestError(response.status, typeof error.message === 'string' ? error.message : `${response.status} ${response.statusText}`, {
      ...(typeof error.code === 'string' ? { code: error.code } : {}),
      issues,
    });
  }
  return json as T;
}

/** The run routes of a troupe server. */
export class TroupeApi {
  constructor(readonly connection: Connection) {}

  runs(signal?: AbortSignal): Promise<RunSummary[]> {
    return requestJson<{ runs: RunSummary[] }>(this.connection, 'GET', '/runs', undefined, signal).then((r) => (Array.isArray(r.runs) ? r.runs : []));
  }
  start(request: StartRequest): Promise<string> {
    return requestJson<{ runId: string }>(this.connection, 'POST', '/runs', request).then((r) => r.runId);
  }
  answer(runId: string, requestId: string, answer: unknown): Promise<unknown> {
    return requestJson(this.connection, 'POST', `/runs/${encodeURIComponent(runId)}/requests/${encodeURIComponent(requestId)}`, answer);
  }
  cancel(runId: string): Promise<unknown> {
    return requestJson(this.connection, 'POST', `/runs/${encodeURIComponent(runId)}/cancel`, {});
  }
  instruct(runId: string, text: string): Promise<{ id: string }> {
    return requestJson(this.connection, 'POST', `/runs/${encodeURIComponent(runId)}/instructions`, { text });
  }
  catalog(signal?: AbortSignal): Promise<Catalog> {
    return requestJson<Catalog>(this.connection, 'GET', '/catalog', undefined, signal);
  }
  checkpoints(runId: string): Promise<CheckpointSummary[]> {
    return requestJson<{ checkpoints: CheckpointSummary[] }>(this.connection, 'GET', `/runs/${encodeURIComponent(runId)}/checkpoints`).then((r) => r.checkpoints ?? []);
  }
  replay(runId: string): Promise<string> {
    return requestJson<{ runId: string }>(this.connection, 'POST', `/runs/${encodeURIComponent(runId)}/replay`, {}).then((r) => r.runId);
  }
  fork(runId: string, checkpoint: number): Promise<string> {
    return requestJson<{ runId: string }>(this.connection, 'POST', `/runs/${encodeURIComponent(runId)}/fork`, { checkpoint }).then((r) => r.runId);
  }
  reportUrl(runId: string): string {
    return urlOf(this.connection, `/runs/${encodeURIComponent(runId)}/report`);
  }

  /**
   * Follow a run's events: `onEvent(seq, event)` for each, in order. The
   * browser's `EventSource` reconnects by itself with `Last-Event-ID`, so
   * nothing is lost or repeated across a dropped connection; `onState`
   * says when it is open, reconnecting or done. Returns a function that
   * stops following.
   */
  follow(runId: string, onEvent: (seq: number | undefined, event: unknown) => void, onState: (state: 'open' | 'reconnecting' | 'closed') => void): () => void {
    const source = new EventSource(urlOf(this.connection, `/runs/${encodeURIComponent(runId)}/events`), { withCredentials: false });
    let opened = false;
    source.onopen = () => {
      opened = true;
      onState('open');
    };
    source.onmessage = (message: MessageEvent<string>) => {
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      const seq = message.lastEventId === '' ? undefined : Number(message.lastEventId);
      onEvent(Number.isInteger(seq) ? seq : undefined, event);
    };
    source.onerror = () => {
      // CLOSED: the server said there is nothing more (204) or refused; else the browser reconnects.
      onState(source.readyState === EventSource.CLOSED ? 'closed' : opened ? 'reconnecting' : 'reconnecting');
    };
    return () => source.close();
  }
}

/** One AG-UI request: the thread, its messages, and answers to interrupts (`resume`). */
export interface AguiRequest {
  threadId: string;
  messages: Array<{ id: string; role: string; content: string }>;
  resume?: Array<{ interruptId: string; status: 'resolved' | 'cancelled'; payload?: unknown }>;
  state?: unknown;
}

/**
 * Run an AG-UI request (`POST` to the endpoint with a `RunAgentInput`) and
 * pass every event of the answer's stream to `onEvent`, until it ends or
 * `signal` aborts.
 */
export async function runAgui(connection: Connection, request: AguiRequest, onEvent: (event: unknown) => void, signal?: AbortSignal): Promise<void> {
  const body = {
    threadId: request.threadId,
    runId: `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
    messages: request.messages,
    tools: [],
    context: [],
    state: request.state ?? {},
    forwardedProps: {},
    ...(request.resume ? { resume: request.resume } : {}),
  };
  const response = await fetch(urlOf(connection, ''), {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...connection.headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  if (!response.ok || !response.body) throw new UiRequestError(response.status, `The AG-UI endpoint answered ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const sse = new SseReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    for (const message of sse.push(value)) {
      try {
        onEvent(JSON.parse(message.data));
      } catch {
        // not JSON: not an AG-UI event
      }
    }
  }
}

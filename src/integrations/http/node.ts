/**
 * `node:http` (and Express, which is built on it) from a web-standard
 * handler: the request becomes a `Request` whose signal aborts when the
 * client goes away and whose body is read from the socket only when the
 * handler reads it, and the `Response` body is written with back-pressure.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { realClock, type Clock } from '../../core/clock.js';
import { TroupeError, errorMessage } from '../../core/errors.js';
import { clock as clockCheck, defineOptions, func, positiveInteger, positiveNumber } from '../../core/options.js';

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /**
   * The largest request body a handler may read, in bytes: past it the
   * request is answered 413 (`body_too_large`) and the connection closed.
   * Handlers bound their routes lower (`runHandler`: 64 KiB, AG-UI 8 MiB).
   * Default: 8 MiB.
   */
  maxBodyBytes?: number;
  /**
   * How long a body being read may send nothing, in ms: then the request is
   * answered 408 (`body_timeout`) and the connection closed. Default: 30000.
   */
  bodyIdleTimeoutMs?: number;
  /**
   * How many requests with a body may wait for their handler at once: a
   * request waits from its headers until the handler answers or starts to
   * read its body (for troupe's handlers: until `authorize` accepted). One
   * more is answered 503 (`busy`) and closed. Each waiting request holds at
   * most what node buffers for it (about 80 KiB), so the bound is the memory
   * callers without credentials can take: 64 of them about 8 MB (measured
   * by `npm run bench -- serving`).
   * Default: 64.
   */
  maxPendingBodies?: number;
  /**
   * How long a connection answered before its request body ended goes on
   * taking (and throwing away) what the client still sends, in ms, before it
   * is closed. Closing at once would reset a connection whose client is
   * still uploading, and the reset can reach the client before it reads the
   * answer (a 401, 413 or 503 seen as a network error); so the answer is
   * sent, the sending side closed, and the connection closed when the client
   * closes its side or after this time (a lingering close, RFC 9112 §9.6).
   * Default: 5000.
   */
  lingerMs?: number;
  /** The clock of the body idle time-out and of the lingering close. Default: the real clock. */
  clock?: Clock;
  /** Called with errors that cannot be answered any more (the response had started). */
  onError?: (error: unknown) => void;
}

const nodeListenerOptions = defineOptions<NodeListenerOptions>('toNodeListener', {
  maxBodyBytes: positiveNumber,
  bodyIdleTimeoutMs: positiveNumber,
  maxPendingBodies: positiveInteger,
  lingerMs: positiveNumber,
  clock: clockCheck,
  onError: func,
});

/** What a {@link NodeListener} holds now, and has read. */
export interface NodeListenerStats {
  /** Requests being answered. */
  requests: number;
  /** Requests with a body whose handler has neither answered nor started to read it (see `maxPendingBodies`). */
  pendingBodies: number;
  /** Bytes of request bodies that arrived and that no handler has read yet, over the requests being answered. */
  bufferedBytes: number;
  /** Bytes of request bodies handlers have read, since the listener was made. */
  bodyBytesRead: number;
  /** Requests answered 503 because `maxPendingBodies` requests were waiting, since the listener was made. */
  refused: number;
}

/** A `node:http` request listener, with what it holds ({@link NodeListenerStats}). */
export interface NodeListener {
  (req: IncomingMessage, res: ServerResponse): void;
  /** What the listener holds now, and has read. */
  stats(): NodeListenerStats;
}

/** The state of one request. */
interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly controller: AbortController;
  /** Counted in `pendingBodies`. */
  pending: boolean;
  /** Answered by the listener itself (413, 408): the handler's response is dropped. */
  settled: boolean;
}

/** The listener's shared state. */
interface Edge {
  readonly maxBodyBytes: number;
  readonly bodyIdleTimeoutMs: number;
  readonly lingerMs: number;
  readonly clock: Clock;
  /** Sockets whose close lingers already. */
  readonly lingering: WeakSet<object>;
  readonly exchanges: Set<Exchange>;
  pendingBodies: number;
  bodyBytesRead: number;
  refused: number;
}

/**
 * A `node:http` request listener that calls a web-standard handler. Works
 * with `http.createServer(listener)` and as Express middleware
 * (`app.use('/api', toNodeListener(handler))`: the full `originalUrl` is
 * used, so give the handler the same `basePath`).
 *
 * The request body is not read before the handler reads it: `runHandler`
 * (and the A2A and MCP servers) call `authorize` first, so a caller without
 * credentials is answered without a byte of its body read, and the
 * connection of a request whose body was left unread is closed after the
 * answer. Bodies are bounded (`maxBodyBytes`), a stalled body times out
 * (`bodyIdleTimeoutMs`), and so many requests may wait for their handler
 * with a body (`maxPendingBodies`). Time-outs of headers and of whole
 * requests are the server's: see {@link createNodeServer}.
 *
 * @example
 * ```ts
 * const server = http.createServer(toNodeListener(runHandler({ store, authorize })));
 * server.listen(8080, '127.0.0.1');
 * ```
 */
export function toNodeListener(handler: (request: Request) => Response | Promise<Response>, options: NodeListenerOptions = {}): NodeListener {
  nodeListenerOptions.check(options);
  const edge: Edge = {
    maxBodyBytes: options.maxBodyBytes ?? 8 * 1_048_576,
    bodyIdleTimeoutMs: options.bodyIdleTimeoutMs ?? 30_000,
    lingerMs: options.lingerMs ?? 5000,
    lingering: new WeakSet(),
    clock: options.clock ?? realClock,
    exchanges: new Set(),
    pendingBodies: 0,
    bodyBytesRead: 0,
    refused: 0,
  };
  const maxPendingBodies = options.maxPendingBodies ?? 64;
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const body = hasBody(req);
    if (body && edge.pendingBodies >= maxPendingBodies) {
      edge.refused++;
      answer(edge, req, res, 503, 'busy', 'Too many requests wait to be answered: try again', { 'retry-after': '1' });
      return;
    }
    const exchange: Exchange = { req, res, controller: new AbortController(), pending: body, settled: false };
    if (body) edge.pendingBodies++;
    edge.exchanges.add(exchange);
    void serve(handler, exchange, edge, body)
      .catch((error: unknown) => {
        if (exchange.settled) return;
        if (!res.headersSent) answer(edge, req, res, 500, 'internal', errorMessage(error));
        else {
          options.onError?.(error);
          // What was written reaches the client before the cut (node sends it on the next tick): it can resume after it.
          setImmediate(() => res.destroy());
        }
      })
      .finally(() => {
        if (res.writableFinished || res.destroyed) done(edge, exchange);
        else res.once('close', () => done(edge, exchange));
      });
  };
  listener.stats = (): NodeListenerStats => {
    let bufferedBytes = 0;
    for (const { req } of edge.exchanges) bufferedBytes += req.readableLength;
    return { requests: edge.exchanges.size, pendingBodies: edge.pendingBodies, bufferedBytes, bodyBytesRead: edge.bodyBytesRead, refused: edge.refused };
  };
  return listener;
}

/** Options of {@link createNodeServer}: the listener's, and the server's time-outs. */
export interface NodeServerOptions extends NodeListenerOptions {
  /** How long a client may take to send a request's headers, in ms: then 408 and closed. Default: 20000. */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request, body included, in ms: then 408 and closed. Default: 300000. */
  requestTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open, in ms. Default: 5000. */
  keepAliveTimeoutMs?: number;
}

const nodeServerOptions = defineOptions<NodeServerOptions>('createNodeServer', {
  ...nodeListenerOptions.shape,
  headersTimeoutMs: positiveNumber,
  requestTimeoutMs: positiveNumber,
  keepAliveTimeoutMs: positiveNumber,
});

/**
 * A `node:http` server of a web-standard handler ({@link toNodeListener})
 * with time-outs for clients that send slowly: headers within
 * `headersTimeoutMs` (20 s), the whole request within `requestTimeoutMs`
 * (300 s), a body that pauses for `bodyIdleTimeoutMs` (30 s) cut. Node
 * checks the first two every quarter of `headersTimeoutMs` (at most 30 s).
 * Listen with `server.listen(port, host)`.
 *
 * @example
 * ```ts
 * createNodeServer(runHandler({ store, authorize, start })).listen(8080, '127.0.0.1');
 * ```
 */
export function createNodeServer(handler: (request: Request) => Response | Promise<Response>, options: NodeServerOptions = {}): Server {
  nodeServerOptions.check(options);
  const { headersTimeoutMs = 20_000, requestTimeoutMs = 300_000, keepAliveTimeoutMs = 5000, ...listenerOptions } = options;
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
      keepAliveTimeout: keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(10, Math.floor(headersTimeoutMs / 4))),
    },
    toNodeListener(handler, listenerOptions),
  );
  return server;
}

function done(edge: Edge, exchange: Exchange): void {
  unpend(edge, exchange);
  edge.exchanges.delete(exchange);
}

function unpend(edge: Edge, exchange: Exchange): void {
  if (!exchange.pending) return;
  exchange.pending = false;
  edge.pendingBodies--;
}

/** Whether a request says it has a body (a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return length > 0 || Number.isNaN(length);
}

/**
 * `connection: close` when the body was not read to its end, so the rest is
 * not waited for; the connection then lingers ({@link lingerIfUnread}).
 */
function closeUnlessRead(edge: Edge, req: IncomingMessage, body: boolean): Record<string, string> {
  return lingerIfUnread(edge, req, body) ? { connection: 'close' } : {};
}

/** When a request with a body was answered before its end: its close lingers ({@link lingerOnClose}); true then. */
function lingerIfUnread(edge: Edge, req: IncomingMessage, body: boolean): boolean {
  if (!body || req.complete) return false;
  lingerOnClose(edge, req);
  return true;
}

/**
 * Make node's close of this connection, once the answer is written, a
 * lingering one: the sending side is closed (the answer and a FIN go out),
 * what the client still sends is read and thrown away, and the connection is
 * destroyed when the client closes its side or after `lingerMs`. Node's own
 * close destroys the socket at once, and a socket destroyed with unread bytes
 * sends a reset that can overtake the answer.
 */
function lingerOnClose(edge: Edge, req: IncomingMessage): void {
  const socket = req.socket;
  if (edge.lingering.has(socket)) return;
  edge.lingering.add(socket);
  socket.destroySoon = () => {
    // The rest of the body flows and is dropped (nothing listens for its data).
    req.resume();
    if (socket.writable) socket.end();
    const cancel = edge.clock.setTimer(() => socket.destroy(), edge.lingerMs);
    socket.once('close', cancel);
  };
}

/** Answer with a JSON error from the listener itself, and close the connection (lingering if the body is unread). */
function answer(edge: Edge, req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  lingerIfUnread(edge, req, hasBody(req));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close', ...headers });
  res.end(JSON.stringify({ error: { code, message } }));
}

async function serve(handler: (request: Request) => Response | Promise<Response>, exchange: Exchange, edge: Edge, body: boolean): Promise<void> {
  const { res, controller } = exchange;
  const onClose = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.on('close', onClose);
  try {
    const request = toRequest(exchange, edge, body);
    const response = await handler(request);
    if (exchange.settled) {
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    unpend(edge, exchange);
    await writeResponse(response, res, controller.signal, closeUnlessRead(edge, exchange.req, body));
  } finally {
    res.off('close', onClose);
  }
}

function toRequest(exchange: Exchange, edge: Edge, body: boolean): Request {
  const { req, controller } = exchange;
  const host = req.headers.host ?? 'localhost';
  const path = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const url = new URL(path, `http://${host}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  if (!body || method === 'GET' || method === 'HEAD') return new Request(url, { method, headers, signal: controller.signal });
  return new Request(url, { method, headers, body: bodyStream(exchange, edge), signal: controller.signal, duplex: 'half' } as RequestInit);
}

/**
 * The body of a request as a stream that reads the socket only when it is
 * read (nothing is buffered ahead beyond what node holds for the request),
 * bounded by `maxBodyBytes` and cut when it pauses for `bodyIdleTimeoutMs`.
 */
function bodyStream(exchange: Exchange, edge: Edge): ReadableStream<Uint8Array> {
  const { req, res } = exchange;
  let read = 0;
  const fail = (status: number, code: string, message: string): TroupeError => {
    exchange.settled = true;
    answer(edge, req, res, status, code, message);
    exchange.controller.abort();
    return new TroupeError(status === 408 ? 'timeout' : 'invalid_argument', message, { details: { status, code } });
  };
  const tooLarge = () => fail(413, 'body_too_large', `The body is larger than ${edge.maxBodyBytes} bytes`);
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        unpend(edge, exchange);
        if (Number(req.headers['content-length'] ?? 0) > edge.maxBodyBytes) return controller.error(tooLarge());
        return new Promise<void>((resolve) => {
          const finish = (step: () => void) => {
            cleanup();
            step();
            resolve();
          };
          const attempt = () => {
            const chunk = req.read() as Buffer | null;
            if (chunk !== null) {
              read += chunk.byteLength;
              edge.bodyBytesRead += chunk.byteLength;
              if (read > edge.maxBodyBytes) return finish(() => controller.error(tooLarge()));
              return finish(() => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
            }
            if (req.readableEnded) finish(() => controller.close());
          };
          const ended = () => finish(() => controller.close());
          const gone = () => finish(() => controller.error(new TroupeError('cancelled', 'The client went away before the body ended')));
          const idle = () => finish(() => controller.error(fail(408, 'body_timeout', `The body sent nothing for ${edge.bodyIdleTimeoutMs} ms`)));
          const cancelTimer = edge.clock.setTimer(idle, edge.bodyIdleTimeoutMs);
          function cleanup() {
            cancelTimer();
            req.off('readable', attempt);
            req.off('end', ended);
            req.off('error', gone);
            req.off('aborted', gone);
            req.off('close', gone);
          }
          req.on('readable', attempt);
          req.on('end', ended);
          req.on('error', gone);
          req.on('aborted', gone);
          req.on('close', gone);
          attempt();
        });
      },
      cancel() {
        unpend(edge, exchange);
      },
    },
    { highWaterMark: 0 },
  );
}

async function writeResponse(response: Response, res: ServerResponse, signal: AbortSignal, extra: Record<string, string>): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  });
  Object.assign(headers, extra);
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (!response.body) {
    res.end();
    return;
  }
  if (headers['content-type']?.toString().startsWith('text/event-stream')) res.flushHeaders();
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (signal.aborted) return;
      if (!res.write(value)) await drained(res, signal);
    }
    res.end();
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (signal.aborted) await reader.cancel().catch(() => undefined);
  }
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

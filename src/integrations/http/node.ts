/**
 * `node:http` (and Express, which is built on it) from a web-standard
 * handler: the request becomes a `Request` whose signal aborts when the
 * client goes away, and the `Response` body is written with back-pressure.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../../core/errors.js';
import { defineOptions, func, positiveNumber } from '../../core/options.js';

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** The largest request body read, in bytes (the handler may bound it lower). Default: 1 MiB. */
  maxBodyBytes?: number;
  /** Called with errors that cannot be answered any more (the response had started). */
  onError?: (error: unknown) => void;
}

const nodeListenerOptions = defineOptions<NodeListenerOptions>('toNodeListener', { maxBodyBytes: positiveNumber, onError: func });

/**
 * A `node:http` request listener that calls a web-standard handler. Works
 * with `http.createServer(listener)` and as Express middleware
 * (`app.use('/api', toNodeListener(handler))`: the full `originalUrl` is
 * used, so give the handler the same `basePath`).
 *
 * @example
 * ```ts
 * const server = http.createServer(toNodeListener(runHandler({ store, authorize })));
 * server.listen(8080, '127.0.0.1');
 * ```
 */
export function toNodeListener(handler: (request: Request) => Response | Promise<Response>, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  nodeListenerOptions.check(options);
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  return (req, res) => {
    void serve(handler, req, res, maxBodyBytes).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ error: { code: 'internal', message: errorMessage(error) } }));
      } else {
        options.onError?.(error);
        res.destroy();
      }
    });
  };
}

async function serve(handler: (request: Request) => Response | Promise<Response>, req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): Promise<void> {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.on('close', onClose);
  try {
    const request = await toRequest(req, controller.signal, maxBodyBytes);
    if (request instanceof Response) return await writeResponse(request, res, controller.signal);
    const response = await handler(request);
    await writeResponse(response, res, controller.signal);
  } finally {
    res.off('close', onClose);
  }
}

async function toRequest(req: IncomingMessage, signal: AbortSignal, maxBodyBytes: number): Promise<Request | Response> {
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
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers, signal });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBodyBytes) {
      return new Response(JSON.stringify({ error: { code: 'body_too_large', message: `The body is larger than ${maxBodyBytes} bytes` } }), {
        status: 413,
        headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
      });
    }
    chunks.push(chunk);
  }
  return new Request(url, { method, headers, body: Buffer.concat(chunks), signal });
}

async function writeResponse(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  });
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

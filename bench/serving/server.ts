/**
 * The server process of the serving benchmark, started with `--expose-gc`
 * and an IPC channel: `runHandler` behind a node:http server on 127.0.0.1,
 * in one of three modes, answering the parent's questions about its memory.
 *
 * - `current`: `toNodeListener` as it is; `authorize` answers at once
 *   (bearer token), so callers without one get 401.
 * - `slow-auth`: the same, but `authorize` waits (an identity service that
 *   does not answer): requests with a body wait for it, up to
 *   `maxPendingBodies`.
 * - `eager`: the baseline, a listener that reads each body (up to 1 MiB)
 *   before it calls the handler, as `toNodeListener` did before.
 *
 *   node --expose-gc --import tsx bench/serving/server.ts <mode>
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryStore } from 'troupe/testing';
import { runHandler, toNodeListener, type NodeListener } from 'troupe/http';

const mode = process.argv[2] as 'current' | 'slow-auth' | 'eager';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !process.send) throw new Error('run with --expose-gc and an IPC channel');

const handler = runHandler({
  store: memoryStore(),
  basePath: '/api',
  authorize: mode === 'slow-auth' ? () => new Promise(() => undefined) : (request) => (request.headers.get('authorization') === 'Bearer t' ? { tenant: 'acme' } : null),
  start: () => undefined,
});

let eagerBytes = 0;
/** The listener of before: the whole body first (up to 1 MiB), then the handler. */
function eager(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.byteLength;
    eagerBytes += chunk.byteLength;
    if (size <= 1_048_576) chunks.push(chunk);
  });
  req.on('end', () => {
    void handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method!, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) })).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
}

const listener: NodeListener | undefined = mode === 'eager' ? undefined : toNodeListener(handler);
const server = createServer(listener ?? eager);
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));

process.on('message', (message: { ask: 'memory' | 'state' }) => {
  if (message.ask === 'memory') {
    for (let i = 0; i < 3; i++) gc();
    const m = process.memoryUsage();
    process.send!({ rss: m.rss, js: m.heapUsed + m.external });
    return;
  }
  server.getConnections((_error, connections) => {
    const stats = listener?.stats();
    process.send!({ connections, bodyBytes: stats ? stats.bodyBytesRead + stats.bufferedBytes : eagerBytes, pending: stats?.pendingBodies ?? 0, refused: stats?.refused ?? 0 });
  });
});

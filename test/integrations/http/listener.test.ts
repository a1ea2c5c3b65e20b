// The node:http edge (`toNodeListener`, `createNodeServer`) against real
// sockets: a request's body is read only when the handler reads it — for
// runHandler, after `authorize` accepted — so uploads without credentials
// are answered 401 and closed with none of their body read; requests that
// wait for their handler with a body are bounded (503 past the bound); a
// body that stalls is cut after an idle time-out on the injected clock; a
// body past the limit is refused; headers that never end time out.
import { connect, type Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, startRun, type RunHandle } from 'troupe';
import { SimulatedClock, memoryStore, scriptedAdapter } from 'troupe/testing';
import { createNodeServer, runHandler, toNodeListener, type Authorize, type NodeListenerOptions } from 'troupe/http';

const open: Array<Server | Socket> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) {
    if ('closeAllConnections' in thing) {
      thing.closeAllConnections();
      await new Promise<void>((resolve) => thing.close(() => resolve()));
    } else thing.destroy();
  }
});

const bearer: Authorize = (request) => (request.headers.get('authorization') === 'Bearer t' ? { tenant: 'acme' } : null);

function app(authorize: Authorize = bearer) {
  const starts: string[] = [];
  const runs: RunHandle[] = [];
  const adapter = scriptedAdapter({ fallback: 'Done.' });
  const handler = runHandler({
    store: memoryStore(),
    basePath: '/api',
    authorize,
    start: ({ store, runId, input }) => {
      starts.push(runId);
      runs.push(startRun(agent({ name: 'ops' }), input, { adapter, store, runId }));
    },
  });
  return { handler, starts, runs };
}

async function listen(server: Server): Promise<number> {
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function serve(handler: (request: Request) => Promise<Response>, options: NodeListenerOptions = {}) {
  const listener = toNodeListener(handler, options);
  const port = await listen(createServer(listener));
  return { listener, port };
}

/** A raw HTTP/1.1 client on a socket: writes `head` and `body`, then stalls (never ends); `response` is all it got once the server closed. */
function stalled(port: number, head: string, body: Buffer = Buffer.alloc(0)) {
  const socket = connect(port, '127.0.0.1');
  open.push(socket);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => void (text += chunk));
  const response = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined); // a reset after the answer: what was read is kept
  });
  socket.write(head);
  if (body.byteLength > 0) socket.write(body);
  return { socket, response, get received() { return text; } };
}

const upload = (length: number, extra = '') =>
  `POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}Content-Length: ${length}\r\n\r\n`;

describe('bodies are read only for callers the handler accepted', () => {
  it('300 stalled megabyte uploads without credentials are each answered 401 and closed, none of their bodies read', { timeout: 30_000 }, async () => {
    const { handler, starts } = app();
    const { listener, port } = await serve(handler);
    const clients = Array.from({ length: 300 }, () => stalled(port, upload(1_000_010), Buffer.alloc(128 * 1024, 0x20)));
    const responses = await Promise.all(clients.map((c) => c.response));
    for (const text of responses) {
      expect(text.startsWith('HTTP/1.1 401 '), text.slice(0, 40)).toBe(true);
      expect(text.toLowerCase()).toContain('connection: close');
    }
    expect(listener.stats().bodyBytesRead).toBe(0);
    expect(listener.stats()).toMatchObject({ requests: 0, pendingBodies: 0, bufferedBytes: 0 });
    expect(starts).toEqual([]);
  });

  it('bounds the requests whose body waits for their handler: past maxPendingBodies, 503 and closed', { timeout: 30_000 }, async () => {
    let open_!: () => void;
    const gate = new Promise<void>((resolve) => (open_ = resolve));
    // An authorize hook that asks a slow identity service.
    const { handler, starts } = app(async (request) => {
      await gate;
      return bearer(request);
    });
    const { listener, port } = await serve(handler, { maxPendingBodies: 40 });
    let closed = 0;
    let refusedAll!: () => void;
    const refused = new Promise<void>((resolve) => (refusedAll = resolve));
    const clients = Array.from({ length: 120 }, () => {
      const client = stalled(port, upload(1_000_010), Buffer.alloc(64 * 1024, 0x20));
      void client.response.then(() => ++closed === 80 && refusedAll());
      return client;
    });
    await refused;
    const answered = clients.filter((c) => c.received !== '');
    expect(answered).toHaveLength(80);
    for (const c of answered) expect(c.received.startsWith('HTTP/1.1 503 '), c.received.slice(0, 40)).toBe(true);
    const stats = listener.stats();
    expect(stats.pendingBodies).toBe(40);
    expect(stats.refused).toBe(80);
    expect(stats.bodyBytesRead).toBe(0);
    // What waits is what node buffers for each request, not the bodies: at most 128 KiB a request.
    expect(stats.bufferedBytes).toBeLessThanOrEqual(40 * 128 * 1024);
    open_();
    const rest = await Promise.all(clients.filter((c) => c.received === '').map((c) => c.response));
    expect(rest).toHaveLength(40);
    for (const text of rest) expect(text.startsWith('HTTP/1.1 401 '), text.slice(0, 40)).toBe(true);
    expect(listener.stats()).toMatchObject({ bodyBytesRead: 0, pendingBodies: 0, requests: 0 });
    expect(starts).toEqual([]);
  });

  it('reads the body of an accepted caller, and keeps the connection for the next request', async () => {
    const { handler, starts, runs } = app();
    const { listener, port } = await serve(handler);
    const body = JSON.stringify({ input: 'Deploy', runId: 'ok-1' });
    const client = stalled(port, upload(Buffer.byteLength(body), 'Authorization: Bearer t\r\n') + body);
    await expect.poll(() => client.received).toContain('"runId":"ok-1"');
    expect(client.received.startsWith('HTTP/1.1 201 ')).toBe(true);
    expect(client.received.toLowerCase()).not.toContain('connection: close');
    expect(listener.stats().bodyBytesRead).toBe(Buffer.byteLength(body));
    expect(starts).toEqual(['ok-1']);
    await runs[0]!.result;
  });
});

describe('a connection answered before its body ended closes lingering', () => {
  /** A raw client that keeps its side open after the server's FIN (half-open), as a client still uploading does. */
  function uploader(port: number, head: string) {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    open.push(socket);
    let text = '';
    const errors: Error[] = [];
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => void (text += chunk));
    socket.on('error', (error) => errors.push(error));
    const ended = new Promise<void>((resolve) => socket.once('end', resolve));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(head);
    const send = (bytes: number) => new Promise<void>((resolve, reject) => socket.write(Buffer.alloc(bytes, 0x20), (error) => (error ? reject(error) : resolve())));
    return { socket, ended, closed, errors, send, get received() { return text; } };
  }

  it('takes the rest of an unauthenticated upload after the 401, so the client reads the answer, and closes when the client does', { timeout: 30_000 }, async () => {
    const { handler, starts } = app();
    const { listener, port } = await serve(handler);
    const client = uploader(port, upload(4_000_000));
    await client.send(64 * 1024);
    await expect.poll(() => client.received).toContain('"code":"unauthorized"');
    await client.ended; // the server closed its sending side after the answer
    // The rest of the body still goes through: nothing is reset under the client's upload.
    for (let sent = 64 * 1024; sent < 4_000_000; sent += 256 * 1024) await client.send(Math.min(256 * 1024, 4_000_000 - sent));
    client.socket.end();
    await client.closed;
    expect(client.errors).toEqual([]);
    expect(client.received.startsWith('HTTP/1.1 401 ')).toBe(true);
    expect(listener.stats()).toMatchObject({ bodyBytesRead: 0, requests: 0, pendingBodies: 0 });
    expect(starts).toEqual([]);
  });

  it('closes a client that goes on sending after lingerMs on the injected clock', async () => {
    const clock = new SimulatedClock();
    const { handler } = app();
    const server = createServer(toNodeListener(handler, { clock, lingerMs: 2000 }));
    const port = await listen(server);
    const connections = () => new Promise<number>((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
    const client = uploader(port, upload(100_000_000));
    await client.send(1024);
    await expect.poll(() => client.received).toContain('"code":"unauthorized"');
    await client.ended;
    await expect.poll(() => clock.pending).toBe(1);
    await client.send(64 * 1024);
    await clock.advance(1999);
    expect(await connections()).toBe(1);
    await clock.advance(1);
    await expect.poll(connections).toBe(0);
    expect(() => toNodeListener(handler, { lingerMs: 0 })).toThrow(/lingerMs/);
  });
});

describe('bodies that stall or grow too large', () => {
  it('cuts a body that stops arriving after bodyIdleTimeoutMs on the injected clock: 408, closed, nothing started', async () => {
    const clock = new SimulatedClock();
    const { handler, starts } = app();
    const { listener, port } = await serve(handler, { clock, bodyIdleTimeoutMs: 30_000 });
    const client = stalled(port, upload(1000, 'Authorization: Bearer t\r\n'), Buffer.from('{"input":"'));
    await expect.poll(() => listener.stats().bodyBytesRead).toBe(10);
    await expect.poll(() => clock.pending).toBeGreaterThan(0);
    await clock.advance(29_999);
    expect(client.received).toBe('');
    await clock.advance(1);
    const text = await client.response;
    expect(text.startsWith('HTTP/1.1 408 ')).toBe(true);
    expect(text).toContain('"code":"body_timeout"');
    expect(starts).toEqual([]);
  });

  it('refuses a body past maxBodyBytes with 413: a declared length unread, a chunked one after the limit', async () => {
    const { handler, starts } = app();
    const { listener, port } = await serve(handler, { maxBodyBytes: 1000 });
    const declared = stalled(port, upload(5000, 'Authorization: Bearer t\r\n'), Buffer.alloc(100, 0x20));
    const text = await declared.response;
    expect(text.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(text).toContain('"code":"body_too_large"');
    expect(listener.stats().bodyBytesRead).toBe(0);
    const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
    const chunked = stalled(
      port,
      'POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer t\r\nTransfer-Encoding: chunked\r\n\r\n' + chunk(`{"input":"${'x'.repeat(600)}`) + chunk('y'.repeat(600)),
    );
    const second = await chunked.response;
    expect(second.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(listener.stats().bodyBytesRead).toBeLessThanOrEqual(1000 + 700);
    expect(starts).toEqual([]);
  });

  it('createNodeServer: headers that never end are answered 408 and closed after headersTimeoutMs', async () => {
    const { handler } = app();
    const server = createNodeServer(handler, { headersTimeoutMs: 200 });
    expect(server.headersTimeout).toBe(200);
    expect(server.requestTimeout).toBe(300_000);
    const port = await listen(server);
    const client = stalled(port, 'POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    expect((await client.response).startsWith('HTTP/1.1 408 ')).toBe(true);
    expect(() => createNodeServer(handler, { headersTimeoutMs: 0 })).toThrow(/headersTimeoutMs/);
  });
});

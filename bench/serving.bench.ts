/**
 * The serving edge under load (`npm run bench -- serving`).
 *
 * Memory: a server process (`bench/serving/server.ts`, `runHandler` behind
 * node:http on 127.0.0.1) takes 500 connections that are idle, or that
 * each send the headers of a `POST /api/runs` without credentials with a
 * Content-Length of 1,000,010 bytes, then a megabyte of body, and stall.
 * The server's memory (RSS, and JS heap plus buffers, after a full GC) is
 * sampled before and once every connection has been dealt with; the
 * difference divided by 500 is the cost of one connection. The baseline
 * is the listener of before, which read each body before it called the
 * handler, measured in the same run. Median of 3 rounds, each in a fresh
 * process.
 *
 * Resume: `POST /agui` on a thread of 300 events, the response cut every
 * 25 frames by the server; a reader through `resumingFetch` (reconnects
 * with Last-Event-ID) against the same reader reconnecting without it
 * (what a client could do before): events lost and doubled, and the time
 * to read the whole stream against an uncut read (median of 5).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { startRun } from 'troupe';
import { realClock } from 'troupe/kernel';
import { memoryStore } from 'troupe/testing';
import { namespacedStore, resumingFetch, runHandler, type Handler } from 'troupe/http';
import { parseFrames, startServer } from '../test/helpers/http-server.js';
import { ticker } from '../test/integrations/http/flows.js';

const CONNECTIONS = 500;
const ROUNDS = 3;
const BODY = Buffer.alloc(1_000_000, 0x20);

type Mode = 'current' | 'slow-auth' | 'eager';
interface Memory {
  rss: number;
  js: number;
}
interface State {
  connections: number;
  bodyBytes: number;
  pending: number;
  refused: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(1);

/** A server process in `mode`, and a way to ask it things. */
async function server(mode: Mode): Promise<{ port: number; ask: <T>(what: 'memory' | 'state') => Promise<T>; stop: () => void }> {
  const child: ChildProcess = fork(join(import.meta.dirname, 'serving', 'server.ts'), [mode], { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const ask = <T>(what: 'memory' | 'state') =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send({ ask: what });
    });
  return { port, ask, stop: () => void child.kill() };
}

async function until(test: () => Promise<boolean>): Promise<void> {
  while (!(await test())) await new Promise((r) => setTimeout(r, 50));
}

/** Open the connections of a scenario; resolves once the server has dealt with every one. */
async function open(port: number, upload: boolean, settled: () => Promise<boolean>): Promise<Socket[]> {
  const head = 'POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000010\r\n\r\n';
  const sockets: Socket[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    if (upload) {
      socket.write(head);
      socket.write(BODY);
    }
    sockets.push(socket);
  }
  await until(settled);
  return sockets;
}

/** Server memory per connection in one round of a scenario. */
async function round(mode: Mode, upload: boolean): Promise<{ rss: number; js: number; refused: number }> {
  const s = await server(mode);
  try {
    const before = await s.ask<Memory>('memory');
    const settled = async () => {
      const state = await s.ask<State>('state');
      if (!upload) return state.connections === CONNECTIONS;
      if (mode === 'eager') return state.bodyBytes >= CONNECTIONS * BODY.byteLength;
      if (mode === 'slow-auth') return state.pending + state.refused === CONNECTIONS;
      return state.connections === 0;
    };
    const sockets = await open(s.port, upload, settled);
    const after = await s.ask<Memory>('memory');
    const { refused } = await s.ask<State>('state');
    for (const socket of sockets) socket.destroy();
    return { rss: (after.rss - before.rss) / CONNECTIONS, js: (after.js - before.js) / CONNECTIONS, refused };
  } finally {
    s.stop();
  }
}

async function memory(): Promise<void> {
  const scenarios: Array<[string, Mode, boolean]> = [
    ['idle connection', 'current', false],
    ['stalled upload without credentials (before: body read first)', 'eager', true],
    ['stalled upload without credentials', 'current', true],
    ['stalled upload, authorize never answers (maxPendingBodies 64)', 'slow-auth', true],
  ];
  console.log(`${CONNECTIONS} connections to one server process; memory per connection after a full GC, median of ${ROUNDS} rounds.\n`);
  console.log('| connection | RSS per connection | JS heap + buffers per connection | total (JS) | × before |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  let before = 0;
  for (const [name, mode, upload] of scenarios) {
    const rounds: Array<{ rss: number; js: number; refused: number }> = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(mode, upload));
    const rss = median(rounds.map((x) => x.rss));
    const js = median(rounds.map((x) => x.js));
    if (mode === 'eager') before = js;
    const ratio = upload && before > 0 ? (js / before).toFixed(4) : '';
    const refused = rounds[0]!.refused > 0 ? ` (${rounds[0]!.refused} refused 503)` : '';
    console.log(`| ${name}${refused} | ${kb(rss)} KB | ${kb(js)} KB | ${mb(js * CONNECTIONS)} MB | ${ratio} |`);
  }
}

/** Read a whole SSE response: the ids of its events, in order. */
async function readIds(response: Response): Promise<string[]> {
  return parseFrames(await response.text())
    .filter((f) => f.data !== undefined)
    .map((f) => f.id ?? '');
}

/** The handler behind a server that cuts each event stream after `every` frames (inside a frame). */
function cutting(handler: Handler, every: number, count: { streams: number }): Handler {
  return async (request) => {
    const response = await handler(request);
    count.streams++;
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    let frames = 0;
    const cutter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (new TextDecoder().decode(chunk).includes('data:') && ++frames === every) {
          controller.enqueue(chunk.slice(0, Math.floor(chunk.byteLength / 2)));
          controller.error(new Error('cut'));
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(cutter), { status: response.status, headers: response.headers });
  };
}

async function resume(): Promise<void> {
  const root = memoryStore();
  await startRun(ticker(298, 0, realClock), 'go', { store: namespacedStore(root, 'acme'), runId: 'thread' }).result;
  const handler = runHandler({ store: root, retryMs: 1, authorize: () => ({ tenant: 'acme' }) });
  const calm = await startServer(handler);
  const count = { streams: 0 };
  const cut = await startServer(cutting(handler, 25, count));
  const body = JSON.stringify({ threadId: 'thread', runId: 'bench', messages: [] });
  const post = (fetchFn: typeof fetch, url: string) => fetchFn(`${url}/agui`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const withoutLastEventId: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('last-event-id');
    return fetch(input, { ...init, headers });
  };
  const timed = async (read: () => Promise<string[]>): Promise<{ ms: number; ids: string[]; reconnects: number }> => {
    count.streams = 0;
    const start = performance.now();
    const ids = await read();
    return { ms: performance.now() - start, ids, reconnects: Math.max(0, count.streams - 1) };
  };
  try {
    const reference = await readIds(await post(fetch, calm.url));
    const rows: Array<[string, () => Promise<string[]>]> = [
      ['uncut (baseline)', async () => readIds(await post(fetch, calm.url))],
      ['cut every 25 frames, reconnect with Last-Event-ID (resumingFetch)', async () => readIds(await post(resumingFetch({ maxAttempts: 100 }) as typeof fetch, cut.url))],
      [
        'cut every 25 frames, reconnect without Last-Event-ID (before)',
        async () => {
          // Before, a reconnect started the stream over; give up once it has read as many events as there are.
          const ids: string[] = [];
          const fetchFn = resumingFetch({ maxAttempts: 100, fetch: withoutLastEventId }) as typeof fetch;
          const reader = (await post(fetchFn, cut.url)).body!.getReader();
          const decoder = new TextDecoder();
          let text = '';
          while (ids.length < reference.length * 3) {
            const { done, value } = await reader.read();
            if (done) break;
            text += decoder.decode(value, { stream: true });
            const end = text.lastIndexOf('\n\n');
            if (end < 0) continue;
            ids.push(...parseFrames(text.slice(0, end + 2)).filter((f) => f.data !== undefined).map((f) => f.id ?? ''));
            text = text.slice(end + 2);
          }
          await reader.cancel();
          return ids;
        },
      ],
    ];
    console.log(`\nPOST /agui on a thread of ${reference.length} AG-UI events; median of 5 reads.\n`);
    console.log('| read | events read | lost | doubled | reconnects | median ms | × uncut |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    let uncut = 0;
    for (const [name, read] of rows) {
      const runs: Array<{ ms: number; ids: string[]; reconnects: number }> = [];
      for (let i = 0; i < 5; i++) runs.push(await timed(read));
      const ms = median(runs.map((r) => r.ms));
      if (uncut === 0) uncut = ms;
      const { ids, reconnects } = runs[0]!;
      const got = new Set(ids);
      const lost = reference.filter((id) => !got.has(id)).length;
      const doubled = ids.length - got.size;
      console.log(`| ${name} | ${ids.length} | ${lost} | ${doubled} | ${reconnects} | ${ms.toFixed(1)} | ${(ms / uncut).toFixed(2)} |`);
    }
  } finally {
    await calm.close();
    await cut.close();
  }
}

export default async function bench(): Promise<void> {
  await memory();
  await resume();
}

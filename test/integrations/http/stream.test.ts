// Event streams of runs: the run log, then live events; Last-Event-ID
// resumes with nothing lost and nothing repeated (a real SSE client from npm
// over node:http, reconnecting after the server cuts it mid-stream);
// heartbeats; a slow reader bounded; 204 once an ended run has nothing more.
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import { startRun, type TroupeEvent } from 'troupe';
import { readRun } from 'troupe/persistence';
import { realClock } from 'troupe/kernel';
import { SimulatedClock, memoryStore } from 'troupe/testing';
import { positionAfter, runEventStream, runHandler } from 'troupe/http';
import { parseFrames, readFrames, startServer, type TestServer } from '../../helpers/http-server.js';
import { ticker } from './flows.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const tenantHeader = (req: Request) => {
  const tenant = req.headers.get('x-tenant') ?? new URL(req.url).searchParams.get('tenant');
  return tenant ? { tenant } : null;
};

describe('runEventStream', () => {
  it('sends the whole log of a finished run, each event with its position as id, and ends', async () => {
    const store = memoryStore();
    const handle = startRun(ticker(5, 1, realClock), 'go', { store, runId: 'r1' });
    await handle.result;
    const frames = await readFrames(runEventStream('r1', { store }));
    expect(frames[0]).toEqual({ retry: '1000' });
    const events = frames.slice(1);
    const log = await readRun('r1', { store });
    expect(events.map((f) => Number(f.id))).toEqual(log.events.map((_, i) => i));
    expect(events.map((f) => JSON.parse(f.data!) as TroupeEvent)).toEqual(log.events);
    expect(JSON.parse(events.at(-1)!.data!).type).toBe('run.completed');
  });

  it('starts after Last-Event-ID', async () => {
    const store = memoryStore();
    await startRun(ticker(3, 1, realClock), 'go', { store, runId: 'r1' }).result;
    const from = positionAfter('4');
    expect(from).toBe(5);
    const frames = (await readFrames(runEventStream('r1', { store, from: from! }))).slice(1);
    const log = await readRun('r1', { store });
    expect(frames.map((f) => Number(f.id))).toEqual(log.events.map((_, i) => i).slice(5));
    expect(positionAfter('x1')).toBeUndefined();
    expect(positionAfter(null)).toBe(0);
  });

  it('keeps an idle stream alive with heartbeats on the injected clock', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const handle = startRun(ticker(2, 60_000, clock), 'go', { store, runId: 'idle', clock });
    const controller = new AbortController();
    const reader = runEventStream('idle', { store, clock, heartbeatMs: 15_000, pollMs: 1000, signal: controller.signal }).getReader();
    const decoder = new TextDecoder();
    let text = '';
    await clock.advance(46_000);
    controller.abort();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(parseFrames(text).filter((f) => f.comment === 'keep-alive')).toHaveLength(3);
    handle.cancel();
    await handle.result.catch(() => undefined);
  });

  it('closes a client that does not read with a final error event, holding at most its buffer; it resumes from there', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    await startRun(ticker(200, 0, realClock), 'go', { store, runId: 'big' }).result;
    const log = await readRun('big', { store });
    const stream = runEventStream('big', { store, clock, bufferBytes: 4096, drainTimeoutMs: 5000, pollMs: 100 });
    await clock.advance(1000);
    await clock.advance(5000);
    const frames = await readFrames(stream);
    const last = frames.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data!).code).toBe('slow_client');
    const sent = frames.filter((f) => f.id !== undefined);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(log.events.length);
    const bytes = new TextEncoder().encode(sent.map((f) => `id: ${f.id}\ndata: ${f.data}\n\n`).join('')).byteLength;
    const largest = Math.max(...sent.map((f) => f.data!.length + 20));
    expect(bytes).toBeLessThanOrEqual(4096 + largest);
    // The client reconnects with the last id it got: the rest, nothing twice.
    const rest = (await readFrames(runEventStream('big', { store, from: Number(sent.at(-1)!.id) + 1 }))).filter((f) => f.id !== undefined);
    expect([...sent, ...rest].map((f) => Number(f.id))).toEqual(log.events.map((_, i) => i));
  });
});

describe('GET /runs/:id/events over node:http', () => {
  it('a real EventSource client that is cut off mid-stream reconnects with Last-Event-ID and loses and repeats nothing', async () => {
    const root = memoryStore();
    const tenantStore = (await import('troupe/http')).namespacedStore(root, 'acme');
    const server = await startServer(runHandler({ store: root, authorize: tenantHeader, retryMs: 20, pollMs: 10 }));
    servers.push(server);
    const handle = startRun(ticker(40, 15, realClock), 'go', { store: tenantStore, runId: 'live' });
    const received: Array<{ id: string; event: TroupeEvent }> = [];
    const ids: string[] = [];
    let drops = 0;
    await new Promise<void>((resolve, reject) => {
      const source = new EventSource(`${server.url}/runs/live/events`, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'x-tenant': 'acme' } }),
      });
      source.onmessage = (message) => {
        const event = JSON.parse(message.data) as TroupeEvent;
        received.push({ id: message.lastEventId, event });
        ids.push(message.lastEventId);
        if (received.length % 12 === 0 && drops < 3) {
          drops++;
          server.dropConnections();
        }
        if (event.type === 'run.completed') {
          source.close();
          resolve();
        }
      };
      source.onerror = (error) => {
        if (source.readyState === EventSource.CLOSED) reject(new Error(`the source closed: ${String(error.message)}`));
      };
    });
    await handle.result;
    expect(drops).toBe(3);
    const log = await readRun('live', { store: tenantStore });
    expect(ids).toEqual(log.events.map((_, i) => String(i)));
    expect(received.map((r) => r.event)).toEqual(log.events);
  });

  it('answers 204 when an ended run has nothing after Last-Event-ID, so EventSource stops', async () => {
    const root = memoryStore();
    const { namespacedStore } = await import('troupe/http');
    await startRun(ticker(1, 1, realClock), 'go', { store: namespacedStore(root, 'acme'), runId: 'done' }).result;
    const handler = runHandler({ store: root, authorize: tenantHeader });
    const count = (await readRun('done', { store: namespacedStore(root, 'acme') })).events.length;
    const at = (last: string) => handler(new Request('http://x/runs/done/events', { headers: { 'x-tenant': 'acme', 'last-event-id': last } }));
    expect((await at(String(count - 1))).status).toBe(204);
    const before = await at(String(count - 2));
    expect(before.status).toBe(200);
    expect((await readFrames(before.body!)).filter((f) => f.id !== undefined).map((f) => f.id)).toEqual([String(count - 1)]);
    expect((await at('nope')).status).toBe(400);
  });
});

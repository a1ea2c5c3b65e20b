// AG-UI streams resume: every SSE event has an id of its own (the three
// events of a message too), and `Last-Event-ID` continues right after it on
// the events route and on `POST /agui`. A real SSE client (`eventsource`)
// and the real `@ag-ui/client` HttpAgent (through `resumingFetch`, which
// reconnects with Last-Event-ID) finish runs whose connections the server
// cuts again and again — mid-frame, between a message's start and its end —
// with no event lost and none twice.
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agent, defineTool, startRun, type RunHandle, type Store } from 'troupe';
import { ApprovalQueue } from 'troupe/guardrails';
import { realClock } from 'troupe/kernel';
import { SimulatedClock, memoryStore, scriptedAdapter } from 'troupe/testing';
import { aguiEventStream, namespacedStore, parseAguiEventId, remoteApprovals, resumingFetch, runHandler, type Handler } from 'troupe/http';
import { readFrames, startServer, type TestServer } from '../../helpers/http-server.js';
import { ticker } from './flows.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

type Seen = Record<string, unknown>;

/** What identifies an AG-UI event, without its times, the client's run ids and the random ids of requests. */
const VARYING = new Set(['timestamp', 'time', 'runId', 'rawEvent', 'requestId', 'id']);
const shape = (event: Seen) => JSON.stringify(event, (key, value: unknown) => (VARYING.has(key) ? undefined : value));

/**
 * The handler behind a server that cuts its event streams: the n-th event
 * stream it answers is cut inside its `cuts[n]`-th frame (half the frame is
 * sent, then the connection is destroyed).
 */
function cutting(handler: Handler, cuts: number[]): { handle: Handler; cut: () => number; resumed: string[] } {
  let streams = 0;
  let made = 0;
  const resumed: string[] = [];
  const handle: Handler = async (request) => {
    const last = request.headers.get('last-event-id');
    if (last !== null) resumed.push(last);
    const response = await handler(request);
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    const limit = cuts[streams++];
    if (limit === undefined) return response;
    let frames = 0;
    const cutter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (new TextDecoder().decode(chunk).includes('data:') && ++frames === limit) {
          controller.enqueue(chunk.slice(0, Math.floor(chunk.byteLength / 2)));
          made++;
          controller.error(new Error('cut'));
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(cutter), { status: response.status, headers: response.headers });
  };
  return { handle, cut: () => made, resumed };
}

/** A run that talks, reads logs, asks to deploy (an approval), and ends. */
function deployApp(root: Store) {
  const deployed: string[] = [];
  const runs: RunHandle[] = [];
  const readLogs = defineTool({ name: 'read_logs', description: 'Read the logs', parameters: z.object({ lines: z.number() }), execute: ({ lines }) => `${lines} clean lines` });
  const deploy = defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => (deployed.push(env), `deployed to ${env}`) });
  const adapter = scriptedAdapter({
    rules: [
      {
        agent: 'ops',
        reply: (r) =>
          r.turn === 1
            ? { text: 'Reading the logs.', toolCalls: [{ name: 'read_logs', arguments: { lines: 200 }, id: 'call-1' }] }
            : r.turn === 2
              ? { text: 'Clean. Reading more.', toolCalls: [{ name: 'read_logs', arguments: { lines: 400 }, id: 'call-2' }] }
              : r.turn === 3
                ? { text: 'Deploying now.', toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'call-3' }] }
                : 'Deployed to prod.',
      },
    ],
  });
  const handler = runHandler({
    store: root,
    pollMs: 5,
    retryMs: 10,
    authorize: (req) => (req.headers.get('authorization') === 'Bearer t' ? { tenant: 'acme' } : null),
    start: ({ store, runId, input }) => {
      const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
      runs.push(startRun(agent({ name: 'ops', tools: [readLogs, approvals.guard(deploy)] }), input, { adapter, store, runId }));
    },
  });
  return { handler, deployed, runs };
}

/** Drive a thread with HttpAgent: to the approval, approve, to the end. */
async function converse(url: string, fetchFn?: (url: string, init: RequestInit) => Promise<Response>) {
  const client = new HttpAgent({ url: `${url}/agui`, headers: { authorization: 'Bearer t' }, threadId: 'deploy-thread', ...(fetchFn ? { fetch: fetchFn } : {}) });
  const seen: Seen[] = [];
  const subscriber: AgentSubscriber = { onEvent: ({ event }) => void seen.push(event as unknown as Seen) };
  client.addMessage({ id: 'u1', role: 'user', content: 'Deploy to prod' });
  await client.runAgent({}, subscriber);
  const finished = seen.at(-1) as { outcome: { type: string; interrupts: Array<{ id: string }> } };
  expect(finished.outcome.type).toBe('interrupt');
  const result = await client.runAgent({ resume: [{ interruptId: finished.outcome.interrupts[0]!.id, status: 'resolved', payload: { approved: true } }] }, subscriber);
  return { seen, result, messages: client.messages.map((m) => ({ role: m.role, content: 'content' in m ? m.content : undefined })) };
}

describe('AG-UI event ids', () => {
  it('gives every event its own id, and Last-Event-ID continues right after any of them', async () => {
    const clock = new SimulatedClock(1_700_000_000_000);
    const root = memoryStore();
    const { handler, runs } = deployApp(root);
    const store = namespacedStore(root, 'acme');
    // A finished run with messages, tool calls and an answered approval.
    await converse((await serve(handler)).url);
    await runs[0]!.result;
    const frames = (await readFrames(aguiEventStream('deploy-thread', { store, aguiRunId: 'watch', clock }))).filter((f) => f.data !== undefined);
    const ids = frames.map((f) => f.id);
    expect(ids.every((id) => id !== undefined && parseAguiEventId(id) !== undefined)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const types = frames.map((f) => (JSON.parse(f.data!) as Seen).type);
    const start = types.indexOf('TEXT_MESSAGE_START');
    expect(types.slice(start, start + 3)).toEqual(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']);
    for (let i = 0; i < frames.length; i++) {
      const rest = (await readFrames(aguiEventStream('deploy-thread', { store, aguiRunId: 'watch', clock, lastEventId: ids[i]! }))).filter((f) => f.data !== undefined);
      expect(rest.map((f) => `${f.id} ${f.data}`), `after ${ids[i]}`).toEqual(frames.slice(i + 1).map((f) => `${f.id} ${f.data}`));
    }
    expect(parseAguiEventId('12.3')).toEqual({ position: 12, index: 3 });
    for (const bad of ['', '1.', '.1', '1.2.3', 'a', '-1.0', '1e3', '9'.repeat(16)]) expect(parseAguiEventId(bad), bad).toBeUndefined();
  });

  it('GET /runs/:id/events?protocol=ag-ui: a real EventSource cut three times gets every event once; then 204', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const handler = runHandler({ store: root, pollMs: 5, retryMs: 10, authorize: () => ({ tenant: 'acme' }) });
    const { handle, cut, resumed } = cutting(handler, [4, 7, 2]);
    const server = await serve(handle);
    const handle_ = startRun(ticker(30, 10, realClock), 'go', { store, runId: 'watched' });
    const received: Array<{ id: string; data: string }> = [];
    await new Promise<void>((resolve, reject) => {
      const source = new EventSource(`${server.url}/runs/watched/events?protocol=ag-ui`);
      source.onmessage = (message) => {
        received.push({ id: message.lastEventId, data: message.data });
        if ((JSON.parse(message.data) as Seen).type === 'RUN_FINISHED') {
          source.close();
          resolve();
        }
      };
      source.onerror = () => source.readyState === EventSource.CLOSED && reject(new Error('the source closed'));
    });
    await handle_.result;
    expect(cut()).toBe(3);
    // Each reconnect went on after the last event the client got.
    expect(resumed).toHaveLength(3);
    const whole = (await readFrames(aguiEventStream('watched', { store, aguiRunId: 'watch-watched' }))).filter((f) => f.data !== undefined);
    expect(received.map((r) => r.id)).toEqual(whole.map((f) => f.id));
    expect(received.map((r) => shape(JSON.parse(r.data) as Seen))).toEqual(whole.map((f) => shape(JSON.parse(f.data!) as Seen)));
    const end = await fetch(`${server.url}/runs/watched/events?protocol=ag-ui`, { headers: { 'last-event-id': received.at(-1)!.id } });
    expect(end.status).toBe(204);
    expect((await fetch(`${server.url}/runs/watched/events?protocol=ag-ui`, { headers: { 'last-event-id': 'x.1' } })).status).toBe(400);
  });

  it('POST /agui: HttpAgent with resumingFetch finishes a run cut seven times (both of its requests), with the events and messages of an uncut one', async () => {
    const reference = deployApp(memoryStore());
    const calm = await converse((await serve(reference.handler)).url);
    await reference.runs[0]!.result;

    const app = deployApp(memoryStore());
    const { handle, cut, resumed } = cutting(app.handler, [2, 4, 3, 2, 5, 3, 2]);
    const server = await serve(handle);
    const cutRun = await converse(server.url, resumingFetch());
    await app.runs[0]!.result;

    expect(cut()).toBe(7);
    expect(resumed).toHaveLength(7);
    expect(cutRun.result.result).toBe('Deployed to prod.');
    expect(app.deployed).toEqual(['prod']);
    expect(cutRun.seen.map(shape)).toEqual(calm.seen.map(shape));
    expect(cutRun.messages).toEqual(calm.messages);
    for (const event of cutRun.seen) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true);
    expect(app.runs).toHaveLength(1);
  });

  it('resumingFetch leaves other responses alone and gives up after maxAttempts reconnects without progress', async () => {
    const root = memoryStore();
    const { handler } = deployApp(root);
    const { handle } = cutting(handler, [2, 1, 1, 1]);
    const server = await serve(handle);
    const fetchFn = resumingFetch({ maxAttempts: 2 });
    const refused = await fetchFn(`${server.url}/agui`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
    const response = await fetchFn(`${server.url}/agui`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: 'given-up', runId: 'r1', messages: [{ id: 'u1', role: 'user', content: 'Deploy' }] }),
    });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(() => resumingFetch({ maxAttempts: 0 })).toThrow(/maxAttempts/);
  });
});

async function serve(handler: Handler): Promise<TestServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}

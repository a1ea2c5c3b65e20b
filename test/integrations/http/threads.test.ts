// Threads over troupe/http: `POST /runs` with a `thread` continues a
// conversation, `GET /threads` and `GET /threads/:id` read it in the
// tenant's namespace, a busy thread is a 409; an AG-UI thread is a troupe
// thread: a second message on a finished thread starts the thread's next
// run, whose agent sees the first exchange.
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, startRun, type RunHandle } from 'troupe';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { namespacedStore, runHandler, waitForRun, type Principal } from 'troupe/http';
import { readThread } from 'troupe/persistence';
import { startServer, type TestServer } from '../../helpers/http-server.js';

const tokens: Record<string, Principal> = { 'token-a': { tenant: 'acme' }, 'token-b': { tenant: 'globex' } };
const authorize = (req: Request): Principal | null => tokens[(req.headers.get('authorization') ?? '').replace('Bearer ', '')] ?? null;
const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

/** A handler whose runs continue their thread; the support agent answers with what it heard before. `hold` keeps the model waiting until released. */
function setup() {
  const root = memoryStore();
  const started: RunHandle[] = [];
  let hold: Promise<void> | undefined;
  let release = () => {};
  const adapter = scriptedAdapter({
    rules: [
      {
        agent: 'support',
        reply: async (r) => {
          if (hold) await hold;
          return `(${r.spec.history?.length ?? 0} earlier) You asked: ${r.text}`;
        },
      },
    ],
  });
  const handler = runHandler({
    store: root,
    authorize,
    pollMs: 5,
    start: ({ store, runId, input, thread }) => {
      started.push(startRun(agent({ name: 'support' }), input, { adapter, store, runId, ...(thread === undefined ? {} : { thread }) }));
    },
  });
  const as = (token: string) => (path: string, init: RequestInit = {}) =>
    handler(new Request(`http://local${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } }));
  return {
    root, handler, started, adapter, a: as('token-a'), b: as('token-b'),
    holdModel() {
      hold = new Promise<void>((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

describe('POST /runs with a thread', () => {
  it('continues the thread: the second run\'s agent sees the first exchange; GET /threads reads it in the tenant\'s namespace', async () => {
    const { a, b, started, root } = setup();
    const first = await a('/runs', post({ input: 'My name is Ada.', thread: 'chat-1' }));
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ thread: 'chat-1' });
    await started[0]!.result;
    await a('/runs', post({ input: 'What is my name?', thread: 'chat-1' }));
    expect((await started[1]!.result).output).toBe('(2 earlier) You asked: What is my name?');

    const list = (await (await a('/threads')).json()) as { threads: Array<{ threadId: string; messages: number }> };
    expect(list.threads.map((t) => [t.threadId, t.messages])).toEqual([['chat-1', 4]]);
    const one = (await (await a('/threads/chat-1')).json()) as { messages: Array<{ text: string }> };
    expect(one.messages.map((m) => m.text)).toEqual(['My name is Ada.', '(0 earlier) You asked: My name is Ada.', 'What is my name?', '(2 earlier) You asked: What is my name?']);
    // Another tenant sees none of it, and its own thread of the same id starts new.
    expect((await b('/threads/chat-1')).status).toBe(404);
    expect(((await (await b('/threads')).json()) as { threads: unknown[] }).threads).toEqual([]);
    await b('/runs', post({ input: 'Hello', thread: 'chat-1' }));
    expect((await started[2]!.result).output).toBe('(0 earlier) You asked: Hello');
    expect((await readThread('chat-1', { store: namespacedStore(root, 'acme') }))!.messages).toHaveLength(4);
  });

  it('answers 409 thread_busy while a run holds the thread, and deletes a thread once it is free', async () => {
    const { a, started, holdModel } = setup();
    const releaseModel = holdModel();
    expect((await a('/runs', post({ input: 'Slow question', thread: 'busy' }))).status).toBe(201);
    const refused = await a('/runs', post({ input: 'Another', thread: 'busy' }));
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: { code: 'thread_busy', thread: 'busy', heldBy: started[0]!.runId } });
    expect(started).toHaveLength(1);
    expect((await a('/threads/busy', { method: 'DELETE' })).status).toBe(409);
    releaseModel();
    await started[0]!.result;
    expect(await (await a('/threads/busy', { method: 'DELETE' })).json()).toEqual({ deleted: true });
    expect((await a('/threads/busy')).status).toBe(404);
    expect((await a('/threads/busy', { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses a thread id that is not an id', async () => {
    const { a } = setup();
    expect((await a('/runs', post({ input: 'x', thread: '../x' }))).status).toBe(400);
    expect((await a('/threads/a%2Fb')).status).toBe(400);
    expect((await a('/threads', { method: 'DELETE' })).status).toBe(405);
  });
});

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('AG-UI threads', () => {
  it('a second message on a finished thread continues the conversation in the thread\'s next run', async () => {
    const { handler, started, root } = setup();
    const server = await startServer(handler);
    servers.push(server);
    const client = new HttpAgent({ url: `${server.url}/agui`, headers: { authorization: 'Bearer token-a' }, threadId: 'agui-thread' });
    const seen: Array<Record<string, unknown>> = [];
    const subscriber: AgentSubscriber = { onEvent: ({ event }) => void seen.push(event as unknown as Record<string, unknown>) };

    client.addMessage({ id: 'u1', role: 'user', content: 'My name is Ada.' });
    await client.runAgent({}, subscriber);
    expect(started).toHaveLength(1);
    expect(started[0]!.runId).toBe('agui-thread');
    expect(seen.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'agui-thread', result: '(0 earlier) You asked: My name is Ada.' });

    seen.length = 0;
    client.addMessage({ id: 'u2', role: 'user', content: 'What is my name?' });
    await client.runAgent({}, subscriber);
    expect(started).toHaveLength(2);
    expect(started[1]!.runId).not.toBe('agui-thread');
    expect(seen[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'agui-thread' });
    expect(seen.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'agui-thread', result: '(2 earlier) You asked: What is my name?' });
    expect(client.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['(0 earlier) You asked: My name is Ada.', '(2 earlier) You asked: What is my name?']);

    const store = namespacedStore(root, 'acme');
    expect(await waitForRun(started[1]!.runId, { store })).toBe(true);
    const thread = await readThread('agui-thread', { store });
    expect(thread!.thread).toMatchObject({ runs: 2, lastRunId: started[1]!.runId });
    expect(thread!.messages.map((m) => m.text)).toEqual(['My name is Ada.', '(0 earlier) You asked: My name is Ada.', 'What is my name?', '(2 earlier) You asked: What is my name?']);
  });
});

// One run per id: concurrent requests that would start the same run (ten
// `POST /runs` with one `runId`, five AG-UI requests on one new thread)
// start it once — one is answered 201 (or the AG-UI stream), the rest 409 —
// on every bundled store: memory, a file store and Redis, over real HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, startRun, type RunHandle, type Store } from 'troupe';
import { fileStore, readRun } from 'troupe/persistence';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { redisStore } from 'troupe/redis';
import { namespacedStore, runHandler } from 'troupe/http';
import { readUntil, startServer, type TestServer } from '../../helpers/http-server.js';
import { closedAfterEach, redisTarget, testPrefixes } from '../../helpers/redis.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serve(root: Store) {
  const starts: string[] = [];
  const runs: RunHandle[] = [];
  const adapter = scriptedAdapter({ fallback: 'Done.' });
  const server = await startServer(
    runHandler({
      store: root,
      pollMs: 5,
      authorize: () => ({ tenant: 'acme' }),
      start: async ({ store, runId, input }) => {
        starts.push(runId);
        // The run logs a moment later, as a real one does: every request of the burst is in by then.
        await new Promise((r) => setTimeout(r, 20));
        runs.push(startRun(agent({ name: 'ops' }), input, { adapter, store, runId }));
      },
    }),
  );
  servers.push(server);
  const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { starts, runs, post, tenant: namespacedStore(root, 'acme') };
}

async function oneRunPerId(root: Store): Promise<void> {
  const { starts, runs, post, tenant } = await serve(root);

  const responses = await Promise.all(Array.from({ length: 10 }, () => post('/runs', { input: 'Deploy', runId: 'dup-1' })));
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  for (const r of responses.filter((r) => r.status === 409)) expect(((await r.json()) as { error: { code: string } }).error.code).toBe('run_exists');
  expect(starts).toEqual(['dup-1']);
  await Promise.all(runs.map((h) => h.result));
  const log = await readRun('dup-1', { store: tenant });
  expect(log.events.filter((e) => e.type === 'run.started')).toHaveLength(1);
  // Afterwards too.
  expect((await post('/runs', { input: 'Deploy', runId: 'dup-1' })).status).toBe(409);

  const agui = await Promise.all(
    Array.from({ length: 5 }, (_, i) => post('/agui', { threadId: 'thread-1', runId: `agui-${i}`, messages: [{ id: 'u1', role: 'user', content: 'Deploy' }] })),
  );
  expect(agui.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
  const streamed = agui.find((r) => r.status === 200)!;
  const events = await readUntil<{ type: string }>(streamed, (e) => e.type === 'RUN_FINISHED');
  expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  for (const r of agui.filter((r) => r.status === 409)) await r.body?.cancel();
  expect(starts).toEqual(['dup-1', 'thread-1']);
  await Promise.all(runs.map((h) => h.result));
  expect((await readRun('thread-1', { store: tenant })).events.filter((e) => e.type === 'run.started')).toHaveLength(1);
}

describe('one run per id', () => {
  it('on a memory store', async () => {
    await oneRunPerId(memoryStore());
  });

  it('on a file store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-create-'));
    dirs.push(dir);
    await oneRunPerId(fileStore(dir, { fsync: false }));
  });

  const { url } = redisTarget();
  const prefixes = testPrefixes(url);
  const closeAfter = closedAfterEach();
  it.skipIf(!url)('on a Redis store', async () => {
    await oneRunPerId(closeAfter(redisStore({ connection: url!, prefix: prefixes() })));
  });

  it('a start that fails gives the id back', async () => {
    let calls = 0;
    const adapter = scriptedAdapter({ fallback: 'Done.' });
    const runs: RunHandle[] = [];
    const handler = runHandler({
      store: memoryStore(),
      authorize: () => ({ tenant: 'acme' }),
      start: ({ store, runId, input }) => {
        if (++calls === 1) throw new Error('the queue is down');
        runs.push(startRun(agent({ name: 'ops' }), input, { adapter, store, runId }));
      },
    });
    const post = () => handler(new Request('http://local/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Deploy', runId: 'again' }) }));
    expect((await post()).status).toBe(500);
    expect((await post()).status).toBe(201);
    await runs[0]!.result;
  });
});

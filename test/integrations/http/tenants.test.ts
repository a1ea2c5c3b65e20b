// Tenants and authorization: every route asks `authorize` first (401/403
// with a JSON body), works inside the principal's namespace, and a
// principal of one tenant cannot list, read, stream, answer or cancel a run
// of another; ids from requests are checked before they reach a key.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agent, defineTool, startRun, type RunHandle } from 'troupe';
import { ApprovalQueue } from 'troupe/guardrails';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { isSafeId, namespacedName, namespacedStore, pendingRequests, remoteApprovals, runHandler, type Handler, type Principal, type Refusal } from 'troupe/http';

const tokens: Record<string, Principal> = { 'token-a': { tenant: 'acme', subject: 'ann' }, 'token-b': { tenant: 'globex', subject: 'bob' } };
const authorize = (req: Request): Principal | Refusal | null => {
  const auth = req.headers.get('authorization');
  if (!auth) return null;
  if (auth === 'Bearer banned') return { status: 403, message: 'This key is suspended' };
  return tokens[auth.replace('Bearer ', '')] ?? { status: 401, message: 'Unknown key' };
};

async function setup() {
  const root = memoryStore();
  const started: RunHandle[] = [];
  const adapter = scriptedAdapter({ rules: [{ agent: 'ops', reply: (r) => (r.turn === 1 ? { toolCalls: [{ name: 'deploy', arguments: {} }] } : 'Done.') }] });
  const deploy = defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({}), execute: () => 'ok' });
  const handler = runHandler({
    store: root,
    authorize,
    pollMs: 5,
    start: ({ store, runId, input }) => {
      const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
      started.push(startRun(agent({ name: 'ops', tools: [approvals.guard(deploy)] }), input, { adapter, store, runId }));
    },
  });
  const as = (token: string | undefined) => (path: string, init: RequestInit = {}) =>
    handler(new Request(`http://local${path}`, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string>) } }));
  return { root, handler, started, a: as('token-a'), b: as('token-b'), as };
}

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

async function waitPending(root: ReturnType<typeof memoryStore>, tenant: string, runId: string) {
  const store = namespacedStore(root, tenant);
  for (let i = 0; i < 4000; i++) {
    const [request] = await pendingRequests(runId, { store });
    if (request) return request;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no pending request');
}

describe('authorize', () => {
  it('answers 401 without a principal and 403 for a refusal, with a JSON body, on every route', async () => {
    const { as, handler } = await setup();
    const routes: Array<[string, RequestInit?]> = [
      ['/runs'],
      ['/runs', post({ input: 'x' })],
      ['/runs/r1'],
      ['/runs/r1/events'],
      ['/runs/r1/requests'],
      ['/runs/r1/requests/q1', post({ approved: true })],
      ['/runs/r1/cancel', post({})],
      ['/agui', post({ threadId: 't', runId: 'r', messages: [] })],
    ];
    for (const [path, init] of routes) {
      const none = await as(undefined)(path, init);
      expect(none.status, path).toBe(401);
      expect(((await none.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      const banned = await as('banned')(path, init);
      expect(banned.status, path).toBe(403);
      expect(await banned.json()).toEqual({ error: { code: 'forbidden', message: 'This key is suspended' } });
    }
    const failing = runHandler({ store: memoryStore(), authorize: () => Promise.reject(new Error('auth service down')) });
    expect((await failing(new Request('http://local/runs'))).status).toBe(500);
    expect((await handler(new Request('http://local/elsewhere', { headers: { authorization: 'Bearer token-a' } }))).status).toBe(404);
    expect((await handler(new Request('http://local/runs/r1', { method: 'DELETE', headers: { authorization: 'Bearer token-a' } }))).status).toBe(405);
  });
});

describe('tenants', () => {
  it('a principal of another tenant can neither list, read, stream, answer nor cancel a run', async () => {
    const { root, a, b, started } = await setup();
    const created = await a('/runs', post({ input: 'Deploy', runId: 'a-run' }));
    expect(created.status).toBe(201);
    const request = await waitPending(root, 'acme', 'a-run');

    // tenant B sees nothing of it
    expect(((await (await b('/runs')).json()) as { runs: unknown[] }).runs).toEqual([]);
    for (const [path, init] of [
      ['/runs/a-run'],
      ['/runs/a-run/events'],
      ['/runs/a-run/events?protocol=ag-ui'],
      ['/runs/a-run/requests'],
      [`/runs/a-run/requests/${request.requestId}`, post({ approved: true })],
      ['/runs/a-run/cancel', post({})],
      ['/agui', post({ threadId: 'a-run', runId: 'x', messages: [], resume: [{ interruptId: request.requestId, status: 'resolved', payload: { approved: true } }] })],
    ] as Array<[string, RequestInit?]>) {
      const response = await b(path, init);
      expect(response.status, path).toBe(404);
      await response.body?.cancel();
    }
    // ... and changed nothing: the request still waits, the run was not cancelled
    expect((await waitPending(root, 'acme', 'a-run')).requestId).toBe(request.requestId);
    expect(await root.get('tenants/acme/runs/a-run/cancel')).toBeUndefined();
    expect(await root.list('tenants/globex/')).toEqual([]);

    // tenant A can do each
    const list = (await (await a('/runs')).json()) as { runs: Array<{ runId: string }> };
    expect(list.runs.map((r) => r.runId)).toEqual(['a-run']);
    expect((await a('/runs/a-run')).status).toBe(200);
    expect((await a('/runs/a-run/requests')).status).toBe(200);
    expect((await a(`/runs/a-run/requests/${request.requestId}`, post({ approved: true }))).status).toBe(200);
    expect((await started[0]!.result).output).toBe('Done.');
    const events = await a('/runs/a-run/events');
    expect(events.status).toBe(200);
    expect(await events.text()).toContain('"type":"run.completed"');
  });

  it('B may use the same run id for a run of its own: they never meet', async () => {
    const { root, a, b, started } = await setup();
    expect((await a('/runs', post({ input: 'Deploy A', runId: 'same' }))).status).toBe(201);
    expect((await b('/runs', post({ input: 'Deploy B', runId: 'same' }))).status).toBe(201);
    const ra = await waitPending(root, 'acme', 'same');
    const rb = await waitPending(root, 'globex', 'same');
    expect((await b(`/runs/same/requests/${ra.requestId}`, post({ approved: true }))).status).toBe(404);
    expect((await b(`/runs/same/requests/${rb.requestId}`, post({ approved: false }))).status).toBe(200);
    expect((await a(`/runs/same/requests/${ra.requestId}`, post({ approved: true }))).status).toBe(200);
    await Promise.all(started.map((h) => h.result));
    expect((await root.list('tenants/acme/runs/same/')).length).toBeGreaterThan(0);
    expect((await root.list('tenants/globex/runs/same/')).length).toBeGreaterThan(0);
  });

  it('refuses ids that are not plain ids before they reach a key', async () => {
    const { a, root } = await setup();
    for (const path of ['/runs/..%2F..%2Fglobex%2Fruns%2Fx', '/runs/a%2Fb/events', '/runs/.hidden/requests', '/runs/x%00y', '/runs/x/requests/..%2Fcancel']) {
      const response = await a(path, path.endsWith('cancel') ? post({ approved: true }) : {});
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_id');
    }
    expect((await a('/runs/..')).status).toBe(404); // the URL parser already resolved it to `/`
    expect((await a('/runs', post({ input: 'x', runId: '../globex/runs/y' }))).status).toBe(400);
    expect((await a('/agui', post({ threadId: 'x/../y', runId: 'r', messages: [] }))).status).toBe(400);
    expect((await a('/runs/x/events', { headers: { 'last-event-id': '-1' } })).status).toBe(400);
    expect(await root.list('')).toEqual([]);
    const badTenant = runHandler({ store: root, authorize: () => ({ tenant: '../other' }) });
    expect((await badTenant(new Request('http://local/runs'))).status).toBe(500);
    expect(isSafeId('run-1.2_x')).toBe(true);
    expect(['', '.', '..', '-x', 'a/b', 'a\u0000', 'x'.repeat(129), 'é'].some((id) => isSafeId(id))).toBe(false);
  });

  it('namespaces store keys, streams and queue names', async () => {
    const root = memoryStore();
    const acme = namespacedStore(root, 'acme');
    const globex = namespacedStore(root, 'globex');
    await acme.set('runs/r/meta', { a: 1 });
    await acme.append('runs/r/events', { type: 'x', time: 1 });
    expect(await globex.get('runs/r/meta')).toBeUndefined();
    expect((await globex.read('runs/r/events')).records).toEqual([]);
    expect(await acme.list('runs/')).toEqual(['runs/r/meta']);
    expect(await root.list('')).toEqual(['tenants/acme/runs/r/meta']);
    expect((await acme.setIf!('k', 1, { ifVersion: null })).ok).toBe(true);
    expect((await globex.setIf!('k', 2, { ifVersion: null })).ok).toBe(true);
    expect(namespacedName('acme', 'troupe-chunks')).toBe('troupe-chunks.t.acme');
    expect(() => namespacedStore(root, 'a/b')).toThrow(/tenant/);
  });
});

// A handler type check: the handler is a plain function of a web Request.
const _typed: Handler = runHandler({ store: memoryStore(), authorize: () => ({ tenant: 't' }) });
void _typed;

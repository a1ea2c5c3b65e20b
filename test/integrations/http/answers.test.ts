// Remote answers: approval requests, planning questions and an agent's
// questions arrive on the event stream; POST answers them exactly once,
// from this process or for a run that lives in another process (file store
// and Redis store); remembered approval decisions live in the store;
// cancellation crosses through the store too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agent, defineTool, startRun, type TroupeEvent } from 'troupe';
import { ApprovalQueue } from 'troupe/guardrails';
import { PlanningSession } from 'troupe/plan';
import { fileStore, readRun } from 'troupe/persistence';
import { coordinate } from 'troupe/coordination';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { redisStore } from 'troupe/redis';
import { answerRequest, askPersonTool, cancellationSignal, namespacedStore, pendingRequests, remoteApprovals, runHandler, runPlanningSession, type Handler } from 'troupe/http';
import { runFixture } from '../../helpers/child.js';
import { readUntil, startServer, type TestServer } from '../../helpers/http-server.js';
import { closedAfterEach, redisTarget, testPrefixes } from '../../helpers/redis.js';
import { chunk, planOf } from '../../plan/helpers.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const authorize = (req: Request) => {
  const tenant = req.headers.get('x-tenant');
  return tenant ? { tenant } : null;
};

function client(handler: Handler, tenant = 'acme') {
  const call = (path: string, init: RequestInit = {}) => handler(new Request(`http://local${path}`, { ...init, headers: { 'x-tenant': tenant, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } }));
  return {
    call,
    post: (path: string, body: unknown) => call(path, { method: 'POST', body: JSON.stringify(body) }),
    /** Stream the run until an event of `type` (returns it). */
    async next<K extends TroupeEvent['type']>(runId: string, type: K): Promise<TroupeEvent<K>> {
      const events = await readUntil<TroupeEvent>(await call(`/runs/${runId}/events`), (e) => e.type === type);
      const found = events.find((e) => e.type === type);
      if (!found) throw new Error(`the stream of ${runId} ended without ${type}`);
      return found as unknown as TroupeEvent<K>;
    },
  };
}

const deployTool = (log: string[]) =>
  defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => (log.push(env), `deployed to ${env}`) });

describe('remote approvals', () => {
  it('an approval request arrives on the stream; of two answers exactly one wins; the tool runs once', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const ran: string[] = [];
    const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
    const adapter = scriptedAdapter({ replies: { ops: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'c1' }] }, 'Deployed.'] } });
    const handle = startRun(agent({ name: 'ops', tools: [approvals.guard(deployTool(ran))] }), 'Deploy', { adapter, store, runId: 'r1' });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const requested = await http.next('r1', 'input.requested');
    expect(requested).toMatchObject({ kind: 'approval', tool: 'deploy', agent: 'ops', toolCallId: 'c1', arguments: { env: 'prod' } });
    const pending = (await (await http.call('/runs/r1/requests')).json()) as { requests: Array<{ requestId: string }> };
    expect(pending.requests.map((r) => r.requestId)).toEqual([requested.requestId]);
    expect((await http.post(`/runs/r1/requests/${requested.requestId}`, { approved: 'yes' })).status).toBe(400);
    const [a, b] = await Promise.all([
      http.post(`/runs/r1/requests/${requested.requestId}`, { approved: true }),
      http.post(`/runs/r1/requests/${requested.requestId}`, { approved: false }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = a.status === 200;
    const result = await handle.result;
    expect(ran).toEqual(winner ? ['prod'] : []);
    expect(result.output).toBe('Deployed.');
    const log = await readRun('r1', { store });
    expect(log.events.filter((e) => e.type === 'input.answered')).toHaveLength(1);
    expect((await http.post(`/runs/r1/requests/${requested.requestId}`, { approved: true })).status).toBe(409);
    expect((await http.post('/runs/r1/requests/nope', { approved: true })).status).toBe(404);
  });

  it('remembers a session decision in the store, where another queue of the same run (another process) finds it', async () => {
    const store = namespacedStore(memoryStore(), 'acme');
    const ran: string[] = [];
    const adapter = scriptedAdapter({ rules: [{ agent: 'ops', reply: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, 'Done.'] }] });
    const first = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
    const handle = startRun(agent({ name: 'ops', tools: [first.guard(deployTool(ran))] }), 'Deploy', { adapter, store, runId: 'g1' });
    // Answer through the store directly (the HTTP path is covered above).
    for (let i = 0; i < 2000 && (await pendingRequests('g1', { store })).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const [request] = await pendingRequests('g1', { store });
    expect((await answerRequest('g1', request!.requestId, { approved: true, scope: 'session' }, { store })).ok).toBe(true);
    await handle.result;
    expect(await store.get('approvals/orchestration/g1/deploy')).toBe(true);
    const second = new ApprovalQueue({ handler: () => Promise.reject(new Error('must not be asked')), store });
    expect(await second.request({ tool: 'deploy', agent: 'someone-else', runId: 'g1' })).toBe(true);
    await expect(second.request({ tool: 'deploy', agent: 'someone-else', runId: 'g2' })).rejects.toThrow('must not be asked');
    await second.forgetAll();
    expect(await store.get('approvals/orchestration/g1/deploy')).toBeUndefined();
  });

  it('a run cancelled while it waits withdraws its request: a late answer gets 409', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
    const adapter = scriptedAdapter({ replies: { ops: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, 'Deployed.'] } });
    const watch = cancellationSignal('c1', { store, pollMs: 5 });
    const handle = startRun(agent({ name: 'ops', tools: [approvals.guard(deployTool([]))] }), 'Deploy', { adapter, store, runId: 'c1', signal: watch.signal });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const requested = await http.next('c1', 'input.requested');
    expect((await http.post('/runs/c1/cancel', {})).status).toBe(202);
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    watch.close();
    expect((await http.post(`/runs/c1/requests/${requested.requestId}`, { approved: true })).status).toBe(409);
    expect((await readRun('c1', { store })).events.some((e) => e.type === 'input.withdrawn')).toBe(true);
    expect((await http.post('/runs/c1/cancel', {})).status).toBe(409);
  });
});

describe('questions', () => {
  it("an agent's question (a coordination lead's, say) arrives on the stream and the answer goes back to the model", async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({
      replies: { lead: [{ toolCalls: [{ name: 'ask_person', arguments: { question: 'Which region?' } }] }, (r) => `Going with ${r.text.includes('eu-west') ? 'eu-west' : '?'}`] },
    });
    const handle = startRun(agent({ name: 'lead', tools: [askPersonTool({ pollMs: 5 })] }), 'Plan the rollout', { adapter, store, runId: 'q1' });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = await http.next('q1', 'input.requested');
    expect(asked).toMatchObject({ kind: 'question', prompt: 'Which region?', agent: 'lead' });
    expect((await http.post(`/runs/q1/requests/${asked.requestId}`, { text: '' })).status).toBe(400);
    expect((await http.post(`/runs/q1/requests/${asked.requestId}`, { text: 'eu-west' })).status).toBe(200);
    expect((await handle.result).output).toBe('Going with eu-west');
  });

  it("a coordination lead's question reaches a person on the stream, and the lead goes on with the answer", async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', match: 'tool result ask_person', reply: (r) => `Synthesis: ${r.text.includes('yes, ship') ? 'shipping' : 'holding'}` },
        { agent: 'lead', match: 'Every task is resolved', reply: { toolCalls: [{ name: 'ask_person', arguments: { question: 'Both tasks are done. Ship to customers?' } }] } },
        { agent: 'lead', reply: 'OK' },
        { agent: /^w/, reply: 'Report: done' },
      ],
    });
    const flow = coordinate({
      lead: agent({ name: 'lead', tools: [askPersonTool({ pollMs: 5 })] }),
      workers: [agent({ name: 'w1' }), agent({ name: 'w2' })],
      tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }],
      stuck: { expectedTaskMs: 60_000 },
      // In delegate mode (the default) the lead keeps none of its own tools.
      delegateMode: false,
    });
    const handle = startRun(flow, 'Build and ship', { adapter, store, runId: 'co1' });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = await http.next('co1', 'input.requested');
    expect(asked).toMatchObject({ kind: 'question', agent: 'lead', prompt: 'Both tasks are done. Ship to customers?' });
    expect((await http.post(`/runs/co1/requests/${asked.requestId}`, { text: 'yes, ship it' })).status).toBe(200);
    expect((await handle.result).output).toBe('Synthesis: shipping');
  });

  it("a planning session's questions and plan are answered over HTTP, and its stream ends when it completes", async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const plan = JSON.stringify(planOf(chunk(0), chunk(1, [0])));
    const adapter = scriptedAdapter({
      replies: { planner: ['{"action":"clarify","questions":["Which modules?"]}', '{"action":"plan"}', plan] },
      rules: [
        { agent: 'synthesis', reply: 'all fixed' },
        { agent: /Generic/, reply: 'worked' },
      ],
    });
    const session = new PlanningSession({ adapter, runId: 'p1', retry: { delayMs: 0 } });
    const done = runPlanningSession(session, 'Fix the memory leaks', { store, pollMs: 5 });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const question = await http.next('p1', 'input.requested');
    expect(question).toMatchObject({ kind: 'question', questions: ['Which modules?'] });
    await http.post(`/runs/p1/requests/${question.requestId}`, { text: 'cache' });
    const events = await readUntil<TroupeEvent>(await http.call('/runs/p1/events'), (e) => e.type === 'input.requested' && e.kind === 'plan-approval');
    const approval = events.at(-1) as TroupeEvent<'input.requested'>;
    expect((approval.plan as { chunks: unknown[] }).chunks).toHaveLength(2);
    expect((await http.post(`/runs/p1/requests/${approval.requestId}`, { decision: 'maybe' })).status).toBe(400);
    expect((await http.post(`/runs/p1/requests/${approval.requestId}`, { decision: 'approve' })).status).toBe(200);
    const step = await done;
    expect(step.phase).toBe('completed');
    const all = await readUntil<TroupeEvent>(await http.call('/runs/p1/events'), () => false);
    expect(all.map((e) => e.type).filter((t) => t === 'run.started' || t === 'run.completed')).toEqual(['run.started', 'run.completed']);
    expect(all.at(-1)).toMatchObject({ type: 'run.completed', output: 'all fixed' });
    expect(all.some((e) => e.type === 'chunk.status')).toBe(true);
  });
});

describe('answers to a run that lives in another process', () => {
  async function answerAcross(root: ReturnType<typeof fileStore> | ReturnType<typeof redisStore>, args: string[]) {
    const server = await startServer(runHandler({ store: root, authorize, pollMs: 10 }));
    servers.push(server);
    const child = runFixture('http/approval-run.ts', args);
    try {
      const runId = args[3]!;
      let requested: TroupeEvent<'input.requested'> | undefined;
      for (let i = 0; i < 2400 && !requested; i++) {
        const response = await fetch(`${server.url}/runs/${runId}/events`, { headers: { 'x-tenant': 'acme' } });
        if (response.status === 404) {
          await response.body?.cancel();
          await new Promise((r) => setTimeout(r, 25));
          continue;
        }
        const events = await readUntil<TroupeEvent>(response, (e) => e.type === 'input.requested');
        requested = events.find((e) => e.type === 'input.requested') as TroupeEvent<'input.requested'> | undefined;
      }
      expect(requested).toMatchObject({ kind: 'approval', tool: 'deploy' });
      const post = (body: unknown) => fetch(`${server.url}/runs/${runId}/requests/${requested!.requestId}`, { method: 'POST', headers: { 'x-tenant': 'acme', 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const [a, b] = await Promise.all([post({ approved: true }), post({ approved: true })]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const { output, stderr } = await child.exited;
      expect(stderr).toBe('');
      expect(output.trim()).toBe('done "Deployed to prod." 1');
      const rest = await readUntil<TroupeEvent>(await fetch(`${server.url}/runs/${runId}/events`, { headers: { 'x-tenant': 'acme' } }), () => false);
      expect(rest.at(-1)?.type).toBe('run.completed');
      expect(rest.filter((e) => e.type === 'input.answered')).toHaveLength(1);
    } finally {
      child.kill();
    }
  }

  it('through a file store', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-http-'));
    dirs.push(dir);
    await answerAcross(fileStore(dir, { fsync: false }), ['file', dir, '', 'cross-file']);
  });

  const { url } = redisTarget();
  const prefixes = testPrefixes(url);
  const closeAfter = closedAfterEach();
  it.skipIf(!url)('through a Redis store', { timeout: 90_000 }, async () => {
    const prefix = prefixes();
    await answerAcross(closeAfter(redisStore({ connection: url!, prefix })), ['redis', url!, prefix, 'cross-redis']);
  });
});

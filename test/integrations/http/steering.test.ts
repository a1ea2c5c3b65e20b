// Steering a planning session over HTTP: an edited plan in the answer to
// the plan approval (checked as `editPlan` checks it: refused with its
// errors, or executed as edited), instructions sent while the plan runs
// (they reach the running worker at its next turn), and the run's report.
import { describe, expect, it } from 'vitest';
import type { TroupeEvent } from 'troupe';
import { PlanningSession, checkPlanEdit } from 'troupe/plan';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { namespacedStore, runHandler, runPlanningSession, sendInstruction, type Handler } from 'troupe/http';
import { readUntil } from '../../helpers/http-server.js';
import { chunk, planOf } from '../../plan/helpers.js';

const authorize = () => ({ tenant: 'acme' });

function client(handler: Handler) {
  const call = (path: string, init: RequestInit = {}) => handler(new Request(`http://local${path}`, { ...init, headers: { 'content-type': 'application/json' } }));
  return {
    call,
    post: (path: string, body: unknown) => call(path, { method: 'POST', body: JSON.stringify(body) }),
    async until(runId: string, test: (e: TroupeEvent) => boolean): Promise<TroupeEvent> {
      const events = await readUntil<TroupeEvent>(await call(`/runs/${runId}/events`), test);
      const found = events.find(test);
      if (!found) throw new Error(`the stream of ${runId} ended first`);
      return found;
    },
  };
}

describe('checkPlanEdit', () => {
  it('checks the schema, the graph and the roles, and returns the plan with its defaults', () => {
    expect(checkPlanEdit(planOf(chunk(0), chunk(1, [0])))).toMatchObject({ valid: true, errors: [] });
    expect(checkPlanEdit(planOf(chunk(0, [1]), chunk(1, [0]))).errors).toEqual(['dependency cycle: 0 -> 1 -> 0']);
    expect(checkPlanEdit(planOf(chunk(0, [], { prompt: 'short' }))).errors).toEqual(['chunks.0.prompt: prompt must be at least 10 characters']);
    expect(checkPlanEdit(planOf(chunk(0)), ['Testing']).errors).toEqual(['chunk 0 uses role Generic, which is not available (use one of: Testing)']);
    expect(checkPlanEdit(JSON.stringify(planOf(chunk(0)))).valid).toBe(true);
    expect(checkPlanEdit({ planSummary: 'x' }).valid).toBe(false);
  });
});

describe('steering a planning session over HTTP', () => {
  it('refuses an edited plan with the errors editPlan would give, then executes the edit it accepts', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({
      replies: { planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0), chunk(1, [0])))] },
      rules: [
        { agent: 'synthesis', reply: 'done' },
        { agent: /Generic|Testing/, reply: (r) => `worked on ${r.text.split('\n')[0]}` },
      ],
    });
    const session = new PlanningSession({ adapter, runId: 'edit1', planRoles: ['Generic', 'Testing'], retry: { delayMs: 0 } });
    const done = runPlanningSession(session, 'Do it', { store, pollMs: 5 });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = (await http.until('edit1', (e) => e.type === 'input.requested')) as TroupeEvent<'input.requested'>;
    expect(asked).toMatchObject({ kind: 'plan-approval', roles: ['Generic', 'Testing'] });
    const plan = structuredClone(asked.plan) as ReturnType<typeof planOf>;
    const cyclic = structuredClone(plan);
    cyclic.chunks[0]!.dependsOnIndexes = [1];
    const refused = await http.post(`/runs/edit1/requests/${asked.requestId}`, { decision: 'approve', plan: cyclic });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { issues: string[] } }).error.issues).toEqual(['plan: dependency cycle: 0 -> 1 -> 0']);
    const wrongRole = structuredClone(plan);
    wrongRole.chunks[1]!.role = 'Implementation';
    expect((await http.post(`/runs/edit1/requests/${asked.requestId}`, { decision: 'approve', plan: wrongRole })).status).toBe(400);
    expect((await http.post(`/runs/edit1/requests/${asked.requestId}`, { decision: 'reject', plan })).status).toBe(400);
    plan.chunks[1]!.title = 'Write the tests';
    plan.chunks[1]!.role = 'Testing';
    expect((await http.post(`/runs/edit1/requests/${asked.requestId}`, { decision: 'approve', plan })).status).toBe(200);
    const step = await done;
    expect(step.phase).toBe('completed');
    expect(step.plan?.chunks[1]).toMatchObject({ title: 'Write the tests', role: 'Testing' });
    expect(adapter.calls.some((c) => c.agent === 'Testing')).toBe(true);
  });

  it('passes an instruction sent while the plan runs to the running worker at its next turn; refuses one after the end', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({
      replies: { planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0)))], Generic: [{ text: 'first pass', delayMs: 300 }, 'second pass, with the instruction'] },
      rules: [{ agent: 'synthesis', reply: 'done' }],
    });
    const session = new PlanningSession({ adapter, runId: 'steer1', retry: { delayMs: 0 } });
    const done = runPlanningSession(session, 'Do it', { store, pollMs: 5 });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = (await http.until('steer1', (e) => e.type === 'input.requested')) as TroupeEvent<'input.requested'>;
    expect((await http.post(`/runs/steer1/requests/${asked.requestId}`, { decision: 'approve' })).status).toBe(200);
    await http.until('steer1', (e) => e.type === 'chunk.status' && e.status === 'running');
    expect((await http.post('/runs/steer1/instructions', { text: '' })).status).toBe(400);
    expect((await http.post('/runs/nope/instructions', { text: 'x' })).status).toBe(404);
    const sent = await http.post('/runs/steer1/instructions', { text: 'Keep the public API unchanged.' });
    expect(sent.status).toBe(202);
    const step = await done;
    expect(step.phase).toBe('completed');
    const inputs = adapter.inputsOf('Generic');
    expect(inputs).toHaveLength(2);
    expect(inputs[1]).toContain('Keep the public API unchanged.');
    const reached = (await http.until('steer1', (e) => e.type === 'chunk.instruction')) as TroupeEvent<'chunk.instruction'>;
    expect(reached.instructions).toEqual(['Keep the public API unchanged.']);
    expect((await http.post('/runs/steer1/instructions', { text: 'too late' })).status).toBe(409);

    const report = await http.call('/runs/steer1/report');
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(report.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await report.text()).toContain('<!doctype html>');
    expect((await http.call('/runs/nope/report')).status).toBe(404);
  });

  it('keeps an instruction sent before the approval for the execution: the chunks start with it, once', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({
      replies: { planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0), chunk(1, [0])))] },
      rules: [{ agent: 'Generic', reply: 'worked' }, { agent: 'synthesis', reply: 'done' }],
    });
    const session = new PlanningSession({ adapter, runId: 'steer3', retry: { delayMs: 0 } });
    const events: TroupeEvent[] = [];
    session.emitter.on('*', (e) => events.push(e));
    const done = runPlanningSession(session, 'Do it', { store, pollMs: 5 });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = (await http.until('steer3', (e) => e.type === 'input.requested')) as TroupeEvent<'input.requested'>;
    await sendInstruction('steer3', 'Use tabs.', { store });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await http.post(`/runs/steer3/requests/${asked.requestId}`, { decision: 'approve' })).status).toBe(200);
    expect((await done).phase).toBe('completed');
    const inputs = adapter.inputsOf('Generic');
    expect(inputs).toHaveLength(2);
    for (const input of inputs) expect(input.split('Use tabs.')).toHaveLength(2);
    expect(session.runs[0]!.instructions).toEqual(['Use tabs.']);
    // Said once, after the move to executing.
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'plan.instruction')).toHaveLength(1);
    expect(types.indexOf('plan.instruction')).toBeGreaterThan(events.findIndex((e) => e.type === 'phase.changed' && e.to === 'executing'));
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('warns about an instruction that arrives when no plan executes, in the run log before its end', async () => {
    const root = memoryStore();
    const store = namespacedStore(root, 'acme');
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0)))] } });
    const session = new PlanningSession({ adapter, runId: 'steer2' });
    const done = runPlanningSession(session, 'Do it', { store, pollMs: 5 });
    const http = client(runHandler({ store: root, authorize, pollMs: 5 }));
    const asked = (await http.until('steer2', (e) => e.type === 'input.requested')) as TroupeEvent<'input.requested'>;
    await sendInstruction('steer2', 'Use tabs.', { store });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await http.post(`/runs/steer2/requests/${asked.requestId}`, { decision: 'reject' })).status).toBe(200);
    expect((await done).phase).toBe('cancelled');
    const events = await readUntil<TroupeEvent>(await http.call('/runs/steer2/events'), () => false);
    const types = events.map((e) => e.type);
    expect(types.indexOf('warning')).toBeGreaterThan(0);
    expect(types.indexOf('warning')).toBeLessThan(types.indexOf('run.completed'));
    expect(events.find((e) => e.type === 'warning')).toMatchObject({ code: 'instruction_unused' });
  });
});

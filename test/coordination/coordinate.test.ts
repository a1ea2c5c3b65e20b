import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/core/clock.js';
import { CancelledError, ConfigurationError, ModelBehaviorError } from '../../src/core/errors.js';
import type { TroupeEvent, TroupeEventName } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { replayAdapter } from '../../src/adapters/recording.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { exportRun } from '../../src/persistence/run-log.js';
import { resume } from '../../src/core/resume.js';
import { checkpointKey, parseCheckpoint } from '../../src/core/checkpoint.js';
import { coordinate, coordinationStateSchema, DELEGATE_INSTRUCTION } from '../../src/coordination/coordinate.js';
import { COORDINATION_TOOL_NAMES } from '../../src/coordination/tools.js';
import type { WorkspaceStrategy } from '../../src/workspaces/types.js';

const pick = <K extends TroupeEventName>(events: TroupeEvent[], type: K) => events.filter((e) => e.type === type) as unknown as Array<TroupeEvent<K>>;
const decisions = (events: TroupeEvent[]) => pick(events, 'coord.decision').map((e) => [e.decision, e.task ?? e.worker ?? '']);
const lead = () => agent({ name: 'lead', system: 'You lead.' });
const workers = (n: number) => Array.from({ length: n }, (_, i) => agent({ name: `w${i + 1}` }));
const stuck = { expectedTaskMs: 1000, statusTimeoutMs: 500 };
/** A worker reply naming the task it was given. */
const report = (r: { text: string }) => `Report: ${/Task (\S+):/.exec(r.text)?.[1] ?? r.text.slice(0, 30)}`;

async function drive<T>(clock: SimulatedClock, promise: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 2000 && !settled; i++) await clock.advance(stepMs);
  return promise;
}

describe('coordinate', () => {
  it('runs given tasks to completion, respecting dependencies, and the lead writes the synthesis', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', match: 'Every task is resolved', reply: 'All three done.' }, { agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: report }] });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: workers(2), tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }, { id: 'c', title: 'C' }], stuck });
    const result = await run(flow, 'Build it', { adapter, onEvent: (e) => events.push(e) });

    expect(result).toMatchObject({ output: 'All three done.', synthesis: 'All three done.', agent: 'lead', status: 'completed', needsPerson: [] });
    expect(result.tasks.map((t) => [t.id, t.status, t.result])).toEqual([['a', 'done', 'Report: a'], ['b', 'done', 'Report: b'], ['c', 'done', 'Report: c']]);
    // b ran after a and received a's result
    const bInput = adapter.calls.find((c) => c.text.includes('Task b:'))!;
    expect(bInput.text).toContain('### a: A\nReport: a');
    expect(adapter.calls.indexOf(bInput)).toBeGreaterThan(adapter.calls.findIndex((c) => c.text.includes('Task a:')));
    // one event per transition
    const a = pick(events, 'coord.task').filter((e) => e.task === 'a').map((e) => `${e.from ?? ''}>${e.to}`);
    expect(a).toEqual(['>pending', 'pending>claimed', 'claimed>in-progress', 'in-progress>done']);
    expect(pick(events, 'coord.completed')[0]).toMatchObject({ done: ['a', 'b', 'c'], failed: [], blocked: [] });
    // completion: every worker was asked to shut down and answered
    const kinds = result.messages.map((m) => m.kind);
    expect(kinds.filter((k) => k === 'shutdown-request')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'shutdown-response')).toHaveLength(2);
    expect(adapter.inputsOf('lead').at(-1)).toContain('- a [done] A (w1)');
    expect(adapter.closedSessions).toBe(adapter.sessions.length);
  });

  it('marks a task failed when its worker fails; the lead hears of it and the worker goes on', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', match: 'Every task is resolved', reply: (r) => (r.text.includes('- a [failed] A (w1): boom') ? 'a failed: boom.' : 'unexpected') },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', match: 'Task a:', reply: { fault: 'throw', error: 'boom' } },
        { agent: 'w1', reply: report },
      ],
    });
    const tasks = [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }, { id: 'c', title: 'C', dependsOn: ['a'] }];
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks, stuck }), 'x', { adapter });
    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['a', 'failed'], ['b', 'done'], ['c', 'cancelled']]);
    expect(adapter.inputsOf('lead').some((t) => t.includes('- FAILED: w1 reports on task a: Failed: boom'))).toBe(true);
    expect(result.output).toBe('a failed: boom.');
  });

  it('lets the lead decompose the request into a JSON task list, with one corrective retry', async () => {
    const adapter = scriptedAdapter({
      replies: { lead: [{ toolCalls: [{ name: 'add_task', arguments: { title: 'early' } }] }, 'Here: [{"title": ""}]', '```json\n[{"id": "x", "title": "Parse"}, {"id": "y", "title": "Print", "dependsOn": ["x"]}]\n```'] },
      rules: [{ agent: 'lead', reply: 'Done.' }, { agent: 'w1', reply: report }],
    });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), stuck }), 'Make a CLI', { adapter });
    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['x', 'done'], ['y', 'done']]);
    expect(adapter.inputsOf('lead')[1]).toMatch(/^\[tool result add_task#.*\] Not available while the task list is being written/);
    expect(adapter.inputsOf('lead')[2]).toMatch(/^Your task list could not be used:\n- 0\.title: /);

    const bad = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'no list' }] });
    const error = await run(coordinate({ lead: lead(), workers: workers(1), stuck }), 'Make a CLI', { adapter: bad }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect(error).toMatchObject({ code: 'plan_invalid' });
    expect(bad.inputsOf('lead')).toHaveLength(2);
  });

  it('never lets two workers claim one task', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: report }] });
    const events: TroupeEvent[] = [];
    const result = await run(coordinate({ lead: lead(), workers: workers(8), tasks: [{ id: 'only', title: 'The one task' }], stuck }), 'x', { adapter, onEvent: (e) => events.push(e) });
    expect(adapter.calls.filter((c) => c.agent.startsWith('w'))).toHaveLength(1);
    expect(pick(events, 'coord.task').filter((e) => e.to === 'claimed')).toHaveLength(1);
    expect(result.tasks[0]).toMatchObject({ status: 'done', assignee: 'w1' });
  });

  it('checks on a silent worker, then reassigns its task to an idle worker and stops it', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: { fault: 'hang' } }, { agent: 'w2', reply: report }] });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: workers(2), tasks: [{ id: 't1', title: 'Slow one' }], stuck });
    const result = await drive(clock, run(flow, 'x', { adapter, clock, onEvent: (e) => events.push(e) }));

    expect(decisions(events)).toEqual([['tasks-planned', ''], ['status-check', 't1'], ['worker-stuck', 't1'], ['task-reassigned', 't1'], ['worker-stopped', 'w1']]);
    const [check, stuckAt] = pick(events, 'coord.decision').filter((e) => e.decision === 'status-check' || e.decision === 'worker-stuck');
    expect(check!.time).toBeGreaterThan(2000); // 2 × expectedTaskMs before any task completed
    expect(stuckAt!.time - check!.time).toBeGreaterThanOrEqual(500);
    expect(pick(events, 'coord.decision').find((e) => e.decision === 'task-reassigned')).toMatchObject({ worker: 'w2', detail: 'from w1' });
    expect(result.tasks[0]).toMatchObject({ status: 'done', assignee: 'w2', result: 'Report: t1' });
    expect(result.messages.find((m) => m.kind === 'status' && m.metadata?.['statusCheck'] === true)).toMatchObject({ sender: 'lead', recipient: 'w1' });
    expect(adapter.closedSessions).toBe(adapter.sessions.length); // the hung session was aborted and closed
  });

  it('restarts a stopped worker when the lead spawns it again', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', match: 'DONE: w2 reports on task t1', reply: 'SPAWN w1\nREASSIGN t2 w1' },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', reply: { fault: 'hang' }, times: 1 },
        { agent: 'w1', reply: report },
        { agent: 'w2', match: 'Task t1:', reply: report },
        { agent: 'w2', reply: { text: 'never', delayMs: 100_000 } },
      ],
    });
    const events: TroupeEvent[] = [];
    const tasks = [{ id: 't1', title: 'One' }, { id: 't2', title: 'Two', dependsOn: ['t1'] }];
    const flow = coordinate({ lead: lead(), workers: workers(2), tasks, stuck: { expectedTaskMs: 1000, statusTimeoutMs: 500 } });
    const result = await drive(clock, run(flow, 'x', { adapter, clock, onEvent: (e) => events.push(e) }));
    expect(decisions(events)).toContainEqual(['worker-spawned', 'w1']);
    expect(result.tasks.map((t) => [t.id, t.status, t.assignee])).toEqual([['t1', 'done', 'w2'], ['t2', 'done', 'w1']]);
  });

  it('uses twice the average task time once tasks have completed', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      replies: { w1: [{ text: 'quick', delayMs: 100 }, { fault: 'hang' }] },
      rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w2', reply: report }],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: [agent({ name: 'w1' })], tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }], stuck: { expectedTaskMs: 60_000, statusTimeoutMs: 50 } });
    const done = run(flow, 'x', { adapter, clock, onEvent: (e) => events.push(e) });
    await drive(clock, done, 50);
    const check = pick(events, 'coord.decision').find((e) => e.decision === 'status-check')!;
    expect(check.task).toBe('b');
    expect(check.time).toBeLessThan(500); // 2 × 100 ms average, not 2 × 60 s
    // the only worker was stopped: the task cannot be done and needs a person
    expect((await done).tasks.map((t) => [t.id, t.status])).toEqual([['a', 'done'], ['b', 'blocked']]);
  });

  it('approves a plan rejected twice, passing the feedback back to the worker', async () => {
    const adapter = scriptedAdapter({
      replies: { w1: ['plan v1', 'plan v2', 'plan v3', 'implemented'] },
      rules: [{ agent: 'lead', match: 'PLAN from w1', reply: ['REJECT t1: too broad', 'REJECT t1: touches README', 'APPROVE t1'] }, { agent: 'lead', reply: 'OK' }],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Fix bug', files: ['src/a.ts'] }], planApproval: true, stuck });
    const result = await run(flow, 'x', { adapter, onEvent: (e) => events.push(e) });

    expect(result.tasks[0]).toMatchObject({ status: 'done', result: 'implemented' });
    expect(decisions(events).filter(([d]) => d!.startsWith('plan'))).toEqual([['plan-rejected', 't1'], ['plan-rejected', 't1'], ['plan-approved', 't1']]);
    const w1 = adapter.inputsOf('w1');
    expect(w1[0]).toContain('reply with your plan only');
    expect(w1[1]).toContain('Feedback from the lead:\ntoo broad');
    expect(w1[2]).toContain('touches README');
    expect(w1[3]).toContain('Your plan was approved. Do the work now.');
    const review = adapter.inputsOf('lead').find((t) => t.includes('PLAN from w1'))!;
    expect(review).toContain('(attempt 1 of 3)\nExpected files: src/a.ts\n    plan v1');
    expect(review).toContain('It touches only the files the task expects');
  });

  it('blocks a task for a person after three rejected plans, never approving it silently', async () => {
    const adapter = scriptedAdapter({
      rules: [{ agent: 'lead', match: 'PLAN from', reply: 'REJECT t1: no' }, { agent: 'lead', match: 'Every task', reply: 't1 needs a person.' }, { agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: 'a plan' }],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Risky' }, { id: 't2', title: 'After', dependsOn: ['t1'] }], planApproval: { criteria: ['Be safe'] }, stuck });
    const result = await run(flow, 'x', { adapter, onEvent: (e) => events.push(e) });

    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['t1', 'blocked'], ['t2', 'blocked']]);
    expect(result.tasks[0]!.result).toMatch(/^Plan rejected 3 times; needs a person/);
    expect(result.needsPerson.map((t) => t.id)).toEqual(['t1', 't2']);
    expect(adapter.inputsOf('w1')).toHaveLength(3);
    expect(adapter.inputsOf('w1').some((t) => t.includes('Do the work now'))).toBe(false);
    expect(decisions(events).filter(([d]) => d !== 'tasks-planned')).toEqual([['plan-rejected', 't1'], ['plan-rejected', 't1'], ['task-blocked', 't1']]);
    expect(adapter.inputsOf('lead').find((t) => t.includes('PLAN from'))).toContain('- Be safe');
    expect(result.output).toBe('t1 needs a person.');
  });

  it('adds a task the lead discovers mid-run (text form)', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      rules: [
        { agent: 'lead', match: 'DONE: w1 reports on task t1', reply: 'Docs are missing.\nADD_TASK: {"id": "docs", "title": "Write docs", "dependsOn": ["t1"]}', times: 1 },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', reply: report },
      ],
    });
    const events: TroupeEvent[] = [];
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Code' }], stuck }), 'x', { adapter, onEvent: (e) => events.push(e) });
    expect(result.tasks.map((t) => [t.id, t.status, t.result])).toEqual([['t1', 'done', 'Report: t1'], ['docs', 'done', 'Report: docs']]);
    expect(decisions(events)).toContainEqual(['task-added', 'docs']);
    expect(adapter.sessions.find((s) => s.agent === 'lead')?.tools).toBeUndefined();
    expect(adapter.sessions.find((s) => s.agent === 'lead')?.system).toContain('ADD_TASK: {"title"');
  });

  it('adds a task through the add_task tool', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', match: 'DONE: w1', reply: { toolCalls: [{ name: 'add_task', arguments: { id: 'more', title: 'More' } }] }, times: 1 },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', reply: report },
      ],
    });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Code' }], stuck }), 'x', { adapter });
    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['t1', 'done'], ['more', 'done']]);
    expect(adapter.inputsOf('lead').some((t) => /\[tool result add_task#.*\] Task more added\./.test(t))).toBe(true);
  });

  it('splits a pending task; its dependents wait for every part', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', match: 'QUESTION from w1', reply: 'ANSWER w1: Yes.\nSPLIT t2: [{"id": "t2a", "title": "Half"}, {"id": "t2b", "title": "Other half"}]' },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', match: 'Task t1:', reply: 'QUESTION: Task t2 is big; split it?', times: 1 },
        { agent: 'w1', reply: report },
      ],
    });
    const events: TroupeEvent[] = [];
    const tasks = [{ id: 't1', title: 'One' }, { id: 't2', title: 'Two', dependsOn: ['t1'] }, { id: 't3', title: 'Three', dependsOn: ['t2'] }];
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks, stuck }), 'x', { adapter, onEvent: (e) => events.push(e) });
    expect(result.tasks.map((t) => [t.id, t.status, t.dependsOn])).toEqual([['t1', 'done', []], ['t3', 'done', ['t2a', 't2b']], ['t2a', 'done', ['t1']], ['t2b', 'done', ['t1']]]);
    const order = adapter.inputsOf('w1').map((t) => /Task (\S+):|Answer/.exec(t)?.[1]);
    expect(order).toEqual(['t1', undefined, 't2a', 't2b', 't3']);
    expect(decisions(events)).toContainEqual(['task-split', 't2']);
  });

  it('cancels a task and its dependents; a cancelled task in progress is taken from its worker', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', match: 'QUESTION from w1', reply: 'CANCEL t2: not needed\nCANCEL slow: too slow\nANSWER w1: No.' },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', match: 'Task t1:', reply: 'QUESTION: Do we still need t2?', times: 1 },
        { agent: 'w1', reply: report },
        { agent: 'w2', reply: { text: 'late', delayMs: 5000 } },
      ],
    });
    const tasks = [{ id: 't1', title: 'One' }, { id: 'slow', title: 'Slow' }, { id: 't2', title: 'Two', dependsOn: ['t1'] }, { id: 't3', title: 'Three', dependsOn: ['t2'] }];
    const result = await drive(clock, run(coordinate({ lead: lead(), workers: workers(2), tasks, stuck: { expectedTaskMs: 60_000 } }), 'x', { adapter, clock }));
    expect(result.tasks.map((t) => [t.id, t.status, t.result])).toEqual([
      ['t1', 'done', 'Report: Answer from the lead: No.\n\nCon'],
      ['slow', 'cancelled', 'too slow'],
      ['t2', 'cancelled', 'not needed'],
      ['t3', 'cancelled', 'depends on task "t2", which is cancelled'],
    ]);
    expect(adapter.calls.some((c) => /Task t[23]:/.test(c.text))).toBe(false);
    expect(clock.now()).toBeLessThan(5000); // w2's slow turn was aborted, not awaited
  });

  it('relays a worker question to the lead and the answer back (text form)', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      replies: { w1: ['I need to know.\nQUESTION: Which database?', 'Used Postgres.'] },
      rules: [{ agent: 'lead', match: 'QUESTION from w1', reply: 'ANSWER w1: Postgres' }, { agent: 'lead', reply: 'OK' }],
    });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Store data' }], stuck }), 'x', { adapter });
    expect(adapter.inputsOf('w1')[1]).toBe('Answer from the lead: Postgres\n\nContinue with the task.');
    expect(result.tasks[0]).toMatchObject({ status: 'done', result: 'Used Postgres.' });
    const answer = result.messages.find((m) => m.kind === 'answer')!;
    expect(answer).toMatchObject({ sender: 'lead', recipient: 'w1', taskId: 't1', text: 'Postgres' });
    expect(answer.inReplyTo).toBe(result.messages.find((m) => m.kind === 'question')!.id);
  });

  it('answers through the ask_lead tool in the tool form', async () => {
    const adapter = scriptedAdapter({
      replies: { w1: [{ toolCalls: [{ name: 'ask_lead', arguments: { question: 'Tabs or spaces?' } }] }, 'Used spaces.'] },
      rules: [{ agent: 'lead', match: 'QUESTION from w1', reply: { toolCalls: [{ name: 'send_message', arguments: { to: 'w1', text: 'Spaces' } }] } }, { agent: 'lead', reply: 'OK' }],
    });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 't1', title: 'Format' }], stuck }), 'x', { adapter });
    expect(adapter.inputsOf('w1')[1]).toMatch(/^\[tool result ask_lead#.*\] Spaces$/);
    expect(result.tasks[0]!.status).toBe('done');
  });

  it('in delegate mode the lead session has only the coordination tools and the instruction', async () => {
    const writeFile = defineTool({ name: 'write_file', description: 'Write a file', parameters: z.object({ path: z.string() }), execute: () => 'ok' });
    const boss = agent({ name: 'lead', system: 'You lead.', tools: [writeFile] });
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: 'done' }] });
    await run(coordinate({ lead: boss, workers: workers(1), tasks: [{ title: 'A' }], delegateMode: true, stuck }), 'x', { adapter });
    const spec = adapter.sessions.find((s) => s.agent === 'lead')!;
    expect(spec.tools?.map((t) => t.name)).toEqual([...COORDINATION_TOOL_NAMES]);
    expect(COORDINATION_TOOL_NAMES).toEqual(['spawn_worker', 'shutdown_worker', 'send_message', 'list_tasks', 'add_task', 'split_task', 'cancel_task', 'reassign_task', 'review_plan', 'conclude']);
    expect(spec.system).toContain(DELEGATE_INSTRUCTION);
    expect(spec.system).toMatch(/^You lead\./);

    const own = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: 'done' }] });
    await run(coordinate({ lead: boss, workers: workers(1), tasks: [{ title: 'A' }], delegateMode: false, stuck }), 'x', { adapter: own });
    expect(own.sessions.find((s) => s.agent === 'lead')!.tools?.map((t) => t.name)).toEqual(['write_file', ...COORDINATION_TOOL_NAMES]);
  });

  it('takes the synthesis from the conclude tool when the lead calls it', async () => {
    const adapter = scriptedAdapter({
      replies: { lead: ['OK', { toolCalls: [{ name: 'add_task', arguments: { title: 'late' } }, { name: 'conclude', arguments: { summary: 'Everything shipped.' } }] }, 'Bye.'] },
      rules: [{ agent: 'w1', reply: 'done' }],
    });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ title: 'A' }], stuck }), 'x', { adapter });
    expect(result.synthesis).toBe('Everything shipped.');
    expect(result.tasks).toHaveLength(1); // no task can be added once the workers have stopped
    expect(adapter.inputsOf('lead').at(-1)).toMatch(/only `conclude` is available now/);
  });

  it('resumes after a kill without redoing done tasks', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const tasks = [{ id: 't1', title: 'One' }, { id: 't2', title: 'Two', dependsOn: ['t1'] }, { id: 't3', title: 'Three', dependsOn: ['t2'] }];
    const make = () => scriptedAdapter({ clock, rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: (r) => ({ text: report(r), delayMs: 100 }) }] });
    const first = make();
    const controller = new AbortController();
    const flow = () => coordinate({ lead: lead(), workers: workers(1), tasks, stuck });
    const killed = run(flow(), 'x', { adapter: first, clock, store, runId: 'first', signal: controller.signal });
    const failure = killed.catch((e: unknown) => e);
    await clock.advance(150); // t1 done at 100, t2 in progress
    controller.abort();
    expect(await failure).toBeInstanceOf(CancelledError);
    const key = checkpointKey('first', '/coordinate:coordinate#0');
    const saved = parseCheckpoint(await store.get(key), { key, runId: 'first' }, { kind: 'coordinate', version: 1, state: coordinationStateSchema });
    expect(saved.state.tasks.tasks.map((t) => [t.id, t.status])).toEqual([['t1', 'done'], ['t2', 'in-progress'], ['t3', 'pending']]);

    const second = make();
    const resumed = await drive(clock, resume(flow(), 'first', { adapter: second, clock, store }));
    expect(second.inputsOf('w1').map((t) => /Task (\S+):/.exec(t)?.[1])).toEqual(['t2', 't3']);
    expect(resumed.tasks.map((t) => [t.id, t.status, t.result])).toEqual([['t1', 'done', 'Report: t1'], ['t2', 'done', 'Report: t2'], ['t3', 'done', 'Report: t3']]);
    expect(second.inputsOf('w1')[0]).toContain('Overall request:\nx'); // the request comes from the checkpoint
  });

  it('resumes through resume() from the run store, and returns a finished coordination with zero model calls', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const tasks = [{ id: 't1', title: 'One' }, { id: 't2', title: 'Two', dependsOn: ['t1'] }, { id: 't3', title: 'Three', dependsOn: ['t2'] }];
    const flow = () => coordinate({ lead: lead(), workers: workers(1), tasks, stuck });
    const make = () => scriptedAdapter({ clock, rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: (r) => ({ text: report(r), delayMs: 100 }) }] });
    const controller = new AbortController();
    const failure = run(flow(), 'x', { adapter: make(), clock, store, runId: 'auto', signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(150); // t1 done at 100, t2 in progress
    controller.abort();
    expect(await failure).toBeInstanceOf(CancelledError);

    const second = make();
    const events: TroupeEvent[] = [];
    const resumed = await drive(clock, resume(flow(), 'auto', { adapter: second, clock, store, onEvent: (e) => void events.push(e) }));
    expect(second.inputsOf('w1').map((t) => /Task (\S+):/.exec(t)?.[1])).toEqual(['t2', 't3']);
    expect(resumed.tasks.map((t) => [t.id, t.status])).toEqual([['t1', 'done'], ['t2', 'done'], ['t3', 'done']]);
    expect(pick(events, 'checkpoint.restored')[0]).toMatchObject({ kind: 'coordinate', completed: false });

    const third = make();
    const again = await resume(flow(), 'auto', { adapter: third, clock, store });
    expect(third.calls).toHaveLength(0);
    expect(again.tasks).toEqual(resumed.tasks);
    expect(again.output).toBe(resumed.output);
  });

  it('makes no model call after the run is aborted', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, latencyMs: 100, rules: [{ agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: report }] });
    const controller = new AbortController();
    const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `t${i}`, title: `T${i}` }));
    const done = run(coordinate({ lead: lead(), workers: workers(2), tasks, stuck }), 'x', { adapter, clock, signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(150);
    controller.abort();
    const calls = adapter.calls.length;
    await clock.advance(10_000);
    expect(await done).toBeInstanceOf(CancelledError);
    expect(adapter.calls.length).toBe(calls);
    expect(adapter.closedSessions).toBe(adapter.sessions.length);
    expect(clock.pending).toBe(0);
  });

  it('replays from its run log with zero model calls and the same outcome', async () => {
    const store = memoryStore();
    const live = scriptedAdapter({ rules: [{ agent: 'lead', match: 'PLAN', reply: 'APPROVE t1' }, { agent: 'lead', reply: 'Summary.' }, { agent: /^w/, reply: report }] });
    const make = () => coordinate({ lead: lead(), workers: workers(2), tasks: [{ id: 't1', title: 'A' }, { id: 't2', title: 'B', dependsOn: ['t1'] }], planApproval: { criteria: ['ok'] }, stuck });
    const original = await run(make(), 'x', { adapter: live, store, runId: 'orig' });
    const replay = replayAdapter(JSON.parse(JSON.stringify(await exportRun('orig', { store }))));
    const again = await run(make(), 'x', { adapter: replay });
    expect(again.output).toBe(original.output);
    expect(again.tasks).toEqual(original.tasks);
    expect(replay.remaining).toBe(0);
  });

  it('gives every task its own workspace: prepared, merged back, cleaned up', async () => {
    const log: string[] = [];
    const strategy: WorkspaceStrategy = {
      kind: 'fake',
      isAvailable: async () => true,
      prepare: async (chunk) => {
        log.push(`prepare ${chunk.id} ${chunk.workingScope?.join(',') ?? ''}`);
        return { kind: 'fake', path: `${chunk.baseDir}/ws-${chunk.id}`, chunkId: chunk.id, baseDir: chunk.baseDir };
      },
      merge: async (ws) => {
        log.push(`merge ${ws.chunkId}`);
        return ws.chunkId === 'b' ? { status: 'conflict', conflicts: ['src/x.ts'] } : { status: 'merged', conflicts: [] };
      },
      cleanup: async (ws) => void log.push(`cleanup ${ws.chunkId}`),
    };
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'OK' }, { agent: 'w1', reply: report }] });
    const result = await run(coordinate({ lead: lead(), workers: workers(1), tasks: [{ id: 'a', title: 'A', files: ['src/a.ts'] }, { id: 'b', title: 'B' }], workspace: { strategy, baseDir: '/repo' }, stuck }), 'x', { adapter });
    expect(log).toEqual(['prepare a src/a.ts', 'merge a', 'cleanup a', 'prepare b ', 'merge b', 'cleanup b']);
    expect(adapter.sessions.filter((s) => s.agent === 'w1').map((s) => s.workspace)).toEqual(['/repo/ws-a', '/repo/ws-b']);
    expect(adapter.sessions.find((s) => s.agent === 'lead')!.workspace).toBeUndefined();
    expect(result.tasks.map((t) => [t.id, t.status, t.result])).toEqual([['a', 'done', 'Report: a'], ['b', 'failed', 'Merge conflict in src/x.ts']]);
  });

  it('validates its options eagerly', () => {
    const ok = { lead: lead(), workers: workers(1), stuck };
    expect(() => coordinate({ ...ok, workers: [] })).toThrow(ConfigurationError);
    expect(() => coordinate({ ...ok, workers: [agent({ name: 'lead' })] })).toThrow(/used twice/);
    expect(() => coordinate({ ...ok, stuck: { expectedTaskMs: -1 } })).toThrow('Expected `stuck.expectedTaskMs` to be a positive number, got -1 (number)');
    expect(() => coordinate({ ...ok, tasks: [{ id: 'a', title: 'A', dependsOn: ['zz'] }] })).toThrow(/unknown task "zz"/);
    expect(() => coordinate({ ...ok, planApproval: { maxCycles: 0 } })).toThrow(/planApproval.maxCycles/);
  });
});

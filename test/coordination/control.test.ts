import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { coordinate } from '../../src/coordination/coordinate.js';
import { CoordinationControl } from '../../src/coordination/control.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { NotRunningError } from '../../src/core/control.js';
import type { TroupeEvent, TroupeEventName } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';

const pick = <K extends TroupeEventName>(events: TroupeEvent[], type: K) => events.filter((e) => e.type === type) as unknown as Array<TroupeEvent<K>>;
const decisions = (events: TroupeEvent[]) => pick(events, 'coord.decision').map((e) => [e.decision, e.task ?? e.worker ?? '', e.detail ?? '']);
const lead = () => agent({ name: 'lead', system: 'You lead.' });
const stuck = { expectedTaskMs: 60_000, statusTimeoutMs: 30_000 };
const report = (r: { text: string }) => `Report: ${/Task (\S+):/.exec(r.text)?.[1] ?? r.text.slice(0, 30)}`;

async function drive<T>(clock: SimulatedClock, promise: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 3000 && !settled; i++) await clock.advance(stepMs);
  return promise;
}

describe('coordinate: changing a running coordination', () => {
  it('splits a task a worker is on: the worker is told and stops, the parts go back to the list', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', match: 'Every task is resolved', reply: 'Split and done.' },
        { agent: 'lead', match: 'DONE: w2 reports on task small', reply: 'SPLIT big: [{"id": "big-1", "title": "First half"}, {"id": "big-2", "title": "Second half"}]' },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', match: 'Task big:', reply: { fault: 'hang' } },
        { agent: /^w/, reply: report },
      ],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: [agent({ name: 'w1' }), agent({ name: 'w2' })], tasks: [{ id: 'big', title: 'Big' }, { id: 'small', title: 'Small' }, { id: 'after', title: 'After', dependsOn: ['big'] }], stuck });
    const result = await drive(clock, run(flow, 'Build it', { adapter, clock, onEvent: (e) => events.push(e) }));
    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['small', 'done'], ['after', 'done'], ['big-1', 'done'], ['big-2', 'done']]);
    expect(result.tasks.find((t) => t.id === 'after')!.dependsOn).toEqual(['big-1', 'big-2']);
    const told = result.messages.find((m) => m.recipient === 'w1' && m.kind === 'text')!;
    expect(told.text).toBe('Task big was split into big-1 ("First half"), big-2 ("Second half"); stop working on it. The parts are on the task list.');
    expect(decisions(events)).toContainEqual(['task-split', 'big', 'big-1, big-2']);
    expect(pick(events, 'coord.decision').find((e) => e.decision === 'task-split')!.worker).toBe('w1');
    expect(pick(events, 'coord.task').filter((e) => e.task === 'big').map((e) => e.to)).toEqual(['pending', 'claimed', 'in-progress', 'cancelled']);
  });

  it('adds a worker, removes one and switches delegate mode while it runs, through the control and the lead', async () => {
    const clock = new SimulatedClock();
    const control = new CoordinationControl();
    const shell = defineTool({ name: 'shell', description: 'Run a command', parameters: z.object({ cmd: z.string() }), execute: () => 'ran' });
    const adapter = scriptedAdapter({
      clock,
      latencyMs: 1000,
      rules: [
        { agent: 'lead', match: 'Every task is resolved', reply: 'Done with help.' },
        { agent: 'lead', match: 'DONE: w1 reports on task t1', reply: 'SHUTDOWN w1: enough for today\nSPAWN spare' },
        { agent: 'lead', reply: 'OK' },
        { agent: /^(w1|w2|dana|spare)$/, reply: report },
      ],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({
      lead: agent({ name: 'lead', system: 'You lead.', tools: [shell] }),
      workers: [agent({ name: 'w1' })],
      standby: [agent({ name: 'spare' })],
      tasks: Array.from({ length: 6 }, (_, i) => ({ id: `t${i + 1}`, title: `T${i + 1}` })),
      stuck,
    });
    expect(() => control.addWorker(agent({ name: 'x' }))).toThrow(NotRunningError);
    const handle = startRun(flow, 'Build it', { adapter, clock, control, onEvent: (e) => events.push(e) });
    await clock.advance(10);
    expect(control.running).toBe(true);
    expect(control.addWorker(agent({ name: 'dana', description: 'docs writer' }))).toBe('Worker dana started.');
    expect(() => control.addWorker(agent({ name: 'w1' }))).toThrow(/already used/);
    for (let i = 0; i < 100 && !adapter.sessions.some((s) => s.agent === 'lead'); i++) await clock.advance(100);
    expect(control.setDelegateMode(false)).toBe("Delegate mode off from the lead's next turn.");
    expect(control.setDelegateMode(false)).toBe('Delegate mode is already off.');
    const result = await drive(clock, handle.result);
    expect(control.running).toBe(false);
    expect(result.tasks.every((t) => t.status === 'done')).toBe(true);
    const by = (w: string) => result.tasks.filter((t) => t.assignee === w).length;
    expect(by('dana')).toBeGreaterThan(0);
    expect(by('spare')).toBeGreaterThan(0);
    expect(by('w1')).toBe(2); // the task it had claimed when the lead decided, then it stopped
    expect(result.messages.some((m) => m.kind === 'shutdown-response' && m.sender === 'w1' && m.time < clock.now() - 1000)).toBe(true);
    expect(decisions(events)).toEqual(expect.arrayContaining([['worker-added', 'dana', ''], ['delegate-mode', '', 'off'], ['worker-shutdown', 'w1', 'enough for today'], ['worker-added', 'spare', '']]));
    // The lead's session was opened again without delegate mode: its own tool, no delegate instruction, and it was told.
    const leads = adapter.sessions.filter((s) => s.agent === 'lead');
    expect(leads.length).toBe(2);
    expect(leads[0]!.tools!.map((t) => t.name)).not.toContain('shell');
    expect(leads[1]!.tools!.map((t) => t.name)).toContain('shell');
    expect(leads[1]!.system).not.toContain('Never do the work yourself');
    const leadCalls = adapter.calls.filter((c) => c.agent === 'lead');
    expect(leadCalls[0]!.text).toMatch(/^A new worker joined: dana \(docs writer\)\.\n\n## TASKS/);
    const reopened = leadCalls.find((c) => c.sessionId !== leadCalls[0]!.sessionId)!;
    expect(reopened.text).toMatch(/^Delegate mode is now off: besides coordinating, you may do work yourself with your own tools\.\n\n/);
    expect(result.messages.filter((m) => m.kind === 'shutdown-request' && m.recipient === 'w1')[0]!.text).toBe('enough for today');
  });

  it('is a per-run RunControl: removeWorker() and cancel() while it runs, NotRunningError before and after', async () => {
    const clock = new SimulatedClock();
    const control = new CoordinationControl();
    const adapter = scriptedAdapter({ clock, latencyMs: 1000, rules: [{ agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: { fault: 'hang' } }] });
    const flow = coordinate({ lead: lead(), workers: [agent({ name: 'w1' }), agent({ name: 'w2' })], tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }], stuck });
    expect(() => control.removeWorker('w1')).toThrow(NotRunningError);
    expect(() => control.cancel()).toThrow(expect.objectContaining({ code: 'not_running' }));
    const handle = startRun(flow, 'Build it', { adapter, clock, control });
    await clock.advance(10);
    expect(control.controlsCoordination).toBe(true);
    expect(control.removeWorker('w1', 'not needed')).toMatch(/w1/);
    control.cancel('enough');
    const settled = await drive(clock, handle.result.then((r) => r.status, (e: unknown) => (e as { code?: string }).code));
    expect(settled).toMatch(/cancel/);
    expect(control.running).toBe(false);
    expect(control.controlsCoordination).toBe(false);
    expect(() => control.setDelegateMode(true)).toThrow(NotRunningError);
  });

  it('abandons a lead turn that hangs past leadTurnTimeoutMs: the workers carry on, the question gets the default answer', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', match: 'Every task is resolved', reply: 'Finished.' },
        { agent: 'lead', match: 'QUESTION from w1', reply: { fault: 'hang' }, times: 1 },
        { agent: 'lead', reply: 'OK' },
        { agent: 'w1', match: 'Task q:', reply: 'QUESTION: Tabs or spaces?' },
        { agent: 'w1', match: 'Answer from the lead', reply: 'Report: q' },
        { agent: /^w/, reply: report },
      ],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({ lead: lead(), workers: [agent({ name: 'w1' }), agent({ name: 'w2' })], tasks: [{ id: 'q', title: 'Q' }, { id: 'r', title: 'R' }, { id: 's', title: 'S' }], stuck, leadTurnTimeoutMs: 5000 });
    const result = await drive(clock, run(flow, 'Build it', { adapter, clock, onEvent: (e) => events.push(e) }));
    expect(result.tasks.map((t) => [t.id, t.status])).toEqual([['q', 'done'], ['r', 'done'], ['s', 'done']]);
    expect(pick(events, 'coord.lead').map((e) => [e.status, e.timeoutMs])).toEqual([['timed-out', 5000], ['responsive', 5000]]);
    expect(result.messages.find((m) => m.kind === 'answer' && m.recipient === 'w1')!.text).toMatch(/^No answer from the lead/);
    expect(result.output).toBe('Finished.');
    expect(adapter.sessions.filter((s) => s.agent === 'lead')).toHaveLength(2); // opened again after the time-out
    expect(() => coordinate({ lead: lead(), workers: [agent({ name: 'w1' })], stuck, leadTurnTimeoutMs: -1 })).toThrow(/leadTurnTimeoutMs/);
  });
});

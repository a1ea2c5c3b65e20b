// The one event fold (src/core/event-fold.ts): the op tree of a run from its
// events, one rule for what counts as an agent, old statuses read as status
// and reason; the tracker, the report and OpenTelemetry build on it.
import { describe, expect, it } from 'vitest';
import { EventFold, isAgentOp, type FoldedOp } from '../../src/core/event-fold.js';
import { loggedOutcome } from '../../src/core/outcome.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { emptyUsage } from '../../src/core/usage.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { agent } from '../../src/patterns/agent.js';
import { router } from '../../src/patterns/router.js';
import { RunTracker } from '../../src/views/tracker.js';

const usage = emptyUsage();
let t = 0;
const started = (opId: string, kind: string, name: string, parentId?: string, agentName?: string): TroupeEvent =>
  ({ type: 'op.started', runId: 'r', time: ++t, opId, kind, name, depth: parentId ? 1 : 0, ...(parentId ? { parentId } : {}), ...(agentName ? { agent: agentName } : {}) }) as TroupeEvent;
const completed = (opId: string, kind: string, name: string, status: string, extra: Record<string, unknown> = {}): TroupeEvent =>
  ({ type: 'op.completed', runId: 'r', time: ++t, opId, kind, name, status, usage, durationMs: 1, ...extra }) as TroupeEvent;
const runStarted = (): TroupeEvent => ({ type: 'run.started', runId: 'r', time: ++t, opId: 'op-0', runnable: 'flow', input: 'q' }) as TroupeEvent;

describe('EventFold', () => {
  it('folds ops with their status, reason, usage, error and last model turn', () => {
    const fold = new EventFold();
    for (const e of [
      runStarted(),
      started('op-1', 'reflect', 'loop', 'op-0', 'writer'),
      started('op-2', 'agent', 'writer', 'op-1', 'writer'),
      { type: 'model.turn', runId: 'r', time: ++t, opId: 'op-2', adapter: 'scripted', agent: 'writer', session: 1, turn: 1, spec: { agent: 'writer', model: 'm1' }, input: 'q', reply: { text: 'a', toolCalls: [] } } as unknown as TroupeEvent,
      completed('op-2', 'agent', 'writer', 'completed'),
      completed('op-1', 'reflect', 'loop', 'completed', { reason: 'goal-met' }),
      { type: 'run.completed', runId: 'r', time: ++t, opId: 'op-0', runnable: 'flow', status: 'completed', output: 'a', usage, durationMs: 5 } as TroupeEvent,
    ]) fold.apply(e);
    const ops = fold.ops('r');
    expect(ops.map((o) => [o.id, o.kind, o.status, o.reason])).toEqual([
      ['op-0', 'run', 'completed', undefined],
      ['op-1', 'reflect', 'completed', 'goal-met'],
      ['op-2', 'agent', 'completed', undefined],
    ]);
    expect(fold.op('r', 'op-2')!.lastTurn).toEqual({ adapter: 'scripted', model: 'm1' });
    expect(fold.parent(fold.op('r', 'op-2')!)!.id).toBe('op-1');
    expect(fold.ended('r')).toBe(true);
  });

  it('reads the statuses of logs written before outcomes had a reason as status and reason', () => {
    expect(loggedOutcome('goal-met', undefined)).toEqual({ status: 'completed', reason: 'goal-met' });
    expect(loggedOutcome('error-budget', undefined)).toEqual({ status: 'failed', reason: 'error-budget' });
    expect(loggedOutcome('coordinator', undefined)).toEqual({ status: 'completed', reason: 'lead-decided' });
    expect(loggedOutcome('consensus', undefined)).toEqual({ status: 'completed', reason: 'consensus' });
    expect(loggedOutcome('completed', 'max-rounds')).toEqual({ status: 'completed', reason: 'max-rounds' });
    const fold = new EventFold();
    for (const e of [runStarted(), started('op-1', 'team', 'panel', 'op-0'), completed('op-1', 'team', 'panel', 'coordinator')]) fold.apply(e);
    expect(fold.op('r', 'op-1')).toMatchObject({ status: 'completed', reason: 'lead-decided' });
  });

  it('counts as an agent an op of an agent kind that names its agent; the outermost of one agent is its run', () => {
    const fold = new EventFold();
    for (const e of [
      runStarted(),
      started('op-1', 'router', 'desk', 'op-0', 'desk'),
      started('op-2', 'orchestrate', 'build', 'op-1', 'lead'),
      started('op-3', 'worker', 'coder', 'op-2', 'coder'),
      started('op-4', 'guarded', 'coder', 'op-3'),
      started('op-5', 'agent', 'coder', 'op-4', 'coder'),
      started('op-6', 'team-member', 'panel', 'op-2'),
      started('op-7', 'agent', 'reviewer', 'op-5', 'reviewer'),
    ]) fold.apply(e);
    const op = (id: string) => fold.op('r', id)!;
    expect(fold.ops('r').filter((o) => isAgentOp(o)).map((o) => o.id)).toEqual(['op-3', 'op-5', 'op-7']);
    expect(fold.ops('r').filter((o) => fold.isAgentRun(o)).map((o) => o.id)).toEqual(['op-3', 'op-7']);
    expect(fold.agentRun(op('op-5'))!.id).toBe('op-3');
    expect(fold.agentRun(op('op-4'))!.id).toBe('op-3');
    expect(fold.agentRun(op('op-7'))!.id).toBe('op-7');
    expect(fold.agentRun(op('op-2'))).toBeUndefined();
  });

  it('starts a resumed run afresh and folds a log that starts mid-run', () => {
    const fold = new EventFold();
    for (const e of [runStarted(), started('op-1', 'agent', 'a', 'op-0', 'a'), runStarted()]) fold.apply(e);
    expect(fold.ops('r').map((o) => o.id)).toEqual(['op-0']);
    const mid = new EventFold();
    mid.apply(started('op-3', 'agent', 'a', 'op-2', 'a'));
    mid.apply(completed('op-3', 'agent', 'a', 'failed', { error: 'boom', code: 'adapter_error' }));
    expect(mid.op('r', 'op-3')).toMatchObject({ status: 'failed', error: 'boom', code: 'adapter_error' });
    mid.apply({ type: 'model.turn', runId: 'r', time: 1, opId: 'op-3' } as unknown as TroupeEvent);
  });

  it('is what the run tracker is, with its own fields on each op', async () => {
    const tracker = new RunTracker();
    expect(tracker).toBeInstanceOf(EventFold);
    const adapter = scriptedAdapter({ replies: { desk: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'writer', reason: 'fits' } }] }] }, fallback: 'ok' });
    const flow = router(agent({ name: 'desk' }), [agent({ name: 'writer' })]);
    const fold = new EventFold<FoldedOp>();
    await run(flow, 'q', { adapter, runId: 'r2', onEvent: (e) => (tracker.apply(e), fold.apply(e)) });
    const agents = (f: EventFold) => f.ops('r2').filter((o) => isAgentOp(o)).map((o) => o.agent);
    expect(agents(tracker)).toEqual(agents(fold));
    expect(agents(fold)).toEqual(['desk', 'writer']);
    expect(tracker.ops('r2').every((o) => typeof o.mark === 'number')).toBe(true);
  });
});

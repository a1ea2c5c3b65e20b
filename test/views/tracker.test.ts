import { describe, expect, it } from 'vitest';
import { run, type TroupeEvent } from 'troupe';
import { SimulatedClock } from 'troupe/testing';
import { RunTracker } from '../../src/views/tracker.js';
import { showcaseAdapter, showcaseFlow } from '../helpers/observe-flow.js';
import { drive } from '../plan/helpers.js';

describe('RunTracker', () => {
  it('places every op in its plan chunk, attempt and iteration, and finds when each model turn began', async () => {
    const clock = new SimulatedClock();
    const events: TroupeEvent[] = [];
    // Every scripted turn takes exactly 10 ms on the clock.
    await drive(clock, run(showcaseFlow(), 'Add a CSV export', { adapter: showcaseAdapter(clock, 10), clock, runId: 'r', onEvent: (e) => events.push(e) }));
    const tracker = new RunTracker();
    const turns: Array<{ agent: string; start: number; end: number }> = [];
    for (const e of events) {
      if (e.type === 'model.turn') turns.push({ agent: e.agent, start: tracker.turnStart(e), end: e.time });
      tracker.apply(e);
    }
    // Parallel advisors, tool calls, retries, a worker between the lead's turns, iterations: each turn is found to start 10 ms before it ended.
    expect(turns).toHaveLength(26);
    expect(turns.filter((t) => t.end - t.start !== 10)).toEqual([]);

    const ops = tracker.ops('r');
    const plan = tracker.plans('r')[0]!;
    expect(plan).toMatchObject({ planId: 'delivery', total: 4 });
    expect([...plan.chunks.values()].map((c) => [c.chunkId, c.status, c.attempt, c.dependsOn])).toEqual([
      ['1', 'completed', 1, []],
      ['2', 'completed', 1, ['1']],
      ['3', 'completed', 2, ['1']],
      ['4', 'completed', 1, ['2', '3']],
    ]);
    const builders = ops.filter((o) => o.agent === 'builder').map((o) => `${o.plan?.chunkId}#${o.plan?.attempt}:${o.status}`);
    expect(builders).toEqual(['1#1:completed', '2#1:completed', '3#1:failed', '3#2:completed']);
    const writers = ops.filter((o) => o.kind === 'worker').map((o) => `${o.plan?.chunkId}@${o.iteration}`);
    expect(writers).toEqual(['4@1', '4@2', '4@3']);
    expect(ops.find((o) => o.kind === 'run')).toMatchObject({ status: 'completed', end: events.at(-1)!.time });
    expect(tracker.ended('r')).toBe(true);
    tracker.forget('r');
    expect(tracker.ops('r')).toEqual([]);
  });

  it('follows a log that starts mid-run and ignores events of ops it never saw', () => {
    const tracker = new RunTracker();
    tracker.apply({ type: 'op.completed', runId: 'x', time: 5, opId: 'op-9', kind: 'agent', name: 'a', status: 'completed', usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, turns: 0 }, durationMs: 1 });
    tracker.apply({ type: 'op.started', runId: 'x', time: 6, opId: 'op-10', kind: 'agent', name: 'b', parentId: 'op-3', depth: 2 });
    expect(tracker.ops('x').map((o) => o.id)).toEqual(['op-10']);
  });
});

describe('budgets in the tracker', () => {
  it('keeps each budget on the op that opened it, with its latest spend and why it ran out', async () => {
    const { scriptedAdapter } = await import('../../src/adapters/scripted.js');
    const { agent } = await import('../../src/patterns/agent.js');
    const { withBudget } = await import('../../src/patterns/with-budget.js');
    const { run } = await import('../../src/core/run.js');
    const adapter = scriptedAdapter({ replies: { w: [{ text: 'a', toolCalls: [{ name: 'none', arguments: {} }], usage: { inputTokens: 90, outputTokens: 20 } }] } });
    const tracker = new RunTracker();
    const result = await run(withBudget(agent({ name: 'w' }), { name: 'cap', totalTokens: 100 }), 'go', { adapter, runId: 'r', onEvent: (e) => tracker.apply(e) });
    expect(result.status).toBe('budget-exhausted');
    const op = [...tracker.ops('r')].find((o) => o.kind === 'budget')!;
    expect(op.budgets).toMatchObject([{ name: 'cap', limits: { totalTokens: 100 }, spent: { totalTokens: 110 }, exhausted: { limit: 'totalTokens', reason: 'reached' } }]);
    expect(tracker.budgets('r').get(op.budgets![0]!.budgetId)).toBe(op.budgets![0]);
  });
});

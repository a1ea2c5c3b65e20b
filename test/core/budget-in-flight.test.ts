import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { BudgetExhaustedError } from '../../src/core/budget.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { resume } from '../../src/core/resume.js';
import { run, startRun } from '../../src/core/run.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { advisors } from '../../src/patterns/advisors.js';
import { agent } from '../../src/patterns/agent.js';
import { broadcast } from '../../src/patterns/broadcast.js';
import { executePlan, planRunnable } from '../../src/plan/engine/execute.js';
import type { Plan } from '../../src/plan/model/plan.js';

/** Every reply says "answer", for 100 prompt and 10 completion tokens, `delayMs` after the call on `clock`. */
function paidAdapter(clock?: SimulatedClock, delayMs = 0) {
  return scriptedAdapter({ ...(clock ? { clock } : {}), fallback: { text: 'answer', usage: { inputTokens: 100, outputTokens: 10 }, delayMs } });
}

const chunk = (i: number, deps: number[] = []) => ({
  sequenceIndex: i, title: `chunk ${i}`, prompt: `Do part ${i} of the work.`, dependsOnIndexes: deps, complexity: 'Low' as const, role: 'Generic' as const,
});
const independent = (n: number): Plan => ({ planSummary: 'p', chunks: Array.from({ length: n }, (_, i) => chunk(i)) });

describe('a plan budget keeps the answers it paid for', () => {
  it('two independent chunks under 100 tokens: both calls were in flight, both answers are kept', async () => {
    const clock = new SimulatedClock();
    const adapter = paidAdapter(clock, 100);
    const events: TroupeEvent[] = [];
    const pending = executePlan(independent(2), { adapter, clock, budget: { run: { totalTokens: 100 } }, onEvent: (e) => events.push(e) });
    await clock.advance(100);
    const outcome = await pending;
    expect(adapter.calls).toHaveLength(2);
    expect(outcome.results.map((r) => [r.status, r.output])).toEqual([['completed', 'answer'], ['completed', 'answer']]);
    expect(outcome.results[0]!.durationMs).toBe(100);
    // Everything the plan had to do was done: the budget ran out with nothing left to stop.
    expect(outcome.status).toBe('completed');
    expect(outcome.stats.usage).toMatchObject({ inputTokens: 200, outputTokens: 20 });
    expect(events.find((e) => e.type === 'budget.exhausted')).toMatchObject({ limit: 'totalTokens', reason: 'reached' });
  });

  it('six chunks under 300 tokens, one at a time: the three paid calls keep their answers and a resume pays nothing again', async () => {
    const store = memoryStore();
    const adapter = paidAdapter();
    const plan = independent(6);
    const options = { maxParallel: 1, budget: { run: { totalTokens: 300 } } };
    const outcome = await run(planRunnable(plan, options), 'task', { adapter, store, runId: 'paid' });
    expect(adapter.calls).toHaveLength(3);
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.reason).toBe('budget');
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'cancelled', 'cancelled', 'cancelled']);
    expect(outcome.results.slice(0, 3).map((r) => r.output)).toEqual(['answer', 'answer', 'answer']);
    expect(outcome.results[3]!.error).toMatch(/Budget "plan:plan" exhausted: the limit was reached \(totalTokens 330 of 300\)/);

    const again = paidAdapter();
    const resumed = await resume(planRunnable(plan, options), 'paid', { adapter: again, store });
    expect(again.calls).toHaveLength(0);
    expect(resumed.results.slice(0, 3).map((r) => [r.status, r.output])).toEqual(Array(3).fill(['completed', 'answer']));
  });

  it('a chunk refused by the plan budget before its first call is cancelled and stops the plan (budget-exhausted, not failed)', async () => {
    const plan: Plan = { planSummary: 'p', chunks: [chunk(0), chunk(1, [0]), chunk(2, [1])] };
    const adapter = paidAdapter();
    // The second call's prompt alone would overrun what is left.
    const outcome = await executePlan(plan, { adapter, budget: { run: { inputTokens: 110 } } });
    expect(adapter.calls).toHaveLength(1);
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'cancelled', 'cancelled']);
    expect(outcome.results[1]!.error).toMatch(/would pass it/);
  });

  it('a plan deadline abandons the calls in flight: the running chunks are cancelled', async () => {
    const clock = new SimulatedClock();
    const adapter = paidAdapter(clock, 100);
    const pending = executePlan(independent(3), { adapter, clock, maxParallel: 2, budget: { run: { wallClockMs: 50 } } });
    await clock.advance(50);
    const outcome = await pending;
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.results.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(outcome.results[0]!.error).toMatch(/its time ran out/);
  });
});

describe('a model-call limit holds for calls in flight at once', () => {
  it('a broadcast of 5 agents under { modelCalls: 3 } makes 3 calls and runs out', async () => {
    const clock = new SimulatedClock();
    const adapter = paidAdapter(clock, 100);
    const panel = broadcast([1, 2, 3, 4, 5].map((i) => agent({ name: `a${i}` })));
    const handle = startRun(panel, 'go', { adapter, clock, budget: { modelCalls: 3 } });
    const error = handle.result.catch((e: unknown) => e);
    await clock.advance(100);
    expect(await error).toBeInstanceOf(BudgetExhaustedError);
    expect(((await error) as BudgetExhaustedError).info).toMatchObject({ limit: 'modelCalls', max: 3 });
    expect(adapter.calls.length).toBeLessThanOrEqual(3);
    expect(handle.trace.status).toBe('budget-exhausted');
  });

  it('advisors with 4 advisors under { modelCalls: 3 } make 3 calls', async () => {
    const clock = new SimulatedClock();
    const adapter = paidAdapter(clock, 100);
    const step = advisors(agent({ name: 'main' }), [1, 2, 3, 4].map((i) => agent({ name: `adv${i}` })));
    const handle = startRun(step, 'go', { adapter, clock, budget: { modelCalls: 3 } });
    const error = handle.result.catch((e: unknown) => e);
    await clock.advance(100);
    expect(await error).toBeInstanceOf(BudgetExhaustedError);
    expect(adapter.calls).toHaveLength(3);
    expect(adapter.calls.map((c) => c.agent)).not.toContain('main');
  });

  it('a plan of 5 chunks under a run budget of { modelCalls: 3 } keeps 3 answers and ends budget-exhausted', async () => {
    const clock = new SimulatedClock();
    const adapter = paidAdapter(clock, 100);
    const pending = run(planRunnable(independent(5)), 'task', { adapter, clock, budget: { modelCalls: 3 } });
    await clock.advance(100);
    const outcome = await pending;
    expect(adapter.calls).toHaveLength(3);
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.results.filter((r) => r.status === 'completed').map((r) => r.output)).toEqual(['answer', 'answer', 'answer']);
    expect(outcome.results.filter((r) => r.status === 'cancelled')).toHaveLength(2);
  });

  it('the same plan with the limit on the plan itself, one chunk at a time', async () => {
    const adapter = paidAdapter();
    const outcome = await executePlan(independent(5), { adapter, maxParallel: 1, budget: { run: { modelCalls: 3 } } });
    expect(adapter.calls).toHaveLength(3);
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'cancelled', 'cancelled']);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/core/clock.js';
import { BudgetExhaustedError } from '../../src/core/budget.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { formatOpTree, totalUsage, walk, type OpNode } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { agent } from '../../src/patterns/agent.js';
import { asTool } from '../../src/patterns/as-tool.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { withBudget } from '../../src/patterns/with-budget.js';
import { executePlan } from '../../src/plan/engine/execute.js';
import type { Plan } from '../../src/plan/model/plan.js';

const usage = (inputTokens: number, outputTokens: number, costUsd = 0) => ({ inputTokens, outputTokens, costUsd });

function find(node: OpNode, predicate: (n: OpNode) => boolean): OpNode[] {
  const out: OpNode[] = [];
  walk(node, (n) => {
    if (predicate(n)) out.push(n);
  });
  return out;
}

describe('budgets', () => {
  it('counts usage once toward every enclosing budget through three levels of nesting', async () => {
    // run budget > lead (agent budget) > researcher (asTool, agent budget) > fact-checker (asTool, agent budget)
    const adapter = scriptedAdapter({
      replies: {
        lead: [{ toolCalls: [{ name: 'researcher', arguments: { task: 'find' } }], usage: usage(100, 10, 0.01) }, { text: 'final', usage: usage(200, 20, 0.02) }],
        researcher: [{ toolCalls: [{ name: 'checker', arguments: { task: 'check' } }], usage: usage(30, 3, 0.003) }, { text: 'found', usage: usage(40, 4, 0.004) }],
        checker: [{ text: 'checked', usage: usage(5, 1, 0.0005) }],
      },
    });
    const checker = agent({ name: 'checker', budget: { name: 'checker', totalTokens: 1000 } });
    const researcher = agent({ name: 'researcher', tools: [asTool(checker)], budget: { name: 'researcher', totalTokens: 1000 } });
    const lead = agent({ name: 'lead', tools: [asTool(researcher)], budget: { name: 'lead', totalTokens: 10_000 } });
    const closed = new Map<string, { spent: { totalTokens: number; inputTokens: number; modelCalls: number; costUsd: number } }>();
    const result = await run(lead, 'go', {
      adapter,
      budget: { name: 'run', costUsd: 1 },
      onEvent: (e) => {
        if (e.type === 'budget.closed') closed.set(e.budget, e);
      },
    });
    expect(result.output).toBe('final');
    expect([...closed.keys()].sort()).toEqual(['checker', 'lead', 'researcher', 'run']);
    // Each budget spent exactly the usage of the ops under it, no more (nothing counted twice) and no less.
    expect(closed.get('checker')!.spent).toMatchObject({ inputTokens: 5, totalTokens: 6, modelCalls: 1 });
    expect(closed.get('researcher')!.spent).toMatchObject({ inputTokens: 75, totalTokens: 83, modelCalls: 3 });
    expect(closed.get('lead')!.spent).toMatchObject({ inputTokens: 375, totalTokens: 413, modelCalls: 5 });
    expect(closed.get('run')!.spent).toMatchObject({ inputTokens: 375, totalTokens: 413, modelCalls: 5 });
    expect(closed.get('run')!.spent.costUsd).toBeCloseTo(0.0375, 10);
    const total = totalUsage(result.trace);
    expect(total.inputTokens + total.outputTokens).toBe(413);
    // The trace shows each budget on its op, with its spend.
    expect(result.trace.budgets).toMatchObject([{ name: 'run', limits: { costUsd: 1 }, spent: { totalTokens: 413 } }]);
    const researcherOp = find(result.trace, (n) => n.kind === 'agent' && n.name === 'researcher')[0]!;
    expect(researcherOp.budgets).toMatchObject([{ name: 'researcher', spent: { totalTokens: 83 } }]);
    expect(formatOpTree(result.trace)).toContain('budget researcher: totalTokens 83/1000');
  });

  it('refuses a model call that would overrun the budget: the op ends budget-exhausted with the answer so far', async () => {
    const adapter = scriptedAdapter({
      replies: {
        writer: [
          { text: 'draft one', toolCalls: [{ name: 'look', arguments: {} }], usage: usage(10, 5) },
          { text: 'never', usage: usage(10, 5) },
        ],
      },
    });
    const look = defineTool({ name: 'look', description: 'look', parameters: z.object({}), execute: () => 'x' });
    const writer = agent({ name: 'writer', tools: [look], budget: { modelCalls: 1 } });
    const events: TroupeEvent[] = [];
    const handle = startRun(writer, 'write', { adapter, onEvent: (e) => events.push(e) });
    const error = await handle.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExhaustedError);
    expect((error as BudgetExhaustedError).partial).toBe('draft one');
    expect((error as BudgetExhaustedError).info).toMatchObject({ limit: 'modelCalls', max: 1, spent: 1, reason: 'reached' });
    expect(handle.trace.status).toBe('budget-exhausted');
    expect(find(handle.trace, (n) => n.kind === 'agent')[0]!.status).toBe('budget-exhausted');
    expect(adapter.calls).toHaveLength(1);
    expect(events.find((e) => e.type === 'budget.exhausted')).toMatchObject({ limit: 'modelCalls', reason: 'reached' });
  });

  it('withBudget resolves with status budget-exhausted and the partial answer', async () => {
    const adapter = scriptedAdapter({
      replies: { writer: [{ text: 'half', toolCalls: [{ name: 'look', arguments: {} }], usage: usage(60, 50) }, 'whole'] },
    });
    const look = defineTool({ name: 'look', description: 'look', parameters: z.object({}), execute: () => 'x' });
    const capped = withBudget(agent({ name: 'writer', tools: [look] }), { name: 'cap', totalTokens: 100 });
    const result = await run(capped, 'write', { adapter });
    expect(result).toMatchObject({ status: 'budget-exhausted', output: 'half', agent: 'writer' });
    expect(result.trace.children[0]).toMatchObject({ kind: 'budget', status: 'budget-exhausted' });
    expect(adapter.calls).toHaveLength(1);
  });

  it('ends an op at its wall-clock deadline on the injected clock', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, replies: { slow: [{ text: 'late', delayMs: 5_000 }] } });
    const capped = withBudget(agent({ name: 'slow' }), { wallClockMs: 1_000 });
    const pending = run(capped, 'go', { adapter, clock });
    await clock.advance(1_000);
    const result = await pending;
    expect(result.status).toBe('budget-exhausted');
    expect(clock.pending).toBe(0); // no timer left behind
  });

  it('stops a loop whose budget runs out: its outcome says budget-exhausted with the last synthesis', async () => {
    let synth = 0;
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? { text: `synthesis ${++synth} [[NEEDS_ITERATION]]`, usage: usage(100, 10) } : { text: '@worker:w\ntask\n@end', usage: usage(100, 10) }) },
        { agent: 'w', reply: { text: 'done', usage: usage(10, 1) } },
      ],
    });
    const loop = orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'w' })], maxIterations: 10, autoAdjust: false });
    const result = await run(withBudget(loop, { inputTokens: 500 }), 'task', { adapter });
    expect(result.status).toBe('budget-exhausted');
    expect(result.output).toMatch(/^synthesis 2/);
    const orch = find(result.trace, (n) => n.kind === 'orchestrate')[0]!;
    expect(orch.status).toBe('budget-exhausted');
    // The third plan's call fitted the estimate (its prompt is short) and reached the limit: nothing was sent after it.
    expect(totalUsage(result.trace).inputTokens).toBe(520);
    expect(adapter.calls.map((c) => c.agent)).toEqual(['lead', 'w', 'lead', 'lead', 'w', 'lead', 'lead']);
  });

  it("ends a worker on its own budget as a failed worker; the orchestration goes on", async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `${r.text.includes('(failed)') ? 'partial' : 'full'} [[GROUP_REFLECT_COMPLETE]]` : '@worker:greedy\nA\n@end\n@worker:frugal\nB\n@end') },
        { agent: 'greedy', reply: { text: 'step', toolCalls: [{ name: 'look', arguments: {} }], usage: usage(500, 10) } },
        { agent: 'frugal', reply: 'ok' },
      ],
    });
    const look = defineTool({ name: 'look', description: 'look', parameters: z.object({}), execute: () => 'x' });
    const loop = orchestrate({
      lead: agent({ name: 'lead' }),
      workers: [agent({ name: 'greedy', tools: [look], budget: { inputTokens: 600 } }), agent({ name: 'frugal' })],
      mode: 'orchestrator-reflect',
    });
    const result = await run(loop, 'task', { adapter });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met' });
    expect(result.output).toBe('partial');
    const greedy = result.results.find((r) => r.worker === 'greedy')!;
    expect(greedy).toMatchObject({ success: false, output: 'step' });
    expect(greedy.error).toMatch(/Budget .* exhausted/);
    expect(find(result.trace, (n) => n.kind === 'worker' && n.name === 'greedy')[0]!.status).toBe('budget-exhausted');
  });
});

describe('plan budgets', () => {
  const chunk = (i: number, deps: number[] = []) => ({
    sequenceIndex: i, title: `chunk ${i}`, prompt: `Do part ${i} of the work.`, dependsOnIndexes: deps, complexity: 'Low' as const, role: 'Generic' as const,
  });

  it('a subtree budget ends its chunks while the sibling chunks finish', async () => {
    // 1 -> 2 -> 3 is the subtree of 1; 4 and 5 (5 after 4) are siblings.
    const plan: Plan = { planSummary: 'p', chunks: [chunk(1), chunk(2, [1]), chunk(3, [2]), chunk(4), chunk(5, [4])] };
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'Generic', match: /part [123]/, reply: (r) => ({ text: `answer ${r.text.match(/part (\d)/)![1]}`, usage: usage(60, 10) }) },
        { agent: 'Generic', reply: (r) => ({ text: `answer ${r.text.match(/part (\d)/)![1]}`, usage: usage(60, 10) }) },
      ],
    });
    const events: TroupeEvent[] = [];
    const outcome = await executePlan(plan, {
      adapter,
      maxParallel: 1,
      retry: { delayMs: 0 },
      budget: { chunks: [{ chunk: 1, subtree: true, name: 'research', inputTokens: 70 }] },
      onEvent: (e) => events.push(e),
    });
    const status = Object.fromEntries(outcome.results.map((r) => [r.sequenceIndex, r.status]));
    expect(status).toEqual({ 1: 'completed', 2: 'failed', 3: 'skipped', 4: 'completed', 5: 'completed' });
    const two = outcome.results.find((r) => r.sequenceIndex === 2)!;
    expect(two.attempts).toBe(1); // not retried
    expect(two.error).toMatch(/Budget "research" exhausted/);
    expect(outcome.status).toBe('failed');
    const research = events.filter((e) => e.type === 'budget.closed' && e.budget === 'research').at(-1);
    // Chunk 2's call would have overrun it; the budget itself is not spent out (a smaller call could still fit).
    expect(research).toMatchObject({ exhausted: false, spent: { inputTokens: 60, modelCalls: 1 } });
    expect(events.find((e) => e.type === 'budget.exhausted')).toMatchObject({ budget: 'research', limit: 'inputTokens', reason: 'would-overrun' });
  });

  it('a plan budget stops the plan with status budget-exhausted and the results so far, the answer of the call that reached it included', async () => {
    const plan: Plan = { planSummary: 'p', chunks: [chunk(1), chunk(2, [1]), chunk(3, [2])] };
    const adapter = scriptedAdapter({ rules: [{ agent: 'Generic', reply: { text: 'ok', usage: usage(50, 50) } }] });
    const outcome = await executePlan(plan, { adapter, budget: { run: { totalTokens: 150 } } });
    expect(outcome.status).toBe('budget-exhausted');
    expect(outcome.reason).toBe('budget');
    // The call that reached the limit was paid for: its chunk keeps its answer; only the chunk not yet started is stopped.
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed', 'cancelled']);
    expect(outcome.results[1]!.output).toBe('ok');
    expect(adapter.calls).toHaveLength(2);
  });

  it('a chunk job carries the tightest remaining budget and records remote usage once', async () => {
    const plan: Plan = { planSummary: 'p', chunks: [chunk(1)] };
    const seen: unknown[] = [];
    const events: TroupeEvent[] = [];
    const outcome = await executePlan(plan, {
      budget: { run: { totalTokens: 1000, costUsd: 2 }, chunk: { totalTokens: 300 } },
      onEvent: (e) => events.push(e),
      executor: {
        kind: 'remote',
        maxParallel: 1,
        async dispatch(job) {
          seen.push(job.toJSON().budget);
          job.recordUsage({ inputTokens: 100, outputTokens: 20, costUsd: 0.5 });
          return 'remote answer';
        },
      },
    });
    expect(outcome.status).toBe('completed');
    expect(seen).toEqual([{ totalTokens: 300, costUsd: 2, wallClockMs: undefined }].map(({ totalTokens, costUsd }) => ({ totalTokens, costUsd })));
    expect(outcome.stats.usage).toMatchObject({ inputTokens: 100, outputTokens: 20, turns: 1 });
    const spent = events.filter((e) => e.type === 'budget.closed').map((e) => e.type === 'budget.closed' && [e.budget, e.spent.totalTokens]);
    expect(spent).toEqual([['chunk-1', 120], ['plan:plan', 120]]);
  });
});

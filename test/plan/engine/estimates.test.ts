import { describe, expect, it } from 'vitest';
import { SimulatedClock, sleep } from '../../../src/core/clock.js';
import { indexPlan } from '../../../src/plan/model/dag.js';
import { DurationEstimates } from '../../../src/plan/engine/estimates.js';
import { executePlan, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import { validatePlanJson, type ChunkRole, type Plan } from '../../../src/plan/model/plan.js';
import { planningPrompt } from '../../../src/plan/session/decompose.js';
import { ReadyQueue } from '../../../src/plan/engine/ready-queue.js';
import { resolveRole } from '../../../src/plan/model/roles.js';
import { chunk, drive, planOf } from '../helpers.js';

/** Run `plan` one chunk at a time on a simulated clock; each chunk lasts `ms(role)`. Returns the start order. */
async function order(plan: Plan, ms: (role: ChunkRole) => number, options: Parameters<typeof executePlan>[1] = {}): Promise<number[]> {
  const clock = new SimulatedClock();
  const started: number[] = [];
  const runChunk: ChunkRunner = async ({ chunk: c, signal }) => {
    started.push(c.sequenceIndex);
    await sleep(clock, ms(c.role), signal);
    return 'ok';
  };
  await drive(clock, executePlan(plan, { clock, maxParallel: 1, runChunk, ...options }));
  return started;
}

describe('duration estimates', () => {
  it('start the chunk with the longest estimated remaining path first', async () => {
    // Without estimates, 0 -> 2 (two chunks) outranks 1 (one chunk); with them, 1 (100 ms) outranks 0 -> 2 (15 ms).
    const plain = planOf(chunk(0), chunk(1), chunk(2, [0]));
    expect(await order(plain, () => 1)).toEqual([0, 1, 2]);
    const estimated = planOf(chunk(0, [], { estimatedMs: 10 }), chunk(1, [], { estimatedMs: 100 }), chunk(2, [0], { estimatedMs: 5 }));
    expect(await order(estimated, () => 1)).toEqual([1, 0, 2]);
  });

  it("use a role's estimate for its chunks that carry none", async () => {
    const plan = planOf(chunk(0, [], { estimatedMs: 100 }), chunk(1, [], { role: 'Testing' }));
    expect(await order(plan, () => 1)).toEqual([0, 1]);
    expect(await order(plan, () => 1, { roles: { Testing: { estimatedMs: 500 } } })).toEqual([1, 0]);
  });

  it('are learned per role from finished chunks when nothing is estimated', async () => {
    // After 0 (Implementation, 100 ms) and 1 (Testing, 10 ms) finish, the chain 6 -> 7 of Implementation
    // (about 200 ms) outranks the longer chain 3 -> 4 -> 5 of Testing (about 30 ms).
    const plan = planOf(
      chunk(0, [], { role: 'Implementation' }),
      chunk(1, [], { role: 'Testing' }),
      chunk(2, [0, 1], { role: 'Implementation' }),
      chunk(3, [2], { role: 'Testing' }),
      chunk(4, [3], { role: 'Testing' }),
      chunk(5, [4], { role: 'Testing' }),
      chunk(6, [2], { role: 'Implementation' }),
      chunk(7, [6], { role: 'Implementation' }),
    );
    const ms = (role: ChunkRole) => (role === 'Implementation' ? 100 : 10);
    expect((await order(plan, ms)).slice(3)).toEqual([6, 7, 3, 4, 5]);
    // A `weight` function is the only estimate used: nothing is learned.
    expect((await order(plan, ms, { weight: () => 1 })).slice(3)).toEqual([3, 4, 6, 5, 7]);
  });

  it('learn per role, scaled by complexity, and say when the priorities change', () => {
    const plan = planOf(chunk(0, [], { role: 'Testing', complexity: 'Low' }), chunk(1, [], { role: 'Implementation', complexity: 'High' }), chunk(2, [0, 1], { estimatedMs: 30 }));
    const estimates = new DurationEstimates(plan, indexPlan(plan), (c) => resolveRole(c.role));
    // Before anything finished: complexity times the average known chunk (30 ms per Medium, so 15 per unit).
    expect([0, 1, 2].map((i) => estimates.estimate(i))).toEqual([15, 45, 30]);
    expect(estimates.observe(0, 40)).toBe(true);
    expect(estimates.estimate(0)).toBe(40);
    // Implementation has not finished yet: the mean over every role, per unit of complexity.
    expect(estimates.estimate(1)).toBe(120);
    expect([...estimates.priority]).toEqual([70, 150, 30]);
    expect(estimates.observe(1, 30)).toBe(true);
    expect(estimates.estimate(1)).toBe(30);
  });

  it('are checked: a role estimate must be a positive number and weight a function', async () => {
    await expect(executePlan(planOf(chunk(0)), { runChunk: async () => 'ok', roles: { Testing: { estimatedMs: -1 } } })).rejects.toThrow(
      'Expected `roles.Testing.estimatedMs` to be a positive number, got -1 (number)',
    );
    await expect(executePlan(planOf(chunk(0)), { runChunk: async () => 'ok', weight: 3 as never })).rejects.toThrow('Expected `weight` to be a function, got 3 (number)');
  });

  it('are a plan field the decomposer asks for: a positive number of milliseconds', () => {
    expect(planningPrompt('Fix the leak')).toContain('"estimatedMs"');
    const valid = validatePlanJson(JSON.stringify(planOf(chunk(0, [], { estimatedMs: 60_000 }))));
    expect(valid.plan?.chunks[0]?.estimatedMs).toBe(60_000);
    const invalid = validatePlanJson(JSON.stringify(planOf(chunk(0, [], { estimatedMs: -5 }))));
    expect(invalid.errors.some((e) => e.startsWith('chunks.0.estimatedMs'))).toBe(true);
  });
});

describe('the ready queue', () => {
  it('pops by priority, ties by the lower id, and reorders when the priorities change', () => {
    const priority = new Float64Array([1, 5, 5, 2]);
    const queue = new ReadyQueue(priority);
    for (const id of [0, 1, 2, 3]) queue.push(id);
    expect(queue.pop()).toBe(1);
    priority.set([9, 0, 0, 4]);
    queue.rebuild();
    expect([queue.pop(), queue.pop(), queue.pop(), queue.pop()]).toEqual([0, 3, 2, undefined]);
  });
});

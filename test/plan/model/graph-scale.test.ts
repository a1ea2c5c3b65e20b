import { describe, expect, it } from 'vitest';
import { buildStages, criticalPath, indexPlan, remainingCriticalPaths, toMermaid } from '../../../src/plan/model/dag.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { cycleThrough, cyclicComponents, kahnOrder } from '../../../src/plan/model/graph.js';
import type { Plan, PlanChunk } from '../../../src/plan/model/plan.js';
import { validatePlan, validatePlanJson } from '../../../src/plan/model/plan.js';

const N = 100_000;
const HEAVY = { timeout: 180_000 };

function make(i: number, deps: number[]): PlanChunk {
  return { sequenceIndex: i, title: `c${i}`, prompt: `Work item number ${i}`, dependsOnIndexes: deps, complexity: 'Low', role: 'Generic' };
}
/** 0 <- 1 <- 2 ... : each chunk depends on the one before. */
function chain(n: number): Plan {
  return { planSummary: 'chain', chunks: Array.from({ length: n }, (_, i) => make(i, i === 0 ? [] : [i - 1])) };
}
/** One root, `n - 2` chunks that depend on it, and one chunk that depends on all of those. */
function fan(n: number): Plan {
  const middle = Array.from({ length: n - 2 }, (_, k) => k + 1);
  return { planSummary: 'fan', chunks: [make(0, []), ...middle.map((i) => make(i, [0])), make(n - 1, middle)] };
}

describe('graph functions on 100,000 chunks', () => {
  // Plans of 100,000 chunks: seconds of CPU, more on a loaded machine.
  it('a chain: valid, one stage per chunk, the whole chain is the critical path', HEAVY, () => {
    const plan = chain(N);
    expect(validatePlan(plan)).toEqual({ valid: true, errors: [] });
    const json = validatePlanJson(JSON.stringify(plan));
    expect(json.valid).toBe(true);
    expect(json.plan!.chunks).toHaveLength(N);
    const stages = buildStages(plan);
    expect(stages).toHaveLength(N);
    expect(stages[N - 1]).toEqual([N - 1]);
    const path = criticalPath(plan);
    expect(path.length).toBe(N);
    expect(path.path).toHaveLength(N);
    expect(path.path[0]).toBe(0);
    expect(path.path[N - 1]).toBe(N - 1);
    const rest = remainingCriticalPaths(plan, () => 1);
    expect(rest[0]).toBe(N);
    expect(rest[N - 1]).toBe(1);
    expect(indexPlan(plan).ok).toBe(true);
    expect(toMermaid(plan).split('\n')).toHaveLength(1 + N + (N - 1));
  });

  it('a fan-out and fan-in 100,000 wide: three stages, a path of three chunks', HEAVY, () => {
    const plan = fan(N);
    expect(validatePlan(plan).valid).toBe(true);
    expect(validatePlanJson(JSON.stringify(plan)).valid).toBe(true);
    const stages = buildStages(plan);
    expect(stages.map((s) => s.length)).toEqual([1, N - 2, 1]);
    expect(criticalPath(plan)).toEqual({ path: [0, 1, N - 1], length: 3 });
    expect(remainingCriticalPaths(plan, () => 1)[0]).toBe(3);
  });

  it('a chain closed into one cycle of 100,000 chunks is reported once, as its path', HEAVY, () => {
    const plan = chain(N);
    plan.chunks[0]!.dependsOnIndexes = [N - 1];
    const { valid, errors } = validatePlan(plan);
    expect(valid).toBe(false);
    expect(errors).toHaveLength(1);
    const cycle = errors[0]!.replace('dependency cycle: ', '').split(' -> ').map(Number);
    expect(cycle).toHaveLength(N + 1);
    expect(cycle.slice(0, 3)).toEqual([0, 1, 2]);
    expect(cycle.slice(-2)).toEqual([N - 1, 0]);
    expect(() => criticalPath(plan)).toThrow(expect.objectContaining({ code: 'invalid_graph' }));
    expect(() => buildStages(plan)).toThrow(/dependency cycle: 0 -> 1 -> 2/);
  });

  it('a short cycle at the end of a long chain is found with the right path', () => {
    const plan = chain(N);
    plan.chunks[N - 3]!.dependsOnIndexes = [N - 4, N - 1];
    expect(validatePlan(plan).errors).toEqual([`dependency cycle: ${N - 3} -> ${N - 2} -> ${N - 1} -> ${N - 3}`]);
  });

  it('executes a 100,000-chunk chain and fan-out; a failed root skips every dependent', HEAVY, async () => {
    const run = async () => 'ok';
    const chained = await executePlan(chain(N), { maxParallel: 8, runChunk: run });
    expect(chained.stats.completed).toBe(N);
    const fanned = await executePlan(fan(N), { maxParallel: 8, runChunk: run });
    expect(fanned.stats.completed).toBe(N);
    const failed = await executePlan(chain(N), {
      retry: { maxRetries: 0 },
      runChunk: async () => {
        throw new Error('broken root');
      },
    });
    expect(failed.stats).toMatchObject({ failed: 1, skipped: N - 1 });
    expect(failed.results[N - 1]!.error).toBe('Skipped: dependency 0 ("c0") failed');
  });
});

describe('graph primitives', () => {
  it('orders nodes by Kahn and stops short on a cycle', () => {
    expect(kahnOrder([[1, 2], [2], []])).toEqual([0, 1, 2]);
    expect(kahnOrder([[1], [0], [0]])).toEqual([2]);
  });

  it('finds the cyclic components, self-loops included, and a shortest cycle through a node', () => {
    const successors = [[1], [2, 0], [1], [3], []];
    const components = cyclicComponents(successors).map((c) => [...c].sort());
    expect(components).toEqual([[0, 1, 2], [3]]);
    expect(cycleThrough(successors, [0, 1, 2], 0, (v) => v)).toEqual([0, 1, 0]);
    expect(cycleThrough(successors, [3], 3, (v) => v)).toEqual([3, 3]);
  });
});

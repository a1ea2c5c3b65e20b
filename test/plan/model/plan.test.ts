import { describe, expect, it } from 'vitest';
import { buildStages, criticalPath, remainingCriticalPaths, toMermaid } from '../../../src/plan/model/dag.js';
import { validatePlan, validatePlanJson } from '../../../src/plan/model/plan.js';
import { chunk, planOf } from '../helpers.js';

describe('validatePlan', () => {
  it('accepts a valid plan', () => {
    expect(validatePlan(planOf(chunk(0), chunk(1), chunk(2, [0, 1])))).toEqual({ valid: true, errors: [] });
  });
  it('rejects an empty plan', () => {
    expect(validatePlan(planOf()).errors).toEqual(['plan contains no work chunks']);
  });
  it('rejects duplicate indexes', () => {
    expect(validatePlan(planOf(chunk(0), chunk(0))).errors).toEqual(['duplicate sequenceIndex 0']);
  });
  it('rejects a chunk that depends on itself', () => {
    expect(validatePlan(planOf(chunk(0, [0]))).errors).toEqual(['chunk 0 depends on itself']);
  });
  it('rejects unknown indexes', () => {
    expect(validatePlan(planOf(chunk(0, [7]))).errors).toEqual(['chunk 0 depends on unknown index 7']);
  });
  it('rejects cycles and shows the cycle', () => {
    const { valid, errors } = validatePlan(planOf(chunk(0), chunk(1, [0, 3]), chunk(2, [1]), chunk(3, [2])));
    expect(valid).toBe(false);
    expect(errors).toEqual(['dependency cycle: 1 -> 2 -> 3 -> 1']);
  });
});

describe('validatePlanJson', () => {
  const json = JSON.stringify(planOf(chunk(0), chunk(1, [0])));
  it('finds the JSON in a code fence inside prose', () => {
    const result = validatePlanJson(`Here is the plan:\n\`\`\`json\n${json}\n\`\`\`\nGood luck.`);
    expect(result.valid).toBe(true);
    expect(result.plan?.chunks).toHaveLength(2);
  });
  it('finds bare JSON inside prose', () => {
    expect(validatePlanJson(`Sure! ${json} That's it.`).valid).toBe(true);
  });
  it('reports schema errors with their path', () => {
    const bad = JSON.stringify({ planSummary: 'x', chunks: [{ ...chunk(0), prompt: 'short', role: 'Wizard' }] });
    const { valid, errors } = validatePlanJson(bad);
    expect(valid).toBe(false);
    expect(errors.some((e) => e.startsWith('chunks.0.prompt'))).toBe(true);
    expect(errors.some((e) => e.startsWith('chunks.0.role'))).toBe(true);
  });
  it('reports missing and broken JSON', () => {
    expect(validatePlanJson('no plan here').errors).toEqual(['no JSON object found in the answer']);
    // A cut-off answer is repaired, then judged by the schema.
    expect(validatePlanJson('{"planSummary": ').errors[0]).toMatch(/^planSummary: /);
  });
  it('reports graph errors after the schema passes', () => {
    expect(validatePlanJson(JSON.stringify(planOf(chunk(0, [0])))).errors).toEqual(['chunk 0 depends on itself']);
  });
});

describe('DAG analysis', () => {
  it('groups chunks into stages by dependency depth', () => {
    expect(buildStages(planOf(chunk(0), chunk(1), chunk(2, [0, 1])))).toEqual([[0, 1], [2]]);
    expect(buildStages(planOf(chunk(0), chunk(1, [0]), chunk(2), chunk(3, [1, 2])))).toEqual([[0, 2], [1], [3]]);
  });
  it('finds the critical path by weight', () => {
    const plan = planOf(chunk(0, [], { complexity: 'High' }), chunk(1, [], { complexity: 'Low' }), chunk(2, [0, 1]), chunk(3, [1]));
    expect(criticalPath(plan)).toEqual({ path: [0, 2], length: 5 });
    expect(criticalPath(plan, () => 1).length).toBe(2);
  });
  it('computes the remaining critical path of every chunk', () => {
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [1]), chunk(3));
    expect([...remainingCriticalPaths(plan, () => 1)]).toEqual([3, 2, 1, 1]);
  });
  it('draws the plan as a Mermaid flowchart', () => {
    const mermaid = toMermaid(planOf(chunk(0), chunk(1, [0], { role: 'Synthesis', title: 'Merge "all"' })));
    expect(mermaid).toBe(['flowchart TD', '  c0["0. Chunk A (Generic)"]', `  c1["1. Merge 'all' (Synthesis)"]`, '  c0 --> c1'].join('\n'));
  });
});

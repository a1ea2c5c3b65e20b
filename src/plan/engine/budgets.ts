/**
 * Budgets of a plan's chunks: each chunk's own (`chunkBudget`), and those
 * of single chunks or subtrees (`budgets`). Each execution makes its own
 * shared budgets, so every attempt of a chunk, and every chunk of a
 * subtree, spends from one meter of the run.
 * @module
 */
import { validateBudget, type Budget } from '../../core/budget.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import type { PlanIndex } from '../model/dag.js';
import type { Plan } from '../model/plan.js';
import type { ChunkBudget, PlanRunOptions } from './types.js';

/** Check the budget options of a plan. */
export function validatePlanBudgets(index: PlanIndex, o: PlanRunOptions): void {
  validateBudget('budget', o.budget);
  validateBudget('chunkBudget', o.chunkBudget);
  if (o.budgets === undefined) return;
  if (!Array.isArray(o.budgets)) throw new ConfigurationError(`Expected \`budgets\` to be an array of chunk budgets, got ${describeValue(o.budgets)}`);
  o.budgets.forEach((b, i) => {
    const { chunk, subtree, ...budget } = (b ?? {}) as ChunkBudget;
    if (index.position(chunk) === undefined) {
      throw new ConfigurationError(`Expected \`budgets[${i}].chunk\` to be the sequenceIndex of a chunk of the plan, got ${describeValue(chunk)}`);
    }
    if (subtree !== undefined && typeof subtree !== 'boolean') throw new ConfigurationError(`Expected \`budgets[${i}].subtree\` to be a boolean, got ${describeValue(subtree)}`);
    validateBudget(`budgets[${i}]`, budget);
  });
}

/** The budgets each chunk (by position) spends from, besides the plan's: made once per execution. */
export function chunkBudgets(plan: Plan, index: PlanIndex, o: PlanRunOptions): (position: number) => readonly Budget[] {
  const byPosition: Budget[][] = plan.chunks.map(() => []);
  if (o.chunkBudget) {
    plan.chunks.forEach((c, i) => byPosition[i]!.push({ ...o.chunkBudget, name: o.chunkBudget!.name ?? `chunk-${c.sequenceIndex}`, shared: true }));
  }
  for (const spec of o.budgets ?? []) {
    const { chunk, subtree, ...limits } = spec;
    const budget: Budget = { ...limits, name: limits.name ?? `${subtree ? 'subtree' : 'chunk'}-${chunk}`, shared: true };
    for (const p of subtree ? descendants(index, index.position(chunk)!) : [index.position(chunk)!]) byPosition[p]!.push(budget);
  }
  return (position) => byPosition[position] ?? [];
}

/** `root` and every position that depends on it, directly or not. */
function descendants(index: PlanIndex, root: number): number[] {
  const seen = new Set([root]);
  const stack = [root];
  while (stack.length > 0) {
    for (const d of index.dependents[stack.pop()!]!) {
      if (seen.has(d)) continue;
      seen.add(d);
      stack.push(d);
    }
  }
  return [...seen];
}

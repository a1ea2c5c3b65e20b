/**
 * Budgets of a plan's chunks: each chunk's own (`budget.chunk`), and those
 * of single chunks or subtrees (`budget.chunks`). Each execution makes its
 * own shared budgets, so every attempt of a chunk, and every chunk of a
 * subtree, spends from one meter of the run. (The options are checked in
 * `options.ts`.)
 * @module
 */
import type { Budget } from '../../core/budget.js';
import type { PlanIndex } from '../model/dag.js';
import type { Plan } from '../model/plan.js';
import type { PlanBudgets } from './types.js';

/** The budgets each chunk (by position) spends from, besides the plan's: made once per execution. */
export function chunkBudgets(plan: Plan, index: PlanIndex, budgets: PlanBudgets = {}): (position: number) => readonly Budget[] {
  const byPosition: Budget[][] = plan.chunks.map(() => []);
  const each = budgets.chunk;
  if (each) {
    plan.chunks.forEach((c, i) => byPosition[i]!.push({ ...each, name: each.name ?? `chunk-${c.sequenceIndex}`, shared: true }));
  }
  for (const spec of budgets.chunks ?? []) {
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

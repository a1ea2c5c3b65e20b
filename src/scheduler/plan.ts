/**
 * The plan: a JSON document of work chunks with dependencies, its zod
 * schema, and its validation (schema, then the dependency graph).
 * @module
 */
import { Graph, alg } from '@dagrejs/graphlib';
import { z } from 'zod';
import { ModelBehaviorError } from '../core/errors.js';
import { safeFindJson } from '../text/json.js';
import { expectText } from '../text/lines.js';

export { extractJson } from '../text/json.js';

/** The roles a chunk may ask for; each has a built-in {@link RoleConfig}. */
export const chunkRoles = [
  'Generic',
  'Planning',
  'CodeAnalysis',
  'MemoryDiagnostics',
  'Performance',
  'Testing',
  'Implementation',
  'Synthesis',
] as const;

/** A chunk's role. */
export type ChunkRole = (typeof chunkRoles)[number];

/** The zod schema of one chunk of work. */
export const planChunkSchema = z.object({
  sequenceIndex: z.number().int().nonnegative(),
  title: z.string().min(1),
  prompt: z.string().min(10, 'prompt must be at least 10 characters'),
  dependsOnIndexes: z.array(z.number().int()).default([]),
  workingScope: z.array(z.string()).optional(),
  requiredSkills: z.array(z.string()).optional(),
  complexity: z.enum(['Low', 'Medium', 'High']),
  role: z.enum(chunkRoles),
});

/** The zod schema of a plan. */
export const planSchema = z.object({
  planSummary: z.string(),
  chunks: z.array(planChunkSchema),
});

/** A plan: a summary and its chunks. */
export type Plan = z.infer<typeof planSchema>;
/** One chunk of a {@link Plan}. */
export type PlanChunk = z.infer<typeof planChunkSchema>;

/** The result of {@link validatePlan}. */
export interface PlanValidation {
  valid: boolean;
  /** One readable message per problem. */
  errors: string[];
}

/** The result of {@link validatePlanJson}. */
export interface PlanJsonValidation extends PlanValidation {
  /** The parsed plan, when valid. */
  plan?: Plan;
  /** True when the plan's JSON was damaged and repaired (see `safeFindJson`). */
  repaired?: boolean;
}

/** Invalid plans, after every attempt of the decomposer. */
export class PlanValidationError extends ModelBehaviorError {
  /** The errors of every attempt, in order. */
  readonly attempts: string[][];
  constructor(message: string, attempts: string[][]) {
    super(message, { code: 'plan_invalid', details: { attempts } });
    this.attempts = attempts;
  }
}

/**
 * Check a plan's graph: it has chunks, no duplicate indexes, no chunk that
 * depends on itself or on an unknown index, and no cycle (shown as a path).
 *
 * @example
 * ```ts
 * const { valid, errors } = validatePlan(plan);
 * if (!valid) console.error(errors.join('\n'));
 * ```
 */
export function validatePlan(plan: Plan): PlanValidation {
  const errors: string[] = [];
  if (plan.chunks.length === 0) return { valid: false, errors: ['plan contains no work chunks'] };
  const seen = new Set<number>();
  for (const chunk of plan.chunks) {
    if (seen.has(chunk.sequenceIndex)) errors.push(`duplicate sequenceIndex ${chunk.sequenceIndex}`);
    seen.add(chunk.sequenceIndex);
  }
  const graph = new Graph();
  for (const chunk of plan.chunks) graph.setNode(String(chunk.sequenceIndex));
  for (const chunk of plan.chunks) {
    for (const dep of chunk.dependsOnIndexes) {
      if (dep === chunk.sequenceIndex) errors.push(`chunk ${chunk.sequenceIndex} depends on itself`);
      else if (!seen.has(dep)) errors.push(`chunk ${chunk.sequenceIndex} depends on unknown index ${dep}`);
      else graph.setEdge(String(dep), String(chunk.sequenceIndex));
    }
  }
  for (const component of alg.findCycles(graph)) {
    errors.push(`dependency cycle: ${cyclePath(graph, component).join(' -> ')}`);
  }
  return { valid: errors.length === 0, errors };
}

/**
 * Find the plan JSON in a model's answer (the first candidate that passes
 * {@link planSchema}, in the order of `safeFindJson`: fences, then the
 * text; damaged JSON repaired), then {@link validatePlan} it. A non-string
 * throws a `ConfigurationError` (`invalid_argument`).
 */
export function validatePlanJson(raw: string): PlanJsonValidation {
  const found = safeFindJson(expectText(raw, 'the answer given to validatePlanJson'), { kind: 'object', schema: planSchema });
  if (!found.success) {
    return { valid: false, errors: found.issues.map((i) => (i.code === 'no_json' ? 'no JSON object found in the answer' : i.message)) };
  }
  const plan = found.data.data;
  const repaired = found.data.repaired ? { repaired: true } : {};
  const checked = validatePlan(plan);
  return checked.valid ? { ...checked, plan, ...repaired } : { ...checked, ...repaired };
}

/** One cycle through the nodes of a strongly connected component, as a closed path. */
function cyclePath(graph: Graph, component: string[]): string[] {
  const inside = new Set(component);
  const start = [...component].sort((a, b) => Number(a) - Number(b))[0]!;
  const parent = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of graph.successors(node) ?? []) {
      if (!inside.has(next)) continue;
      if (next === start) {
        const path = [node];
        for (let p = parent.get(node); p !== undefined; p = parent.get(p)) path.unshift(p);
        if (path[0] !== start) path.unshift(start);
        return [...path, start];
      }
      if (!parent.has(next)) {
        parent.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...component, start];
}

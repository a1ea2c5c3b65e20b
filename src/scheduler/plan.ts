/**
 * The plan: a JSON document of work chunks with dependencies, its zod
 * schema, and its validation (schema, then the dependency graph).
 * @module
 */
import { Graph, alg } from '@dagrejs/graphlib';
import { z } from 'zod';
import { ModelBehaviorError } from '../core/errors.js';

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
 * Find the plan JSON in a model's answer (bare, in a code fence, or inside
 * prose), parse it with {@link planSchema}, then {@link validatePlan} it.
 */
export function validatePlanJson(raw: string): PlanJsonValidation {
  const json = extractJson(raw);
  if (json === undefined) return { valid: false, errors: ['no JSON object found in the answer'] };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    return { valid: false, errors: [`invalid JSON: ${(error as Error).message}`] };
  }
  const parsed = planSchema.safeParse(data);
  if (!parsed.success) {
    return {
      valid: false,
      errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`),
    };
  }
  const checked = validatePlan(parsed.data);
  return checked.valid ? { ...checked, plan: parsed.data } : checked;
}

/**
 * The first balanced JSON object (or, with `kind: 'array'`, array) in
 * `text`, preferring a fenced block. Strings and escapes are respected, so
 * brackets inside them do not count. Linear in the text.
 */
export function extractJson(text: string, kind: 'object' | 'array' = 'object'): string | undefined {
  const [open, close] = kind === 'object' ? ['{', '}'] : ['[', ']'];
  const fence = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  if (fence?.[1] !== undefined && fence[1].trim().startsWith(open)) return fence[1].trim();
  const start = text.indexOf(open);
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
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

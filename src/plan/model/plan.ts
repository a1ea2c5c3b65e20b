/**
 * The plan: a JSON document of work chunks with dependencies, its zod
 * schema, and its validation (schema, then the dependency graph).
 * @module
 */
import { z } from 'zod';
import { ModelBehaviorError } from '../../core/errors.js';
import { safeFindJson } from '../../text/json.js';
import { expectText } from '../../text/lines.js';
import { cycleThrough, cyclicComponents, kahnOrder } from './graph.js';

export { extractJson } from '../../text/json.js';

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
  /** Rough duration in milliseconds, when known; the scheduler starts the longest remaining chains first. */
  estimatedMs: z.number().positive().finite().optional(),
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
  // One node per distinct index; edges run from a dependency to the chunk that needs it.
  const node = new Map<number, number>();
  const indexes: number[] = [];
  for (const chunk of plan.chunks) {
    if (node.has(chunk.sequenceIndex)) errors.push(`duplicate sequenceIndex ${chunk.sequenceIndex}`);
    else node.set(chunk.sequenceIndex, indexes.push(chunk.sequenceIndex) - 1);
  }
  const successors: number[][] = indexes.map(() => []);
  for (const chunk of plan.chunks) {
    for (const dep of chunk.dependsOnIndexes) {
      if (dep === chunk.sequenceIndex) errors.push(`chunk ${chunk.sequenceIndex} depends on itself`);
      else if (!node.has(dep)) errors.push(`chunk ${chunk.sequenceIndex} depends on unknown index ${dep}`);
      else successors[node.get(dep)!]!.push(node.get(chunk.sequenceIndex)!);
    }
  }
  if (kahnOrder(successors).length < indexes.length) {
    const rank = (v: number): number => indexes[v]!;
    const cycles = cyclicComponents(successors).map((component) => {
      const start = component.reduce((a, b) => (rank(b) < rank(a) ? b : a));
      return cycleThrough(successors, component, start, rank).map(rank);
    });
    cycles.sort((a, b) => a[0]! - b[0]!);
    for (const cycle of cycles) errors.push(`dependency cycle: ${cycle.join(' -> ')}`);
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

/** The result of {@link checkPlanEdit}: the plan when it passes, and every problem found. */
export interface PlanEditCheck extends PlanValidation {
  /** The checked plan (defaults filled in), when valid. */
  plan?: Plan;
}

/**
 * Check a plan a person edited, as a generated one is checked: the schema
 * (a plan object, or its JSON text), the dependency graph, and, when
 * `roles` is given, that every chunk uses one of them. What
 * `PlanningSession.editPlan` and the answer to a plan approval
 * (`troupe/http`) both check.
 *
 * @example
 * ```ts
 * const { valid, errors } = checkPlanEdit(edited, ['Implementation', 'Testing']);
 * ```
 */
export function checkPlanEdit(plan: unknown, roles?: readonly string[]): PlanEditCheck {
  let candidate: Plan | undefined;
  let errors: string[];
  if (typeof plan === 'string') {
    const checked = validatePlanJson(plan);
    candidate = checked.plan;
    errors = [...checked.errors];
  } else {
    const parsed = planSchema.safeParse(plan);
    candidate = parsed.success ? parsed.data : undefined;
    errors = parsed.success ? validatePlan(parsed.data).errors : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  if (candidate && roles) {
    for (const c of candidate.chunks) if (!roles.includes(c.role)) errors.push(`chunk ${c.sequenceIndex} uses role ${c.role}, which is not available (use one of: ${roles.join(', ')})`);
  }
  if (!candidate || errors.length > 0) return { valid: false, errors };
  return { valid: true, errors: [], plan: candidate };
}

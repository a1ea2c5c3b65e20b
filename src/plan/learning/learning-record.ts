/**
 * The learning record: what a plan used from the statistics of earlier
 * runs, as plain data (see `learning.ts`). Its own module so that the plan
 * events can name it.
 * @module
 */
import { z } from 'zod';

/** What a role's numbers were when a run used them. */
const basisSchema = z.object({
  chunks: z.number().int().nonnegative(),
  successRate: z.number().min(0).max(1),
  meanAttempts: z.number().nonnegative(),
  meanMs: z.number().nonnegative(),
  meanCostUsd: z.number().nonnegative(),
});

/** The zod schema of a {@link LearningRecord}. */
export const learningRecordSchema = z.object({
  /** Runs the statistics had recorded. */
  runs: z.number().int().nonnegative(),
  /** Estimated duration per role (ms). */
  estimates: z.record(z.string(), z.number().positive()),
  /** The model chosen per role, and why. */
  models: z.record(z.string(), z.object({ model: z.string().min(1), reason: z.string() })),
  /** The planner summary, when asked for. */
  summary: z.string().optional(),
  /** The numbers of every role used, as they were. */
  basis: z.record(z.string(), basisSchema),
});

/**
 * The statistics a run used, as plain data: estimates per role, the model
 * chosen per role, the planner summary, and the numbers they came from.
 * Pass it as a plan's `learning` option; the plan applies it to its roles
 * and logs it as a `plan.learning` event.
 */
export type LearningRecord = z.infer<typeof learningRecordSchema>;

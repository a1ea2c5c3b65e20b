/**
 * The serialisable state of an orchestrate loop after each iteration, with
 * its zod schema: what the loop's checkpoint holds, validated when a
 * resumed run loads it.
 * @module
 */
import { z } from 'zod';

/** How the workers of {@link orchestrate} are used. */
export const orchestrateModes = ['broadcast', 'sequential', 'orchestrator', 'orchestrator-reflect'] as const;
/** One of {@link orchestrateModes}. */
export type OrchestrateMode = (typeof orchestrateModes)[number];

/** The schema of one worker's result. */
export const workerResultSchema = z.object({
  worker: z.string(),
  task: z.string(),
  success: z.boolean(),
  output: z.string(),
  error: z.string().optional(),
  durationMs: z.number().min(0),
});
/** What one worker produced for one task; a failed or timed-out worker has `success: false`. */
export type WorkerResult = z.infer<typeof workerResultSchema>;

/** The schema of one evaluation of a loop. */
export const loopEvaluationSchema = z.object({
  iteration: z.number().int().min(1),
  score: z.number().min(0).max(1),
  rationale: z.string(),
  evaluator: z.string(),
  trend: z.enum(['improving', 'stable', 'degrading']),
  goalMet: z.boolean(),
});
/** One evaluation: the score of an iteration, why, who gave it, and the trend. */
export type LoopEvaluation = z.infer<typeof loopEvaluationSchema>;

/** The schema of a stall detector snapshot. */
export const stallSnapshotSchema = z.object({
  recent: z.array(z.string()),
  consecutive: z.number().int().min(0),
});

/** The schema of one adjustment for the next iteration (see `feedbackAdjustments`). */
export const loopAdjustmentSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('worker-failed'), worker: z.string(), error: z.string(), message: z.string() }),
  z.object({ kind: z.literal('short-answer'), worker: z.string(), chars: z.number().int().min(0), message: z.string() }),
  z.object({ kind: z.literal('score-drop'), score: z.number().min(0).max(1), previous: z.number().min(0).max(1), message: z.string() }),
]);

/** The schema of {@link OrchestrateState} (`schemaVersion: 1`). */
export const orchestrateStateSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('orchestrate'),
  /** The loop's name. */
  loop: z.string(),
  mode: z.enum(orchestrateModes),
  /** The original user request. */
  request: z.string(),
  /** Iterations completed. */
  iteration: z.number().int().min(0),
  maxIterations: z.number().int().min(1),
  evaluations: z.array(loopEvaluationSchema),
  stall: stallSnapshotSchema,
  /** The last synthesis of the lead. */
  lastSynthesis: z.string().optional(),
  /** The worker results of the last completed iteration. */
  lastResults: z.array(workerResultSchema),
  /** The adjustments the last evaluation called for, put into the next planning prompt (absent in states written before they existed). */
  adjustments: z.array(loopAdjustmentSchema).optional(),
  /** Clock time at which the loop first started. */
  startedAt: z.number(),
});

/** The state of an orchestrate loop after an iteration: a plain, JSON-serialisable object. */
export type OrchestrateState = z.infer<typeof orchestrateStateSchema>;

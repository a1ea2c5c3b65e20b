/**
 * What crosses the wire, as plain JSON checked with zod on the side that
 * reads it: the job a coordinator adds (a chunk attempt or a named run),
 * the result a worker returns, and the batches of events it publishes while
 * it runs. Never a closure: a worker resolves names against its own registry.
 * @module
 */
import { z } from 'zod';
import type { BudgetLimits } from '../../core/budget.js';
import type { GuardrailTripError } from '../../core/guardrails.js';
import { outcomeReasons, outcomeStatuses } from '../../core/outcome.js';
import { planChunkSchema } from '../../plan/model/plan.js';

/** The version of every message on the wire. */
export const WIRE_VERSION = 1;

/** BullMQ job names: a plan chunk's attempt, or one run of a named runnable. */
export type JobKind = 'chunk' | 'run';

/** A trace-context carrier (W3C `traceparent`, `tracestate`): strings only. */
const carrierSchema = z.record(z.string(), z.string());

const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedTokens: z.number(),
  costUsd: z.number(),
  turns: z.number(),
});

const limit = z.number().nonnegative();
const budgetLimitsSchema = z.object({
  inputTokens: limit.optional(),
  outputTokens: limit.optional(),
  totalTokens: limit.optional(),
  costUsd: limit.optional(),
  modelCalls: limit.optional(),
  wallClockMs: limit.optional(),
}) satisfies z.ZodType<BudgetLimits>;

const roleSchema = z.object({
  system: z.string(),
  preferredTools: z.array(z.string()),
  /** The tools the role's agent may call (`RoleConfig.tools`); without it, those `preferredTools` names. */
  tools: z.array(z.string()).optional(),
  model: z.string().optional(),
  temperature: z.number().optional(),
  adapter: z.string().optional(),
  estimatedMs: z.number().optional(),
});

/** The data of a chunk job: the chunk's attempt (`ChunkJobData`), where it sits in the run, and the trace context. */
export const chunkJobSchema = z.object({
  v: z.literal(WIRE_VERSION),
  kind: z.literal('chunk'),
  runId: z.string().min(1),
  planId: z.string(),
  chunk: planChunkSchema,
  prompt: z.string(),
  role: roleSchema,
  attempt: z.number().int().positive(),
  /** The attempt's checkpoint path in the coordinator's run (`<plan path>/chunk-<n>`): where the worker's ops go. */
  path: z.string(),
  /** The plan's checkpoint path (`ChunkJobData.checkpointPath`): where the worker records the chunk's result. */
  checkpointPath: z.string(),
  /** What is left of every budget the attempt spends from (`ChunkJobData.budget`): the worker runs the attempt under it. */
  budget: budgetLimitsSchema.optional(),
  traceContext: carrierSchema.optional(),
  /** A turn of a named agent (`ChunkJobData.agent`, a coordination worker's task) rather than a plan's chunk. */
  agent: z.string().min(1).optional(),
  /** The coordinator's signature (`signingKey`), over the job's id, name and the rest of its data. */
  sig: z.string().optional(),
});

/** The data of a run job: one run of the runnable `name` (as `remote(name)` sends it). */
export const runJobSchema = z.object({
  v: z.literal(WIRE_VERSION),
  kind: z.literal('run'),
  runId: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
  path: z.string(),
  traceContext: carrierSchema.optional(),
  /** The coordinator's signature (`signingKey`), over the job's id, name and the rest of its data. */
  sig: z.string().optional(),
});

/** Any job's data. */
export const jobDataSchema = z.discriminatedUnion('kind', [chunkJobSchema, runJobSchema]);

/** A chunk job's data. */
export type ChunkJobWire = z.infer<typeof chunkJobSchema>;
/** A run job's data. */
export type RunJobWire = z.infer<typeof runJobSchema>;
/** Any job's data. */
export type JobWire = z.infer<typeof jobDataSchema>;

/** What a worker returns for a job (BullMQ stores it as the job's return value). */
export const jobResultSchema = z.object({
  v: z.literal(WIRE_VERSION),
  /** The execution that produced it (a job run again after a worker was lost gets a new one). */
  exec: z.string(),
  /** The worker's name. */
  worker: z.string(),
  output: z.string(),
  files: z.array(z.string()).optional(),
  /** The terminal agent. */
  agent: z.string(),
  status: z.enum(outcomeStatuses),
  reason: z.enum(outcomeReasons).optional(),
  usage: usageSchema,
  /** The worker recorded the chunk's result in the plan's checkpoint (`recordChunkResult`). */
  recorded: z.boolean().optional(),
  /** The last events of the run, after every batch published before (so a short job's events and result cross in one command). */
  events: z.array(z.looseObject({ type: z.string() })).optional(),
});

/** A job's result. */
export type JobResultWire = z.infer<typeof jobResultSchema>;

const infoSchema = z.record(z.string(), z.unknown());

/** A guardrail's verdict (`TripVerdict`): a text guardrail's, or a tool guardrail's `stop`. */
const tripVerdictSchema = z.union([
  z.object({ action: z.literal('stop'), reason: z.string(), info: infoSchema.optional() }),
  z.object({ tripped: z.boolean(), reason: z.string().optional(), info: infoSchema.optional() }),
]);

/** The guardrail that tripped on the worker (a `GuardrailTripError`'s fields, its trace left behind). */
export const guardrailTripSchema = z.object({
  guardrail: z.string(),
  stage: z.enum(['input', 'output', 'stream', 'tool']),
  verdict: tripVerdictSchema,
  runnable: z.string().optional(),
  agent: z.string().optional(),
  tool: z.string().optional(),
}) satisfies z.ZodType<Omit<ConstructorParameters<typeof GuardrailTripError>[0], 'trace'>>;

/** A guardrail trip, as it crosses the wire. */
export type GuardrailTripWire = z.infer<typeof guardrailTripSchema>;

/** Why a job failed on its worker, published before the failure itself. */
export const jobFailureSchema = z.object({
  message: z.string(),
  name: z.string().optional(),
  code: z.string().optional(),
  /** With `code: 'guardrail_tripped'`: which guardrail tripped, where, and its verdict. */
  guardrail: guardrailTripSchema.optional(),
});

/** A failure's description. */
export type JobFailureWire = z.infer<typeof jobFailureSchema>;

/** One batch of what happened on a worker: the run's events in order, and at the end of a failed job, why. */
export const eventBatchSchema = z.object({
  events: z.array(z.looseObject({ type: z.string() })),
  failure: jobFailureSchema.optional(),
});

/** A batch of events. */
export type EventBatchWire = z.infer<typeof eventBatchSchema>;

/** The name of the custom event (in the queue's BullMQ event stream) that carries event batches. */
export const BATCH_EVENT = 'troupe';

/**
 * The start of the mark (BullMQ's `defa` field of the job) a coordinator
 * puts on a job it cancels while the job is in Redis: a worker that takes
 * the job after that fails it without running it.
 */
export const CANCEL_MARK_PREFIX = 'troupe: cancelled by its coordinator: ';

/** Escape `%` and `:` (BullMQ refuses `:` in custom job ids). */
function escapeIdPart(text: string): string {
  return text.replace(/[%:|]/g, (c) => (c === '%' ? '%25' : c === ':' ? '%3A' : '%7C'));
}

/**
 * The job id of the `n`th job of the chunk at `path` in run `runId`:
 * deterministic, so a coordinator that resumes the run finds the jobs the
 * earlier one added (and BullMQ never adds one id twice).
 */
export function chunkJobId(runId: string, path: string, n: number): string {
  return `${escapeIdPart(runId)}|${escapeIdPart(path)}|${n}`;
}

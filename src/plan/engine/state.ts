/**
 * The serialisable state of a plan execution: what the plan's checkpoint
 * holds, and what a resumed plan continues from.
 * @module
 */
import { z } from 'zod';
import { planSchema } from '../model/plan.js';
import { planMessageSchema } from '../live/messages.js';
import { planChangeRecordSchema } from '../live/replan.js';

/** Every status a chunk goes through (docs/conventions.md: a chunk ends `completed`, `failed`, `cancelled` or `skipped`). */
export const chunkStatuses = [
  'pending',
  'waiting-for-dependencies',
  'queued',
  'running',
  'completed',
  'failed',
  'retrying',
  'cancelled',
  'skipped',
] as const;

/** A chunk's status. */
export type ChunkStatus = (typeof chunkStatuses)[number];

/** Statuses a chunk does not leave. */
export const terminalStatuses: ReadonlySet<ChunkStatus> = new Set<ChunkStatus>(['completed', 'failed', 'cancelled', 'skipped']);

/**
 * The words of saved states and run logs written before today's (users keep
 * them on disk): `succeeded` is `completed`, `aborted` is `cancelled`, in
 * lower case or in the capitalised form of the first saved states
 * (`Succeeded`, `WaitingForDependencies`).
 */
const retiredStatuses: Readonly<Record<string, ChunkStatus>> = {
  ...Object.fromEntries(chunkStatuses.map((status) => [capitalised(status), status])),
  succeeded: 'completed',
  Succeeded: 'completed',
  aborted: 'cancelled',
  Aborted: 'cancelled',
};

function capitalised(status: string): string {
  return status.replace(/(^|-)([a-z])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}

/** A chunk status as saved, in today's words (see {@link chunkStatusSchema}); anything else unchanged. */
export function currentChunkStatus(value: unknown): unknown {
  return typeof value === 'string' ? (retiredStatuses[value] ?? value) : value;
}

/**
 * The zod schema of a saved chunk status: one of {@link chunkStatuses}; a
 * state saved with the earlier words (`succeeded`, `aborted`, or the
 * capitalised `Succeeded`) reads as today's status.
 */
export const chunkStatusSchema = z.preprocess(currentChunkStatus, z.enum(chunkStatuses));

/** The zod schema of one chunk's saved state. */
export const chunkStateSchema = z.object({
  sequenceIndex: z.number().int(),
  status: chunkStatusSchema,
  attempts: z.number().int().nonnegative(),
  output: z.string().optional(),
  error: z.string().optional(),
  files: z.array(z.string()).optional(),
});

/** The zod schema of {@link PlanExecutionState} (schema version 1). */
export const planExecutionStateSchema = z.object({
  schemaVersion: z.literal(1),
  planId: z.string(),
  plan: planSchema,
  chunks: z.array(chunkStateSchema),
  instructions: z.array(z.string()),
  updatedAt: z.number(),
  /** Changes applied while it ran (`plan` is the changed plan). */
  changes: z.array(planChangeRecordSchema).optional(),
  /** Messages posted between its workers. */
  messages: z.array(planMessageSchema).optional(),
});

const changeEntrySchema = z.object({ change: planChangeRecordSchema });
const messageEntrySchema = z.object({ message: planMessageSchema });

/** One entry of a plan's checkpoint stream: a chunk's state, a change of the plan, or a message. */
export type PlanEntry = ChunkState | z.infer<typeof changeEntrySchema> | z.infer<typeof messageEntrySchema>;

/**
 * The zod schema of {@link PlanEntry}: the entry's keys pick the schema
 * (`change`, `message`, else a chunk's state), so a problem is reported
 * at its own path.
 */
export const planEntrySchema: z.ZodType<PlanEntry> = z.unknown().transform((value, ctx): PlanEntry => {
  const keyed = typeof value === 'object' && value !== null;
  const schema: z.ZodType<PlanEntry> = keyed && 'change' in value ? changeEntrySchema : keyed && 'message' in value ? messageEntrySchema : chunkStateSchema;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

/** A saved chunk. */
export type ChunkState = z.infer<typeof chunkStateSchema>;
/** The serialisable state of a plan execution (plain data, JSON-safe). */
export type PlanExecutionState = z.infer<typeof planExecutionStateSchema>;

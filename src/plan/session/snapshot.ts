/**
 * The snapshot of a planning session: its run id, task, approved plan,
 * the instructions posted while it executed and, once the execution
 * finished, its outcome. One type for both directions: the session's
 * checkpoint in its run (saved when the execution starts, on every
 * instruction, and with the outcome when it ends) reads back as a
 * snapshot, and `PlanningSession.restore` takes one (or reads it from the
 * store by run id).
 * @module
 */
import { z } from 'zod';
import { checkpointKey, parseCheckpoint, type CheckpointSpec } from '../../core/checkpoint.js';
import { ConfigurationError } from '../../core/errors.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { currentPlanOutcome, currentPlanStats, planOutcomeSchema } from '../engine/checkpoint.js';
import type { PlanOutcome } from '../engine/types.js';
import { planSchema, type Plan } from '../model/plan.js';

/** A planning session as saved: its checkpoint, read back as one object, and what `PlanningSession.restore` takes. */
export interface PlanningSnapshot {
  schemaVersion: 1;
  /** The session's run id (its executions are this run). */
  runId: string;
  /** The task. */
  task: string;
  /** The plan approved for execution. */
  plan: Plan;
  /** The instructions posted while it executed. */
  instructions: string[];
  /** The execution's outcome (its aggregator's report included), once it finished; a snapshot without one restores a session awaiting approval. */
  outcome?: Omit<PlanOutcome, 'usage'>;
}

/** The checkpoint's state: a snapshot without the outcome (the checkpoint keeps that beside it). */
type SnapshotState = Omit<PlanningSnapshot, 'outcome'>;

/** A state saved before the session's id was its run id (`sessionId`) reads with `runId`. */
function currentState(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('sessionId' in value) || 'runId' in value) return value;
  const { sessionId, ...rest } = value as Record<string, unknown>;
  return { ...rest, runId: sessionId };
}

const snapshotStateSchema = z.preprocess(
  currentState,
  z.object({ schemaVersion: z.literal(1), runId: z.string().min(1), task: z.string(), plan: planSchema, instructions: z.array(z.string()) }),
) as z.ZodType<SnapshotState>;

/**
 * An outcome saved before the session saved its plan's outcome itself: the
 * execution's `{ planOutcome, report }` reads as the plan's outcome with its
 * report (the synthesis as its output), in today's words.
 */
function currentOutcome(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('planOutcome' in value)) return currentPlanOutcome(value);
  const { planOutcome, report, status } = value as { planOutcome: Record<string, unknown>; report: Record<string, unknown>; status: unknown };
  const stats = currentPlanStats(report?.stats);
  return currentPlanOutcome({ ...planOutcome, output: report?.summary, agent: 'synthesis', status, report: { ...report, stats }, stats });
}

const reportSchema = z.looseObject({ summary: z.string(), stats: z.looseObject({ completed: z.number() }), conflicts: z.array(z.looseObject({})) });
const snapshotOutcomeSchema = z.preprocess(
  currentOutcome,
  planOutcomeSchema.superRefine((outcome, ctx) => {
    const report = reportSchema.safeParse((outcome as { report?: unknown }).report);
    if (!report.success) for (const issue of report.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: ['report', ...issue.path] });
  }),
);

/** The checkpoint of a session's execution in its run. */
export const snapshotCheckpoint: CheckpointSpec<SnapshotState> = { kind: 'planning-session', version: 1, state: snapshotStateSchema, outcome: snapshotOutcomeSchema };

/** The checkpoint path of an execution's runnable: the first op under the run's root. */
const EXECUTION_PATH = '/planning-session:planning-session#0';

/** The store key of the session's checkpoint in run `runId`. */
export function snapshotKey(runId: string): string {
  return checkpointKey(runId, EXECUTION_PATH);
}

/** The snapshot's state (what the checkpoint saves as its state). */
export function snapshotState(snapshot: PlanningSnapshot): SnapshotState {
  const { outcome: _outcome, ...state } = snapshot;
  return state;
}

/** The zod schema of a {@link PlanningSnapshot} (a restore input is checked against it). */
export const planningSnapshotSchema = z.preprocess(
  currentState,
  z.object({ schemaVersion: z.literal(1), runId: z.string().min(1), task: z.string(), plan: planSchema, instructions: z.array(z.string()), outcome: snapshotOutcomeSchema.optional() }),
) as z.ZodType<PlanningSnapshot>;

/** Check a snapshot given to `restore`; a `ConfigurationError` names what is wrong. */
export function parsePlanningSnapshot(value: unknown): PlanningSnapshot {
  const parsed = planningSnapshotSchema.safeParse(value);
  if (!parsed.success) throw new ConfigurationError(`Invalid planning session snapshot: ${z.prettifyError(parsed.error)}`, { code: 'invalid_argument', details: { issues: parsed.error.issues } });
  return parsed.data;
}

/** The snapshot of run `runId` in `store`: its checkpoint, state and outcome as one. */
export async function readSnapshot(runId: string, store: Store, options: StoreCallOptions = {}): Promise<PlanningSnapshot> {
  const key = snapshotKey(runId);
  const raw = await store.get(key, options);
  if (raw === undefined) throw new ConfigurationError(`No execution of planning session "${runId}" in the store (no checkpoint "${key}")`, { details: { runId } });
  const saved = parseCheckpoint(raw, { key, runId }, snapshotCheckpoint);
  return saved.outcome === undefined ? saved.state : { ...saved.state, outcome: saved.outcome as Omit<PlanOutcome, 'usage'> };
}

/**
 * Finished attempts in the shared store: the one place where distributed
 * execution meets resume. A worker records each chunk attempt it finishes
 * (its output, files, usage and ops) under the run and the chunk's
 * checkpoint path; a coordinator that resumes the run takes a recorded
 * attempt instead of running the chunk again. That covers chunks that
 * finished while no coordinator was up to hear of them.
 *
 * Key: `runs/<runId>/attempts<chunk path>` (the chunk path is
 * `<plan path>/chunk-<n>`, as in `RunContext.checkpointPath`). The first
 * finished attempt of a chunk wins (compare-and-set when the store has it),
 * so a second execution of a job whose worker was thought lost cannot
 * replace the result the plan already took.
 * @module
 */
import { z } from 'zod';
import type { RunContext } from '../../core/context.js';
import { errorMessage } from '../../core/errors.js';
import type { Usage } from '../../core/usage.js';
import { supportsCompareAndSet, type Store } from '../../persistence/store.js';
import { adoptOpRecords, type OpRecord } from './mirror.js';

/** The document key of the recorded attempt of the chunk at `path` in run `runId`. */
export function attemptRecordKey(runId: string, path: string): string {
  return `runs/${runId}/attempts${path}`;
}

/** What a worker records about a chunk attempt that succeeded. */
export interface AttemptRecord {
  schemaVersion: 1;
  runId: string;
  /** The chunk's checkpoint path in the coordinator's run. */
  path: string;
  planId: string;
  sequenceIndex: number;
  attempt: number;
  jobId: string;
  worker: string;
  output: string;
  files?: string[];
  usage: Usage;
  /** The ops the attempt ran, with their usage. */
  ops: OpRecord[];
  /** Wall-clock time on the worker (ms since the epoch). */
  finishedAt: number;
}

const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), costUsd: z.number(), turns: z.number() });

const recordSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  path: z.string(),
  planId: z.string(),
  sequenceIndex: z.number().int(),
  attempt: z.number().int(),
  jobId: z.string(),
  worker: z.string(),
  output: z.string(),
  files: z.array(z.string()).optional(),
  usage: usageSchema,
  ops: z.array(z.unknown()),
  finishedAt: z.number(),
});

/** Record a finished attempt, unless one is recorded already. Resolves with whether this one was written. */
export async function recordAttempt(store: Store, record: AttemptRecord, options: { signal?: AbortSignal } = {}): Promise<boolean> {
  const key = attemptRecordKey(record.runId, record.path);
  const call = options.signal ? { signal: options.signal } : {};
  if (supportsCompareAndSet(store)) return (await store.setIf(key, record, { ifVersion: null, ...call })).ok;
  if ((await store.get(key, call)) !== undefined) return false;
  await store.set(key, record, call);
  return true;
}

/**
 * In a resumed run with a store, the attempt a worker recorded for the chunk
 * running in `ctx` (its checkpoint path is the chunk's); `undefined` when
 * none is recorded, the run is not resumed, or the record cannot be read
 * (then a `warning` event says why, and the chunk runs again).
 */
export async function findRecordedAttempt(ctx: RunContext, signal: AbortSignal): Promise<AttemptRecord | undefined> {
  const store = ctx.store;
  if (!store || !ctx.resuming) return undefined;
  const key = attemptRecordKey(ctx.runId, ctx.checkpointPath);
  let raw: unknown;
  try {
    raw = await store.get(key, { signal });
  } catch (error) {
    if (signal.aborted) throw error;
    ctx.emit('warning', { message: `The recorded attempt ${key} could not be read: ${errorMessage(error)}`, code: 'checkpoint_failed' });
    return undefined;
  }
  if (raw === undefined) return undefined;
  const parsed = recordSchema.safeParse(raw);
  if (!parsed.success) {
    ctx.emit('warning', { message: `The recorded attempt ${key} is not valid: ${parsed.error.issues.map((i) => i.message).join('; ')}`, code: 'checkpoint_failed' });
    return undefined;
  }
  return parsed.data as AttemptRecord;
}

/** Take a recorded attempt in `ctx`: its ops join the op tree (so its usage rolls up) and `checkpoint.restored` says so. */
export function restoreRecordedAttempt(ctx: RunContext, record: AttemptRecord): void {
  adoptOpRecords(ctx, record.ops);
  ctx.emit('checkpoint.restored', { kind: 'chunk-attempt', name: `chunk ${record.sequenceIndex}`, path: ctx.checkpointPath, completed: true });
}

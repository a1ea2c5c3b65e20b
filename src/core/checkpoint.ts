/**
 * Checkpoints: the state of a run saved after each step as a versioned
 * document, validated with zod when loaded.
 * @module
 */
import { z } from 'zod';
import { realClock, type Clock } from './clock.js';
import { ConfigurationError, StoreError, describeValue } from './errors.js';
import type { Store, StoreCallOptions } from './store.js';

/** The version of the checkpoint document (not of the state inside it). */
export const CHECKPOINT_SCHEMA_VERSION = 1;

/** What a checkpoint document holds. */
export interface Checkpoint<T = unknown> {
  /** Version of this document's shape: {@link CHECKPOINT_SCHEMA_VERSION}. */
  schemaVersion: typeof CHECKPOINT_SCHEMA_VERSION;
  /** What saved it (`reflect`, `plan`, `team`, ...), checked on load when asked. */
  kind: string;
  /** The run it belongs to. */
  runId: string;
  /** Clock time of the save. */
  savedAt: number;
  /** The runnable's own state (its schema carries its own version). */
  state: T;
  /** For a pattern's automatic checkpoint: its checkpoint path in the run. */
  path?: string;
  /** Set once the runnable finished: its outcome (without usage), returned as is when the run is resumed. */
  outcome?: unknown;
}

const envelope = z.object({
  schemaVersion: z.literal(CHECKPOINT_SCHEMA_VERSION),
  kind: z.string().min(1),
  runId: z.string().min(1),
  savedAt: z.number(),
  state: z.unknown(),
  path: z.string().optional(),
  outcome: z.unknown().optional(),
});

/** The document key of run `runId`'s checkpoint. */
export function checkpointKey(runId: string): string {
  return `runs/${runId}/checkpoint`;
}

/** Options of {@link saveCheckpoint}. */
export interface SaveCheckpointOptions extends StoreCallOptions {
  /** Stamps `savedAt`. Default: the real clock. */
  clock?: Clock;
  /** Save under this document key instead of {@link checkpointKey}. */
  key?: string;
  /** Recorded as the document's `path`. */
  path?: string;
  /** Recorded as the document's `outcome` (the runnable has finished). */
  outcome?: unknown;
}

/**
 * Save `state` as run `runId`'s checkpoint (replacing the previous one
 * atomically) and return the document written.
 *
 * @example
 * ```ts
 * await saveCheckpoint(store, ctx.runId, 'plan', { schemaVersion: 1, done: ['a', 'b'] }, { clock: ctx.clock });
 * ```
 */
export async function saveCheckpoint<T>(store: Store, runId: string, kind: string, state: T, options: SaveCheckpointOptions = {}): Promise<Checkpoint<T>> {
  checkId(runId, 'runId');
  checkId(kind, 'kind');
  const doc: Checkpoint<T> = { schemaVersion: CHECKPOINT_SCHEMA_VERSION, kind, runId, savedAt: (options.clock ?? realClock).now(), state };
  if (options.path !== undefined) doc.path = options.path;
  if (options.outcome !== undefined) doc.outcome = options.outcome;
  await store.set(options.key ?? checkpointKey(runId), doc, options.signal ? { signal: options.signal } : {});
  return doc;
}

/** Options of {@link loadCheckpoint}. */
export interface LoadCheckpointOptions extends StoreCallOptions {
  /** Fail unless the checkpoint was saved with this kind. */
  kind?: string;
  /** Load this document key instead of {@link checkpointKey}. */
  key?: string;
  /** Validate the document's `outcome`, when it has one, against this schema. */
  outcome?: z.ZodType;
}

/**
 * Load run `runId`'s checkpoint and validate it: the document's shape, then
 * `state` against `schema`. `undefined` when there is none; a
 * {@link StoreError} naming every problem when it does not match.
 *
 * @example
 * ```ts
 * const saved = await loadCheckpoint(store, runId, planState, { kind: 'plan' });
 * if (saved) resumeFrom(saved.state);
 * ```
 */
export async function loadCheckpoint<S extends z.ZodType>(
  store: Store,
  runId: string,
  schema: S,
  options: LoadCheckpointOptions = {},
): Promise<Checkpoint<z.output<S>> | undefined> {
  checkId(runId, 'runId');
  const key = options.key ?? checkpointKey(runId);
  const raw = await store.get(key, options.signal ? { signal: options.signal } : {});
  if (raw === undefined) return undefined;
  const doc = envelope.safeParse(raw);
  if (!doc.success) {
    throw new StoreError(`Checkpoint "${key}" is not a checkpoint document: ${z.prettifyError(doc.error)}`, {
      details: { key, issues: doc.error.issues },
    });
  }
  if (doc.data.runId !== runId) {
    throw new StoreError(`Checkpoint "${key}" belongs to run "${doc.data.runId}", not "${runId}"`, { details: { key } });
  }
  if (options.kind !== undefined && doc.data.kind !== options.kind) {
    throw new StoreError(`Checkpoint "${key}" was saved by "${doc.data.kind}", expected "${options.kind}"`, {
      details: { key, kind: doc.data.kind, expected: options.kind },
    });
  }
  const state = schema.safeParse(doc.data.state);
  if (!state.success) {
    throw new StoreError(`Checkpoint "${key}" (${doc.data.kind}) holds a state that does not match its schema: ${z.prettifyError(state.error)}`, {
      details: { key, kind: doc.data.kind, issues: state.error.issues },
    });
  }
  const loaded: Checkpoint<z.output<S>> = { ...doc.data, schemaVersion: CHECKPOINT_SCHEMA_VERSION, state: state.data as z.output<S> };
  if (doc.data.outcome !== undefined && options.outcome !== undefined) {
    const outcome = options.outcome.safeParse(doc.data.outcome);
    if (!outcome.success) {
      throw new StoreError(`Checkpoint "${key}" (${doc.data.kind}) holds an outcome that does not match its schema: ${z.prettifyError(outcome.error)}`, {
        details: { key, kind: doc.data.kind, issues: outcome.error.issues },
      });
    }
    loaded.outcome = outcome.data;
  }
  return loaded;
}

function checkId(value: unknown, name: string): void {
  if (typeof value !== 'string' || value === '') {
    throw new ConfigurationError(`Expected \`${name}\` to be a non-empty string, got ${describeValue(value)}`);
  }
}

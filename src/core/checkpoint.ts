/**
 * # Checkpoints
 *
 * The one way troupe saves work so that a run can be resumed. A run with a
 * store (`run(..., { store })`) gives every checkpointing pattern a
 * {@link Checkpoint} through `ctx.checkpoint(spec)`, keyed by the
 * pattern's place in the run (its checkpoint path), with the pattern's own
 * state schema:
 *
 * - `save(state)` after each step replaces the pattern's document
 *   `runs/<runId>/checkpoints<path>` (atomically, as every store `set`);
 * - `append(entry)` adds one entry to the checkpoint's stream
 *   `runs/<runId>/checkpoint-entries<path>`, for patterns whose steps are
 *   many and independent (a plan's chunks): a step costs one append, not a
 *   copy of the whole state, and another process may append too (a worker
 *   that finished a chunk);
 * - `finish(state, outcome)` saves the outcome of a finished pattern, which
 *   a resumed run returns as it is;
 * - `restore()`, in a resumed run, reads the document and the entries
 *   appended since it was saved, validated against the spec's schemas.
 *
 * A save that fails is a `warning` event (`checkpoint_failed`), never a
 * failed run; saves are not cancelled by the run's signal, so a finished
 * step is never lost. A document written in another schema version fails
 * to load with a `StoreError` of code `checkpoint_version`.
 * @module
 */
import { z } from 'zod';
import type { Clock } from './clock.js';
import { StoreError, errorMessage } from './errors.js';
import { outcomeReasons, outcomeStatuses, type Outcome, type OutcomeStatus } from './outcome.js';
import type { Store } from './store.js';

/** The version of the checkpoint document (not of the state inside it, which carries its own). */
export const CHECKPOINT_SCHEMA_VERSION = 1;

/** A checkpoint document, as stored under `runs/<runId>/checkpoints<path>`. */
export interface CheckpointDocument<S = unknown> {
  /** Version of this document's shape: {@link CHECKPOINT_SCHEMA_VERSION}. */
  schemaVersion: typeof CHECKPOINT_SCHEMA_VERSION;
  /** The pattern that saved it (`reflect`, `plan`, `team`, ...). */
  kind: string;
  /** The run it belongs to. */
  runId: string;
  /** Clock time of the save. */
  savedAt: number;
  /** The pattern's own state (its schema carries its own `schemaVersion`). */
  state: S;
  /** The pattern's checkpoint path in the run. */
  path: string;
  /** Set once the pattern finished: its outcome without usage, returned as is when the run is resumed. */
  outcome?: unknown;
  /** Entries of the checkpoint's stream before this index are already in `state`. Default: 0. */
  entriesFrom?: number;
}

/** What a checkpointing pattern declares: its kind, and the schemas of what it saves. */
export interface CheckpointSpec<S, E = never> {
  /** The pattern's kind (`reflect`, `plan`, ...): checked when the document is loaded. */
  kind: string;
  /** The `schemaVersion` of the pattern's state; a stored state of another version fails with `checkpoint_version`. */
  version: number;
  /** The schema of the state. */
  state: z.ZodType<S>;
  /** The schema of a saved outcome. Default: {@link savedOutcomeSchema}. */
  outcome?: z.ZodType;
  /** The schema of the stream's entries, for patterns that {@link Checkpoint.append}. */
  entry?: z.ZodType<E>;
}

/** What a resumed pattern finds. */
export interface RestoredCheckpoint<S, O extends Outcome, E> {
  /** The state last saved (missing when only entries were written). */
  state?: S;
  /** The outcome, when the pattern had finished: return it as it is. */
  outcome?: Omit<O, 'usage'>;
  /** Entries appended to the stream after the state was saved, in order. */
  entries: E[];
}

/** What a {@link Checkpoint} needs of the run; `RunContext.checkpoint` provides it. */
export interface CheckpointHost {
  readonly runId: string;
  /** The checkpoint path of the pattern's op. */
  readonly path: string;
  /** The pattern's op name, for events and warnings. */
  readonly name: string;
  readonly store: Store | undefined;
  /** True when the run continues an earlier run with the same id. */
  readonly resuming: boolean;
  readonly clock: Clock;
  /** Cancels reads. */
  readonly signal: AbortSignal;
  /** Emit `checkpoint.restored`, `checkpoint.saved`, `checkpoint.appended` or a `warning`. */
  restored(kind: string, completed: boolean): void;
  saved(doc: CheckpointDocument): void;
  appended(kind: string, entry: unknown): void;
  warn(message: string): void;
}

/**
 * The schema every saved outcome must match; pattern fields pass through.
 * @internal
 */
export const savedOutcomeSchema = z.looseObject({
  output: z.string(),
  agent: z.string(),
  status: z.enum(outcomeStatuses),
  reason: z.enum(outcomeReasons).optional(),
});

/** Statuses after which a pattern is finished: a resumed run returns its saved outcome instead of running it again. */
export function isFinished(status: OutcomeStatus): boolean {
  return status !== 'cancelled' && status !== 'paused' && status !== 'failed';
}

/** The document key of the checkpoint at `path` of run `runId`. */
export function checkpointKey(runId: string, path: string): string {
  return `runs/${runId}/checkpoints${path}`;
}

/** The stream of entries of the checkpoint at `path` of run `runId`. */
export function checkpointStream(runId: string, path: string): string {
  return `runs/${runId}/checkpoint-entries${path}`;
}

const envelope = z.object({
  schemaVersion: z.literal(CHECKPOINT_SCHEMA_VERSION),
  kind: z.string().min(1),
  runId: z.string().min(1),
  savedAt: z.number(),
  state: z.unknown(),
  path: z.string().optional(),
  outcome: z.unknown().optional(),
  entriesFrom: z.number().int().nonnegative().optional(),
});

/** The document under `key`, checked: its version, shape, run, kind, state and outcome. */
export function parseCheckpoint<S>(raw: unknown, where: { key: string; runId: string }, spec: CheckpointSpec<S, unknown>): CheckpointDocument<S> {
  const { key, runId } = where;
  const version = typeof raw === 'object' && raw !== null ? (raw as { schemaVersion?: unknown }).schemaVersion : undefined;
  if (typeof version === 'number' && version !== CHECKPOINT_SCHEMA_VERSION) {
    throw new StoreError(`Checkpoint "${key}" is a document of schema version ${version}; this version of troupe reads version ${CHECKPOINT_SCHEMA_VERSION}`, {
      code: 'checkpoint_version',
      details: { key, schemaVersion: version, expected: CHECKPOINT_SCHEMA_VERSION },
    });
  }
  const doc = envelope.safeParse(raw);
  if (!doc.success) {
    throw new StoreError(`Checkpoint "${key}" is not a checkpoint document: ${z.prettifyError(doc.error)}`, { details: { key, issues: doc.error.issues } });
  }
  const { data } = doc;
  if (data.runId !== runId) throw new StoreError(`Checkpoint "${key}" belongs to run "${data.runId}", not "${runId}"`, { details: { key } });
  if (data.kind !== spec.kind) {
    throw new StoreError(`Checkpoint "${key}" was saved by "${data.kind}", expected "${spec.kind}"`, { details: { key, kind: data.kind, expected: spec.kind } });
  }
  const stateVersion = typeof data.state === 'object' && data.state !== null ? (data.state as { schemaVersion?: unknown }).schemaVersion : undefined;
  if (typeof stateVersion === 'number' && stateVersion !== spec.version) {
    throw new StoreError(`Checkpoint "${key}" holds a ${spec.kind} state of schema version ${stateVersion}; this version of troupe reads version ${spec.version}`, {
      code: 'checkpoint_version',
      details: { key, kind: spec.kind, schemaVersion: stateVersion, expected: spec.version },
    });
  }
  const state = checked(spec.state, data.state, `Checkpoint "${key}" (${spec.kind}) holds a state that does not match its schema`, key);
  const parsed: CheckpointDocument<S> = { ...data, schemaVersion: CHECKPOINT_SCHEMA_VERSION, path: data.path ?? '', state };
  if (data.outcome !== undefined) parsed.outcome = checked(spec.outcome ?? savedOutcomeSchema, data.outcome, `Checkpoint "${key}" (${spec.kind}) holds an outcome that does not match its schema`, key);
  return parsed;
}

function checked<T>(schema: z.ZodType<T>, value: unknown, message: string, key: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new StoreError(`${message}: ${z.prettifyError(result.error)}`, { details: { key, issues: result.error.issues } });
  return result.data;
}

/**
 * The checkpoint of one pattern in one run: get it with `ctx.checkpoint(spec)`
 * in the pattern's op context. Without a store every method does nothing and
 * {@link Checkpoint.restore} finds nothing.
 *
 * @example
 * ```ts
 * const checkpoint = ctx.checkpoint({ kind: 'counter', version: 1, state: counterSchema });
 * const saved = await checkpoint.restore();          // in a resumed run: the last state saved
 * let state = saved?.state ?? { schemaVersion: 1, count: 0 };
 * while (state.count < 3) {
 *   state = { ...state, count: state.count + 1 };
 *   await checkpoint.save(state);                    // after every step
 * }
 * const outcome = { output: String(state.count), agent: 'counter', status: 'completed' as const };
 * await checkpoint.finish(state, outcome);           // a resumed run returns this outcome
 * ```
 */
export class Checkpoint<S, O extends Outcome = Outcome, E = never> {
  /** The document key (`runs/<runId>/checkpoints<path>`). */
  readonly key: string;
  /** The stream of entries (`runs/<runId>/checkpoint-entries<path>`). */
  readonly stream: string;
  readonly #host: CheckpointHost;
  readonly #spec: CheckpointSpec<S, E>;
  #entriesFrom = 0;
  #appending = 0;
  #appended: Array<() => void> = [];
  #appendFailed = false;
  /** Settles once every entry appended so far is written: true when all were. */
  #written: Promise<boolean> = Promise.resolve(true);

  constructor(host: CheckpointHost, spec: CheckpointSpec<S, E>) {
    this.#host = host;
    this.#spec = spec;
    this.key = checkpointKey(host.runId, host.path);
    this.stream = checkpointStream(host.runId, host.path);
  }

  /** Whether anything is saved: the run has a store. */
  get enabled(): boolean {
    return this.#host.store !== undefined;
  }

  /**
   * In a resumed run, what the pattern saved: its state, its outcome when it
   * finished, and the entries appended after the state; emits
   * `checkpoint.restored`. `undefined` when the run is not resumed or
   * nothing was saved. A `StoreError` when a document or an entry does not
   * match its schema (code `checkpoint_version` for another schema version).
   */
  async restore(): Promise<RestoredCheckpoint<S, O, E> | undefined> {
    const host = this.#host;
    const store = host.store;
    if (!store || !host.resuming) return undefined;
    const raw = await store.get(this.key, { signal: host.signal });
    const doc = raw === undefined ? undefined : parseCheckpoint(raw, { key: this.key, runId: host.runId }, this.#spec);
    const restored: RestoredCheckpoint<S, O, E> = { entries: [] };
    if (doc) restored.state = doc.state;
    if (doc?.outcome !== undefined) {
      restored.outcome = doc.outcome as Omit<O, 'usage'>;
    } else if (this.#spec.entry) {
      const from = doc?.entriesFrom ?? 0;
      const read = await store.read(this.stream, { from, signal: host.signal });
      const entry = this.#spec.entry;
      restored.entries = read.records.map((record, i) => checked(entry, record, `Entry ${from + i} of checkpoint stream "${this.stream}" (${this.#spec.kind}) does not match its schema`, this.stream));
      this.#entriesFrom = read.next;
    }
    if (!doc && restored.entries.length === 0) return undefined;
    host.restored(this.#spec.kind, restored.outcome !== undefined);
    return restored;
  }

  /**
   * Save `state` as the pattern's checkpoint (after a restore, entries read
   * then count as part of it). Resolves once it is written or the store
   * failed (a `warning`).
   */
  async save(state: S): Promise<void> {
    await this.#write(state, undefined);
  }

  /**
   * Append one entry to the checkpoint's stream, without waiting: entries
   * are written in call order, and {@link Checkpoint.flush} waits for them.
   * The first failure is one `warning`, and later entries are dropped.
   */
  append(entry: E): void {
    const store = this.#host.store;
    if (!store || this.#appendFailed) return;
    this.#host.appended(this.#spec.kind, entry);
    this.#appending++;
    const write = store.append(this.stream, entry).then(
      () => {
        this.#appendDone();
        return true;
      },
      (error: unknown) => {
        if (!this.#appendFailed) {
          this.#appendFailed = true;
          this.#host.warn(`The checkpoint of ${this.#spec.kind} "${this.#host.name}" could not be appended to: ${errorMessage(error)}`);
        }
        this.#appendDone();
        return false;
      },
    );
    const before = this.#written;
    this.#written = Promise.all([before, write]).then(([a, b]) => a && b);
  }

  /**
   * Resolves once every entry appended so far is written to the store (for
   * a file store: flushed to disk), so that it survives the process; rejects
   * with a `StoreError` when one of them could not be written (or was
   * dropped after an earlier failure).
   */
  async written(): Promise<void> {
    if (!this.#host.store) return;
    if (!(await this.#written)) throw new StoreError(`The checkpoint of ${this.#spec.kind} "${this.#host.name}" could not be appended to: an entry was not written`);
  }

  /**
   * Another process appended `entry` to the checkpoint's stream (a worker
   * that recorded a chunk's result): log it (`checkpoint.appended`) without
   * writing it again, so that the run log holds every step of the run.
   */
  recorded(entry: E): void {
    if (this.#host.store) this.#host.appended(this.#spec.kind, entry);
  }

  /** True when no appended entry is still being written. */
  get idle(): boolean {
    return this.#appending === 0;
  }

  /** Resolves when every appended entry is written (or failed). */
  flush(): Promise<void> {
    if (this.#appending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#appended.push(resolve));
  }

  /**
   * The pattern finished: save its state with its outcome (without usage),
   * so that a resumed run returns the outcome. Outcomes that mean "not
   * done" (`cancelled`, `paused`, `error-budget`, `failed`) are not saved,
   * so a resumed run continues the pattern.
   */
  async finish(state: S, outcome: Omit<O, 'usage'> | O): Promise<void> {
    if (!isFinished(outcome.status)) return;
    await this.flush();
    await this.#write(state, withoutUsage(outcome));
  }

  #appendDone(): void {
    if (--this.#appending > 0) return;
    for (const resolve of this.#appended.splice(0)) resolve();
  }

  async #write(state: S, outcome: unknown): Promise<void> {
    const host = this.#host;
    const store = host.store;
    if (!store) return;
    const doc: CheckpointDocument<S> = { schemaVersion: CHECKPOINT_SCHEMA_VERSION, kind: this.#spec.kind, runId: host.runId, savedAt: host.clock.now(), state, path: host.path };
    if (outcome !== undefined) doc.outcome = outcome;
    if (this.#entriesFrom > 0) doc.entriesFrom = this.#entriesFrom;
    try {
      await store.set(this.key, doc);
    } catch (error) {
      host.warn(`The checkpoint of ${this.#spec.kind} "${host.name}" could not be saved: ${errorMessage(error)}`);
      return;
    }
    host.saved(doc as CheckpointDocument);
  }
}

function withoutUsage(outcome: object): unknown {
  if (!('usage' in outcome)) return outcome;
  const { usage: _usage, ...rest } = outcome as Record<string, unknown>;
  return rest;
}

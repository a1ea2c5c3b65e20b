/**
 * `forkRun`: a new run made from a checkpoint of a logged run, with its
 * state edited. The fork gets its own run id; its log starts with a
 * `run.forked` record (the parent run and checkpoint, what was changed)
 * and the checkpoints it was seeded with; the parent is never written to.
 * `resume(runnable, fork.forkId, { store })` continues it.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { CHECKPOINT_SCHEMA_VERSION, checkpointKey, checkpointStream, type CheckpointDocument } from '../core/checkpoint.js';
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, StoreError, describeValue } from '../core/errors.js';
import type { RunParent, TroupeEvent } from '../core/events.js';
import { abortSignal, check, clock as clockCheck, defineOptions, func, listOf, nonEmptyString, object, required, store as storeCheck, string } from '../core/options.js';
import { readRunEvents } from '../core/run-log-reader.js';
import { runEventsStream, runMetaKey, type RunMeta } from '../core/run-log-writer.js';
import type { Store, StoreCallOptions } from '../core/store.js';
import { coordinationStateSchema } from '../coordination/coordinate.js';
import { orchestrateStateSchema } from '../patterns/orchestrate-state.js';
import { reflectStateSchema } from '../patterns/reflect.js';
import { teamStateSchema } from '../patterns/team-state.js';
import { readRun } from '../persistence/run-log.js';
import { planEntrySchema, planExecutionStateSchema } from '../plan/engine/state.js';
import { checkpointsAt, listCheckpoints, type CheckpointAt, type RunCheckpoint, type RunEvents } from './checkpoints.js';
import { setPointer } from './pointer.js';

/** What an edit of a fork works on: the chosen checkpoint's state (and outcome, when it had finished), or its entry. */
export interface ForkTarget {
  /** The state saved (a `saved` checkpoint). */
  state?: unknown;
  /** The outcome saved (a finished pattern: a resumed run returns it as it is). */
  outcome?: unknown;
  /** The entry appended (an `appended` checkpoint: a plan's chunk). */
  entry?: unknown;
}

/** One edit: set the value at a JSON pointer into the {@link ForkTarget} (`/entry/output`, `/state/feedback`, `/state/plan/chunks/2/prompt`). */
export interface ForkEdit {
  pointer: string;
  value: unknown;
}

/** The schemas a fork's edited state or entry is checked against, by checkpoint kind. */
export type CheckpointSchemas = Record<string, { state?: z.ZodType; entry?: z.ZodType }>;

/** The schemas of troupe's own patterns: an edit that breaks them is refused before anything is written. */
export const builtInCheckpointSchemas: CheckpointSchemas = {
  reflect: { state: reflectStateSchema },
  orchestrate: { state: orchestrateStateSchema },
  team: { state: teamStateSchema },
  plan: { state: planExecutionStateSchema, entry: planEntrySchema },
  coordinate: { state: coordinationStateSchema },
};

/** Options of {@link forkRun}. */
export interface ForkOptions {
  /** The store the run was logged in; the fork is written there too. */
  store: Store;
  /** The checkpoint to fork from: its `id` in {@link listCheckpoints}. */
  at: number;
  /** The fork's run id. Default: a random UUID. A run id already logged in the store is refused. */
  forkId?: string;
  /** Edits by JSON pointer, applied in order. */
  set?: readonly ForkEdit[];
  /** An edit as a function: gets a copy of the target (change it, or return a new one). Applied after `set`. */
  edit?: (target: ForkTarget, checkpoint: RunCheckpoint) => ForkTarget | void;
  /** Lines that say what was changed, for the fork's `run.forked` record. Default: one per edit. */
  changes?: readonly string[];
  /** Schemas of your own checkpoint kinds, checked like troupe's. */
  schemas?: CheckpointSchemas;
  /** The clock of `savedAt` and the record times. Default: the real clock. */
  clock?: Clock;
  /** Cancels the reads and writes. */
  signal?: AbortSignal;
}

const forkOptions = defineOptions<ForkOptions>('forkRun', {
  store: required(storeCheck),
  at: required(check('a checkpoint id (a number; see listCheckpoints)', (v) => typeof v === 'number')),
  forkId: nonEmptyString,
  set: listOf(object),
  edit: func,
  changes: listOf(string),
  schemas: object,
  clock: clockCheck,
  signal: abortSignal,
});

/** What {@link forkRun} made. */
export interface ForkResult {
  /** The fork's run id: continue it with `resume(runnable, forkId, { store })`. */
  forkId: string;
  /** The run and checkpoint it was made from. */
  parent: Required<RunParent>;
  /** The checkpoint it was made from, as it was (before the edits). */
  checkpoint: RunCheckpoint;
  /** The runnable and input it continues with. */
  runnable: string;
  input: string;
  /** The checkpoint documents it was seeded with (their paths). */
  paths: string[];
  /** What was changed. */
  changes: string[];
}

/**
 * Fork run `runId` of `options.store` at checkpoint `options.at`: a new run (`forkId`) seeded
 * with every checkpoint the run had saved up to that one (the state each
 * pattern would have found had the run been resumed then), the chosen one
 * edited (`set`, `edit`). Nothing is run: continue the fork with
 * `resume(runnable, fork.forkId, { store, adapter })`. The parent is never
 * changed, and a fork can be resumed, replayed and forked again.
 *
 * @example
 * ```ts
 * const log = await readRun('plan-1', { store });
 * const done = listCheckpoints(log).find((c) => c.summary === 'chunk 2 completed')!;
 * const fork = await forkRun('plan-1', { store, at: done.id, set: [{ pointer: '/entry/output', value: 'Use PostgreSQL.' }] });
 * const result = await resume(flow, fork.forkId, { store, adapter });
 * ```
 */
export async function forkRun(runId: string, options: ForkOptions): Promise<ForkResult> {
  forkOptions.check(options ?? ({} as ForkOptions));
  if (typeof runId !== 'string' || runId === '') throw new ConfigurationError(`Expected \`runId\` to be a non-empty string, got ${describeValue(runId)}`);
  const { store } = options;
  const call = options.signal ? { signal: options.signal } : {};
  const log = await readRun(runId, { store, ...call });
  if (log.events.length === 0) throw new ConfigurationError(`No run "${runId}" is logged in the store`, { code: 'unknown_run', details: { runId } });
  const plan = planFork({ ...log, runId }, options);
  const forkId = options.forkId ?? randomUUID();
  if (forkId === runId || (await readRunEvents(forkId, { store, ...call })).next > 0) {
    throw new ConfigurationError(`Run "${forkId}" is already logged in the store: a fork needs a new run id`, { code: 'invalid_argument', details: { forkId } });
  }
  await writeSeed(store, forkId, plan, options.clock ?? realClock, call);
  return { forkId, parent: plan.parent, checkpoint: plan.checkpoint, runnable: plan.runnable, input: plan.input, paths: plan.seeds.map((s) => s.path), changes: plan.changes };
}

/** Everything a fork is seeded with, decided before anything is written. */
export interface ForkPlan {
  runnable: string;
  input: string;
  parent: Required<RunParent>;
  checkpoint: RunCheckpoint;
  /** The checkpoints to seed, in the parent's log order, edits applied. */
  seeds: CheckpointAt[];
  /** Names of the seeded checkpoints' ops, by path. */
  names: Map<string, string>;
  changes: string[];
  /** The thread the run continued and the history its entry agent was given (its `thread.loaded`): the fork is given the same. */
  thread?: TroupeEvent<'thread.loaded'>;
}

/** Decide a fork of `log` at `options.at`: the checkpoints as of then, edited and checked. Throws before anything is written. */
export function planFork(log: RunEvents & { runId: string }, options: Pick<ForkOptions, 'at' | 'set' | 'edit' | 'changes' | 'schemas'>): ForkPlan {
  const start = startRecord(log);
  const checkpoints = listCheckpoints(log);
  const at = options?.at;
  const checkpoint = checkpoints.find((c) => c.id === at);
  if (!checkpoint) {
    throw new ConfigurationError(`Run "${log.runId}" has no checkpoint ${typeof at === 'number' ? at : describeValue(at)} (it has ${checkpoints.length}; see listCheckpoints or \`troupe runs ${log.runId}\`)`, {
      code: 'unknown_checkpoint',
      details: { runId: log.runId, at, checkpoints: checkpoints.length },
    });
  }
  const byPath = checkpointsAt(checkpoints, checkpoint.id);
  for (const seed of byPath.values()) {
    if (seed.ids.length > 0 && seed.state === undefined && seed.outcome === undefined && checkpoints[seed.ids[0]! - 1]!.type === 'saved') {
      throw new StoreError(`Run "${log.runId}" was logged without its checkpoints' states (by an older troupe): it cannot be forked`, { details: { runId: log.runId, path: seed.path } });
    }
  }
  const target = byPath.get(checkpoint.path)!;
  const edited = applyEdits(checkpoint, options);
  if (checkpoint.type === 'saved') {
    if (edited.state !== undefined) target.state = edited.state;
    if (edited.outcome !== undefined) target.outcome = edited.outcome;
    else delete target.outcome;
  } else {
    target.entries[target.entries.length - 1] = edited.entry;
  }
  checkSchemas(target, checkpoint, { ...builtInCheckpointSchemas, ...options.schemas });
  const edits = [...(options.set ?? [])];
  const changes = options.changes ? [...options.changes] : [...edits.map((e) => `${e.pointer} = ${short(e.value)}`), ...(options.edit ? ['edited by a function'] : [])];
  const names = new Map(checkpoints.map((c) => [c.path, c.name]));
  const seeds = [...byPath.values()].sort((a, b) => (a.ids[0] ?? 0) - (b.ids[0] ?? 0));
  const thread = log.events.find((e) => (e as { type?: unknown } | null)?.type === 'thread.loaded') as TroupeEvent<'thread.loaded'> | undefined;
  return { runnable: start.runnable, input: start.input, parent: { runId: log.runId, checkpoint: checkpoint.id }, checkpoint, seeds, names, changes, ...(thread ? { thread } : {}) };
}

/** The runnable and input a run started with (its first `run.started`, or the `run.forked` record of a fork). */
export function startRecord(log: RunEvents & { runId?: string }): { runnable: string; input: string; forked?: TroupeEvent<'run.forked'> } {
  for (const record of log.events) {
    const e = record as Partial<TroupeEvent<'run.started' | 'run.forked'>> | null;
    if (!e || typeof e !== 'object' || (e.type !== 'run.started' && e.type !== 'run.forked')) continue;
    if (typeof e.runnable !== 'string' || typeof e.input !== 'string') continue;
    return { runnable: e.runnable, input: e.input, ...(e.type === 'run.forked' ? { forked: e as TroupeEvent<'run.forked'> } : {}) };
  }
  throw new ConfigurationError(`Run${log.runId ? ` "${log.runId}"` : ''} has no run.started record: it is not a run log`, { code: 'unknown_run', details: { runId: log.runId } });
}

/** Write a fork's log header, meta and checkpoints under `forkId`. */
export async function writeSeed(
  store: Store,
  forkId: string,
  plan: Pick<ForkPlan, 'runnable' | 'input' | 'seeds' | 'names' | 'changes' | 'thread'> & { parent: RunParent },
  clock: Clock,
  call: StoreCallOptions,
  mode: 'fork' | 'what-if' = 'fork',
): Promise<void> {
  const time = clock.now();
  const stream = runEventsStream(forkId);
  const forked: TroupeEvent<'run.forked'> = { type: 'run.forked', runId: forkId, time, runnable: plan.runnable, input: plan.input, parent: plan.parent, mode, changes: plan.changes };
  await store.append(stream, forked, call);
  // A fork of a run on a thread is given the history the run saw; it never writes to the thread.
  if (plan.thread) await store.append(stream, { ...plan.thread, runId: forkId, time }, call);
  for (const seed of plan.seeds) {
    const name = plan.names.get(seed.path) ?? seed.kind;
    if (seed.state !== undefined || seed.outcome !== undefined) {
      const doc: CheckpointDocument = { schemaVersion: CHECKPOINT_SCHEMA_VERSION, kind: seed.kind, runId: forkId, savedAt: time, state: seed.state, path: seed.path };
      if (seed.outcome !== undefined) doc.outcome = seed.outcome;
      await store.set(checkpointKey(forkId, seed.path), doc, call);
      const saved: TroupeEvent<'checkpoint.saved'> = { type: 'checkpoint.saved', runId: forkId, time, kind: seed.kind, name, path: seed.path, finished: seed.outcome !== undefined, state: seed.state };
      if (seed.outcome !== undefined) saved.outcome = seed.outcome;
      await store.append(stream, saved, call);
    }
    for (const entry of seed.entries) {
      await store.append(checkpointStream(forkId, seed.path), entry, call);
      const appended: TroupeEvent<'checkpoint.appended'> = { type: 'checkpoint.appended', runId: forkId, time, kind: seed.kind, name, path: seed.path, entry };
      await store.append(stream, appended, call);
    }
  }
  const meta: RunMeta = { schemaVersion: 1, runId: forkId, runnable: plan.runnable, startedAt: time, parent: plan.parent };
  await store.set(runMetaKey(forkId), meta, call);
}

function applyEdits(checkpoint: RunCheckpoint, options: Pick<ForkOptions, 'set' | 'edit'>): ForkTarget {
  let target: ForkTarget = structuredClone(
    checkpoint.type === 'saved' ? { state: checkpoint.state, ...(checkpoint.finished ? { outcome: checkpoint.outcome } : {}) } : { entry: checkpoint.entry },
  );
  for (const edit of options.set ?? []) {
    const key = edit?.pointer?.split('/')[1];
    const allowed = checkpoint.type === 'saved' ? ['state', 'outcome'] : ['entry'];
    if (key === undefined || !allowed.includes(key)) {
      throw new ConfigurationError(`An edit of a ${checkpoint.type} checkpoint starts with ${allowed.map((a) => `/${a}`).join(' or ')}, got ${describeValue(edit?.pointer)}`, {
        code: 'invalid_edit',
        details: { pointer: edit?.pointer },
      });
    }
    if (key === 'outcome' && !checkpoint.finished) throw new ConfigurationError(`Checkpoint ${checkpoint.id} has no outcome to edit (its pattern had not finished)`, { code: 'invalid_edit' });
    target = setPointer(target, edit.pointer, structuredClone(edit.value)) as ForkTarget;
  }
  if (options.edit !== undefined) {
    target = options.edit(target, checkpoint) ?? target;
  }
  return target;
}

function checkSchemas(target: CheckpointAt, checkpoint: RunCheckpoint, schemas: CheckpointSchemas): void {
  const schema = schemas[checkpoint.kind];
  const check = (what: 'state' | 'entry', zod: z.ZodType | undefined, value: unknown) => {
    if (!zod || value === undefined) return;
    const result = zod.safeParse(value);
    if (result.success) return;
    const issues = result.error.issues.map((i) => `${i.path.length > 0 ? `/${i.path.join('/')}` : '(root)'}: ${i.message}`);
    throw new ConfigurationError(`The edited ${what} of checkpoint ${checkpoint.id} (${checkpoint.kind}) does not match its schema: ${issues.join('; ')}`, {
      code: 'invalid_edit',
      details: { checkpoint: checkpoint.id, kind: checkpoint.kind, issues },
    });
  };
  if (checkpoint.type === 'saved') check('state', schema?.state, target.state);
  else check('entry', schema?.entry, target.entries[target.entries.length - 1]);
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

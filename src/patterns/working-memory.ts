/**
 * Working memory: a small structured memory an agent keeps per thread or
 * per resource (a user, a project), of a zod schema the application gives.
 * It is given to the agent at the start of each conversation, in its
 * system prompt, and the agent changes it through a tool
 * (`update_<name>`: a JSON patch, or a whole new value, checked against
 * the schema). Every write is a compare-and-set on the store, retried on a
 * version conflict and applied to the latest value, so concurrent runs
 * lose no update; every change is a `memory.updated` event (and so a
 * record of the run log).
 * @module
 */
import { z } from 'zod';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, StoreError, TroupeError, describeValue, errorMessage } from '../core/errors.js';
import { realClock, type Clock } from '../core/clock.js';
import type { TroupeEvent } from '../core/events.js';
import { abortSignal, anything, check, clock as clockCheck, defineOptions, oneOf, required, store as storeCheck, string } from '../core/options.js';
import { throwIfAborted } from '../core/abort.js';
import type { Store, StoreCallOptions } from '../core/store.js';
import { checkThreadId, threadStore } from '../core/thread.js';
import { defineTool, toJsonSchema, type ToolDefinition } from '../core/tools.js';
import { applyJsonPatch, jsonPatchSchema, type JsonPatchOperation } from './json-patch.js';
import './events.js';

export { applyJsonPatch, type JsonPatchOperation } from './json-patch.js';

/** Where a working memory is kept: one per thread (`run(..., { thread })`) or one per resource (`run(..., { resource })`). */
export type WorkingMemoryScope = 'thread' | 'resource';

/** Options of {@link workingMemory}. */
export interface WorkingMemoryOptions<T> {
  /** The memory's shape: every value written is checked against it (and its defaults applied). */
  schema: z.ZodType<T>;
  /** Kept per thread (the run's `thread`) or per resource (the run's `resource`). Default: `thread`. */
  scope?: WorkingMemoryScope;
  /**
   * Its name: `[a-z0-9_]{1,40}`. The agent's tool is `update_<name>`, the
   * document `<threads|resources>/<id>/memory/<name>`. Default: `memory`.
   */
  name?: string;
  /** What the agent is told the memory is for, in its system prompt. Default: a line naming the scope. */
  description?: string;
  /** The value before the first write. Default: the schema's parse of `{}` (its defaults), else nothing. */
  initial?: T;
}

/** A working memory's description: give it to `agent({ memory })`. */
export interface WorkingMemory<T = unknown> {
  readonly name: string;
  readonly scope: WorkingMemoryScope;
  readonly schema: z.ZodType<T>;
  readonly description: string | undefined;
  /** The value before the first write (`undefined`: there is none). */
  readonly initial: T | undefined;
}

/** A working memory's value as the store keeps it, with its revision (how many writes it took). */
export interface WorkingMemoryState<T = unknown> {
  /** The value (`undefined` before the first write when there is no initial value). */
  value: T | undefined;
  /** 0 before the first write, then one more per write. */
  revision: number;
  /** When it was last written (the writer's clock). */
  updatedAt?: number;
  /** The run that last wrote it. */
  updatedBy?: string;
}

/** How to change a working memory: a JSON patch (RFC 6902: `add`, `remove`, `replace`) applied to the latest value, or a whole new value. */
export type WorkingMemoryUpdate = { patch: JsonPatchOperation[] } | { replace: unknown };

/** Options of {@link readWorkingMemory} and {@link updateWorkingMemory}: the store and whose memory. */
export interface WorkingMemoryCallOptions {
  /** The store the runs keep it in. */
  store: Store;
  /** The thread (for a memory kept per thread). */
  thread?: string;
  /** The resource (for a memory kept per resource). */
  resource?: string;
  /** The clock of `updatedAt`. Default: the real clock. */
  clock?: Clock;
  /** Cancels the reads and writes. */
  signal?: AbortSignal;
}

const NAME = /^[a-z0-9_]{1,40}$/;
/** The most compare-and-set attempts of one write before it gives up (`memory_conflict`). */
export const MAX_MEMORY_WRITE_ATTEMPTS = 1000;

const workingMemoryOptions = defineOptions<WorkingMemoryOptions<unknown>>('workingMemory', {
  schema: required(check('a zod schema', (v) => v instanceof z.ZodType)),
  scope: oneOf(['thread', 'resource']),
  name: check('a name of [a-z0-9_]{1,40}', (v) => typeof v === 'string' && NAME.test(v)),
  description: string,
  initial: anything,
});

const callOptions = defineOptions<WorkingMemoryCallOptions>('readWorkingMemory', {
  store: required(storeCheck),
  thread: string,
  resource: string,
  clock: clockCheck,
  signal: abortSignal,
});

/**
 * Describe a working memory for `agent({ memory })`.
 *
 * @example
 * ```ts
 * const profile = workingMemory({
 *   name: 'customer',
 *   scope: 'resource',
 *   schema: z.object({ name: z.string().optional(), bike: z.string().optional(), notes: z.array(z.string()).default([]) }),
 * });
 * const support = agent({ name: 'support', system: 'You help our customers.', memory: profile });
 * await run(support, 'I ride a tandem.', { adapter, store, resource: 'customer-42' });
 * ```
 */
export function workingMemory<T>(options: WorkingMemoryOptions<T>): WorkingMemory<T> {
  workingMemoryOptions.check(options as WorkingMemoryOptions<unknown>);
  const initial = options.initial !== undefined ? checked(options.schema, options.initial, 'initial') : defaults(options.schema);
  return { name: options.name ?? 'memory', scope: options.scope ?? 'thread', schema: options.schema, description: options.description, initial };
}

function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ConfigurationError(`The ${what} value of a working memory does not fit its schema: ${issues(parsed.error)}`);
  return parsed.data;
}

/** The schema's value for `{}` (its defaults), when it has one. */
function defaults<T>(schema: z.ZodType<T>): T | undefined {
  const parsed = schema.safeParse({});
  return parsed.success ? parsed.data : undefined;
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? `/${i.path.join('/')}` : '(root)'}: ${i.message}`).join('; ');
}

/** The document of a memory: `threads/<id>/memory/<name>` or `resources/<id>/memory/<name>`. */
export function workingMemoryKey(memory: Pick<WorkingMemory, 'name' | 'scope'>, id: string): string {
  return `${memory.scope === 'thread' ? 'threads' : 'resources'}/${id}/memory/${memory.name}`;
}

/** What the store keeps. */
interface MemoryDocument {
  schemaVersion: 1;
  memory: string;
  scope: WorkingMemoryScope;
  id: string;
  value: unknown;
  revision: number;
  updatedAt: number;
  updatedBy?: string;
}

function parseDocument(value: unknown, key: string): MemoryDocument {
  const doc = value as Partial<MemoryDocument> | null;
  if (doc === null || typeof doc !== 'object' || doc.schemaVersion !== 1 || !Number.isInteger(doc.revision)) {
    throw new StoreError(`The working memory "${key}" is not a working memory document`, { details: { key } });
  }
  return doc as MemoryDocument;
}

/** The id a memory is kept under in this call: the thread or the resource. */
function scopeId(memory: WorkingMemory, where: { thread?: string | undefined; resource?: string | undefined }, who: string): string {
  const id = memory.scope === 'thread' ? where.thread : where.resource;
  if (id === undefined) {
    throw new ConfigurationError(
      memory.scope === 'thread'
        ? `${who}: working memory "${memory.name}" is kept per thread; run on one (\`run(..., { store, thread })\`)`
        : `${who}: working memory "${memory.name}" is kept per resource; say which (\`run(..., { store, resource })\`)`,
      { details: { memory: memory.name, scope: memory.scope } },
    );
  }
  checkThreadId(id, memory.scope);
  return id;
}

function stateOf<T>(memory: WorkingMemory<T>, doc: MemoryDocument | undefined): WorkingMemoryState<T> {
  if (!doc) return { value: memory.initial, revision: 0 };
  const state: WorkingMemoryState<T> = { value: doc.value as T, revision: doc.revision, updatedAt: doc.updatedAt };
  if (doc.updatedBy !== undefined) state.updatedBy = doc.updatedBy;
  return state;
}

/**
 * The working memory `memory` of a thread or a resource, with its revision.
 *
 * @example
 * ```ts
 * const { value, revision } = await readWorkingMemory(profile, { store, resource: 'customer-42' });
 * ```
 */
export async function readWorkingMemory<T>(memory: WorkingMemory<T>, options: WorkingMemoryCallOptions): Promise<WorkingMemoryState<T>> {
  callOptions.check(options ?? ({} as WorkingMemoryCallOptions));
  checkMemories('memory', memory);
  const key = workingMemoryKey(memory, scopeId(memory, options, 'readWorkingMemory'));
  const call: StoreCallOptions = options.signal ? { signal: options.signal } : {};
  const value = await options.store.get(key, call);
  return stateOf(memory, value === undefined ? undefined : parseDocument(value, key));
}

/** A write that did not fit the memory's schema or its patch: the caller's (or the model's) fault. */
export class WorkingMemoryError extends TroupeError {
  constructor(message: string, details: Record<string, unknown>) {
    super('invalid_memory', message, { details });
  }
}

/** Options of {@link updateWorkingMemory}: the call's, and the run that writes (its `updatedBy`). */
export interface UpdateWorkingMemoryOptions extends WorkingMemoryCallOptions {
  /** The run that writes. */
  runId?: string;
}

const updateOptions = defineOptions<UpdateWorkingMemoryOptions>('updateWorkingMemory', { ...callOptions.shape, runId: string });

/**
 * Change the working memory `memory` of a thread or a resource: apply
 * `update` to its latest value and write it with a compare-and-set,
 * reading again and re-applying on a version conflict, so that concurrent
 * writers lose no update. A value that does not fit the schema, or a patch
 * that does not apply, is a `WorkingMemoryError` (`invalid_memory`) and
 * writes nothing. Returns the new state.
 *
 * @example
 * ```ts
 * await updateWorkingMemory(profile, { patch: [{ op: 'add', path: '/notes/-', value: 'Prefers email.' }] }, { store, resource: 'customer-42' });
 * ```
 */
export async function updateWorkingMemory<T>(memory: WorkingMemory<T>, update: WorkingMemoryUpdate, options: UpdateWorkingMemoryOptions): Promise<WorkingMemoryState<T>> {
  updateOptions.check(options ?? ({} as UpdateWorkingMemoryOptions));
  checkMemories('memory', memory);
  const id = scopeId(memory, options, 'updateWorkingMemory');
  const { conflicts: _conflicts, ...state } = await writeMemory(memory, id, checkUpdate(update), {
    store: options.store,
    clock: options.clock ?? realClock,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.runId ? { runId: options.runId } : {}),
  });
  return state;
}

/** Check an update given by a caller: `{ patch }` or `{ replace }`. */
function checkUpdate(update: WorkingMemoryUpdate): WorkingMemoryUpdate {
  const u = update as Partial<{ patch: unknown; replace: unknown }> | null;
  if (u === null || typeof u !== 'object' || ('patch' in u) === ('replace' in u)) throw new ConfigurationError(`Expected an update { patch } or { replace }, got ${describeValue(update)}`);
  if ('patch' in u && !jsonPatchSchema.safeParse(u.patch).success) throw new ConfigurationError(`Expected \`patch\` to be a JSON Patch (a list of { op, path, value? }), got ${describeValue(u.patch)}`);
  return update;
}

/** The value `update` makes of `current`, checked against the schema; a `WorkingMemoryError` when it does not fit. */
export function applyMemoryUpdate<T>(memory: WorkingMemory<T>, current: T | undefined, update: WorkingMemoryUpdate): T {
  let next: unknown;
  if ('replace' in update) next = update.replace;
  else {
    try {
      next = applyJsonPatch(current ?? {}, update.patch);
    } catch (error) {
      throw new WorkingMemoryError(`The patch of working memory "${memory.name}" does not apply: ${errorMessage(error)}`, { memory: memory.name });
    }
  }
  const parsed = memory.schema.safeParse(next);
  if (!parsed.success) throw new WorkingMemoryError(`The new value of working memory "${memory.name}" does not fit its schema: ${issues(parsed.error)}`, { memory: memory.name });
  return parsed.data;
}

/** Write `update` with compare-and-set, re-applied to the latest value on every conflict. */
async function writeMemory<T>(
  memory: WorkingMemory<T>,
  id: string,
  update: WorkingMemoryUpdate,
  options: { store: Store; clock: Clock; signal?: AbortSignal; runId?: string },
): Promise<WorkingMemoryState<T> & { conflicts: number }> {
  const store = threadStore(options.store);
  const key = workingMemoryKey(memory, id);
  const call: StoreCallOptions = options.signal ? { signal: options.signal } : {};
  for (let attempt = 0; attempt < MAX_MEMORY_WRITE_ATTEMPTS; attempt++) {
    throwIfAborted(options.signal);
    const current = await store.getVersioned(key, call);
    const doc = current === undefined ? undefined : parseDocument(current.value, key);
    const state = stateOf(memory, doc);
    const value = applyMemoryUpdate(memory, state.value, update);
    const next: MemoryDocument = { schemaVersion: 1, memory: memory.name, scope: memory.scope, id, value, revision: state.revision + 1, updatedAt: options.clock.now(), ...(options.runId ? { updatedBy: options.runId } : {}) };
    const written = await store.setIf(key, next, { ifVersion: current?.version ?? null, ...call });
    if (written.ok) return { ...stateOf(memory, next), conflicts: attempt };
  }
  throw new TroupeError('memory_conflict', `Working memory "${memory.name}" of ${memory.scope} "${id}" could not be written: ${MAX_MEMORY_WRITE_ATTEMPTS} other writes came first`, { details: { memory: memory.name, id } });
}

/** One working memory of an agent's conversation: where it is and what the conversation read. */
interface OpenMemory {
  memory: WorkingMemory;
  id: string;
  value: unknown;
  revision: number;
}

/**
 * Open an agent's working memories for one conversation: read each (or, in
 * a replay, take what the recorded run read), log it (`memory.loaded`),
 * and return the system prompt with them and the update tools.
 * @internal
 */
export async function openWorkingMemory(
  memories: readonly WorkingMemory[],
  ctx: RunContext,
  agent: string,
  system: string | undefined,
): Promise<{ system: string | undefined; tools: ToolDefinition[] }> {
  if (memories.length === 0) return { system, tools: [] };
  const opened: OpenMemory[] = [];
  for (const memory of memories) {
    const id = scopeId(memory, { thread: ctx.thread, resource: ctx.resource }, `Agent "${agent}"`);
    const state = ctx.recorded ? recordedLoad(ctx, memory, id, agent) : await loadForRun(ctx, memory, id, agent);
    ctx.emit('memory.loaded', { memory: memory.name, scope: memory.scope, id, agent, revision: state.revision, value: state.value });
    opened.push({ memory, id, value: state.value, revision: state.revision });
  }
  const sections = opened.map(memorySection);
  return { system: [system, ...sections].filter((s) => s !== undefined && s !== '').join('\n\n'), tools: opened.map((o) => memoryTool(o, agent)) };
}

async function loadForRun(ctx: RunContext, memory: WorkingMemory, id: string, agent: string): Promise<WorkingMemoryState> {
  const store = ctx.store;
  if (!store) throw new ConfigurationError(`Agent "${agent}": working memory "${memory.name}" lives in the run's store; pass \`store\` to run()`, { details: { agent, memory: memory.name } });
  threadStore(store);
  const key = workingMemoryKey(memory, id);
  const value = await store.get(key, { signal: ctx.signal });
  return stateOf(memory, value === undefined ? undefined : parseDocument(value, key));
}

/** The section of the system prompt that gives the agent its memory. */
function memorySection(open: OpenMemory): string {
  const { memory, value } = open;
  const what = memory.description ?? `Your working memory of this ${memory.scope === 'thread' ? 'conversation' : memory.scope}: what you keep between conversations.`;
  const shown = value === undefined ? '(empty)' : JSON.stringify(value, null, 2);
  return `## Working memory: ${memory.name}\n${what} Keep it up to date with the tool \`update_${memory.name}\` when you learn something worth keeping.\n\n${shown}`;
}

/** The tool that changes one working memory. */
function memoryTool(open: OpenMemory, agent: string): ToolDefinition {
  const { memory, id } = open;
  let shape = '';
  try {
    shape = ` The memory's JSON Schema: ${JSON.stringify(toJsonSchema(memory.schema))}`;
  } catch {
    // A schema zod cannot describe: the model has the value to go by.
  }
  return defineTool({
    name: `update_${memory.name}`,
    description:
      `Change your working memory "${memory.name}": give \`patch\`, a JSON Patch (RFC 6902: add, remove, replace; \`/notes/-\` appends to a list) applied to its latest value, ` +
      `or \`replace\`, the whole new value. The result must fit the memory's schema.${shape}`,
    parameters: z
      .object({ patch: jsonPatchSchema.optional(), replace: z.unknown().optional() })
      .refine((a) => (a.patch === undefined) !== (a.replace === undefined), { message: 'Give either `patch` or `replace`' }),
    async execute(args, { ctx, signal }) {
      const update: WorkingMemoryUpdate = args.patch !== undefined ? { patch: args.patch } : { replace: args.replace };
      const state = ctx.recorded ? recordedUpdate(ctx, open, update, agent) : await writeMemory(memory, id, update, { store: ctx.store!, clock: ctx.clock, signal, runId: ctx.runId });
      open.value = state.value;
      open.revision = state.revision;
      ctx.emit('memory.updated', { memory: memory.name, scope: memory.scope, id, agent, revision: state.revision, value: state.value, op: 'patch' in update ? 'patch' : 'replace' });
      return `Working memory "${memory.name}" updated (revision ${state.revision}):\n${JSON.stringify(state.value, null, 2)}`;
    },
  });
}

/** Which recorded events of a memory a replay has used, per recorded run. */
const replayCursors = new WeakMap<readonly TroupeEvent[], Map<string, number>>();

/** The `n`-th recorded event of `type` for `memory` of `id` that this replay has not used yet. */
function nextRecorded<K extends 'memory.loaded' | 'memory.updated'>(ctx: RunContext, type: K, memory: WorkingMemory, id: string, agent: string): TroupeEvent<K> | undefined {
  const events = ctx.recorded!;
  let cursors = replayCursors.get(events);
  if (!cursors) replayCursors.set(events, (cursors = new Map()));
  const key = `${type} ${memory.scope} ${id} ${memory.name}`;
  const used = cursors.get(key) ?? 0;
  let seen = 0;
  for (const e of events) {
    if (e.type !== type) continue;
    const m = e as TroupeEvent<'memory.loaded'>;
    if (m.memory !== memory.name || m.scope !== memory.scope || m.id !== id || m.agent !== agent) continue;
    if (seen++ === used) {
      cursors.set(key, used + 1);
      return e as TroupeEvent<K>;
    }
  }
  return undefined;
}

/** In a replay: the memory the recorded run read at this point. */
function recordedLoad(ctx: RunContext, memory: WorkingMemory, id: string, agent: string): WorkingMemoryState {
  const loaded = nextRecorded(ctx, 'memory.loaded', memory, id, agent);
  if (!loaded) throw new TroupeError('replay_divergence', `Replay diverged: the recorded run read no working memory "${memory.name}" of ${memory.scope} "${id}" for agent "${agent}" here`, { details: { memory: memory.name, id, agent } });
  return { value: loaded.value, revision: loaded.revision };
}

/** In a replay: the update is checked as it was, and its result is the one the recorded run wrote (concurrent writers included). */
function recordedUpdate(ctx: RunContext, open: OpenMemory, update: WorkingMemoryUpdate, agent: string): WorkingMemoryState {
  applyMemoryUpdate(open.memory, open.value, update);
  const updated = nextRecorded(ctx, 'memory.updated', open.memory, open.id, agent);
  if (!updated) throw new TroupeError('replay_divergence', `Replay diverged: the recorded run made no such update of working memory "${open.memory.name}"`, { details: { memory: open.memory.name, id: open.id, agent } });
  return { value: updated.value, revision: updated.revision };
}

/** Check `agent({ memory })`: one working memory or a list, with distinct names. */
export function checkMemories(option: string, value: unknown): void {
  if (value === undefined) return;
  const list = Array.isArray(value) ? value : [value];
  const names = new Set<string>();
  for (const m of list) {
    const memory = m as Partial<WorkingMemory> | null;
    if (!memory || typeof memory !== 'object' || typeof memory.name !== 'string' || !(memory.schema instanceof z.ZodType)) {
      throw new ConfigurationError(`Expected \`${option}\` to be a working memory (from workingMemory()) or a list of them, got ${describeValue(m)}`);
    }
    if (names.has(memory.name)) throw new ConfigurationError(`\`${option}\` names working memory "${memory.name}" twice`);
    names.add(memory.name);
  }
}

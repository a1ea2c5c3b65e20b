/**
 * The shared task list of a lead coordination: tasks with dependencies and a
 * status, transitions that are atomic in-process, a version that every
 * transition bumps, and persistence in a {@link Store} with a version check
 * (atomic on stores with compare-and-set).
 * @module
 */
import { z } from 'zod';
import { ConfigurationError, StoreError, TroupeError, describeValue } from '../core/errors.js';
import { supportsCompareAndSet, type Store, type StoreCallOptions } from '../core/store.js';
import { defined } from '../core/defined.js';
import { defineOptions, func } from '../core/options.js';

/** Status of a task: `pending` → `claimed` → `in-progress` → `done` | `failed`; or `blocked` / `cancelled`. */
export type TaskStatus = 'pending' | 'claimed' | 'in-progress' | 'blocked' | 'done' | 'failed' | 'cancelled';

/** A task of the shared list. */
export interface CoordTask {
  /** Unique within the list. */
  id: string;
  title: string;
  description: string;
  status: TaskStatus;
  /** The worker that claimed it. */
  assignee?: string;
  /** Ids of the tasks that must be `done` before this one is ready. */
  dependsOn: string[];
  /** Files the task is expected to touch (used when judging plans). */
  files?: string[];
  /** The worker's report (done), the error (failed) or the reason (blocked, cancelled). */
  result?: string;
  /** Clock time the current work started (in-progress). */
  startedAt?: number;
}

/** What {@link TaskStore.add} accepts. */
export interface TaskInput {
  /** Default: `t<n>`, the next free number. */
  id?: string;
  title: string;
  description?: string;
  dependsOn?: string[];
  files?: string[];
}

/** One transition, for events. */
export interface TaskTransition {
  task: CoordTask;
  from?: TaskStatus;
  to: TaskStatus;
  reason?: string;
  version: number;
}

/** Statuses after which a task never changes again. */
export const RESOLVED_STATUSES: readonly TaskStatus[] = ['done', 'failed', 'cancelled', 'blocked'];

/** The zod schema of a task input (for lists written by a model). */
export const taskInputSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional(),
  title: z.string().min(1),
  description: z.string().optional(),
  dependsOn: z.array(z.string()).optional(),
  files: z.array(z.string()).optional(),
});

const taskSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  description: z.string(),
  status: z.enum(['pending', 'claimed', 'in-progress', 'blocked', 'done', 'failed', 'cancelled']),
  assignee: z.string().optional(),
  dependsOn: z.array(z.string()),
  files: z.array(z.string()).optional(),
  result: z.string().optional(),
  startedAt: z.number().optional(),
});

/** The persisted form of a task list. */
export const taskListSchema = z.object({ schemaVersion: z.literal(1), version: z.number().int().nonnegative(), tasks: z.array(taskSchema) });

/** A task list as saved. */
export type TaskListSnapshot = z.output<typeof taskListSchema>;

/** Options of {@link TaskStore}. */
export interface TaskStoreOptions {
  /** Called after every transition (the coordination turns these into `coord.task` events). */
  onTransition?: (transition: TaskTransition) => void;
  /** The clock time source for `startedAt`. Default: `Date.now`. */
  now?: () => number;
}

/**
 * A shared task list. Every transition is synchronous, so two workers of one
 * process never claim one task; {@link TaskStore.save} adds a version check
 * for lists shared through a {@link Store} (a compare-and-set where the store
 * has one, so processes never both claim one task either).
 *
 * @example
 * ```ts
 * const tasks = new TaskStore([{ id: 'a', title: 'Parse' }, { id: 'b', title: 'Print', dependsOn: ['a'] }]);
 * tasks.claim('w1');          // → task a (b is not ready)
 * tasks.complete('a', 'ok');  // b becomes ready
 * ```
 */
/** The description {@link TaskStore} checks its options against. */
const taskStoreOptions = defineOptions<TaskStoreOptions>('TaskStore', { onTransition: func, now: func });

export class TaskStore {
  #tasks: CoordTask[] = [];
  #version = 0;
  #saved = -1;
  readonly #options: TaskStoreOptions;

  constructor(tasks: TaskInput[] = [], options: TaskStoreOptions = {}) {
    this.#options = taskStoreOptions.check(options);
    for (const t of tasks) this.add(t);
  }

  /** A store holding a saved list as it was. */
  static restore(snapshot: TaskListSnapshot, options: TaskStoreOptions = {}): TaskStore {
    const store = new TaskStore([], options);
    store.#tasks = structuredClone(snapshot.tasks) as CoordTask[];
    store.#version = snapshot.version;
    store.#saved = snapshot.version;
    return store;
  }

  /** Bumped by every transition. */
  get version(): number {
    return this.#version;
  }

  /** Every task, in insertion order (copies). */
  list(): CoordTask[] {
    return this.#tasks.map((t) => structuredClone(t));
  }

  /** One task (a copy), or undefined. */
  get(id: string): CoordTask | undefined {
    const t = this.#find(id);
    return t && structuredClone(t);
  }

  /** Pending tasks whose dependencies are all done. */
  ready(): CoordTask[] {
    return this.#tasks.filter((t) => t.status === 'pending' && this.#depsDone(t)).map((t) => structuredClone(t));
  }

  /** True when every task is done, failed, cancelled or blocked. */
  allResolved(): boolean {
    return this.#tasks.every((t) => RESOLVED_STATUSES.includes(t.status));
  }

  /** Add a task; its dependencies must exist. */
  add(input: TaskInput): CoordTask {
    const parsed = taskInputSchema.safeParse(input);
    if (!parsed.success) throw new ConfigurationError(`Invalid task ${describeValue(input)}: ${z.prettifyError(parsed.error)}`);
    const id = input.id ?? this.#freeId();
    if (this.#find(id)) throw new ConfigurationError(`Task "${id}" already exists`, { details: { task: id } });
    const deps = [...new Set(input.dependsOn ?? [])];
    for (const d of deps) {
      if (d === id) throw new ConfigurationError(`Task "${id}" depends on itself`, { details: { task: id } });
      if (!this.#find(d)) throw new ConfigurationError(`Task "${id}" depends on unknown task "${d}"`, { details: { task: id, dependsOn: d } });
    }
    const task: CoordTask = { id, title: input.title, description: input.description ?? input.title, status: 'pending', dependsOn: deps };
    if (input.files) task.files = [...input.files];
    this.#tasks.push(task);
    this.#transition(task, undefined, 'pending', 'added');
    this.#cascade();
    return structuredClone(task);
  }

  /**
   * Claim a task for `worker`: a task already reassigned to it, else the
   * given one (when ready), else the first ready task. Undefined when none.
   */
  claim(worker: string, id?: string): CoordTask | undefined {
    const mine = this.#tasks.find((t) => t.status === 'claimed' && t.assignee === worker);
    if (mine && id === undefined) return structuredClone(mine);
    const task = id === undefined
      ? this.#tasks.find((t) => t.status === 'pending' && this.#depsDone(t))
      : this.#tasks.find((t) => t.id === id && t.status === 'pending' && this.#depsDone(t));
    if (!task) return undefined;
    task.assignee = worker;
    this.#transition(task, 'pending', 'claimed', `claimed by ${worker}`);
    return structuredClone(task);
  }

  /** The claimant starts working. */
  start(id: string, worker: string, now = this.#now()): CoordTask {
    const task = this.#expect(id, ['claimed']);
    if (task.assignee !== worker) throw conflict(`Task "${id}" is assigned to "${task.assignee ?? 'nobody'}", not "${worker}"`, id);
    task.startedAt = now;
    this.#transition(task, 'claimed', 'in-progress');
    return structuredClone(task);
  }

  /** Take a task from its worker: back to `pending`, or `claimed` for `to`. */
  reassign(id: string, to?: string, reason?: string): CoordTask {
    const task = this.#expect(id, ['pending', 'claimed', 'in-progress']);
    const from = task.status;
    delete task.startedAt;
    if (to === undefined) {
      delete task.assignee;
      this.#transition(task, from, 'pending', reason ?? 'reassigned');
    } else {
      task.assignee = to;
      this.#transition(task, from, 'claimed', reason ?? `reassigned to ${to}`);
    }
    return structuredClone(task);
  }

  /**
   * Replace a task that is not resolved (pending, claimed, or in progress:
   * its worker must be told to stop) by several pending ones; the new tasks
   * inherit its dependencies, and its dependents depend on all of them.
   */
  split(id: string, parts: TaskInput[]): CoordTask[] {
    const task = this.#expect(id, ['pending', 'claimed', 'in-progress']);
    if (parts.length === 0) throw new ConfigurationError(`Split of task "${id}" needs at least one part`);
    const ids = new Set(this.#tasks.map((t) => t.id));
    const newIds = parts.map((p) => p.id ?? undefined);
    for (const p of newIds) if (p !== undefined && (ids.has(p) || newIds.filter((q) => q === p).length > 1)) throw new ConfigurationError(`Task "${p}" already exists`);
    for (const p of parts) for (const d of p.dependsOn ?? []) if (d === id || !ids.has(d)) throw new ConfigurationError(`Part "${p.title}" of task "${id}" depends on "${d}", which is not an other existing task`);
    const index = this.#tasks.indexOf(task);
    this.#tasks.splice(index, 1);
    delete task.startedAt;
    this.#transition(task, task.status, 'cancelled', `split into ${parts.length} tasks`);
    const created = parts.map((p) => this.add({ ...p, dependsOn: [...new Set([...task.dependsOn, ...(p.dependsOn ?? [])])] }));
    for (const t of this.#tasks) {
      if (!t.dependsOn.includes(id)) continue;
      t.dependsOn = [...new Set([...t.dependsOn.filter((d) => d !== id), ...created.map((c) => c.id)])];
    }
    return created;
  }

  /** Cancel a task that is not resolved yet. */
  cancel(id: string, reason = 'cancelled'): CoordTask {
    return this.#resolve(id, 'cancelled', reason);
  }

  /** Mark a task blocked: it needs a person. */
  block(id: string, reason: string): CoordTask {
    return this.#resolve(id, 'blocked', reason);
  }

  /** The worker finished: `done` with its report. */
  complete(id: string, result: string): CoordTask {
    return this.#resolve(id, 'done', result, ['claimed', 'in-progress']);
  }

  /** The work failed. */
  fail(id: string, error: string): CoordTask {
    return this.#resolve(id, 'failed', error, ['claimed', 'in-progress']);
  }

  /** The list as a JSON document. */
  snapshot(): TaskListSnapshot {
    return { schemaVersion: 1, version: this.#version, tasks: this.list() } as TaskListSnapshot;
  }

  /**
   * Save the list under `key`, refusing (a `task_conflict` error) when the
   * stored version is not the one this list was loaded from or last saved:
   * another process changed it in between. On a store with compare-and-set
   * (`setIf`) the check and the write are one atomic step, so two processes
   * can never both save over the same version; on other stores the check
   * only narrows the race.
   */
  async save(store: Store, key: string, options: StoreCallOptions = {}): Promise<void> {
    const cas = supportsCompareAndSet(store);
    const versioned = cas ? await store.getVersioned(key, options) : undefined;
    const stored = cas ? versioned?.value : await store.get(key, options);
    if (stored !== undefined) {
      const parsed = taskListSchema.safeParse(stored);
      if (!parsed.success) throw new StoreError(`Document "${key}" is not a task list: ${z.prettifyError(parsed.error)}`, { details: { key } });
      if (parsed.data.version !== this.#saved) throw this.#changedElsewhere(key, parsed.data.version);
    }
    const snapshot = this.snapshot();
    if (cas) {
      const written = await store.setIf(key, snapshot, { ...options, ifVersion: versioned?.version ?? null });
      if (!written.ok) throw this.#changedElsewhere(key);
    } else {
      await store.set(key, snapshot, options);
    }
    this.#saved = snapshot.version;
  }

  #changedElsewhere(key: string, stored?: number): TroupeError {
    const found = stored === undefined ? 'written while saving' : `stored version ${stored}`;
    return conflict(`Task list "${key}" was changed elsewhere (${found}, loaded ${this.#saved})`, undefined, { key, ...defined({ stored }) });
  }

  /** Load a list saved with {@link TaskStore.save}; undefined when there is none. */
  static async load(store: Store, key: string, options: TaskStoreOptions & StoreCallOptions = {}): Promise<TaskStore | undefined> {
    const raw = await store.get(key, options.signal ? { signal: options.signal } : {});
    if (raw === undefined) return undefined;
    const parsed = taskListSchema.safeParse(raw);
    if (!parsed.success) throw new StoreError(`Document "${key}" is not a task list: ${z.prettifyError(parsed.error)}`, { details: { key } });
    return TaskStore.restore(parsed.data, options);
  }

  #resolve(id: string, to: TaskStatus, result: string, from: TaskStatus[] = ['pending', 'claimed', 'in-progress']): CoordTask {
    const task = this.#expect(id, from);
    const before = task.status;
    task.result = result;
    delete task.startedAt;
    this.#transition(task, before, to, to === 'done' ? undefined : result);
    this.#cascade();
    return structuredClone(task);
  }

  /** Pending dependents of unsuccessful tasks can never run: block or cancel them too. */
  #cascade(): void {
    for (let changed = true; changed; ) {
      changed = false;
      for (const t of this.#tasks) {
        if (t.status !== 'pending') continue;
        const bad = t.dependsOn.map((d) => this.#find(d)).find((d) => d && ['failed', 'cancelled', 'blocked'].includes(d.status));
        if (!bad) continue;
        const to: TaskStatus = bad.status === 'blocked' ? 'blocked' : 'cancelled';
        t.result = `depends on task "${bad.id}", which is ${bad.status}`;
        this.#transition(t, 'pending', to, t.result);
        changed = true;
      }
    }
  }

  #transition(task: CoordTask, from: TaskStatus | undefined, to: TaskStatus, reason?: string): void {
    task.status = to;
    this.#version++;
    this.#options.onTransition?.({ task: structuredClone(task), ...defined({ from }), to, ...defined({ reason }), version: this.#version });
  }

  #expect(id: string, statuses: TaskStatus[]): CoordTask {
    const task = this.#find(id);
    if (!task) throw new ConfigurationError(`Unknown task "${id}"`, { code: 'invalid_option', details: { task: id } });
    if (!statuses.includes(task.status)) throw conflict(`Task "${id}" is ${task.status}; expected ${statuses.join(' or ')}`, id);
    return task;
  }

  #depsDone(task: CoordTask): boolean {
    return task.dependsOn.every((d) => this.#find(d)?.status === 'done');
  }

  #find(id: string): CoordTask | undefined {
    return this.#tasks.find((t) => t.id === id);
  }

  #freeId(): string {
    for (let n = this.#tasks.length + 1; ; n++) if (!this.#find(`t${n}`)) return `t${n}`;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

function conflict(message: string, task?: string, details: Record<string, unknown> = {}): TroupeError {
  return new TroupeError('task_conflict', message, { details: { ...defined({ task }), ...details } });
}

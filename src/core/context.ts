/**
 * The run context: everything a runnable needs, passed explicitly. No
 * hidden async-local state.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import type { ConversationMessage, ModelAdapter } from './adapter.js';
import { combineSignals, throwIfAborted } from './abort.js';
import { BudgetChain, BudgetExhaustedError, BudgetRegistry, emptySpend, type Budget, type BudgetMeter } from './budget.js';
import { Checkpoint, type CheckpointSpec } from './checkpoint.js';
import type { Clock } from './clock.js';
import type { RunControl } from './control.js';
import { CancelledError, ConfigurationError, TimeoutError, errorMessage, isTroupeError } from './errors.js';
import type { TroupeEvent, TroupeEventListeners, TroupeEventName, TroupeEventPayloads } from './events.js';
import { createOp, totalUsage, type OpNode } from './ops.js';
import type { Outcome } from './outcome.js';
import type { Store } from './store.js';
import { addUsage, type Usage } from './usage.js';
import { defined } from './defined.js';

/** The typed event emitter of a run. */
export type TroupeEmitter = EventEmitter<TroupeEventListeners>;

/** Where an op is opened. */
export interface EnterOptions {
  /** The kind of runnable (`agent`, `handoff`, `router`, ...); usage rolls up per kind. */
  kind: string;
  /** The op's name, shown in the op tree. */
  name: string;
  /** The agent the op belongs to, when there is one; usage rolls up per agent. */
  agent?: string;
  /**
   * A budget for the op and everything under it (see `Budget`): model
   * calls in the op are checked against it and spend from it, as from
   * every enclosing budget. When it runs out the op ends with status
   * `budget-exhausted`.
   */
  budget?: Budget;
}

/** State shared by every context of one run. */
interface RunShared {
  runId: string;
  clock: Clock;
  emitter: TroupeEmitter;
  maxDepth: number;
  adapters: Readonly<Record<string, ModelAdapter>>;
  defaultAdapter: ModelAdapter | undefined;
  nextOp: number;
  emitting: boolean;
  sessions: Map<string, number>;
  store: Store | undefined;
  resuming: boolean;
  /** How many children each checkpoint path has opened, by segment. */
  siblings: Map<string, number>;
  /** The run's op tree. */
  root: OpNode;
  /** Aborts the run's signal (set by `run`). */
  abortRun: ((reason: Error) => void) | undefined;
  /** The error that ended the run early ({@link RunContext.halt}). */
  halted: Error | undefined;
  /** The run's control, if it was given one. */
  control: RunControl | undefined;
  /** The run's budget meters (shared ones by budget object), made with the first budget (most runs have none). */
  budgets: BudgetRegistry | undefined;
  /** The context each meter was opened in (where its events go). */
  budgetOwners: WeakMap<BudgetMeter, RunContext> | undefined;
  /** Budgets that refused a call that would pass them: said once each (`budget.exhausted`), not once per refused call. */
  budgetRefusals: WeakSet<BudgetMeter> | undefined;
  /** The run's log, when it has a store (set by `run`). */
  runLog: { written(): Promise<void> } | undefined;
  /** The thread the run continues, and its history once loaded (taken once, by the entry agent). */
  thread: { id: string; history: ConversationMessage[] | undefined; taken: boolean } | undefined;
  /** The resource the run is about. */
  resource: string | undefined;
  /** The events of the run a replay replays. */
  recorded: readonly TroupeEvent[] | undefined;
}

/**
 * A key for a value that a context carries and its children inherit
 * ({@link RunContext.withValue}): how a kernel facility (guardrails, for
 * one) scopes its state to a subtree of the run without the context knowing
 * its type. Compared by identity.
 * @internal
 */
export class ContextKey<T> {
  /** Phantom field that keeps `T` in the type. */
  declare readonly __value?: T;
  /** A name for debugging. */
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/**
 * Options to create a root context; {@link run} makes one for you.
 * @internal
 */
export interface CreateContextOptions {
  /** The run's id. */
  runId: string;
  /** The clock everything in the run waits on. */
  clock: Clock;
  /** Cancels the whole run. */
  signal: AbortSignal;
  /** Where events go. Default: a new emitter. */
  emitter?: TroupeEmitter;
  /** The deepest nesting allowed before a `depth_exceeded` error. Default: 32. */
  maxDepth?: number;
  /** Adapters by name, for agents that name one. */
  adapters?: Record<string, ModelAdapter>;
  /** The adapter of agents that name none. */
  defaultAdapter?: ModelAdapter;
  /** The root op node of the run. */
  root: OpNode;
  /** Where checkpointing patterns save their state (and the run log goes). */
  store?: Store;
  /** The run continues an earlier run with the same id: patterns load their checkpoints. */
  resuming?: boolean;
  /** Aborts the run's signal with `reason`: what {@link RunContext.halt} calls. */
  abortRun?: (reason: Error) => void;
  /** The run's control (`RunOptions.control`). */
  control?: RunControl;
  /** The thread the run continues (`RunOptions.thread`). */
  thread?: string;
  /** The resource the run is about (`RunOptions.resource`). */
  resource?: string;
  /** A replay: the events of the run it replays. */
  recorded?: readonly TroupeEvent[];
}

/**
 * A context that spends from one more budget, and how to leave it: see {@link RunContext.enterBudget}.
 * @internal
 */
export interface BudgetEntry {
  /** The context with the budget in its chain (and the budget's signal in its own). */
  readonly ctx: RunContext;
  /** The budget's meter. */
  readonly meter: BudgetMeter;
  /** The op is done with the budget: stops its deadline when no other op spends from it, emits `budget.closed`. */
  leave(): void;
}

/**
 * The context a runnable runs in: run id, signal, clock, events, the current
 * op node and the depth guard. Contexts are immutable; {@link RunContext.enter}
 * and {@link RunContext.withSignal} derive new ones.
 */
export class RunContext {
  readonly #shared: RunShared;
  /** Aborts when the run (or this branch of it) is cancelled or times out. */
  readonly signal: AbortSignal;
  /** The op node that this context's work is recorded under. */
  readonly op: OpNode;
  /**
   * Nesting depth (0 at the run's root).
   * @internal
   */
  readonly depth: number;
  /**
   * Where this context sits in the run, as a path of op kinds, names and
   * sibling indexes from the root (`/handoff:a -> b#0/reflect:r#0`): the
   * same runnable run on the same input gets the same paths, so a resumed
   * run finds each pattern's checkpoint under it.
   */
  readonly checkpointPath: string;
  /** Values inherited by child contexts, by key ({@link RunContext.withValue}). */
  readonly #values: ReadonlyMap<ContextKey<unknown>, unknown>;

  private constructor(shared: RunShared, signal: AbortSignal, op: OpNode, depth: number, path: string, values: ReadonlyMap<ContextKey<unknown>, unknown>) {
    this.#shared = shared;
    this.signal = signal;
    this.op = op;
    this.depth = depth;
    this.checkpointPath = path;
    this.#values = values;
  }

  /**
   * Create a root context.
   * @internal
   */
  static create(options: CreateContextOptions): RunContext {
    const shared: RunShared = {
      runId: options.runId,
      clock: options.clock,
      emitter: options.emitter ?? new EventEmitter<TroupeEventListeners>(),
      maxDepth: options.maxDepth ?? 32,
      adapters: { ...(options.adapters ?? {}) },
      defaultAdapter: options.defaultAdapter,
      nextOp: 1,
      emitting: false,
      sessions: new Map(),
      store: options.store,
      resuming: options.resuming ?? false,
      siblings: new Map(),
      root: options.root,
      abortRun: options.abortRun,
      halted: undefined,
      control: options.control,
      budgets: undefined,
      budgetOwners: undefined,
      budgetRefusals: undefined,
      runLog: undefined,
      thread: options.thread === undefined ? undefined : { id: options.thread, history: undefined, taken: false },
      resource: options.resource,
      recorded: options.recorded,
    };
    return new RunContext(shared, options.signal, options.root, 0, '', new Map());
  }

  /** The run's id. */
  get runId(): string {
    return this.#shared.runId;
  }
  /** The injected clock. */
  get clock(): Clock {
    return this.#shared.clock;
  }
  /**
   * The run's control, when the run was given one (`RunOptions.control`):
   * loops read `LoopControl.paused` at their step boundaries; plans and
   * coordinations take their own control's changes.
   */
  get control(): RunControl | undefined {
    return this.#shared.control;
  }
  /**
   * The thread the run continues (`run(..., { thread })`), if any: the
   * conversation its entry agent carries on, and the scope of working
   * memory kept per thread.
   */
  get thread(): string | undefined {
    return this.#shared.thread?.id;
  }

  /** The resource the run is about (`run(..., { resource })`), if any: the scope of working memory kept per resource. */
  get resource(): string | undefined {
    return this.#shared.resource;
  }

  /**
   * In a replay (`replayRun`, `whatIf`), the events of the run it replays:
   * what that run read from its store (its working memory) is taken from
   * them, so the replay sees the same. Undefined in any other run.
   * @internal
   */
  get recorded(): readonly TroupeEvent[] | undefined {
    return this.#shared.recorded;
  }

  /**
   * Hand the run the thread's earlier messages (`run` does, once it holds the thread).
   * @internal
   */
  attachThreadHistory(history: ConversationMessage[]): void {
    const thread = this.#shared.thread;
    if (thread) thread.history = history;
  }

  /**
   * The thread's earlier messages, for the run's entry agent: the first
   * agent that opens a conversation takes them (later calls get
   * `undefined`), so the conversation continues where the thread left it.
   * Work beside the conversation ({@link RunContext.aside}: a guardrail's
   * check) never takes them.
   * @internal
   */
  takeThreadHistory(): ConversationMessage[] | undefined {
    const thread = this.#shared.thread;
    if (!thread || thread.taken || thread.history === undefined || this.value(ASIDE) === true) return undefined;
    thread.taken = true;
    return thread.history;
  }

  /**
   * The same context marked as work beside the run's conversation (a
   * guardrail's check): agents opened in it do not take the thread's history.
   * @internal
   */
  aside(): RunContext {
    return this.value(ASIDE) === true ? this : this.withValue(ASIDE, true);
  }

  /** The run's typed event emitter. */
  get emitter(): TroupeEmitter {
    return this.#shared.emitter;
  }
  /**
   * The maximum nesting depth.
   * @internal
   */
  get maxDepth(): number {
    return this.#shared.maxDepth;
  }
  /** Adapters registered by name for this run. */
  get adapters(): Readonly<Record<string, ModelAdapter>> {
    return this.#shared.adapters;
  }
  /** The adapter used by agents that name none. */
  get defaultAdapter(): ModelAdapter | undefined {
    return this.#shared.defaultAdapter;
  }

  /**
   * The run's store, when it has one: checkpointing patterns save their state to it.
   * @internal
   */
  get store(): Store | undefined {
    return this.#shared.store;
  }
  /** True when this run continues an earlier run with the same id (see `resume`). */
  get resuming(): boolean {
    return this.#shared.resuming;
  }

  /**
   * The checkpoint of the pattern running in this context (its op context),
   * keyed by {@link RunContext.checkpointPath}: the one way a pattern saves
   * its state to the run's store and finds it again when the run is resumed
   * (see `Checkpoint`). Without a store it saves nothing and restores
   * nothing.
   *
   * @example
   * ```ts
   * const checkpoint = ctx.checkpoint({ kind: 'reflect', version: 1, state: reflectStateSchema });
   * const saved = await checkpoint.restore();
   * ```
   */
  checkpoint<S, O extends Outcome = Outcome, E = never>(spec: CheckpointSpec<S, E>): Checkpoint<S, O, E> {
    const ctx = this;
    return new Checkpoint<S, O, E>(
      {
        runId: this.runId,
        path: this.checkpointPath,
        name: this.op.name,
        store: this.store,
        resuming: this.resuming,
        clock: this.clock,
        signal: this.signal,
        restored: (kind, completed) => ctx.emit('checkpoint.restored', { kind, name: ctx.op.name, path: ctx.checkpointPath, completed }),
        saved: (doc) =>
          ctx.emit('checkpoint.saved', { kind: doc.kind, name: ctx.op.name, path: ctx.checkpointPath, finished: doc.outcome !== undefined, state: doc.state, ...defined({ outcome: doc.outcome }) }),
        appended: (kind, entry) => ctx.emit('checkpoint.appended', { kind, name: ctx.op.name, path: ctx.checkpointPath, entry }),
        warn: (message) => ctx.emit('warning', { message, code: 'checkpoint_failed' }),
      },
      spec,
    );
  }

  /**
   * The same context with `segment` appended to its checkpoint path. A
   * pattern that runs children once per step (a team round, a plan chunk)
   * scopes each step, so that a resumed step finds its children's
   * checkpoints whatever ran before it.
   */
  withCheckpointScope(segment: string): RunContext {
    return new RunContext(this.#shared, this.signal, this.op, this.depth, `${this.checkpointPath}/${pathSegment(segment)}`, this.#values);
  }

  /**
   * The run's op tree (its root is the run itself), live: the trace so far.
   * @internal
   */
  get trace(): OpNode {
    return this.#shared.root;
  }

  /**
   * The value this context carries for `key` (set here or by an ancestor
   * with {@link RunContext.withValue}), or `undefined`.
   * @internal
   */
  value<T>(key: ContextKey<T>): T | undefined {
    return this.#values.get(key as ContextKey<unknown>) as T | undefined;
  }

  /**
   * The same context carrying `value` for `key`; contexts derived from it inherit it.
   * @internal
   */
  withValue<T>(key: ContextKey<T>, value: T): RunContext {
    const values = new Map(this.#values);
    values.set(key as ContextKey<unknown>, value);
    return new RunContext(this.#shared, this.signal, this.op, this.depth, this.checkpointPath, values);
  }

  /**
   * End the whole run with `error` (a guardrail's trip): the run's signal
   * aborts with `error` as its reason, so nothing after it reaches a model or
   * a tool, and the run rejects with `error` whatever the patterns above
   * made of it. The first call wins; later ones do nothing.
   * @internal
   */
  halt(error: Error): void {
    const shared = this.#shared;
    if (shared.halted) return;
    shared.halted = error;
    shared.abortRun?.(error);
  }

  /**
   * The error the run was halted with ({@link RunContext.halt}), if any.
   * @internal
   */
  get halted(): Error | undefined {
    return this.#shared.halted;
  }

  /**
   * A new op id, unique within the run.
   * @internal
   */
  nextOpId(): string {
    return `op-${this.#shared.nextOp++}`;
  }

  /** The ordinal of the next session of `agent` in this run (1 for its first). */
  nextSessionOrdinal(agent: string): number {
    const ordinal = (this.#shared.sessions.get(agent) ?? 0) + 1;
    this.#shared.sessions.set(agent, ordinal);
    return ordinal;
  }

  #childPath(where: EnterOptions): string {
    const base = `${this.checkpointPath}/${pathSegment(`${where.kind}:${where.name}`)}`;
    const index = this.#shared.siblings.get(base) ?? 0;
    this.#shared.siblings.set(base, index + 1);
    return `${base}#${index}`;
  }

  /** Emit a typed event stamped with the run id, time and current op. */
  emit<K extends TroupeEventName>(type: K, payload: TroupeEventPayloads[K]): void {
    this.emitEvent({ type, runId: this.runId, time: this.clock.now(), opId: this.op.id, ...payload } as unknown as TroupeEvent<K>);
  }

  /**
   * Emit an event the caller built whole, stamp included (`type`, `runId`,
   * `time`, `opId`, then the payload): for code that emits many events and
   * builds each one in a single object.
   * @internal
   */
  emitEvent<K extends TroupeEventName>(event: TroupeEvent<K>): void {
    const type = event.type;
    const shared = this.#shared;
    try {
      (shared.emitter.emit as (t: string, e: unknown) => boolean)(type, event);
      shared.emitter.emit('*', event as TroupeEvent);
    } catch (error) {
      if (shared.emitting) return;
      shared.emitting = true;
      try {
        this.emit('warning', { message: `An event listener for "${type}" threw: ${errorMessage(error)}`, code: 'listener_error' });
      } finally {
        shared.emitting = false;
      }
    }
  }

  /**
   * The run's log: what {@link RunContext.logged} waits for (`run` sets it when the run has a store).
   * @internal
   */
  attachRunLog(log: { written(): Promise<void> }): void {
    this.#shared.runLog = log;
  }

  /**
   * Resolves once every event emitted so far is in the run's log (at once
   * when the run keeps none); rejects with a `StoreError` when the log
   * failed before writing them.
   * @internal
   */
  logged(): Promise<void> {
    return this.#shared.runLog?.written() ?? Promise.resolve();
  }

  /** Add model usage to the current op node. */
  recordUsage(usage: Partial<Usage>): void {
    const turn = { turns: 1, ...usage };
    this.op.usage = addUsage(this.op.usage, turn);
    this.budgets.record(turn);
  }

  /**
   * The budgets this context spends from: its op's own and every enclosing one.
   * @internal
   */
  get budgets(): BudgetChain {
    return this.value(BUDGET_CHAIN) ?? BudgetChain.empty;
  }

  /**
   * Before a model call of about `inputTokens` prompt tokens: reserve it in
   * every budget of the chain, so that calls in flight at once count
   * together, and return the function that releases the reservation once
   * the call settled (call it, then {@link RunContext.recordUsage}). Throws
   * a `BudgetExhaustedError` (reserving nothing) when a budget of the chain
   * has run out or the call would overrun one (`budget.exhausted` says so).
   * The tool loop calls it before every turn.
   * @internal
   */
  reserveBudgets(inputTokens: number): () => void {
    const chain = this.budgets;
    try {
      return chain.reserve(inputTokens);
    } catch (error) {
      if (error instanceof BudgetExhaustedError && error.info.reason === 'would-overrun') {
        const { budgetId, budget, limit, max, reason } = error.info;
        const meter = chain.meters.find((m) => m.id === budgetId);
        const refusals = (this.#shared.budgetRefusals ??= new WeakSet());
        if (meter === undefined || !refusals.has(meter)) {
          if (meter !== undefined) refusals.add(meter);
          this.emit('budget.exhausted', { budgetId, budget, limit, max, reason, spent: meter ? { ...meter.spent } : emptySpend() });
        }
      }
      throw error;
    }
  }

  /**
   * This context spending from one more budget as well (its meter: a new
   * one, or the run's meter of a `shared` budget): the returned context's
   * signal also aborts when the budget runs out. `ctx.enter({ budget })`
   * uses it; call it yourself for a budget over work that opens no op
   * (the run's own budget). Call `leave` when done.
   * @internal
   */
  enterBudget(budget: Budget, fallbackName: string): BudgetEntry {
    const shared = this.#shared;
    const { meter, created } = budgetRegistry(shared).meter(budget, fallbackName);
    if (created) {
      (shared.budgetOwners ??= new WeakMap()).set(meter, this);
      this.emit('budget.opened', { budgetId: meter.id, budget: meter.name, limits: { ...meter.limits }, shared: budget.shared === true });
    }
    const release = meter.enter();
    const onOp = (this.op.budgets ??= []);
    if (!onOp.some((b) => b.id === meter.id)) onOp.push({ id: meter.id, name: meter.name, limits: { ...meter.limits }, spent: meter.spent });
    const ctx = this.withValue(BUDGET_CHAIN, this.budgets.with(meter)).withSignal(combineSignals(this.signal, meter.signal));
    let left = false;
    return {
      ctx,
      meter,
      leave: () => {
        if (left) return;
        left = true;
        release();
        this.emit('budget.closed', { budgetId: meter.id, budget: meter.name, limits: { ...meter.limits }, spent: { ...meter.spent }, exhausted: meter.exhausted !== undefined });
      },
    };
  }

  /** The same context with a narrower signal (for example a per-step time-out). */
  withSignal(signal: AbortSignal): RunContext {
    return new RunContext(this.#shared, signal, this.op, this.depth, this.checkpointPath, this.#values);
  }

  /**
   * Open a child op node, run `body` in a child context, and close the node
   * with the outcome's status. Checks the depth guard and the signal first.
   * The outcome's `usage` becomes the node's rolled-up usage.
   */
  async enter<O extends Outcome>(
    where: EnterOptions,
    body: (ctx: RunContext) => Promise<Omit<O, 'usage'> & { usage?: Usage }>,
  ): Promise<O> {
    const depth = this.depth + 1;
    if (depth > this.maxDepth) {
      throw new ConfigurationError(
        `Maximum nesting depth ${this.maxDepth} exceeded at ${where.kind} "${where.name}" (a runnable that contains itself?)`,
        { code: 'depth_exceeded', details: { maxDepth: this.maxDepth, name: where.name } },
      );
    }
    throwIfAborted(this.signal);
    const node = createOp(this.nextOpId(), where.kind, where.name, this.clock.now(), where.agent);
    this.op.children.push(node);
    let child = new RunContext(this.#shared, this.signal, node, depth, this.#childPath(where), this.#values);
    child.emit('op.started', {
      kind: node.kind,
      name: node.name,
      ...defined({ agent: node.agent }),
      parentId: this.op.id,
      depth,
      path: child.checkpointPath,
    });
    let code: string | undefined;
    let budget: BudgetEntry | undefined;
    try {
      if (where.budget) {
        budget = child.enterBudget(where.budget, `${where.kind}:${where.name}`);
        child = budget.ctx;
      }
      const result = await body(child);
      node.status = result.status;
      if (result.reason !== undefined) node.reason = result.reason;
      return { ...result, usage: totalUsage(node) } as O;
    } catch (error) {
      node.status = error instanceof BudgetExhaustedError ? 'budget-exhausted' : isCancellation(error, this.signal) ? 'cancelled' : 'failed';
      node.error = errorMessage(error);
      if (isTroupeError(error)) code = error.code;
      throw error;
    } finally {
      budget?.leave();
      node.end = this.clock.now();
      child.emit('op.completed', {
        kind: node.kind,
        name: node.name,
        ...defined({ agent: node.agent }),
        status: node.status === 'running' ? 'failed' : node.status,
        ...defined({ reason: node.reason }),
        usage: totalUsage(node),
        durationMs: node.end - node.start,
        ...defined({ error: node.error, code }),
      });
    }
  }
}

/** The run's budget registry, made with its first budget. */
function budgetRegistry(shared: RunShared): BudgetRegistry {
  return (shared.budgets ??= new BudgetRegistry(shared.clock, {
    exhausted: (meter, error) => {
      const { limit, max, reason } = error.info;
      shared.budgetOwners?.get(meter)?.emit('budget.exhausted', { budgetId: meter.id, budget: meter.name, limit, max, reason, spent: { ...meter.spent } });
    },
  }));
}

/** The context value that marks work beside the run's conversation ({@link RunContext.aside}). */
const ASIDE = new ContextKey<boolean>('aside');

/** The context value that holds a context's budget chain (read it as `ctx.budgets`). */
const BUDGET_CHAIN = new ContextKey<BudgetChain>('budgets');

/** One segment of a checkpoint path: printable ASCII, no `/`, at most 80 characters. */
function pathSegment(text: string): string {
  return text.replace(/[^\x20-\x7e]|\//g, '_').slice(0, 80);
}

/** True when `error` is (or was caused by) a cancellation of `signal`. */
export function isCancellation(error: unknown, signal?: AbortSignal): boolean {
  if (error instanceof CancelledError) return true;
  if (error instanceof TimeoutError || isTroupeError(error, 'guardrail_tripped') || error instanceof BudgetExhaustedError) return false;
  if (signal?.aborted && (error === signal.reason || isTroupeError(signal.reason, 'cancelled'))) return true;
  return error instanceof Error && error.name === 'AbortError';
}

/**
 * The entry point: `run(runnable, input, options)` creates the run context,
 * runs, and returns the outcome with the run's trace.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { ConversationMessage, ModelAdapter } from './adapter.js';
import { combineSignals, timeoutSignal } from './abort.js';
import { BudgetExhaustedError, validateBudget, type Budget } from './budget.js';
import { realClock, type Clock } from './clock.js';
import { RunContext, type TroupeEmitter } from './context.js';
import { CancelledError, ConfigurationError, describeValue, errorMessage, isTroupeError } from './errors.js';
import { RunControl } from './control.js';
import { abortSignal, adapter, check, clock, defineOptions, func, object, optional, positiveInteger, positiveNumber, store, string } from './options.js';
import type { RunParent, TroupeEvent, TroupeEventListeners } from './events.js';
import { createOp, totalUsage, type OpNode } from './ops.js';
import type { Outcome, Runnable } from './runnable.js';
import type { Store } from './store.js';
import { createRunLogWriter } from './run-log-writer.js';
import { defined } from './defined.js';
import { checkThreadId, claimThread, conversationOf, releaseThread, threadStore, type ThreadMessage } from './thread.js';

/** Options of {@link run} and {@link startRun}. */
export interface RunOptions {
  /** Cancels the run. */
  signal?: AbortSignal;
  /** Cancels the run with a `TimeoutError` after this many milliseconds (on `clock`). */
  timeoutMs?: number;
  /** The clock for everything that waits. Default: the real clock. */
  clock?: Clock;
  /** The adapter used by agents that name none. */
  adapter?: ModelAdapter;
  /** Adapters by name, for agents that name one (`adapter: 'openai'`). */
  adapters?: Record<string, ModelAdapter>;
  /** The run's id. Default: a random UUID. */
  runId?: string;
  /** The deepest nesting allowed before a `depth_exceeded` error. Default: 32. */
  maxDepth?: number;
  /** Receives every event of the run. */
  onEvent?: (event: TroupeEvent) => void;
  /** Use this emitter instead of a new one (to share listeners across runs). */
  emitter?: TroupeEmitter;
  /**
   * The run's store. Every event of the run is appended to the stream
   * `runs/<runId>/events` (and `runs/<runId>/meta` kept up to date):
   * appends are queued and never slow the run; the result settles once the
   * log is flushed (at most 30 s on `clock`). Every checkpointing pattern
   * saves its state here through `ctx.checkpoint` (loops, teams, plans,
   * planning sessions, coordinations), so that `resume(runnable, runId,
   * { store })` continues the run. A store failure becomes a `warning`
   * event and stops the log, never the run.
   */
  store?: Store;
  /**
   * A budget for the whole run (tokens, cost, model calls, wall-clock
   * time; see `Budget`): every model call of the run spends from it, and
   * is refused once it would overrun it. A runnable that ends for it
   * resolves with status `budget-exhausted` when it can say what it did
   * (loops, plans, `withBudget`), else the run rejects with the
   * `BudgetExhaustedError`, whose `partial` is the last answer.
   */
  budget?: Budget;
  /**
   * The run's control (`LoopControl`, `PlanControl`, `CoordinationControl`
   * or any `RunControl`): cancel the run, pause its loops, change its plan
   * from outside while it goes on. One control per run.
   */
  control?: RunControl;
  /**
   * The thread the run continues: a conversation kept in the run's
   * `store` across runs and processes (an id of 1-128 characters of
   * `A-Z a-z 0-9 - _ .`). The run takes the thread for itself (a second
   * run on it at once fails with a `ThreadBusyError`, code
   * `thread_busy`), its entry agent (the first agent that opens a
   * conversation) is given the thread's earlier messages as the history
   * of its session, compacted to the agent's context budget when it has
   * one, and a run that completes adds its input and answer to the
   * thread. Needs a store with compare-and-set (`memoryStore`,
   * `fileStore`, `redisStore`). See `listThreads`, `readThread` of
   * `troupe/persistence`.
   */
  thread?: string;
  /**
   * What the run is about, for the memory kept per resource (a user, a
   * customer, a project; an id like a thread's): agents whose working
   * memory is kept per resource (`workingMemory({ scope: 'resource' })`)
   * read and update the memory of this resource.
   */
  resource?: string;
}

/** The description {@link run}, {@link startRun} and `resume` check their options against. */
export const runOptions = defineOptions<RunOptions>('run', {
  signal: abortSignal,
  timeoutMs: positiveNumber,
  clock,
  adapter,
  adapters: object,
  runId: string,
  maxDepth: positiveInteger,
  onEvent: func,
  emitter: check('an event emitter', (v) => typeof v === 'object' && v !== null && typeof (v as { emit?: unknown }).emit === 'function'),
  store,
  budget: optional((name, value) => void validateBudget(name, value as Budget)),
  control: check('a RunControl (LoopControl, PlanControl, CoordinationControl)', (v) => v instanceof RunControl),
  thread: optional((name, value) => checkThreadId(value, name)),
  resource: optional((name, value) => checkThreadId(value, name)),
});

/**
 * What a replay runs from (internal): the events of the run it replays, where
 * what the recorded run read from its store (its working memory) is found.
 * @internal
 */
export interface RunReplaying {
  /** The recorded run's events. */
  events: readonly TroupeEvent[];
}

/**
 * How a run continues a thread: `run` takes it in the store and loads its
 * messages; `resume` takes it again with the history its log holds; a
 * replay only gives the logged history (`persist: false`).
 * @internal
 */
export interface RunThread {
  /** The thread's id. */
  id: string;
  /** The history to give the entry agent; absent: the thread's messages in the store. */
  history?: ConversationMessage[];
  /** How many runs took the thread (for a replay's `thread.loaded`). */
  runs?: number;
  /** Take the thread in the store and add to it. */
  persist: boolean;
}

/** An outcome with the run's id, trace and duration. */
export type RunResult<O extends Outcome = Outcome> = O & {
  /** The run's id. */
  runId: string;
  /** The op tree of the run (its root is the run itself). */
  trace: OpNode;
  /** Wall time on the run's clock. */
  durationMs: number;
};

/** A run in progress: its events, its result, and a way to stop it. */
export interface RunHandle<O extends Outcome = Outcome> extends AsyncIterable<TroupeEvent> {
  /** The run's id. */
  readonly runId: string;
  /** The typed event emitter. */
  readonly emitter: TroupeEmitter;
  /** The op tree, live. */
  readonly trace: OpNode;
  /** Settles with the result, or rejects with the run's error. */
  readonly result: Promise<RunResult<O>>;
  /** Cancel the run: its signal aborts with a `CancelledError` (`reason` as its message); it ends `cancelled`. */
  cancel(reason?: string): void;
}

/**
 * Run a runnable and return its outcome and trace.
 *
 * @example
 * ```ts
 * const result = await run(agent({ name: 'helper', system: 'Be brief.' }), 'Hello', { adapter });
 * console.log(result.output, formatOpTree(result.trace));
 * ```
 */
export function run<O extends Outcome>(runnable: Runnable<O>, input: string, options: RunOptions = {}): Promise<RunResult<O>> {
  return startRun(runnable, input, options).result;
}

/**
 * Start a run and return a handle at once: iterate it for events
 * (`for await (const e of handle)`), await `handle.result` for the outcome.
 * The run body starts on the next microtask, so listeners attached
 * synchronously see every event.
 */
export function startRun<O extends Outcome>(runnable: Runnable<O>, input: string, options: RunOptions = {}): RunHandle<O> {
  return launch(runnable, input, options, false);
}

/**
 * Start a run; with `resuming`, it continues the earlier run `options.runId`
 * logged in `options.store` (`resume` reads the input back and calls this):
 * every checkpointing pattern loads its checkpoint, and events are appended
 * to the same run log. `parent` (a fork, a what-if replay) goes into
 * `run.started` and the run's meta document.
 * @internal
 */
export function launch<O extends Outcome>(
  runnable: Runnable<O>,
  input: string,
  options: RunOptions,
  resuming: boolean,
  parent?: RunParent,
  threadSource?: RunThread,
  replaying?: RunReplaying,
): RunHandle<O> {
  validateRunOptions(runnable, input, options);
  if (resuming && (options.store === undefined || options.runId === undefined)) {
    throw new ConfigurationError('Resuming a run needs the `store` it was logged in and its `runId`');
  }
  const thread: RunThread | undefined = threadSource ?? (options.thread === undefined ? undefined : { id: options.thread, persist: true });
  if (thread?.persist && options.store === undefined) {
    throw new ConfigurationError('A thread lives in the run\'s store: pass `store` with `thread`', { details: { thread: thread.id } });
  }
  if (thread?.persist) threadStore(options.store!);
  const clock = options.clock ?? realClock;
  const runId = options.runId ?? randomUUID();
  const emitter = options.emitter ?? new EventEmitter<TroupeEventListeners>();
  const controller = new AbortController();
  const timer = options.timeoutMs === undefined ? undefined : timeoutSignal(options.timeoutMs, clock, `Run timed out after ${options.timeoutMs} ms`);
  const signal = combineSignals(options.signal, controller.signal, timer?.signal);
  const root = createOp('op-0', 'run', runnable.name, clock.now());
  const releaseControl = options.control?.attachRun({ cancel: (reason) => controller.abort(reason) });
  // Every option left out is undefined here, which `create` reads as left out.
  const ctx = RunContext.create({
    runId,
    clock,
    signal,
    emitter,
    root,
    maxDepth: options.maxDepth,
    adapters: options.adapters,
    defaultAdapter: options.adapter,
    store: options.store,
    resuming,
    control: options.control,
    thread: thread?.id,
    resource: options.resource,
    recorded: replaying?.events,
    abortRun: (reason) => controller.abort(reason),
  });
  const listeners = attachListeners(ctx, options);
  const iterators = new EventIterators(emitter);
  const result = (async (): Promise<RunResult<O>> => {
    await Promise.resolve();
    try {
      return await execute(runnable, input, ctx, { resuming, budget: options.budget, parent, thread, store: options.store });
    } finally {
      timer?.clear();
      releaseControl?.();
      await listeners.detach();
      iterators.close();
    }
  })();
  return {
    runId,
    emitter,
    trace: root,
    result,
    cancel(reason?: string) {
      controller.abort(new CancelledError(reason ?? 'The run was cancelled'));
    },
    [Symbol.asyncIterator]: () => iterators.iterator(),
  };
}

/** How {@link execute} runs: resuming, the run's budget, where it comes from, its thread and store. */
interface ExecuteOptions {
  resuming: boolean;
  budget: Budget | undefined;
  parent: RunParent | undefined;
  thread: RunThread | undefined;
  store: Store | undefined;
}

/**
 * Run `runnable` in the root context `ctx`, with `run.started` first and
 * `run.completed` or `run.failed` last. A run on a thread takes the thread
 * after `run.started` and gives it back before its last event, with its
 * input and answer added when it completed.
 */
async function execute<O extends Outcome>(runnable: Runnable<O>, input: string, ctx: RunContext, options: ExecuteOptions): Promise<RunResult<O>> {
  const { resuming, budget, parent, thread } = options;
  const root = ctx.op;
  const { clock, runId } = ctx;
  ctx.emit('run.started', { runnable: runnable.name, input, ...(resuming ? { resumed: true } : {}), ...defined({ parent, thread: thread?.id, resource: ctx.resource }) });
  let held = false;
  try {
    if (thread) held = await openThread(ctx, thread, options.store);
    const entry = budget ? ctx.enterBudget(budget, `run:${runnable.name}`) : undefined;
    const outcome = await runnable.run(input, entry?.ctx ?? ctx).finally(() => entry?.leave());
    // A halted run (a guardrail tripped) fails, whatever the patterns made of it.
    if (ctx.halted) throw ctx.halted;
    if (held) {
      held = false;
      const at = clock.now();
      const add: ThreadMessage[] =
        outcome.status === 'completed' ? [{ role: 'user', text: input, runId, at }, { role: 'assistant', text: outcome.output, runId, at, agent: outcome.agent }] : [];
      await closeThread(ctx, thread!.id, options.store!, add);
    }
    root.end = clock.now();
    root.status = outcome.status;
    if (outcome.reason !== undefined) root.reason = outcome.reason;
    const usage = totalUsage(root);
    ctx.emit('run.completed', { runnable: runnable.name, status: outcome.status, ...defined({ reason: outcome.reason }), output: outcome.output, usage, durationMs: root.end - root.start });
    return { ...outcome, usage, runId, trace: root, durationMs: root.end - root.start };
  } catch (thrown) {
    const error = ctx.halted ?? thrown;
    if (held) await closeThread(ctx, thread!.id, options.store!, []);
    root.end = clock.now();
    root.status = error instanceof BudgetExhaustedError ? 'budget-exhausted' : ctx.signal.aborted && !ctx.halted && !isTroupeError(error, 'timeout') ? 'cancelled' : 'failed';
    root.error = errorMessage(error);
    ctx.emit('run.failed', { runnable: runnable.name, error: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) });
    throw error;
  }
}

/**
 * Take the run's thread (when it persists) and hand its history to the
 * entry agent; `thread.loaded` logs what the agent is given. True when the
 * run now holds the thread in the store.
 */
async function openThread(ctx: RunContext, thread: RunThread, store: Store | undefined): Promise<boolean> {
  let history = thread.history;
  let runs = thread.runs ?? 0;
  if (thread.persist) {
    const claimed = await claimThread(store!, thread.id, ctx.runId, { clock: ctx.clock, signal: ctx.signal });
    history ??= conversationOf(claimed.messages);
    runs = claimed.doc.runs;
  }
  const messages = history ?? [];
  ctx.attachThreadHistory(messages);
  ctx.emit('thread.loaded', { thread: thread.id, messages, runs });
  return thread.persist;
}

/** Give the thread back with `add`; a failure is a `warning` (`thread_save_failed`), never the run's. */
async function closeThread(ctx: RunContext, threadId: string, store: Store, add: ThreadMessage[]): Promise<void> {
  try {
    // Not on the run's signal: a cancelled run still gives its thread back.
    const doc = await releaseThread(store, threadId, ctx.runId, { clock: ctx.clock, add });
    if (doc) ctx.emit('thread.saved', { thread: threadId, added: add.length, messages: doc.messages });
    else ctx.emit('warning', { message: `Thread "${threadId}" was no longer held by this run (deleted or taken over): nothing was added to it`, code: 'thread_save_failed', data: { thread: threadId } });
  } catch (error) {
    ctx.emit('warning', { message: `Thread "${threadId}" could not be saved: ${errorMessage(error)}`, code: 'thread_save_failed', data: { thread: threadId } });
  }
}

/** The run's own listeners: `onEvent`, and the run log when there is a store. `detach` flushes the log and removes them. */
function attachListeners(ctx: RunContext, options: RunOptions): { detach(): Promise<void> } {
  const { emitter, runId, clock } = ctx;
  const onEvent = options.onEvent;
  const log = options.store
    ? createRunLogWriter(options.store, runId, (error) =>
        ctx.emit('warning', { message: `The run log could not be written: ${errorMessage(error)}`, code: 'run_log_failed' }),
      )
    : undefined;
  // The log hears every event before `onEvent`, so what `onEvent` does in answer is logged after it.
  if (log) {
    emitter.on('*', log.write);
    ctx.attachRunLog(log);
  }
  if (onEvent) emitter.on('*', onEvent);
  return {
    async detach() {
      if (log) {
        await log.flush({ clock });
        emitter.off('*', log.write);
      }
      if (onEvent) emitter.off('*', onEvent);
    },
  };
}

interface EventQueue {
  push(e: TroupeEvent | null): void;
}

/**
 * The async iterators of a run handle: a queue per iterator, fed from the
 * `*` channel. The forwarding listener is attached only while an iterator
 * exists, so code that skips building events nobody listens to can tell.
 */
class EventIterators {
  readonly #emitter: TroupeEmitter;
  /** The queues and their forwarding listener, made with the first iterator (most runs have none). */
  #queues: Set<EventQueue> | undefined;
  #forward: ((e: TroupeEvent) => void) | undefined;
  #finished = false;

  constructor(emitter: TroupeEmitter) {
    this.#emitter = emitter;
  }

  /** The run ended: every iterator finishes after the events it holds. */
  close(): void {
    this.#finished = true;
    const queues = this.#queues;
    if (queues === undefined) return;
    for (const q of queues) q.push(null);
    queues.clear();
    this.#emitter.off('*', this.#forward);
  }

  /** A new iterator over the events emitted from now on. */
  iterator(): AsyncIterator<TroupeEvent> {
    const buffer: Array<TroupeEvent | null> = [];
    let wake: (() => void) | undefined;
    const queue: EventQueue = {
      push(e) {
        buffer.push(e);
        wake?.();
      },
    };
    if (this.#finished) buffer.push(null);
    else this.#add(queue);
    return {
      next: async (): Promise<IteratorResult<TroupeEvent>> => {
        while (buffer.length === 0) await new Promise<void>((r) => (wake = r));
        wake = undefined;
        const e = buffer.shift();
        if (e === null || e === undefined) {
          this.#remove(queue);
          return { done: true, value: undefined };
        }
        return { done: false, value: e };
      },
      return: async (): Promise<IteratorResult<TroupeEvent>> => {
        this.#remove(queue);
        return { done: true, value: undefined };
      },
    };
  }

  #add(queue: EventQueue): void {
    if (this.#queues === undefined) {
      const queues = (this.#queues = new Set());
      this.#forward = (e) => {
        for (const q of queues) q.push(e);
      };
    }
    if (this.#queues.size === 0) this.#emitter.on('*', this.#forward!);
    this.#queues.add(queue);
  }

  #remove(queue: EventQueue): void {
    if (this.#queues?.delete(queue) && this.#queues.size === 0) this.#emitter.off('*', this.#forward);
  }
}

function validateRunOptions(runnable: Runnable<Outcome>, input: string, options: RunOptions): void {
  if (!runnable || typeof runnable.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable (an object with a \`run\` method), got ${describeValue(runnable)}`);
  }
  if (typeof input !== 'string') {
    throw new ConfigurationError(`Expected \`input\` to be a string, got ${describeValue(input)}`);
  }
  runOptions.check(options);
}

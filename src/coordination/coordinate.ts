/**
 * `coordinate`: a lead that keeps coordinating while its workers run. A
 * shared task list, a message bus, plan approval, stuck detection and
 * reassignment; the lead writes a synthesis once every task is resolved.
 * @module
 */
import { z } from 'zod';
import { combineSignals, throwIfAborted, timeoutSignal } from '../core/abort.js';
import { sleep } from '../core/clock.js';
import type { Checkpoint } from '../core/checkpoint.js';
import type { RunContext } from '../core/context.js';
import type { ToolDefinition } from '../core/tools.js';
import { ConfigurationError, TimeoutError, describeValue } from '../core/errors.js';
import { boolean, check, defineOptions, nonEmptyString, nonNegativeInteger, object, positiveNumber, required, string, type OptionCheck } from '../core/options.js';
import { CoordinationControl } from './control.js';
import type { CoordDecisionKind } from './events.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import type { Agent, Conversation } from '../patterns/agent.js';
import type { WorkspaceStrategy } from '../workspaces/types.js';
import { applyAction, settleUnanswered, spawn, stopStuck } from './lead-actions.js';
import { decompose, delegateLead, describeTasks, leadSystem, synthesisPrompt, updatePrompt } from './lead-prompts.js';
import { MessageBus, type CoordMessage } from './message-bus.js';
import { planApprovalOptions, resolvePlanApproval, type PlanApprovalOptions } from './plan-approval.js';
import { StuckDetector, stuckOptions, type StuckOptions } from './stuck.js';
import { TaskStore, taskListSchema, type CoordTask, type TaskInput } from './task-store.js';
import { coordinationTools, parseLeadActions, type LeadAction } from './tools.js';
import { Changes, sendMessage, type Runtime, type WorkerSlot } from './worker.js';
import type { TurnExecutor } from './task-job.js';
import { defined } from '../core/defined.js';

export { DELEGATE_INSTRUCTION } from './lead-prompts.js';

/** Options of {@link coordinate}. */
export interface CoordinateOptions {
  /** The runnable's name. Default: `coordinate`. */
  name?: string;
  /** Decomposes the work (unless `tasks` are given), answers, approves, reassigns and writes the synthesis. */
  lead: Agent;
  /** The pool of workers; names must be unique and differ from the lead's. */
  workers: Agent[];
  /** Workers that do not start with the others: the lead starts one with `spawn_worker` when the work needs it. */
  standby?: Agent[];
  /**
   * Time limit of one lead turn, on the run's clock. A turn that takes
   * longer is abandoned (a `coord.lead` event): the workers carry on, the
   * questions of that turn get the default answer, and the lead's session
   * is opened again for its next turn. Default: none.
   */
  leadTurnTimeoutMs?: number;
  /** The tasks; without them the lead decomposes the request into a JSON task list. */
  tasks?: TaskInput[];
  /** The lead gets only coordination tools and is told not to do the work itself. Default: true. */
  delegateMode?: boolean;
  /** Workers submit a plan before working; `true` for the default criteria and 3 cycles. Default: off. */
  planApproval?: boolean | PlanApprovalOptions;
  /** Stuck detection: `expectedTaskMs` until there is an average; `statusTimeoutMs` default 60000. */
  stuck: StuckOptions;
  /** A workspace per task, from this strategy, in `baseDir`. */
  workspace?: { strategy: WorkspaceStrategy; baseDir: string };
  /** Text every worker receives with its task. */
  sharedContext?: string;
  /** Questions a worker may ask per task in the text form. Default: 3. */
  maxQuestions?: number;
  /**
   * Run the workers' turns through an executor (`bullmqExecutor` from
   * `troupe/bullmq`, or an in-process one) instead of in conversations
   * here: each turn of a worker on a task (its plan, its work, its reply
   * after an answer from the lead) is one job whose runnable is the
   * worker's agent (by name on a remote worker) and whose input is what the
   * worker was told about the task so far. Workers ask in the text form
   * (`QUESTION:`); the lead, the task list, the bus and stuck detection
   * stay here. Not with `workspace` (a remote worker has its own). Default: none.
   */
  executor?: TurnExecutor;
}

/** A coordination's checkpointed state. */
export const coordinationStateSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('coordinate'),
  name: z.string(),
  request: z.string(),
  tasks: taskListSchema,
  durations: z.array(z.number()),
  synthesis: z.string().optional(),
});

/** A coordination's checkpointed state. */
export type CoordinationState = z.output<typeof coordinationStateSchema>;

/** What {@link coordinate} produces. */
export interface CoordinationOutcome extends Outcome {
  /** The lead's synthesis (also `output`). */
  synthesis: string;
  /** Every task at the end. */
  tasks: CoordTask[];
  /** Tasks that need a person: blocked ones. */
  needsPerson: CoordTask[];
  /** Every message of the bus. */
  messages: CoordMessage[];
  /** The final state (what the coordination's checkpoint holds). */
  state: CoordinationState;
}

/**
 * Create a lead coordination.
 *
 * @example
 * ```ts
 * const flow = coordinate({ lead, workers: [ana, ben, cy], stuck: { expectedTaskMs: 60_000 }, planApproval: true });
 * const result = await run(flow, 'Add dark mode, a settings page and an export button', { adapter, store });
 * console.log(result.synthesis);
 * ```
 */
export function coordinate(options: CoordinateOptions): Runnable<CoordinationOutcome> {
  const o = validate(options);
  return defineRunnable<CoordinationOutcome>({
    name: o.name,
    kind: 'coordinate',
    agent: o.lead.name,
    run: (input, ctx) => runCoordination(o, input, ctx),
  });
}

type Resolved = ReturnType<typeof validate>;

async function runCoordination(o: Resolved, input: string, ctx: RunContext): Promise<Omit<CoordinationOutcome, 'usage'>> {
  const checkpoint = ctx.checkpoint<CoordinationState, CoordinationOutcome>({ kind: 'coordinate', version: 1, state: coordinationStateSchema });
  const restored = await checkpoint.restore();
  if (restored?.outcome) return restored.outcome;
  const run = new CoordinationRun(o, ctx, checkpoint, restored?.state, input);
  try {
    const runtime = await run.start();
    await run.coordinate(runtime);
    return await run.finish(runtime);
  } finally {
    await run.close();
  }
}

/** One run of a coordination: the task list, the bus, the workers' slots and the lead's session. */
class CoordinationRun {
  readonly #o: Resolved;
  readonly #ctx: RunContext;
  readonly #checkpoint: Checkpoint<CoordinationState, CoordinationOutcome>;
  readonly #from: CoordinationState | undefined;
  readonly #request: string;
  readonly #started: number;
  readonly #stuck: StuckDetector;
  readonly #changes = new Changes();
  readonly #slots: Map<string, WorkerSlot>;
  readonly #bus: MessageBus;
  readonly #reviews = new Map<string, CoordMessage>();
  #leadAgent: Agent;
  readonly #toolForm: boolean;
  readonly #tools: ToolDefinition[];
  #lead: Conversation | undefined;
  #runtime: Runtime | undefined;
  #concluded: string | undefined;
  #closing = false;
  #savedVersion = -1;
  #delegate: boolean;
  /** The lead's session must be opened again before its next turn (delegate mode changed, or a turn timed out). */
  #reopen = false;
  /** Told to the lead with its next turn (delegate mode changed, a worker joined). */
  #notices: string[] = [];
  #leadTimedOut = false;
  readonly #detach: (() => void) | undefined;

  constructor(o: Resolved, ctx: RunContext, checkpoint: Checkpoint<CoordinationState, CoordinationOutcome>, from: CoordinationState | undefined, input: string) {
    this.#o = o;
    this.#ctx = ctx;
    this.#checkpoint = checkpoint;
    this.#from = from;
    this.#request = from?.request ?? input;
    this.#started = ctx.clock.now();
    this.#stuck = new StuckDetector(o.stuck);
    if (from) this.#stuck.restoreDurations(from.durations);
    this.#slots = new Map<string, WorkerSlot>(o.workers.map((w) => [w.name, { agent: w, state: 'idle', controller: new AbortController(), shutdown: false }]));
    for (const w of o.standby ?? []) this.#slots.set(w.name, { agent: w, state: 'stopped', controller: new AbortController(), shutdown: false });
    this.#delegate = o.delegateMode;
    this.#bus = new MessageBus({
      clock: ctx.clock,
      onMessage: (message) => {
        if (this.#slots.has(message.sender)) this.#stuck.heard(message.sender, message.time);
        ctx.emit('coord.message', { coordination: o.name, message });
      },
    });
    // The lead's session: coordination tools only in delegate mode, never the lead's own tools there.
    this.#toolForm = o.lead.resolveAdapter(ctx).capabilities.tools;
    this.#leadAgent = o.delegateMode ? delegateLead(o.lead) : o.lead;
    // The run's control (`run(flow, input, { control })`), when it is a CoordinationControl no other coordination of the run holds.
    const control = ctx.control instanceof CoordinationControl && !ctx.control.controlsCoordination ? ctx.control : undefined;
    this.#detach = control?.attach({
      addWorker: (worker) => this.#addWorker(worker),
      removeWorker: (name, reason) => this.#apply({ type: 'shutdown', worker: name, ...defined({ reason }) }),
      setDelegateMode: (on) => this.#setDelegateMode(on),
    });
    this.#tools = this.#toolForm ? coordinationTools((a) => this.#apply(a), () => (this.#runtime ? describeTasks(this.#runtime.tasks.list()) : PLANNING)) : [];
  }

  /** The task list (restored, or given, or decomposed by the lead), saved; the workers started. */
  async start(): Promise<Runtime> {
    const ctx = this.#ctx;
    const o = this.#o;
    const onTransition = ({ task, from: was, to, reason, version }: { task: CoordTask; from?: CoordTask['status']; to: CoordTask['status']; reason?: string; version: number }) => {
      ctx.emit('coord.task', { coordination: o.name, task: task.id, title: task.title, to, version, ...defined({ from: was, worker: task.assignee, reason }) });
      this.#changes.notify();
    };
    let tasks: TaskStore;
    if (this.#from) {
      tasks = TaskStore.restore(this.#from.tasks, { onTransition, now: () => ctx.clock.now() });
      for (const t of tasks.list()) if (t.status === 'claimed' || t.status === 'in-progress') tasks.reassign(t.id, undefined, 'resumed');
    } else {
      tasks = new TaskStore([], { onTransition, now: () => ctx.clock.now() });
      const list = o.tasks ?? (await decompose(this.#request, (text) => this.#talk(text), o.workers, (message) => ctx.emit('warning', { message, code: 'json_repaired' })));
      for (const t of list) tasks.add(t);
      this.#decide('tasks-planned', { detail: `${list.length} tasks` });
    }
    const runtime: Runtime = {
      name: o.name, lead: o.lead.name, ctx, request: this.#request, tasks, bus: this.#bus, stuck: this.#stuck, changes: this.#changes,
      planApproval: o.planApproval, workspace: o.workspace, sharedContext: o.sharedContext, maxQuestions: o.maxQuestions,
      executor: o.executor, starts: new Map(),
    };
    this.#runtime = runtime;
    await this.#save(runtime);
    for (const slot of this.#slots.values()) if (slot.state !== 'stopped') spawn(runtime, slot);
    return runtime;
  }

  /** The lead's loop: messages, stuck checks, until every task is resolved and the workers are idle. */
  async coordinate(runtime: Runtime): Promise<void> {
    const { tasks } = runtime;
    const lead = this.#o.lead.name;
    for (;;) {
      throwIfAborted(this.#ctx.signal);
      const seq = this.#changes.seq;
      const inbox = this.#bus.poll(lead);
      this.#checkStuck(runtime);
      const needLead = inbox.filter((m) => m.kind === 'question' || m.kind === 'plan-submission' || (m.kind === 'status' && ['done', 'failed'].includes(String(m.metadata?.['state']))));
      if (needLead.length > 0) {
        for (const m of needLead) if (m.kind === 'plan-submission' && m.taskId) this.#reviews.set(m.taskId, m);
        await this.#sendLead(updatePrompt(runtime, needLead));
        settleUnanswered(runtime, this.#slots, needLead, this.#reviews, (d, e) => this.#decide(d, e));
      }
      const live = [...this.#slots.values()].filter((s) => s.state === 'idle' || s.state === 'busy');
      if (live.length === 0 && !tasks.allResolved()) {
        for (const t of tasks.list()) if (t.status === 'pending' || t.status === 'claimed') tasks.block(t.id, 'No worker left to do it');
      }
      await this.#save(runtime);
      if (tasks.allResolved() && live.every((s) => s.state === 'idle') && this.#bus.peek(lead).length === 0) return;
      await waitForChange(this.#ctx, this.#changes, seq, this.#stuck.nextDeadline());
    }
  }

  /** Stop the workers, have the lead write the synthesis, save the outcome. */
  async finish(runtime: Runtime): Promise<Omit<CoordinationOutcome, 'usage'>> {
    const o = this.#o;
    const ctx = this.#ctx;
    this.#closing = true;
    for (const slot of this.#slots.values()) {
      if (slot.state === 'idle' || slot.state === 'busy') sendMessage(runtime, { kind: 'shutdown-request', sender: o.lead.name, recipient: slot.agent.name, text: 'All tasks are resolved.' });
    }
    await Promise.allSettled([...this.#slots.values()].map((s) => s.promise));
    this.#bus.poll(o.lead.name);
    const synthesisReply = await this.#sendLead(synthesisPrompt(runtime.tasks.list()));
    // A lead that did not answer in time: the task list is the synthesis.
    const synthesis = this.#concluded ?? synthesisReply ?? `The lead did not write a synthesis in time. The tasks:\n${describeTasks(runtime.tasks.list())}`;
    this.#concluded = synthesis;
    const all = runtime.tasks.list();
    const outcome: Omit<CoordinationOutcome, 'usage'> = {
      output: synthesis, agent: o.lead.name, status: 'completed', synthesis, tasks: all, needsPerson: all.filter((t) => t.status === 'blocked'), messages: this.#bus.history(), state: this.#state(runtime),
    };
    await this.#save(runtime, outcome);
    const ids = (status: CoordTask['status']) => all.filter((t) => t.status === status).map((t) => t.id);
    ctx.emit('coord.completed', { coordination: o.name, done: ids('done'), failed: ids('failed'), cancelled: ids('cancelled'), blocked: ids('blocked'), durationMs: ctx.clock.now() - this.#started });
    return outcome;
  }

  async close(): Promise<void> {
    this.#detach?.();
    for (const slot of this.#slots.values()) slot.controller.abort();
    await Promise.allSettled([...this.#slots.values()].map((s) => s.promise));
    await this.#lead?.close().catch(() => undefined);
  }

  #decide(decision: CoordDecisionKind, extra: { task?: string; worker?: string; detail?: string } = {}): void {
    this.#ctx.emit('coord.decision', { coordination: this.#o.name, decision, ...extra });
  }

  /** Status checks for workers that went silent, and stuck workers stopped. */
  #checkStuck(runtime: Runtime): void {
    const lead = this.#o.lead.name;
    for (const action of this.#stuck.check(this.#ctx.clock.now())) {
      if (action.type === 'status-check') {
        sendMessage(runtime, { kind: 'status', sender: lead, recipient: action.worker, taskId: action.task, text: `Status check: how is task ${action.task} going?`, metadata: { statusCheck: true } });
        this.#decide('status-check', { worker: action.worker, task: action.task, detail: `silent for ${action.silentMs} ms` });
      } else {
        stopStuck(runtime, this.#slots, action.worker, action.task, (d, e) => this.#decide(d, e));
      }
    }
  }

  #apply(action: LeadAction): string {
    const runtime = this.#runtime;
    if (!runtime) return PLANNING;
    if (this.#closing && action.type !== 'conclude') return 'Every task is resolved and the workers have stopped: only `conclude` is available now.';
    return applyAction(runtime, this.#slots, action, (d, e) => this.#decide(d, e), (s) => (this.#concluded = s), this.#reviews);
  }

  async #talk(text: string): Promise<string> {
    const o = this.#o;
    if (this.#reopen) {
      this.#reopen = false;
      const old = this.#lead;
      this.#lead = undefined;
      await old?.close().catch(() => undefined);
    }
    const workers = [...this.#slots.values()].map((s) => s.agent);
    this.#lead ??= await this.#leadAgent.converse(this.#ctx, { ...(this.#tools.length ? { extraTools: this.#tools } : {}), system: leadSystem(workers, this.#leadAgent, this.#toolForm) });
    const message = this.#notices.length === 0 ? text : `${this.#notices.join('\n')}\n\n${text}`;
    this.#notices = [];
    const limit = o.leadTurnTimeoutMs;
    if (limit === undefined) return (await this.#lead.send(message, { signal: this.#ctx.signal })).text;
    const timer = timeoutSignal(limit, this.#ctx.clock, `The lead's turn took longer than ${limit} ms`);
    try {
      const reply = (await this.#lead.send(message, { signal: combineSignals(this.#ctx.signal, timer.signal) })).text;
      if (this.#leadTimedOut) {
        this.#leadTimedOut = false;
        this.#ctx.emit('coord.lead', { coordination: o.name, status: 'responsive', timeoutMs: limit });
      }
      return reply;
    } finally {
      timer.clear();
    }
  }

  /** One lead turn that acts; a turn past `leadTurnTimeoutMs` acts on nothing (undefined) and the coordination goes on. */
  async #sendLead(text: string): Promise<string | undefined> {
    let reply: string;
    try {
      reply = await this.#talk(text);
    } catch (error) {
      if (!(error instanceof TimeoutError) || this.#ctx.signal.aborted || this.#o.leadTurnTimeoutMs === undefined) throw error;
      this.#leadTimedOut = true;
      this.#reopen = true;
      this.#ctx.emit('coord.lead', { coordination: this.#o.name, status: 'timed-out', timeoutMs: this.#o.leadTurnTimeoutMs });
      return undefined;
    }
    for (const action of parseLeadActions(reply).actions) this.#apply(action);
    return reply;
  }

  /** A new worker, started at once (the control's `addWorker`). */
  #addWorker(worker: Agent): string {
    const name = worker.name;
    if (name === this.#o.lead.name || this.#slots.has(name)) throw new ConfigurationError(`Worker name "${name}" is already used (or is the lead's)`, { details: { worker: name } });
    if (this.#closing) return 'Every task is resolved and the workers have stopped: no worker is added now.';
    this.#slots.set(name, { agent: worker, state: 'stopped', controller: new AbortController(), shutdown: false });
    this.#notices.push(`A new worker joined: ${name}${worker.options.description ? ` (${worker.options.description})` : ''}.`);
    return this.#apply({ type: 'spawn', worker: name });
  }

  /** Switch delegate mode; the lead's session is opened again with its next turn, which says so. */
  #setDelegateMode(on: boolean): string {
    if (this.#delegate === on) return `Delegate mode is already ${on ? 'on' : 'off'}.`;
    const o = this.#o;
    this.#delegate = on;
    this.#leadAgent = on ? delegateLead(o.lead) : o.lead;
    this.#reopen = true;
    this.#notices.push(
      on
        ? 'Delegate mode is now on: coordinate only, with your coordination tools; the workers do the work.'
        : 'Delegate mode is now off: besides coordinating, you may do work yourself with your own tools.',
    );
    this.#decide('delegate-mode', { detail: on ? 'on' : 'off' });
    return `Delegate mode ${on ? 'on' : 'off'} from the lead's next turn.`;
  }

  #state(runtime: Runtime): CoordinationState {
    const o = this.#o;
    return {
      schemaVersion: 1, kind: 'coordinate', name: o.name, request: this.#request, tasks: runtime.tasks.snapshot(), durations: this.#stuck.durations(),
      ...defined({ synthesis: this.#concluded }),
    };
  }

  /** Save the state when the task list changed since the last save (and always with the outcome). */
  async #save(runtime: Runtime, outcome?: Omit<CoordinationOutcome, 'usage'>): Promise<void> {
    const checkpoint = this.#checkpoint;
    if (!checkpoint.enabled || (outcome === undefined && runtime.tasks.version === this.#savedVersion)) return;
    this.#savedVersion = runtime.tasks.version;
    if (outcome) await checkpoint.finish(this.#state(runtime), outcome);
    else await checkpoint.save(this.#state(runtime));
  }
}

const PLANNING = 'Not available while the task list is being written: reply with the JSON task list.';

async function waitForChange(ctx: RunContext, changes: Changes, seq: number, deadline: number | undefined): Promise<void> {
  const controller = new AbortController();
  const signal = AbortSignal.any([ctx.signal, controller.signal]);
  const waits: Array<Promise<void>> = [changes.wait(seq, signal)];
  if (deadline !== undefined) waits.push(sleep(ctx.clock, Math.max(0, deadline - ctx.clock.now()), signal));
  try {
    await Promise.race(waits);
  } finally {
    controller.abort();
    await Promise.allSettled(waits);
  }
  throwIfAborted(ctx.signal);
}

const isAgent = (v: unknown): boolean => (v as { kind?: unknown } | null)?.kind === 'agent';
const agentOption = check('an agent', isAgent);

/** `planApproval`: `true`, `false`, or `{ criteria, maxCycles }`. */
const planApprovalCheck: OptionCheck = (name, value) => {
  if (value === undefined || typeof value === 'boolean') return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a boolean or an object, got ${describeValue(value)}`);
  planApprovalOptions.check(value, `${name}.`, 'coordinate');
};

/** The description {@link coordinate} checks its options against. */
const coordinateOptions = defineOptions<CoordinateOptions>('coordinate', {
  name: nonEmptyString,
  lead: required(agentOption),
  workers: required(check('a non-empty list of agents', (v) => Array.isArray(v) && v.length > 0 && v.every(isAgent))),
  standby: check('a list of agents', (v) => Array.isArray(v) && v.every(isAgent)),
  leadTurnTimeoutMs: positiveNumber,
  tasks: check('a non-empty list', (v) => Array.isArray(v) && v.length > 0),
  delegateMode: boolean,
  planApproval: planApprovalCheck,
  stuck: required((name, value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be an object with \`expectedTaskMs\`, got ${describeValue(value)}`);
    stuckOptions.check(value as StuckOptions, `${name}.`, 'coordinate');
  }),
  workspace: object,
  sharedContext: string,
  maxQuestions: nonNegativeInteger,
  executor: check('an executor (with dispatch())', (v) => typeof v === 'object' && v !== null && typeof (v as { dispatch?: unknown }).dispatch === 'function'),
});

function validate(options: CoordinateOptions) {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected coordinate options to be an object, got ${describeValue(options)}`);
  coordinateOptions.check(options);
  const names = new Set<string>([options.lead.name]);
  for (const w of options.workers) {
    if (names.has(w.name)) throw new ConfigurationError(`Worker name "${w.name}" is used twice (or is the lead's)`, { details: { worker: w.name } });
    names.add(w.name);
  }
  for (const w of options.standby ?? []) {
    if (names.has(w.name)) throw new ConfigurationError(`Worker name "${w.name}" is used twice (or is the lead's)`, { details: { worker: w.name } });
    names.add(w.name);
  }
  const executor = options.executor;
  if (executor !== undefined && options.workspace !== undefined) {
    throw new ConfigurationError('`workspace` and `executor` do not go together: turns run on workers elsewhere, which prepare workspaces of their own (`startWorker({ workspace })`)');
  }
  const maxQuestions = options.maxQuestions ?? 3;
  if (options.tasks !== undefined) new TaskStore(options.tasks);
  return {
    ...options,
    name: options.name ?? 'coordinate',
    delegateMode: options.delegateMode ?? true,
    planApproval: resolvePlanApproval(options.planApproval, 'coordinate'),
    maxQuestions,
  };
}

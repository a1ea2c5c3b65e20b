/**
 * `coordinate`: a lead that keeps coordinating while its workers run. A
 * shared task list, a message bus, plan approval, stuck detection and
 * reassignment; the lead writes a synthesis once every task is resolved.
 * @module
 */
import { z } from 'zod';
import { throwIfAborted } from '../core/abort.js';
import { sleep } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { CoordDecisionKind } from './events.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import type { Agent, Conversation } from '../patterns/agent.js';
import type { WorkspaceStrategy } from '../workspaces/types.js';
import { applyAction, settleUnanswered, spawn, stopStuck } from './lead-actions.js';
import { decompose, delegateLead, describeTasks, leadSystem, synthesisPrompt, updatePrompt } from './lead-prompts.js';
import { MessageBus, type CoordMessage } from './message-bus.js';
import { resolvePlanApproval, type PlanApprovalOptions } from './plan-approval.js';
import { StuckDetector, type StuckOptions } from './stuck.js';
import { TaskStore, taskListSchema, type CoordTask, type TaskInput } from './task-store.js';
import { coordinationTools, parseLeadActions, type LeadAction } from './tools.js';
import { Changes, sendMessage, type Runtime, type WorkerSlot } from './worker.js';

export { DELEGATE_INSTRUCTION } from './lead-prompts.js';

/** Options of {@link coordinate}. */
export interface CoordinateOptions {
  /** The runnable's name. Default: `coordinate`. */
  name?: string;
  /** Decomposes the work (unless `tasks` are given), answers, approves, reassigns and writes the synthesis. */
  lead: Agent;
  /** The pool of workers; names must be unique and differ from the lead's. */
  workers: Agent[];
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
  return {
    name: o.name,
    kind: 'coordinate',
    run: (input, parent) =>
      parent.enter<CoordinationOutcome>({ kind: 'coordinate', name: o.name, agent: o.lead.name }, (ctx) => runCoordination(o, input, ctx)),
  };
}

type Resolved = ReturnType<typeof validate>;

async function runCoordination(o: Resolved, input: string, ctx: RunContext): Promise<Omit<CoordinationOutcome, 'usage'>> {
  const started = ctx.clock.now();
  const checkpoint = ctx.checkpoint<CoordinationState, CoordinationOutcome>({ kind: 'coordinate', version: 1, state: coordinationStateSchema });
  const restored = await checkpoint.restore();
  if (restored?.outcome) return restored.outcome;
  const from = restored?.state;
  const request = from?.request ?? input;
  const decide = (decision: CoordDecisionKind, extra: { task?: string; worker?: string; detail?: string } = {}) =>
    ctx.emit('coord.decision', { coordination: o.name, decision, ...extra });
  const stuck = new StuckDetector(o.stuck);
  if (from) stuck.restoreDurations(from.durations);
  const changes = new Changes();
  const onTransition = ({ task, from: was, to, reason, version }: { task: CoordTask; from?: CoordTask['status']; to: CoordTask['status']; reason?: string; version: number }) => {
    ctx.emit('coord.task', { coordination: o.name, task: task.id, title: task.title, to, version, ...(was === undefined ? {} : { from: was }), ...(task.assignee === undefined ? {} : { worker: task.assignee }), ...(reason === undefined ? {} : { reason }) });
    changes.notify();
  };
  const slots = new Map<string, WorkerSlot>(o.workers.map((w) => [w.name, { agent: w, state: 'idle', controller: new AbortController(), shutdown: false }]));
  const bus = new MessageBus({
    clock: ctx.clock,
    onMessage: (message) => {
      if (slots.has(message.sender)) stuck.heard(message.sender, message.time);
      ctx.emit('coord.message', { coordination: o.name, message });
    },
  });

  // The lead's session: coordination tools only in delegate mode, never the lead's own tools there.
  const toolForm = o.lead.resolveAdapter(ctx).capabilities.tools;
  const leadAgent = o.delegateMode ? delegateLead(o.lead) : o.lead;
  let concluded: string | undefined;
  let tasks: TaskStore | undefined;
  let runtime: Runtime | undefined;
  const planning = 'Not available while the task list is being written: reply with the JSON task list.';
  let closing = false;
  const apply = (action: LeadAction): string => {
    if (!runtime) return planning;
    if (closing && action.type !== 'conclude') return 'Every task is resolved and the workers have stopped: only `conclude` is available now.';
    return applyAction(runtime, slots, action, decide, (s) => (concluded = s), reviews);
  };
  const reviews = new Map<string, CoordMessage>();
  const tools = toolForm ? coordinationTools((a) => apply(a), () => (runtime ? describeTasks(runtime.tasks.list()) : planning)) : [];
  let lead: Conversation | undefined;
  const talk = async (text: string): Promise<string> => {
    lead ??= await leadAgent.converse(ctx, { ...(tools.length ? { extraTools: tools } : {}), system: leadSystem(o.workers, leadAgent, toolForm) });
    return (await lead.send(text, { signal: ctx.signal })).text;
  };
  const sendLead = async (text: string): Promise<string> => {
    const reply = await talk(text);
    for (const action of parseLeadActions(reply).actions) apply(action);
    return reply;
  };

  try {
    if (from) {
      tasks = TaskStore.restore(from.tasks, { onTransition, now: () => ctx.clock.now() });
      for (const t of tasks.list()) if (t.status === 'claimed' || t.status === 'in-progress') tasks.reassign(t.id, undefined, 'resumed');
    } else {
      tasks = new TaskStore([], { onTransition, now: () => ctx.clock.now() });
      const list = o.tasks ?? (await decompose(request, talk, o.workers, (message) => ctx.emit('warning', { message, code: 'json_repaired' })));
      for (const t of list) tasks.add(t);
      decide('tasks-planned', { detail: `${list.length} tasks` });
    }
    runtime = {
      name: o.name, lead: o.lead.name, ctx, request, tasks, bus, stuck, changes,
      planApproval: o.planApproval, workspace: o.workspace, sharedContext: o.sharedContext, maxQuestions: o.maxQuestions,
    };
    const state = (): CoordinationState => ({
      schemaVersion: 1, kind: 'coordinate', name: o.name, request, tasks: tasks!.snapshot(), durations: stuck.durations(),
      ...(concluded === undefined ? {} : { synthesis: concluded }),
    });
    let savedVersion = -1;
    const save = async (outcome?: Omit<CoordinationOutcome, 'usage'>) => {
      if (!checkpoint.enabled || (outcome === undefined && tasks!.version === savedVersion)) return;
      savedVersion = tasks!.version;
      if (outcome) await checkpoint.finish(state(), outcome);
      else await checkpoint.save(state());
    };
    await save();
    for (const slot of slots.values()) spawn(runtime, slot);

    // The lead's loop: messages, stuck checks, completion.
    for (;;) {
      throwIfAborted(ctx.signal);
      const seq = changes.seq;
      const inbox = bus.poll(o.lead.name);
      for (const action of stuck.check(ctx.clock.now())) {
        if (action.type === 'status-check') {
          sendMessage(runtime, { kind: 'status', sender: o.lead.name, recipient: action.worker, taskId: action.task, text: `Status check: how is task ${action.task} going?`, metadata: { statusCheck: true } });
          decide('status-check', { worker: action.worker, task: action.task, detail: `silent for ${action.silentMs} ms` });
        } else {
          stopStuck(runtime, slots, action.worker, action.task, decide);
        }
      }
      const needLead = inbox.filter((m) => m.kind === 'question' || m.kind === 'plan-submission' || (m.kind === 'status' && ['done', 'failed'].includes(String(m.metadata?.['state']))));
      if (needLead.length > 0) {
        for (const m of needLead) if (m.kind === 'plan-submission' && m.taskId) reviews.set(m.taskId, m);
        await sendLead(updatePrompt(runtime, needLead));
        settleUnanswered(runtime, slots, needLead, reviews, decide);
      }
      const live = [...slots.values()].filter((s) => s.state === 'idle' || s.state === 'busy');
      if (live.length === 0 && !tasks.allResolved()) {
        for (const t of tasks.list()) if (t.status === 'pending' || t.status === 'claimed') tasks.block(t.id, 'No worker left to do it');
      }
      await save();
      if (tasks.allResolved() && live.every((s) => s.state === 'idle') && bus.peek(o.lead.name).length === 0) break;
      await waitForChange(ctx, changes, seq, stuck.nextDeadline());
    }

    closing = true;
    for (const slot of slots.values()) {
      if (slot.state === 'idle' || slot.state === 'busy') sendMessage(runtime, { kind: 'shutdown-request', sender: o.lead.name, recipient: slot.agent.name, text: 'All tasks are resolved.' });
    }
    await Promise.allSettled([...slots.values()].map((s) => s.promise));
    bus.poll(o.lead.name);
    const synthesisReply = await sendLead(synthesisPrompt(tasks.list()));
    const synthesis = concluded ?? synthesisReply;
    concluded = synthesis;
    const all = tasks.list();
    const outcome: Omit<CoordinationOutcome, 'usage'> = {
      output: synthesis, agent: o.lead.name, status: 'completed', synthesis, tasks: all, needsPerson: all.filter((t) => t.status === 'blocked'), messages: bus.history(), state: state(),
    };
    await save(outcome);
    const ids = (status: CoordTask['status']) => all.filter((t) => t.status === status).map((t) => t.id);
    ctx.emit('coord.completed', { coordination: o.name, done: ids('done'), failed: ids('failed'), cancelled: ids('cancelled'), blocked: ids('blocked'), durationMs: ctx.clock.now() - started });
    return outcome;
  } finally {
    for (const slot of slots.values()) slot.controller.abort();
    await Promise.allSettled([...slots.values()].map((s) => s.promise));
    await lead?.close().catch(() => undefined);
  }
}

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

function validate(options: CoordinateOptions) {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected coordinate options to be an object, got ${describeValue(options)}`);
  if (!options.lead || options.lead.kind !== 'agent') throw new ConfigurationError(`Expected \`lead\` to be an agent, got ${describeValue(options.lead)}`);
  if (!Array.isArray(options.workers) || options.workers.length === 0 || options.workers.some((w) => w?.kind !== 'agent')) {
    throw new ConfigurationError(`Expected \`workers\` to be a non-empty list of agents, got ${describeValue(options.workers)}`);
  }
  const names = new Set<string>([options.lead.name]);
  for (const w of options.workers) {
    if (names.has(w.name)) throw new ConfigurationError(`Worker name "${w.name}" is used twice (or is the lead's)`, { details: { worker: w.name } });
    names.add(w.name);
  }
  if (!options.stuck || typeof options.stuck !== 'object') throw new ConfigurationError(`Expected \`stuck\` to be an object with \`expectedTaskMs\`, got ${describeValue(options.stuck)}`);
  new StuckDetector(options.stuck);
  const maxQuestions = options.maxQuestions ?? 3;
  if (!Number.isInteger(maxQuestions) || maxQuestions < 0) throw new ConfigurationError(`Expected \`maxQuestions\` to be a non-negative integer, got ${describeValue(options.maxQuestions)}`);
  if (options.tasks !== undefined) {
    if (!Array.isArray(options.tasks) || options.tasks.length === 0) throw new ConfigurationError(`Expected \`tasks\` to be a non-empty list, got ${describeValue(options.tasks)}`);
    new TaskStore(options.tasks);
  }
  return {
    ...options,
    name: options.name ?? 'coordinate',
    delegateMode: options.delegateMode ?? true,
    planApproval: resolvePlanApproval(options.planApproval),
    maxQuestions,
  };
}

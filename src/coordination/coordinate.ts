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
import { ConfigurationError, ModelBehaviorError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import type { CoordDecisionKind } from '../core/events.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { agent as createAgent, type Agent, type Conversation } from '../patterns/agent.js';
import { loadCheckpoint, saveCheckpoint } from '../persistence/checkpoint.js';
import type { Store } from '../persistence/store.js';
import type { WorkspaceStrategy } from '../workspaces/types.js';
import { MessageBus, type CoordMessage } from './message-bus.js';
import { criteriaBlock, planReviewEntry, resolvePlanApproval, type PlanApprovalOptions } from './plan-approval.js';
import { StuckDetector, type StuckOptions } from './stuck.js';
import { TaskStore, taskInputSchema, taskListSchema, type CoordTask, type TaskInput } from './task-store.js';
import { COORDINATION_TOOL_NAMES, LEAD_TEXT_PROTOCOL, coordinationTools, parseLeadActions, type LeadAction } from './tools.js';
import { Changes, sendMessage, workerLoop, type Runtime, type WorkerSlot } from './worker.js';

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
  /** Checkpoints the coordination after every batch of transitions (`runs/<runId>/checkpoint`). */
  store?: Store;
  /** Continue a coordination: the run id of its checkpoint in `store`, or its state. Done tasks are not redone. */
  resumeFrom?: string | CoordinationState;
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
  /** The final state (resume from it with `resumeFrom`). */
  state: CoordinationState;
}

/** Instruction added to the lead's system prompt in delegate mode. */
export const DELEGATE_INSTRUCTION =
  'You are the lead of a team of workers. Coordinate only: plan, answer questions, review plans, add, split, cancel and reassign tasks. ' +
  'Never do the work yourself; the workers do it.';

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
  const from = await loadState(o, ctx);
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
  const rt = (): Runtime => runtime!;
  let runtime: Runtime | undefined;
  const apply = (action: LeadAction): string => applyAction(rt(), slots, action, decide, (s) => (concluded = s), reviews);
  const reviews = new Map<string, CoordMessage>();
  const tools = toolForm ? coordinationTools((a) => apply(a), () => describeTasks(rt().tasks.list())) : [];
  let lead: Conversation | undefined;
  const talk = async (text: string): Promise<string> => {
    lead ??= await leadAgent.converse(ctx, { ...(tools.length ? { extraTools: tools } : {}), system: leadSystem(o, leadAgent, toolForm) });
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
      const list = o.tasks ?? (await decompose(request, talk, o.workers));
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
    const checkpoint = async () => {
      if (!o.store || tasks!.version === savedVersion) return;
      savedVersion = tasks!.version;
      await saveCheckpoint(o.store, ctx.runId, 'coordinate', state(), { clock: ctx.clock, signal: ctx.signal });
    };
    await checkpoint();
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
      await checkpoint();
      if (tasks.allResolved() && live.every((s) => s.state === 'idle') && bus.peek(o.lead.name).length === 0) break;
      await waitForChange(ctx, changes, seq, stuck.nextDeadline());
    }

    for (const slot of slots.values()) {
      if (slot.state === 'idle' || slot.state === 'busy') sendMessage(runtime, { kind: 'shutdown-request', sender: o.lead.name, recipient: slot.agent.name, text: 'All tasks are resolved.' });
    }
    await Promise.allSettled([...slots.values()].map((s) => s.promise));
    bus.poll(o.lead.name);
    const synthesisReply = await sendLead(synthesisPrompt(tasks.list()));
    const synthesis = concluded ?? synthesisReply;
    concluded = synthesis;
    savedVersion = -1;
    await checkpoint();
    const all = tasks.list();
    const ids = (status: CoordTask['status']) => all.filter((t) => t.status === status).map((t) => t.id);
    ctx.emit('coord.completed', { coordination: o.name, done: ids('done'), failed: ids('failed'), cancelled: ids('cancelled'), blocked: ids('blocked'), durationMs: ctx.clock.now() - started });
    return { output: synthesis, agent: o.lead.name, status: 'completed', synthesis, tasks: all, needsPerson: all.filter((t) => t.status === 'blocked'), messages: bus.history(), state: state() };
  } finally {
    for (const slot of slots.values()) slot.controller.abort();
    await Promise.allSettled([...slots.values()].map((s) => s.promise));
    await lead?.close().catch(() => undefined);
  }
}

function spawn(rt: Runtime, slot: WorkerSlot): void {
  slot.controller = new AbortController();
  slot.shutdown = false;
  slot.state = 'idle';
  slot.promise = workerLoop(rt, slot).catch(() => undefined);
}

function stopStuck(rt: Runtime, slots: Map<string, WorkerSlot>, worker: string, taskId: string, decide: Decide): void {
  const slot = slots.get(worker);
  decide('worker-stuck', { worker, task: taskId, detail: `no answer to the status check within ${rt.stuck.statusTimeoutMs} ms` });
  const task = rt.tasks.get(taskId);
  const idle = [...slots.values()].find((s) => s.state === 'idle' && s.agent.name !== worker);
  if (task && (task.status === 'in-progress' || task.status === 'claimed') && task.assignee === worker) {
    rt.tasks.reassign(taskId, idle?.agent.name, idle ? `reassigned to ${idle.agent.name}: ${worker} is stuck` : `${worker} is stuck`);
    decide('task-reassigned', { task: taskId, ...(idle ? { worker: idle.agent.name } : {}), detail: `from ${worker}` });
  }
  rt.stuck.stopped(worker, rt.ctx.clock.now());
  if (slot) {
    slot.state = 'stopped';
    slot.controller.abort();
  }
  decide('worker-stopped', { worker });
  rt.changes.notify();
}

type Decide = (decision: CoordDecisionKind, extra?: { task?: string; worker?: string; detail?: string }) => void;

function applyAction(
  rt: Runtime, slots: Map<string, WorkerSlot>, action: LeadAction, decide: Decide, conclude: (summary: string) => void, reviews: Map<string, CoordMessage>,
): string {
  const lead = rt.lead;
  try {
    switch (action.type) {
      case 'message': {
        if (!slots.has(action.to)) return `Unknown worker "${action.to}"`;
        const open = rt.bus.history().filter((m) => m.kind === 'question' && m.sender === action.to).filter((q) => !rt.bus.history().some((a) => a.kind === 'answer' && a.inReplyTo === q.id)).at(-1);
        sendMessage(rt, open
          ? { kind: 'answer', sender: lead, recipient: action.to, text: action.text, inReplyTo: open.id, ...(open.taskId ? { taskId: open.taskId } : {}) }
          : { kind: 'text', sender: lead, recipient: action.to, text: action.text });
        return open ? 'Answer sent.' : 'Message sent.';
      }
      case 'review': {
        const submission = reviews.get(action.taskId);
        if (!submission) return `No plan of task "${action.taskId}" awaits review`;
        reviews.delete(action.taskId);
        reviewPlan(rt, submission, action.approved, action.feedback, decide);
        return action.approved ? 'Plan approved.' : 'Plan rejected.';
      }
      case 'add': {
        const task = rt.tasks.add(action.task);
        decide('task-added', { task: task.id, detail: task.title });
        return `Task ${task.id} added.`;
      }
      case 'split': {
        const parts = rt.tasks.split(action.taskId, action.parts);
        decide('task-split', { task: action.taskId, detail: parts.map((p) => p.id).join(', ') });
        return `Task ${action.taskId} split into ${parts.map((p) => p.id).join(', ')}.`;
      }
      case 'cancel': {
        const before = rt.tasks.get(action.taskId);
        rt.tasks.cancel(action.taskId, action.reason ?? 'cancelled by the lead');
        if (before?.assignee) slots.get(before.assignee)?.taskController?.abort();
        decide('task-cancelled', { task: action.taskId, ...(action.reason ? { detail: action.reason } : {}) });
        return `Task ${action.taskId} cancelled.`;
      }
      case 'reassign': {
        const before = rt.tasks.get(action.taskId);
        if (action.to !== undefined && !slots.has(action.to)) return `Unknown worker "${action.to}"`;
        rt.tasks.reassign(action.taskId, action.to, 'reassigned by the lead');
        if (before?.assignee && before.assignee !== action.to) slots.get(before.assignee)?.taskController?.abort();
        decide('task-reassigned', { task: action.taskId, ...(action.to ? { worker: action.to } : {}) });
        return `Task ${action.taskId} reassigned.`;
      }
      case 'spawn': {
        const slot = slots.get(action.worker);
        if (!slot) return `Unknown worker "${action.worker}"`;
        if (slot.state === 'idle' || slot.state === 'busy') return `Worker "${action.worker}" is already running.`;
        spawn(rt, slot);
        decide('worker-spawned', { worker: action.worker });
        return `Worker ${action.worker} started.`;
      }
      case 'conclude':
        conclude(action.summary);
        return 'Synthesis recorded.';
    }
  } catch (error) {
    if (isTroupeError(error)) return `Not done: ${error.message}`;
    throw error;
  }
}

function reviewPlan(rt: Runtime, submission: CoordMessage, approved: boolean, feedback: string | undefined, decide: Decide): void {
  const taskId = submission.taskId!;
  const cycle = Number(submission.metadata?.['cycle'] ?? 1);
  const max = rt.planApproval?.maxCycles ?? 3;
  const verdict = (ok: boolean, text: string) =>
    sendMessage(rt, { kind: 'plan-approval', sender: rt.lead, recipient: submission.sender, taskId, approved: ok, inReplyTo: submission.id, text });
  if (approved) {
    decide('plan-approved', { task: taskId, worker: submission.sender, detail: `attempt ${cycle}` });
    verdict(true, feedback ?? 'Approved.');
    return;
  }
  const why = feedback ?? 'Rejected.';
  if (cycle >= max) {
    const task = rt.tasks.get(taskId);
    if (task && !['done', 'failed', 'cancelled', 'blocked'].includes(task.status)) rt.tasks.block(taskId, `Plan rejected ${cycle} times; needs a person. Last feedback: ${why}`);
    decide('task-blocked', { task: taskId, worker: submission.sender, detail: why });
  } else {
    decide('plan-rejected', { task: taskId, worker: submission.sender, detail: why });
  }
  verdict(false, why);
}

/** Plans without a verdict count as rejected; questions without an answer get a default one. */
function settleUnanswered(
  rt: Runtime, slots: Map<string, WorkerSlot>, handled: CoordMessage[], reviews: Map<string, CoordMessage>, decide: Decide,
): void {
  for (const m of handled) {
    if (m.kind === 'plan-submission' && m.taskId && reviews.get(m.taskId) === m) {
      reviews.delete(m.taskId);
      reviewPlan(rt, m, false, 'The lead gave no verdict on this plan; revise it and make it easy to judge.', decide);
    }
    if (m.kind === 'question') {
      const answered = rt.bus.history().some((a) => a.kind === 'answer' && a.inReplyTo === m.id);
      if (!answered && slots.has(m.sender)) {
        sendMessage(rt, { kind: 'answer', sender: rt.lead, recipient: m.sender, inReplyTo: m.id, text: 'No answer from the lead; use your best judgement and say what you assumed.', ...(m.taskId ? { taskId: m.taskId } : {}) });
        decide('question-unanswered', { worker: m.sender, ...(m.taskId ? { task: m.taskId } : {}) });
      }
    }
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

async function decompose(request: string, send: (text: string) => Promise<string>, workers: Agent[]): Promise<TaskInput[]> {
  const ask =
    `Request:\n${request}\n\nWorkers: ${workers.map((w) => w.name + (w.options.description ? ` (${w.options.description})` : '')).join(', ')}\n\n` +
    'Break the request into tasks for the workers. Reply with a JSON array only, each task as ' +
    '{"id": "t1", "title": "...", "description": "...", "dependsOn": ["..."], "files": ["..."]} (dependsOn and files optional; a task may depend only on tasks listed before it).';
  let reply = await send(ask);
  let issues = checkTaskList(reply);
  if (issues.length > 0) {
    reply = await send(`Your task list could not be used:\n${issues.map((i) => `- ${i}`).join('\n')}\n\nReply again with the corrected JSON array only.`);
    issues = checkTaskList(reply);
    if (issues.length > 0) {
      throw new ModelBehaviorError(`The lead's task list is invalid after a corrective retry: ${issues.join('; ')}`, { code: 'plan_invalid', details: { issues } });
    }
  }
  return readTaskList(reply)!;
}

const taskListInput = z.array(taskInputSchema).min(1);

function readTaskList(text: string): TaskInput[] | undefined {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text)?.[1];
  const body = fenced ?? text.slice(text.indexOf('['), text.lastIndexOf(']') + 1);
  try {
    const parsed = taskListInput.safeParse(JSON.parse(body));
    return parsed.success ? (parsed.data as TaskInput[]) : undefined;
  } catch {
    return undefined;
  }
}

function checkTaskList(text: string): string[] {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text)?.[1];
  const start = text.indexOf('[');
  const body = fenced ?? (start >= 0 ? text.slice(start, text.lastIndexOf(']') + 1) : '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return [`not a JSON array (${errorMessage(error)})`];
  }
  const parsed = taskListInput.safeParse(json);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.') || 'list'}: ${i.message}`);
  try {
    new TaskStore(parsed.data as TaskInput[]);
  } catch (error) {
    return [errorMessage(error)];
  }
  return [];
}

function updatePrompt(rt: Runtime, messages: CoordMessage[]): string {
  const lines = messages.map((m) => {
    if (m.kind === 'plan-submission') return planReviewEntry(m, m.taskId ? rt.tasks.get(m.taskId) : undefined, rt.planApproval ?? { criteria: [], maxCycles: 3 });
    if (m.kind === 'question') return `- QUESTION from ${m.sender}${m.taskId ? ` (task ${m.taskId})` : ''}: ${m.text}`;
    return `- ${String(m.metadata?.['state']).toUpperCase()}: ${m.sender} reports on task ${m.taskId ?? '?'}: ${m.text}`;
  });
  const plans = messages.some((m) => m.kind === 'plan-submission') && rt.planApproval ? `\n\n${criteriaBlock(rt.planApproval)}` : '';
  return `## Coordination update\n### Tasks\n${describeTasks(rt.tasks.list())}\n### New messages\n${lines.join('\n')}${plans}\n\nAct on these messages.`;
}

function synthesisPrompt(tasks: CoordTask[]): string {
  return `Every task is resolved.\n### Tasks\n${describeTasks(tasks)}\n\nWrite the synthesis for the user: what was done, what failed, and what needs a person.`;
}

function describeTasks(tasks: CoordTask[]): string {
  if (tasks.length === 0) return '(no tasks)';
  return tasks.map((t) => `- ${t.id} [${t.status}] ${t.title}${t.assignee ? ` (${t.assignee})` : ''}${t.dependsOn.length ? ` after ${t.dependsOn.join(', ')}` : ''}${t.result && t.status !== 'done' ? `: ${t.result}` : ''}`).join('\n');
}

function leadSystem(o: Resolved, lead: Agent, toolForm: boolean): string {
  const workers = o.workers.map((w) => w.name + (w.options.description ? ` (${w.options.description})` : '')).join(', ');
  const protocol = toolForm ? `Use your coordination tools (${COORDINATION_TOOL_NAMES.join(', ')}), or these text lines.\n${LEAD_TEXT_PROTOCOL}` : LEAD_TEXT_PROTOCOL;
  return [lead.options.system, `Your workers: ${workers}.`, protocol].filter((s): s is string => typeof s === 'string' && s !== '').join('\n\n');
}

/** The lead as a delegate: same model and adapter, no tools of its own, told not to do the work. */
function delegateLead(lead: Agent): Agent {
  const { tools: _own, workspace: _ws, system, ...rest } = lead.options;
  return createAgent({ ...rest, system: system ? `${system}\n\n${DELEGATE_INSTRUCTION}` : DELEGATE_INSTRUCTION });
}

async function loadState(o: Resolved, ctx: RunContext): Promise<CoordinationState | undefined> {
  if (o.resumeFrom === undefined) return undefined;
  if (typeof o.resumeFrom !== 'string') return o.resumeFrom;
  if (!o.store) throw new ConfigurationError('`resumeFrom` names a run; pass the `store` that holds its checkpoint');
  const saved = await loadCheckpoint(o.store, o.resumeFrom, coordinationStateSchema, { kind: 'coordinate', signal: ctx.signal });
  if (!saved) throw new ConfigurationError(`No coordination checkpoint of run "${o.resumeFrom}" in the store`, { details: { runId: o.resumeFrom } });
  return saved.state as CoordinationState;
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
  if (options.resumeFrom !== undefined && typeof options.resumeFrom !== 'string' && !coordinationStateSchema.safeParse(options.resumeFrom).success) {
    throw new ConfigurationError('Expected `resumeFrom` to be a run id or a coordination state (schemaVersion 1)');
  }
  return {
    ...options,
    name: options.name ?? 'coordinate',
    delegateMode: options.delegateMode ?? true,
    planApproval: resolvePlanApproval(options.planApproval),
    maxQuestions,
  };
}

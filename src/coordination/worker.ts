/**
 * The worker side of a lead coordination: claim a ready task, submit a plan
 * when asked, work in the task's workspace, report; answer status checks
 * whenever it has control.
 * @module
 */
import { combineSignals, throwIfAborted } from '../core/abort.js';
import { abortError } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { CancelledError, errorMessage } from '../core/errors.js';
import { MergeConflictError } from '../workspaces/conflict.js';
import type { Agent, Conversation } from '../patterns/agent.js';
import type { Workspace, WorkspaceStrategy } from '../workspaces/types.js';
import type { CoordMessage, MessageBus, MessageInput } from './message-bus.js';
import { planRequestPrompt, taskBrief, type ResolvedPlanApproval } from './plan-approval.js';
import type { StuckDetector } from './stuck.js';
import type { CoordTask, TaskStore } from './task-store.js';
import { askLeadTool, parseQuestion } from './tools.js';
import { dispatchedSession, type TaskSession, type TurnExecutor } from './task-job.js';

/** Wakes everyone waiting when anything changes; a sequence number makes sure no change is missed. */
export class Changes {
  #seq = 0;
  #waiters = new Set<() => void>();

  /** The current sequence number. */
  get seq(): number {
    return this.#seq;
  }

  /** Something changed. */
  notify(): void {
    this.#seq++;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }

  /** Resolves at the first change after `since` (at once if there was one). */
  wait(since: number, signal: AbortSignal): Promise<void> {
    if (this.#seq !== since) return Promise.resolve();
    if (signal.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(wake);
        reject(abortError(signal));
      };
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** What the workers and the lead share. */
export interface Runtime {
  name: string;
  lead: string;
  ctx: RunContext;
  request: string;
  tasks: TaskStore;
  bus: MessageBus;
  stuck: StuckDetector;
  changes: Changes;
  planApproval: ResolvedPlanApproval | undefined;
  workspace: { strategy: WorkspaceStrategy; baseDir: string } | undefined;
  sharedContext: string | undefined;
  maxQuestions: number;
  /** Workers' turns go through it, one job each (`CoordinateOptions.executor`). */
  executor: TurnExecutor | undefined;
  /** How many times each task has been started in this run: the attempt number of its jobs. */
  starts: Map<string, number>;
}

/** A worker of the pool and its state. */
export interface WorkerSlot {
  agent: Agent;
  state: 'idle' | 'busy' | 'stopped' | 'exited';
  controller: AbortController;
  /** Aborts the current task only (the lead cancelled or reassigned it). */
  taskController?: AbortController;
  task?: string;
  shutdown: boolean;
  promise?: Promise<void>;
}

/** Run one worker until it is told to shut down, is stopped, or the run is cancelled. */
export async function workerLoop(rt: Runtime, slot: WorkerSlot): Promise<void> {
  const name = slot.agent.name;
  const controller = slot.controller;
  const signal = combineSignals(rt.ctx.signal, controller.signal);
  const setState = (state: WorkerSlot['state']) => {
    if (slot.state === state || slot.controller !== controller) return;
    slot.state = state;
    rt.changes.notify();
  };
  rt.stuck.idle(name, rt.ctx.clock.now());
  try {
    for (;;) {
      throwIfAborted(signal);
      const seq = rt.changes.seq;
      handleInbox(rt, slot, rt.bus.poll(name));
      if (slot.shutdown) {
        send(rt, { kind: 'shutdown-response', sender: name, recipient: rt.lead, text: 'Shutting down.' });
        setState('exited');
        return;
      }
      const task = rt.tasks.claim(name);
      if (!task) {
        setState('idle');
        await rt.changes.wait(seq, signal);
        continue;
      }
      setState('busy');
      await workOn(rt, slot, task, signal);
      rt.stuck.idle(name, rt.ctx.clock.now());
    }
  } catch (error) {
    if (controller.signal.aborted && !rt.ctx.signal.aborted) return; // stopped by the lead
    throw error;
  } finally {
    // A worker spawned again has a new controller: leave its state alone.
    if (slot.controller === controller && slot.state !== 'exited') slot.state = controller.signal.aborted ? 'stopped' : 'exited';
    rt.changes.notify();
  }
}

async function workOn(rt: Runtime, slot: WorkerSlot, claimed: CoordTask, workerSignal: AbortSignal): Promise<void> {
  const name = slot.agent.name;
  const { ctx, tasks } = rt;
  const taskController = new AbortController();
  slot.taskController = taskController;
  slot.task = claimed.id;
  const signal = combineSignals(workerSignal, taskController.signal);
  const started = ctx.clock.now();
  const task = tasks.start(claimed.id, name, started);
  rt.stuck.working(name, task.id, started);
  send(rt, { kind: 'status', sender: name, recipient: rt.lead, taskId: task.id, text: `Started task ${task.id}.`, metadata: { state: 'started' } });
  let workspace: Workspace | undefined;
  let conversation: Conversation | TaskSession | undefined;
  try {
    if (rt.workspace) workspace = await rt.workspace.strategy.prepare({ id: task.id, planId: ctx.runId, title: task.title, baseDir: rt.workspace.baseDir, ...(task.files ? { workingScope: task.files } : {}) }, { signal });
    const ask = (question: string, sig: AbortSignal) => askLead(rt, slot, task.id, question, combineSignals(signal, sig));
    const executor = rt.executor;
    // Through an executor, a turn may run elsewhere: no ask_lead tool (a closure), questions in the text form.
    const toolForm = executor === undefined && slot.agent.resolveAdapter(ctx).capabilities.tools;
    const workerCtx = ctx.withSignal(signal);
    if (executor) {
      const attempt = (rt.starts.get(task.id) ?? 0) + 1;
      rt.starts.set(task.id, attempt);
      const position = rt.tasks.list().findIndex((t) => t.id === task.id);
      conversation = dispatchedSession(executor, workerCtx, { coordination: rt.name, agent: slot.agent, task, position, attempt });
    } else {
      conversation = await slot.agent.converse(workerCtx, {
        ...(toolForm ? { extraTools: [askLeadTool(ask)] } : {}),
        ...(workspace ? { workspace: workspace.path } : {}),
      });
    }
    let plan: string | undefined;
    if (rt.planApproval) {
      plan = await submitPlan(rt, slot, conversation, task, signal);
      if (plan === undefined) return; // blocked by the lead after too many rejections
    }
    let reply = await conversation.send(workPrompt(rt, task, plan, toolForm), { signal });
    for (let asked = 0; asked < rt.maxQuestions; asked++) {
      const question = parseQuestion(reply.text);
      if (question === undefined) break;
      const answer = await ask(question, signal);
      reply = await conversation.send(`Answer from the lead: ${answer}\n\nContinue with the task.`, { signal });
    }
    if (workspace) {
      const merged = await rt.workspace!.strategy.merge(workspace, { signal });
      if (merged.status === 'conflict') throw new MergeConflictError(`Merge conflict in ${merged.conflicts.join(', ')}`, merged.conflicts);
    }
    if (!stillMine(rt, task.id, name)) return;
    tasks.complete(task.id, reply.text);
    const now = ctx.clock.now();
    rt.stuck.finished(name, now - started, now);
    send(rt, { kind: 'status', sender: name, recipient: rt.lead, taskId: task.id, text: reply.text, metadata: { state: 'done' } });
  } catch (error) {
    if (workerSignal.aborted) throw error;
    if (taskController.signal.aborted) return; // the lead took the task away
    if (!stillMine(rt, task.id, name)) return;
    tasks.fail(task.id, errorMessage(error));
    send(rt, { kind: 'status', sender: name, recipient: rt.lead, taskId: task.id, text: `Failed: ${errorMessage(error)}`, metadata: { state: 'failed' } });
  } finally {
    delete slot.taskController;
    delete slot.task;
    await conversation?.close().catch(() => undefined);
    if (workspace) await rt.workspace!.strategy.cleanup(workspace).catch(() => undefined);
  }
}

/** Submit plans until one is approved; undefined when the lead blocked the task. */
async function submitPlan(rt: Runtime, slot: WorkerSlot, conversation: Conversation | TaskSession, task: CoordTask, signal: AbortSignal): Promise<string | undefined> {
  const approval = rt.planApproval!;
  let feedback: string | undefined;
  for (let cycle = 1; cycle <= approval.maxCycles; cycle++) {
    const reply = await conversation.send(planRequestPrompt(task, cycle, feedback), { signal });
    const submitted = send(rt, { kind: 'plan-submission', sender: slot.agent.name, recipient: rt.lead, taskId: task.id, text: reply.text, metadata: { cycle } });
    const verdict = await waitFor(rt, slot, (m) => m.kind === 'plan-approval' && m.taskId === task.id && m.inReplyTo === submitted.id, signal);
    if (verdict.approved === true) return reply.text;
    feedback = verdict.text;
  }
  return undefined;
}

async function askLead(rt: Runtime, slot: WorkerSlot, taskId: string, question: string, signal: AbortSignal): Promise<string> {
  const asked = send(rt, { kind: 'question', sender: slot.agent.name, recipient: rt.lead, taskId, text: question });
  const answer = await waitFor(rt, slot, (m) => m.kind === 'answer' && m.inReplyTo === asked.id, signal);
  return answer.text;
}

/** Wait for a message matching `match`, handling every other message of the worker meanwhile. */
async function waitFor(rt: Runtime, slot: WorkerSlot, match: (m: CoordMessage) => boolean, signal: AbortSignal): Promise<CoordMessage> {
  for (;;) {
    throwIfAborted(signal);
    const seq = rt.changes.seq;
    const inbox = rt.bus.poll(slot.agent.name);
    const found = inbox.find(match);
    handleInbox(rt, slot, inbox.filter((m) => m !== found));
    if (found) return found;
    if (slot.shutdown) throw new CancelledError('The lead shut the coordination down');
    await rt.changes.wait(seq, signal);
  }
}

/** Status checks get an answer, shutdown requests set the flag; other messages are noted. */
function handleInbox(rt: Runtime, slot: WorkerSlot, inbox: CoordMessage[]): void {
  for (const m of inbox) {
    if (m.kind === 'shutdown-request') slot.shutdown = true;
    else if (m.kind === 'status' && m.metadata?.['statusCheck'] === true) {
      send(rt, { kind: 'status', sender: slot.agent.name, recipient: rt.lead, inReplyTo: m.id, ...(slot.task ? { taskId: slot.task } : {}), text: slot.task ? `Still working on task ${slot.task}.` : 'Idle.', metadata: { state: 'alive' } });
    }
  }
}

function workPrompt(rt: Runtime, task: CoordTask, plan: string | undefined, toolForm: boolean): string {
  const parts = [`Overall request:\n${rt.request}`];
  if (rt.sharedContext) parts.push(rt.sharedContext);
  parts.push(plan === undefined ? taskBrief(task) : `${taskBrief(task)}\n\nYour plan was approved. Do the work now.`);
  const deps = task.dependsOn.map((d) => rt.tasks.get(d)).filter((d) => d?.result !== undefined);
  if (deps.length > 0) parts.push(`Results of the tasks this one depends on:\n${deps.map((d) => `### ${d!.id}: ${d!.title}\n${d!.result!}`).join('\n\n')}`);
  parts.push(
    (toolForm ? 'If you need a decision from the lead, call ask_lead.' : 'If you need a decision from the lead, write QUESTION: <your question> on a line of its own and stop.') +
      ' Reply with a short report of what you did.',
  );
  return parts.join('\n\n');
}

function stillMine(rt: Runtime, id: string, worker: string): boolean {
  const t = rt.tasks.get(id);
  return t !== undefined && t.status === 'in-progress' && t.assignee === worker;
}

function send(rt: Runtime, message: MessageInput): CoordMessage {
  const sent = rt.bus.send(message);
  rt.changes.notify();
  return sent;
}

export { send as sendMessage };

/**
 * What the lead's decisions do: apply a protocol action, judge a plan,
 * settle what the lead left unanswered, stop a stuck worker, spawn one.
 * @module
 */
import { defined } from '../core/defined.js';
import type { CoordDecisionKind } from './events.js';
import { isCancellation } from '../core/context.js';
import { errorMessage, isTroupeError } from '../core/errors.js';
import type { CoordMessage } from './message-bus.js';
import type { LeadAction } from './tools.js';
import { sendMessage, workerLoop, type Runtime, type WorkerSlot } from './worker.js';

/** Start (or restart) a worker of the pool with a fresh controller. */
export function spawn(rt: Runtime, slot: WorkerSlot): void {
  slot.controller = new AbortController();
  slot.shutdown = false;
  slot.state = 'idle';
  slot.promise = workerLoop(rt, slot).catch((error: unknown) => {
    if (isCancellation(error, rt.ctx.signal)) return;
    rt.ctx.emit('warning', { message: `Worker "${slot.agent.name}" stopped: ${errorMessage(error)}`, code: 'worker_failed' });
  });
}

/** Reassign a stuck worker's task (to an idle worker when there is one) and stop the worker. */
export function stopStuck(rt: Runtime, slots: Map<string, WorkerSlot>, worker: string, taskId: string, decide: Decide): void {
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

/** Emits a `coord.decision` event. */
export type Decide = (decision: CoordDecisionKind, extra?: { task?: string; worker?: string; detail?: string }) => void;

/** Apply one lead action; returns what happened, for the model (a refused action explains why). */
export function applyAction(
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
        const before = rt.tasks.get(action.taskId);
        const parts = rt.tasks.split(action.taskId, action.parts);
        const worker = before?.assignee;
        if (worker !== undefined) {
          sendMessage(rt, { kind: 'text', sender: lead, recipient: worker, taskId: action.taskId, text: `Task ${action.taskId} was split into ${parts.map((p) => `${p.id} ("${p.title}")`).join(', ')}; stop working on it. The parts are on the task list.` });
          slots.get(worker)?.taskController?.abort();
        }
        decide('task-split', { task: action.taskId, ...defined({ worker }), detail: parts.map((p) => p.id).join(', ') });
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
        const fresh = slot.promise === undefined;
        spawn(rt, slot);
        decide(fresh ? 'worker-added' : 'worker-spawned', { worker: action.worker });
        return `Worker ${action.worker} started.`;
      }
      case 'shutdown': {
        const slot = slots.get(action.worker);
        if (!slot) return `Unknown worker "${action.worker}"`;
        if (slot.state !== 'idle' && slot.state !== 'busy') return `Worker "${action.worker}" is not running.`;
        if (slot.shutdown) return `Worker "${action.worker}" is already shutting down.`;
        sendMessage(rt, { kind: 'shutdown-request', sender: lead, recipient: action.worker, text: action.reason ?? 'The lead shuts you down: finish your current task, then stop.' });
        decide('worker-shutdown', { worker: action.worker, ...(action.reason ? { detail: action.reason } : {}) });
        return `Worker ${action.worker} will stop after its current task.`;
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

/** Send the verdict on a plan; the last allowed rejection blocks the task for a person. */
export function reviewPlan(rt: Runtime, submission: CoordMessage, approved: boolean, feedback: string | undefined, decide: Decide): void {
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
export function settleUnanswered(
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

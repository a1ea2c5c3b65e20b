/**
 * What the lead reads: the decomposition request (and the reading of its
 * JSON task list), coordination updates, the synthesis request, its system
 * prompt, and the delegate form of the lead agent.
 * @module
 */
import { z } from 'zod';
import { ModelBehaviorError, errorMessage } from '../core/errors.js';
import { agent as createAgent, type Agent } from '../patterns/agent.js';
import { safeFindJson } from '../text/json.js';
import { PROMPT_HEADINGS, section } from '../text/headings.js';
import type { CoordMessage } from './message-bus.js';
import { criteriaBlock, planReviewEntry } from './plan-approval.js';
import { TaskStore, taskInputSchema, type CoordTask, type TaskInput } from './task-store.js';
import { COORDINATION_TOOL_NAMES, LEAD_TEXT_PROTOCOL } from './tools.js';
import type { Runtime } from './worker.js';

/** Instruction added to the lead's system prompt in delegate mode. */
export const DELEGATE_INSTRUCTION =
  'You are the lead of a team of workers. Coordinate only: plan, answer questions, review plans, add, split, cancel and reassign tasks. ' +
  'Never do the work yourself; the workers do it.';

/**
 * Ask the lead for a JSON task list; one corrective retry, then a
 * `plan_invalid` error. A list that was repaired is reported through `onRepaired`.
 */
export async function decompose(request: string, send: (text: string) => Promise<string>, workers: Agent[], onRepaired?: (message: string) => void): Promise<TaskInput[]> {
  const ask =
    `${section(PROMPT_HEADINGS.request, request)}\n\n${section(PROMPT_HEADINGS.availableWorkers, workers.map((w) => w.name + (w.options.description ? ` (${w.options.description})` : '')).join(', '))}\n\n` +
    'Break the request into tasks for the workers. Reply with a JSON array only, each task as ' +
    '{"id": "t1", "title": "...", "description": "...", "dependsOn": ["..."], "files": ["..."]} (dependsOn and files optional; a task may depend only on tasks listed before it).';
  let read = readTaskList(await send(ask));
  if (read.issues.length > 0) {
    read = readTaskList(await send(`Your task list could not be used:\n${read.issues.map((i) => `- ${i}`).join('\n')}\n\nReply again with the corrected JSON array only.`));
    if (read.issues.length > 0) {
      throw new ModelBehaviorError(`The lead's task list is invalid after a corrective retry: ${read.issues.join('; ')}`, { code: 'plan_invalid', details: { issues: read.issues } });
    }
  }
  if (read.repaired) onRepaired?.("The lead's task list was damaged JSON (a trailing comma, single quotes, a cut-off end...) and was repaired");
  return read.tasks;
}

const taskListInput = z.array(taskInputSchema).min(1);

/**
 * The task list of a reply: the first JSON array (in the order of
 * `safeFindJson`: fences, then the text; repaired when damaged) that is a
 * valid task list, or what is wrong with it.
 */
export function readTaskList(text: string): { tasks: TaskInput[]; issues: string[]; repaired?: boolean } {
  const found = safeFindJson(text, { kind: 'array', schema: taskListInput });
  if (!found.success) return { tasks: [], issues: found.issues.map((i) => i.message) };
  const tasks = found.data.data as TaskInput[];
  try {
    new TaskStore(tasks);
  } catch (error) {
    return { tasks: [], issues: [errorMessage(error)] };
  }
  return { tasks, issues: [], ...(found.data.repaired ? { repaired: true } : {}) };
}

/** The lead's turn for a batch of messages: the task list, the new messages and, for plans, the criteria. */
export function updatePrompt(rt: Runtime, messages: CoordMessage[]): string {
  const lines = messages.map((m) => {
    if (m.kind === 'plan-submission') return planReviewEntry(m, m.taskId ? rt.tasks.get(m.taskId) : undefined, rt.planApproval ?? { criteria: [], maxCycles: 3 });
    if (m.kind === 'question') return `- QUESTION from ${m.sender}${m.taskId ? ` (task ${m.taskId})` : ''}: ${m.text}`;
    return `- ${String(m.metadata?.['state']).toUpperCase()}: ${m.sender} reports on task ${m.taskId ?? '?'}: ${m.text}`;
  });
  const plans = messages.some((m) => m.kind === 'plan-submission') && rt.planApproval ? `\n\n${criteriaBlock(rt.planApproval)}` : '';
  return `${section(PROMPT_HEADINGS.tasks, describeTasks(rt.tasks.list()))}\n\n${section(PROMPT_HEADINGS.newMessages, lines.join('\n'))}${plans}\n\nAct on these messages.`;
}

/** The lead's last turn: write the synthesis. */
export function synthesisPrompt(tasks: CoordTask[]): string {
  return `Every task is resolved.\n\n${section(PROMPT_HEADINGS.tasks, describeTasks(tasks))}\n\nWrite the synthesis for the user: what was done, what failed, and what needs a person.`;
}

/** One line per task: id, status, title, assignee, dependencies and (unless done) the reason. */
export function describeTasks(tasks: CoordTask[]): string {
  if (tasks.length === 0) return '(no tasks)';
  return tasks.map((t) => `- ${t.id} [${t.status}] ${t.title}${t.assignee ? ` (${t.assignee})` : ''}${t.dependsOn.length ? ` after ${t.dependsOn.join(', ')}` : ''}${t.result && t.status !== 'done' ? `: ${t.result}` : ''}`).join('\n');
}

/** The lead's system prompt: its own, the workers, and the protocol of its form. */
export function leadSystem(workersList: Agent[], lead: Agent, toolForm: boolean): string {
  const workers = workersList.map((w) => w.name + (w.options.description ? ` (${w.options.description})` : '')).join(', ');
  const protocol = toolForm ? `Use your coordination tools (${COORDINATION_TOOL_NAMES.join(', ')}), or these text lines.\n${LEAD_TEXT_PROTOCOL}` : LEAD_TEXT_PROTOCOL;
  return [lead.options.system, `Your workers: ${workers}.`, protocol].filter((s): s is string => typeof s === 'string' && s !== '').join('\n\n');
}

/** The lead as a delegate: same model and adapter, no tools or workspace of its own, told not to do the work. */
export function delegateLead(lead: Agent): Agent {
  const { tools: _own, workspace: _ws, system, ...rest } = lead.options;
  return createAgent({ ...rest, system: system ? `${system}\n\n${DELEGATE_INSTRUCTION}` : DELEGATE_INSTRUCTION });
}

/**
 * Plan approval: a worker submits a plan before it works; the lead judges it
 * against criteria and approves or rejects it with feedback. After
 * `maxCycles` rejections the task is blocked for a person, never silently
 * approved.
 * @module
 */
import { check, defineOptions, listOf, positiveInteger } from '../core/options.js';
import type { CoordMessage } from './message-bus.js';
import type { CoordTask } from './task-store.js';

/** Options of plan approval. */
export interface PlanApprovalOptions {
  /** What the lead judges plans against. Default: {@link DEFAULT_PLAN_CRITERIA}. */
  criteria?: string[];
  /** Submissions per task before it is blocked. Default: 3. */
  maxCycles?: number;
}

/** The default criteria: addresses the task, touches only the expected files, sensible scope. */
export const DEFAULT_PLAN_CRITERIA: readonly string[] = [
  'The plan addresses the task as described.',
  'It touches only the files the task expects (when the task lists them).',
  'Its scope is sensible: what the task asks, no more and no less.',
];

/** Plan approval with defaults applied. */
export interface ResolvedPlanApproval {
  criteria: string[];
  maxCycles: number;
}

/** The description {@link resolvePlanApproval} (and `coordinate`'s `planApproval`) checks its options against. */
export const planApprovalOptions = defineOptions<PlanApprovalOptions>('planApproval', {
  criteria: listOf(check('a non-empty string', (v) => typeof v === 'string' && v.trim() !== '')),
  maxCycles: positiveInteger,
});

/** Validate plan approval options and apply the defaults. */
export function resolvePlanApproval(options: PlanApprovalOptions | boolean | undefined, owner = 'resolvePlanApproval'): ResolvedPlanApproval | undefined {
  if (options === undefined || options === false) return undefined;
  const o = options === true ? {} : options;
  planApprovalOptions.check(o, 'planApproval.', owner);
  const maxCycles = o.maxCycles ?? 3;
  return { criteria: [...(o.criteria ?? DEFAULT_PLAN_CRITERIA)], maxCycles };
}

/** What a worker is asked before it works: a plan, with the feedback on its previous one. */
export function planRequestPrompt(task: CoordTask, cycle: number, feedback?: string): string {
  const head = taskBrief(task);
  const ask = 'Before doing the work, reply with your plan only: the steps you will take and the files you will touch. Do not do the work yet.';
  return feedback === undefined ? `${head}\n\n${ask}` : `Your plan (attempt ${cycle - 1}) was rejected. Feedback from the lead:\n${feedback}\n\nRevise it. ${ask}`;
}

/** How a plan submission appears in the lead's update. */
export function planReviewEntry(message: CoordMessage, task: CoordTask | undefined, approval: ResolvedPlanApproval): string {
  const cycle = Number(message.metadata?.['cycle'] ?? 1);
  const files = task?.files?.length ? `\nExpected files: ${task.files.join(', ')}` : '';
  return (
    `- PLAN from ${message.sender} for task ${message.taskId ?? '?'} "${task?.title ?? ''}" (attempt ${cycle} of ${approval.maxCycles})${files}\n` +
    indent(message.text)
  );
}

/** The criteria block of the lead's update. */
export function criteriaBlock(approval: ResolvedPlanApproval): string {
  return `Judge each plan against these criteria; approve only if it meets all of them, else reject with feedback:\n${approval.criteria.map((c) => `- ${c}`).join('\n')}`;
}

/** The text a worker receives for a task. */
export function taskBrief(task: CoordTask): string {
  const files = task.files?.length ? `\nFiles: ${task.files.join(', ')}` : '';
  return `Task ${task.id}: ${task.title}\n${task.description}${files}`;
}

function indent(text: string): string {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

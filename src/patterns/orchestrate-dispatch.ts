/**
 * Dispatch for {@link orchestrate}: the prompts of the lead and the
 * workers, running a worker with its own time-out (a failure is a result,
 * never a crash), and the `delegate_to_worker` tool.
 * @module
 */
import { z } from 'zod';
import { withTimeout } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import { budgetExhaustion } from '../core/budget.js';
import { errorMessage } from '../core/errors.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import type { Agent } from './agent.js';
import type { LoopEvaluation, WorkerResult } from './orchestrate-state.js';
import type { LoopAdjustment } from '../reflection/adjust.js';
import { GROUP_REFLECT_COMPLETE, NEEDS_ITERATION } from '../reflection/sentinels.js';
import { PROMPT_HEADINGS, fromHeading, iterationHeading, section, requestSection } from '../text/headings.js';

/** The system prompt of a worker that has none. */
export const GENERIC_WORKER_INSTRUCTION =
  'You are a worker in a team. Complete the task assigned to you thoroughly and report your result.';

/** Default time limit of one worker call: 10 minutes. */
export const DEFAULT_WORKER_TIMEOUT_MS = 600_000;

/** The name of the dispatch tool. */
export const DELEGATE_TOOL = 'delegate_to_worker';

/** What the prompts need to know. */
export interface PromptContext {
  request: string;
  workers: readonly Agent[];
  sharedContext?: string | undefined;
  routingContext?: string | undefined;
  dispatch: 'text' | 'tool';
  reflect: boolean;
}

function describeWorkers(workers: readonly Agent[]): string {
  return workers
    .map((w) => `- ${w.name}: ${(w.options.description ?? w.options.system ?? 'general worker').split('\n')[0]}`)
    .join('\n');
}

/** The text-dispatch format, shown to the lead. */
export function assignmentFormat(workers: readonly Agent[]): string {
  const example = workers[0]?.name ?? 'worker-name';
  return `Assign tasks with one block per worker:\n@worker:${example}\n<the task>\n@end`;
}

/** The planning prompt of iteration `iteration`. */
export function planPrompt(
  p: PromptContext, iteration: number, maxIterations: number,
  last?: { evaluation?: LoopEvaluation; synthesis?: string; adjustments?: readonly LoopAdjustment[] },
): string {
  const parts = [requestSection(p.request)];
  if (iteration === 1 || !last) {
    parts.push(section(PROMPT_HEADINGS.availableWorkers, describeWorkers(p.workers)));
    if (p.routingContext) parts.push(section(PROMPT_HEADINGS.routingContext, p.routingContext));
  } else {
    parts.push(iterationHeading(iteration, maxIterations));
    if (last.synthesis) parts.push(section(PROMPT_HEADINGS.previousAnswer, last.synthesis));
    if (last.evaluation) {
      parts.push(section(PROMPT_HEADINGS.lastEvaluation, `Score: ${last.evaluation.score.toFixed(2)} (${last.evaluation.trend})\n${last.evaluation.rationale}`));
    }
    if (last.adjustments && last.adjustments.length > 0) {
      parts.push(section(PROMPT_HEADINGS.adjustments, `From the last iteration's results and evaluation:\n${last.adjustments.map((a) => `- ${a.message}`).join('\n')}`));
    }
  }
  parts.push(
    p.dispatch === 'tool'
      ? `Plan the work and call ${DELEGATE_TOOL} once per task (several calls run in parallel). When the workers have answered, synthesise their results into one response.` +
          (p.reflect ? ` End it with ${GROUP_REFLECT_COMPLETE} on a line of its own if the request is fully met, or ${NEEDS_ITERATION} if not.` : '')
      : `Plan the work and assign tasks to the workers. ${assignmentFormat(p.workers)}`,
  );
  return parts.join('\n\n');
}

/** The nudge sent when the first plan assigned nothing. */
export function nudgePrompt(workers: readonly Agent[], dispatch: 'text' | 'tool'): string {
  const how = dispatch === 'tool' ? `Call the ${DELEGATE_TOOL} tool for each task.` : assignmentFormat(workers);
  return `You did not assign any task. Delegate the work to these workers:\n${describeWorkers(workers)}\n\n${how}`;
}

/** The workers' results as a `## WORKER RESULTS` section, each answer cut to `answerChars` when given. */
export function workerResultsSection(results: readonly WorkerResult[], answerChars?: number): string {
  const body = results
    .map((r) => section(fromHeading(r.worker, r.success ? undefined : 'failed'), r.success ? (answerChars === undefined ? r.output : truncateText(r.output, answerChars)) : `Error: ${r.error ?? 'unknown error'}`))
    .join('\n\n');
  return `${PROMPT_HEADINGS.workerResults}\n\n${body}`;
}

/** The synthesis prompt: the request, the workers' results, and what to do with them. */
export function synthesisPrompt(p: PromptContext, results: readonly WorkerResult[]): string {
  const tail = p.reflect
    ? `Synthesise these results into one response to the request. End with ${GROUP_REFLECT_COMPLETE} on a line of its own if the request is fully met, or ${NEEDS_ITERATION} if more work is needed.`
    : 'Synthesise these results into one response to the request.';
  return [requestSection(p.request), workerResultsSection(results), tail].join('\n\n');
}

/** The default of `evaluatorAnswerChars`: worker answers are quoted to the evaluator up to 2000 characters each. */
export const DEFAULT_EVALUATOR_ANSWER_CHARS = 2000;

/** What the evaluator's prompt carries. */
export interface EvaluationPromptContext {
  request: string;
  /** The synthesis to score (without its sentinels). */
  synthesis: string;
  iteration: number;
  maxIterations: number;
  /** The evaluation of the iteration before, if any. */
  previous?: LoopEvaluation | undefined;
  /** The worker results the synthesis was made of. */
  results: readonly WorkerResult[];
  /** Longest worker answer quoted, in characters. */
  answerChars: number;
}

/** `text` cut to `max` characters (never inside a surrogate pair), with a note of what was left out. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}\n… [${text.length - end} more characters not shown]`;
}

/**
 * The evaluator's prompt: the request, the iteration number, the worker
 * answers (each cut to `answerChars`), the synthesis to score, and the
 * previous score and rationale.
 */
export function evaluationPrompt(c: EvaluationPromptContext): string {
  const parts = [requestSection(c.request), iterationHeading(c.iteration, c.maxIterations)];
  if (c.results.length > 0) parts.push(workerResultsSection(c.results, c.answerChars));
  parts.push(section(PROMPT_HEADINGS.responseToEvaluate, c.synthesis));
  if (c.previous) {
    parts.push(
      section(PROMPT_HEADINGS.lastEvaluation, `Iteration ${c.previous.iteration} scored ${c.previous.score.toFixed(2)}: ${c.previous.rationale}\nSay whether the quality improved, degraded or stayed flat.`),
    );
  }
  parts.push('Score how fully the response meets the request. Reply with\nSCORE: <a number from 0 to 1>\nRATIONALE: <why>');
  return parts.join('\n\n');
}

/** A worker's prompt: its system prompt, the shared context, the original request and its task. */
export function workerPrompt(worker: Agent, request: string, task: string, sharedContext?: string): string {
  const parts = [worker.options.system ?? GENERIC_WORKER_INSTRUCTION];
  if (sharedContext) parts.push(sharedContext);
  parts.push(requestSection(request), section(PROMPT_HEADINGS.task, task));
  return parts.join('\n\n');
}

/**
 * Run one worker on one prompt with its own time-out and budget (the
 * worker agent's `budget`, on its `worker` op); every failure becomes
 * `success: false` (a budget's, with the worker's last answer as `output`).
 */
export async function runWorker(
  ctx: RunContext,
  worker: Agent,
  task: string,
  prompt: string,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<WorkerResult> {
  const start = ctx.clock.now();
  try {
    const output = await withTimeout(
      (signal) =>
        ctx.withSignal(signal).enter({ kind: 'worker', name: worker.name, agent: worker.name, ...(worker.options.budget ? { budget: worker.options.budget } : {}) }, async (child) => {
          const conversation = await worker.converse(child);
          try {
            const reply = await conversation.send(prompt, { signal });
            return { output: reply.text, agent: worker.name, status: 'completed' };
          } finally {
            await conversation.close().catch(() => undefined);
          }
        }),
      { signal: options.signal, timeoutMs: options.timeoutMs, clock: ctx.clock, message: `Worker "${worker.name}" timed out after ${options.timeoutMs} ms` },
    );
    return { worker: worker.name, task, success: true, output: output.output, durationMs: ctx.clock.now() - start };
  } catch (error) {
    // An enclosing budget that ran out aborts `options.signal` and stops the orchestration; the worker's own is a failed worker.
    if (options.signal.aborted) throw error;
    const exhausted = budgetExhaustion(error);
    return { worker: worker.name, task, success: false, output: exhausted?.partial ?? '', error: errorMessage(error), durationMs: ctx.clock.now() - start };
  }
}

/** The `delegate_to_worker` tool: `worker` is an enum of the workers; the call runs `run` and returns the answer. */
export function delegateTool(workers: readonly Agent[], run: (worker: string, task: string, signal: AbortSignal) => Promise<WorkerResult>): ToolDefinition {
  const names = workers.map((w) => w.name) as [string, ...string[]];
  return defineTool({
    name: DELEGATE_TOOL,
    description: 'Delegate a task to one of the workers and get its answer back.',
    parameters: z.object({ worker: z.enum(names).describe('The worker to delegate to'), task: z.string().min(1).describe('The task') }),
    async execute({ worker, task }, { signal }) {
      const result = await run(worker, task, signal);
      return result.success ? result.output : `Worker "${worker}" failed: ${result.error ?? 'unknown error'}`;
    },
  }) as ToolDefinition;
}

/**
 * A coordination worker's task, run through an {@link Executor}: each turn
 * of the worker (its plan, its work, its answer after a question) is one
 * job whose runnable is the worker's agent and whose input is everything
 * the worker has been told about the task so far. A turn keeps no session
 * between jobs, so the job's prompt carries the earlier turns; a
 * queue-backed executor can then run every turn on any machine.
 * @module
 */
import { combineSignals } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import type { Usage } from '../core/usage.js';
import type { Agent } from '../patterns/agent.js';
import type { ChunkAttemptResult, ChunkJob, ChunkJobData, Executor } from '../scheduler/executor.js';
import type { PlanChunk } from '../scheduler/plan.js';
import type { RoleConfig } from '../scheduler/roles.js';
import type { CoordTask } from './task-store.js';

/** What the worker loop needs of a task's session: one reply per message, and a close. */
export interface TaskSession {
  send(text: string, options: { signal: AbortSignal }): Promise<{ text: string }>;
  close(): Promise<void>;
}

/** Where and what a task's jobs are. */
export interface TaskJobScope {
  /** The coordination's name: the jobs' `planId`. */
  coordination: string;
  /** The worker's agent: its name goes with each job, its system prompt, model and temperature as the job's role. */
  agent: Agent;
  task: CoordTask;
  /** The task's position in the task list: the job's `sequenceIndex`. */
  position: number;
  /** How many times the task has been started in this run (1 the first time): the jobs' attempt number. */
  attempt: number;
}

/**
 * A session whose every `send` is one job dispatched through `executor`,
 * in a context scoped to the task and the turn (`task-<id>/turn-<n>`), so
 * each turn has a job id of its own and a resumed run finds the job an
 * earlier coordinator sent.
 */
export function dispatchedSession(executor: Executor, ctx: RunContext, scope: TaskJobScope): TaskSession {
  const turns: Array<{ sent: string; reply: string }> = [];
  return {
    async send(text, options) {
      const prompt = turns.length === 0 ? text : transcript(turns, text);
      const turnCtx = ctx.withSignal(combineSignals(ctx.signal, options.signal)).withCheckpointScope(`task-${scope.task.id}/turn-${turns.length + 1}`);
      const result = await executor.dispatch(taskJob(turnCtx, scope, prompt));
      const reply = typeof result === 'string' ? result : result.output;
      turns.push({ sent: text, reply });
      return { text: reply };
    },
    close: () => Promise.resolve(),
  };
}

/** The earlier turns of the task, then the new message. */
function transcript(turns: ReadonlyArray<{ sent: string; reply: string }>, text: string): string {
  const earlier = turns.map((t, i) => `### Message ${i + 1}\n${t.sent}\n\n### Your reply ${i + 1}\n${t.reply}`).join('\n\n');
  return `## EARLIER IN THIS TASK\n\n${earlier}\n\n## NOW\n\n${text}`;
}

/** One turn as a {@link ChunkJob}: run here with `execute()`, or sent elsewhere as `toJSON()`. */
function taskJob(ctx: RunContext, scope: TaskJobScope, prompt: string): ChunkJob {
  const { agent, task } = scope;
  const chunk: PlanChunk = { sequenceIndex: scope.position, title: task.title, prompt, dependsOnIndexes: [], complexity: 'Medium', role: 'Generic' };
  const { system, model, temperature, adapter } = agent.options;
  const role: RoleConfig = { system: system ?? '', preferredTools: [], ...(model === undefined ? {} : { model }), ...(temperature === undefined ? {} : { temperature }), ...(adapter === undefined ? {} : { adapter }) };
  const { adapter: _object, ...wireRole } = role;
  const data = (): ChunkJobData => ({
    runId: ctx.runId,
    planId: scope.coordination,
    chunk,
    prompt,
    // An adapter given as an object stays behind; only a registered name travels.
    role: typeof adapter === 'string' ? { ...wireRole, adapter } : wireRole,
    attempt: scope.attempt,
    checkpointPath: ctx.checkpointPath,
    agent: agent.name,
  });
  return {
    runId: ctx.runId,
    planId: scope.coordination,
    chunk,
    prompt,
    role,
    attempt: scope.attempt,
    signal: ctx.signal,
    ctx,
    async execute(): Promise<ChunkAttemptResult> {
      const outcome = await agent.run(prompt, ctx);
      return { output: outcome.output, usage: outcome.usage };
    },
    recordUsage: (usage: Partial<Usage>) => ctx.recordUsage(usage),
    toJSON: data,
  };
}

/**
 * A coordination worker's task, run through an executor ({@link TurnExecutor}): each turn
 * of the worker (its plan, its work, its answer after a question) is one
 * job whose runnable is the worker's agent and whose input is everything
 * the worker has been told about the task so far. A turn keeps no session
 * between jobs, so the job's prompt carries the earlier turns; a
 * queue-backed executor can then run every turn on any machine.
 * @module
 */
import { combineSignals } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import type { ModelAdapter } from '../core/adapter.js';
import type { Usage } from '../core/usage.js';
import type { Agent } from '../patterns/agent.js';
import { PROMPT_HEADINGS } from '../text/headings.js';
import type { CoordTask } from './task-store.js';

// The types below have the shape of the plan scheduler's `Executor`,
// `ChunkJob` and `ChunkJobData` (`troupe/plan`), written out here because
// coordination and planning sit on one level and do not import each
// other: every executor of `troupe/plan` is a `TurnExecutor`.

/** The data of one turn's job, as a chunk job's (`ChunkJobData`) with the agent's name. */
export interface TurnJobData {
  runId: string;
  /** The coordination's name. */
  planId: string;
  /** The turn as a chunk: the task's position and title, the turn's prompt, role `Generic`. */
  chunk: { sequenceIndex: number; title: string; prompt: string; dependsOnIndexes: number[]; complexity: 'Medium'; role: 'Generic' };
  prompt: string;
  /** The worker agent's system prompt, the names of its tools (the only ones a queue worker gives an agent it builds from them), model, temperature and adapter name. */
  role: { system: string; preferredTools: string[]; tools?: string[]; model?: string; temperature?: number; adapter?: string };
  attempt: number;
  /** The turn's checkpoint path (`<coordination path>/task-<id>/turn-<n>`). */
  checkpointPath: string;
  /** The worker agent's name: a queue worker runs its registry's agent of that name. */
  agent: string;
}

/** One turn as a job (the shape of a `ChunkJob`): run here with `execute()`, or sent elsewhere as `toJSON()`. */
export interface TurnJob {
  readonly runId: string;
  readonly planId: string;
  readonly chunk: TurnJobData['chunk'];
  readonly prompt: string;
  readonly role: Omit<TurnJobData['role'], 'adapter'> & { adapter?: ModelAdapter | string };
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly ctx: RunContext;
  execute(): Promise<{ output: string; usage?: Usage }>;
  recordUsage(usage: Partial<Usage>): void;
  toJSON(): TurnJobData;
}

/** What runs a coordination's turns: any executor of `troupe/plan` (`inProcessExecutor()`, `bullmqExecutor(...)`). */
export interface TurnExecutor {
  readonly kind: string;
  readonly maxParallel: number;
  dispatch(job: TurnJob): Promise<string | { output: string }>;
}

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
export function dispatchedSession(executor: TurnExecutor, ctx: RunContext, scope: TaskJobScope): TaskSession {
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
  return `${PROMPT_HEADINGS.earlierInTask}\n\n${earlier}\n\n${PROMPT_HEADINGS.now}\n\n${text}`;
}

/** One turn as a {@link TurnJob}. */
function taskJob(ctx: RunContext, scope: TaskJobScope, prompt: string): TurnJob {
  const { agent, task } = scope;
  const chunk: TurnJobData['chunk'] = { sequenceIndex: scope.position, title: task.title, prompt, dependsOnIndexes: [], complexity: 'Medium', role: 'Generic' };
  const { system, model, temperature, adapter } = agent.options;
  const tools = (agent.options.tools ?? []).map((t) => t.name);
  const role: TurnJob['role'] = {
    system: system ?? '',
    preferredTools: [],
    ...(tools.length === 0 ? {} : { tools }),
    ...(model === undefined ? {} : { model }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(adapter === undefined ? {} : { adapter }),
  };
  const { adapter: _object, ...wireRole } = role;
  const data = (): TurnJobData => ({
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
    async execute() {
      const outcome = await agent.run(prompt, ctx);
      return { output: outcome.output, usage: outcome.usage };
    },
    recordUsage: (usage: Partial<Usage>) => ctx.recordUsage(usage),
    toJSON: data,
  };
}

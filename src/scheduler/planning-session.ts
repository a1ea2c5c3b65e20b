/**
 * The interactive planning session: clarify the task, plan, wait for the
 * user's approval, execute, aggregate, and take follow-ups, one phase at a
 * time. A call in the wrong phase throws a {@link PlanningPhaseError}.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { z } from 'zod';
import type { ModelAdapter } from '../core/adapter.js';
import { checkpointKey, parseCheckpoint, savedOutcomeSchema, type Checkpoint, type CheckpointSpec } from '../core/checkpoint.js';
import { realClock, type Clock } from '../core/clock.js';
import type { RunContext, TroupeEmitter } from '../core/context.js';
import { CancelledError, ConfigurationError, describeValue } from '../core/errors.js';
import type { TroupeEvent, TroupeEventListeners } from '../core/events.js';
import type { Outcome } from '../core/outcome.js';
import { resume } from '../core/resume.js';
import { run } from '../core/run.js';
import { defineRunnable } from '../core/runnable.js';
import type { Store } from '../core/store.js';
import { aggregate, type AggregateReport } from './aggregate.js';
import { withConversation } from './conversation.js';
import { decompose } from './decompose.js';
import { executePlan } from './execute.js';
import { safeFindJson } from '../text/json.js';
import { planSchema, type ChunkRole, type Plan } from './plan.js';
import type { PlanOutcome, PlanRunOptions } from './types.js';
import { defined } from '../core/defined.js';

/** The phases of a {@link PlanningSession}. */
export type PlanningPhase = 'idle' | 'clarifying' | 'planning' | 'awaiting-approval' | 'executing' | 'aggregating' | 'completed' | 'cancelled';

/** A method called in a phase that does not allow it. */
export class PlanningPhaseError extends ConfigurationError {
  /** The session's phase when the call was made. */
  readonly phase: PlanningPhase;
  constructor(method: string, phase: PlanningPhase, allowed: readonly PlanningPhase[]) {
    super(`Cannot call ${method}() in phase "${phase}" (allowed in: ${allowed.join(', ')})`, { code: 'wrong_phase', details: { method, phase, allowed } });
    this.phase = phase;
  }
}

/** Options of {@link PlanningSession}. */
export interface PlanningSessionOptions extends Omit<PlanRunOptions, 'instructions' | 'aggregate' | 'adapter'> {
  /** The adapter of the planner, the workers and the synthesis. */
  adapter: ModelAdapter;
  /** Adapters by name, for roles that name one. */
  adapters?: Record<string, ModelAdapter>;
  /** The clock. Default: the real clock. */
  clock?: Clock;
  /** Emit on this emitter. Default: a new one (`session.emitter`). */
  emitter?: TroupeEmitter;
  /** The session's id. Default: a random UUID. */
  id?: string;
  /** Clarifying rounds before the planner must plan. Default: 3. */
  maxClarifyRounds?: number;
  /** Roles the planner may assign. */
  planRoles?: readonly ChunkRole[];
  /** Planner answers tried per plan. Default: 3. */
  maxPlanAttempts?: number;
  /** Cancels the session as `cancel()` does: model calls and the execution stop, and the phase becomes `cancelled`. */
  signal?: AbortSignal;
  /**
   * The store of the executions: each is a run with the session's id as its
   * run id, logged and checkpointed here (the session's task, plan and
   * instructions, and the plan's chunks), so that
   * {@link PlanningSession.restore} can continue an execution that a crash
   * or a restart interrupted.
   */
  store?: Store;
}

/** Where the session stands after a call. */
export interface PlanningStep {
  phase: PlanningPhase;
  /** The planner's questions, in `clarifying`. */
  questions?: string[];
  /** The plan, from `awaiting-approval` on. */
  plan?: Plan;
  /** The execution's outcome, when `completed`. */
  outcome?: PlanOutcome;
}

/** One execution the session ran (kept for follow-ups). */
export interface PlanningRun {
  task: string;
  plan: Plan;
  instructions: string[];
  outcome: PlanOutcome;
  report: AggregateReport;
}

/** The checkpoint of a session's execution: the task, the plan and the instructions injected so far. */
const sessionStateSchema = z.object({
  schemaVersion: z.literal(1),
  sessionId: z.string(),
  task: z.string(),
  plan: planSchema,
  instructions: z.array(z.string()),
});
type SessionState = z.infer<typeof sessionStateSchema>;

/** What a finished execution saves: the synthesis, and the plan's outcome and report, for `runs` after a restore. */
interface ExecutionOutcome extends Outcome {
  planOutcome: Omit<PlanOutcome, 'usage'>;
  report: AggregateReport;
}
const executionOutcomeSchema = savedOutcomeSchema.extend({
  planOutcome: savedOutcomeSchema.extend({ plan: planSchema, results: z.array(z.looseObject({})), stats: z.looseObject({}), instructions: z.array(z.string()) }),
  report: z.looseObject({ summary: z.string(), stats: z.looseObject({}), conflicts: z.array(z.looseObject({})) }),
});
const sessionCheckpoint: CheckpointSpec<SessionState> = { kind: 'planning-session', version: 1, state: sessionStateSchema, outcome: executionOutcomeSchema };
/** The checkpoint path of an execution's runnable: the first op under the run's root. */
const EXECUTION_PATH = '/planning-session:planning-session#0';

const decideSystem =
  'You decide whether a task is clear enough to plan. Answer with one JSON object: {"action":"clarify","questions":["..."]} ' +
  'to ask the user questions first, or {"action":"plan"} when you can plan.';

/**
 * An interactive planning session with phases `idle → clarifying → planning
 * → awaiting-approval → executing → aggregating → completed` (or `cancelled`).
 *
 * @example
 * ```ts
 * const session = new PlanningSession({ adapter });
 * let step = await session.submitTask('Fix the memory leaks in the cache');
 * while (step.phase === 'clarifying') step = await session.answerClarification(await ask(step.questions));
 * const done = await session.approvePlan('approve');
 * console.log(done.outcome?.output);
 * ```
 */
export class PlanningSession {
  /** The session's id. */
  readonly id: string;
  /** Every event of the session and its executions (`phase.changed`, `chunk.status`, ...). */
  readonly emitter: TroupeEmitter;
  readonly #options: PlanningSessionOptions;
  readonly #clock: Clock;
  #phase: PlanningPhase = 'idle';
  #task: string | undefined;
  #dialogue: string[] = [];
  #rounds = 0;
  #plan: Plan | undefined;
  #instructions: string[] = [];
  #runs: PlanningRun[] = [];
  #controller = new AbortController();
  /** The execution's checkpoint while it runs. */
  #checkpoint: Checkpoint<SessionState, ExecutionOutcome> | undefined;
  /** Set by {@link PlanningSession.restore}: the next approval resumes the interrupted execution. */
  #interrupted = false;

  constructor(options: PlanningSessionOptions) {
    if (!options?.adapter || typeof options.adapter.openSession !== 'function') {
      throw new ConfigurationError(`Expected \`adapter\` to be a model adapter, got ${describeValue(options?.adapter)}`);
    }
    const rounds = options.maxClarifyRounds ?? 3;
    if (!Number.isInteger(rounds) || rounds < 0) {
      throw new ConfigurationError(`Expected \`maxClarifyRounds\` to be a non-negative integer, got ${describeValue(options.maxClarifyRounds)}`);
    }
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.id = options.id ?? randomUUID();
    this.emitter = options.emitter ?? new EventEmitter<TroupeEventListeners>();
  }

  /**
   * A session whose execution was interrupted (the process died, or it was
   * cancelled), read back from its checkpoint in `options.store` under
   * `options.id`: in phase `awaiting-approval` with its task, plan and
   * injected instructions, where `approvePlan('approve')` continues the
   * execution (`resume`: chunks that succeeded are not run again); or in
   * phase `completed`, with the execution in `runs`, when it had finished.
   *
   * @example
   * ```ts
   * const session = await PlanningSession.restore({ adapter, store, id: 'release-42' });
   * if (session.phase === 'awaiting-approval') await session.approvePlan('approve');
   * ```
   */
  static async restore(options: PlanningSessionOptions & { store: Store; id: string }): Promise<PlanningSession> {
    if (!options?.store || typeof options.store.get !== 'function') throw new ConfigurationError(`Expected \`store\` to be a store, got ${describeValue(options?.store)}`);
    if (typeof options.id !== 'string' || options.id === '') throw new ConfigurationError(`Expected \`id\` to be the session's id, got ${describeValue(options.id)}`);
    const session = new PlanningSession(options);
    const key = checkpointKey(options.id, EXECUTION_PATH);
    const raw = await options.store.get(key, options.signal ? { signal: options.signal } : {});
    if (raw === undefined) throw new ConfigurationError(`No execution of planning session "${options.id}" in the store (no checkpoint "${key}")`, { details: { id: options.id } });
    const saved = parseCheckpoint(raw, { key, runId: options.id }, sessionCheckpoint);
    session.#task = saved.state.task;
    session.#plan = saved.state.plan;
    session.#instructions = [...saved.state.instructions];
    if (saved.outcome === undefined) {
      session.#interrupted = true;
      session.#phase = 'awaiting-approval';
      return session;
    }
    const done = saved.outcome as Omit<ExecutionOutcome, 'usage'>;
    const outcome: PlanOutcome = { ...done.planOutcome, output: done.report.summary, agent: 'synthesis', report: done.report, stats: done.report.stats, usage: done.report.stats.usage };
    session.#runs.push({ task: saved.state.task, plan: saved.state.plan, instructions: [...saved.state.instructions], outcome, report: done.report });
    session.#phase = 'completed';
    return session;
  }

  /** The current phase. */
  get phase(): PlanningPhase {
    return this.#phase;
  }
  /** The plan awaiting approval (or executed). */
  get plan(): Plan | undefined {
    return this.#plan;
  }
  /** Instructions injected during the current or last execution. */
  get instructions(): readonly string[] {
    return this.#instructions;
  }
  /** Executions so far, oldest first. */
  get runs(): readonly PlanningRun[] {
    return this.#runs;
  }

  /** Start with a task: the planner asks questions (`clarifying`) or plans (`awaiting-approval`). */
  async submitTask(task: string): Promise<PlanningStep> {
    this.#expect('submitTask', ['idle']);
    if (typeof task !== 'string' || task.trim() === '') throw new ConfigurationError(`Expected \`task\` to be a non-empty string, got ${describeValue(task)}`);
    this.#task = task;
    this.#dialogue = [];
    this.#rounds = 0;
    this.#setPhase('clarifying');
    return this.#watch(() => this.#decide());
  }

  /** Answer the planner's questions. */
  async answerClarification(answers: string): Promise<PlanningStep> {
    this.#expect('answerClarification', ['clarifying']);
    this.#dialogue.push(`User's answers: ${answers}`);
    return this.#watch(() => this.#decide());
  }

  /**
   * Decide on the plan: `approve` executes it and aggregates the results;
   * `request-changes` plans again with the feedback; `reject` cancels.
   */
  async approvePlan(decision: 'approve' | 'request-changes' | 'reject', feedback?: string): Promise<PlanningStep> {
    this.#expect('approvePlan', ['awaiting-approval']);
    if (decision === 'reject') {
      this.#setPhase('cancelled');
      return { phase: 'cancelled' };
    }
    if (decision === 'request-changes') {
      this.#dialogue.push(`The user asked for changes to this plan:\n${JSON.stringify(this.#plan)}\nFeedback: ${feedback ?? '(none)'}`);
      return this.#watch(() => this.#makePlan());
    }
    if (decision !== 'approve') throw new ConfigurationError(`Expected \`decision\` to be approve, request-changes or reject, got ${describeValue(decision)}`);
    return this.#watch(() => this.#execute());
  }

  /** Add an instruction for the chunks that have not started yet (only while executing). */
  inject(instruction: string): void {
    this.#expect('inject', ['executing']);
    if (typeof instruction !== 'string' || instruction.trim() === '') {
      throw new ConfigurationError(`Expected \`instruction\` to be a non-empty string, got ${describeValue(instruction)}`);
    }
    this.#instructions.push(instruction);
    this.#emit({ type: 'plan.instruction', planId: this.id, instruction });
    void this.#checkpoint?.save(this.#state());
  }

  /** After completion: plan a follow-up, with the previous plan and report as context. */
  async followUp(prompt: string): Promise<PlanningStep> {
    this.#expect('followUp', ['completed']);
    const last = this.#runs.at(-1)!;
    this.#task = prompt;
    this.#rounds = 0;
    this.#dialogue = [
      `This is a follow-up to an earlier task: ${last.task}`,
      `The earlier plan:\n${JSON.stringify(last.plan)}`,
      `The earlier report:\n${last.report.summary}`,
    ];
    return this.#watch(() => this.#makePlan());
  }

  /** Stop whatever runs (model calls, the execution) and move to `cancelled`. */
  cancel(): void {
    this.#expect('cancel', ['clarifying', 'planning', 'awaiting-approval', 'executing', 'aggregating']);
    this.#controller.abort();
    this.#setPhase('cancelled');
  }

  /** Forget the task and plan (keeping earlier runs) and go back to `idle`. */
  reset(): void {
    this.#controller.abort();
    this.#controller = new AbortController();
    this.#task = undefined;
    this.#plan = undefined;
    this.#dialogue = [];
    this.#instructions = [];
    this.#setPhase('idle');
  }

  async #decide(): Promise<PlanningStep> {
    const max = this.#options.maxClarifyRounds ?? 3;
    if (this.#rounds >= max) return this.#makePlan();
    this.#rounds++;
    const prompt = `## Task\n\n${this.#task}\n\n${this.#dialogue.join('\n\n')}\n\nAnswer with the JSON object only.`;
    const signal = this.#controller.signal;
    const { value: text } = await withConversation('planner', decideSystem, this.#conversation(), async (s) => (await s.send(prompt, { signal })).text);
    this.#guard(signal);
    const decision = parseDecision(text);
    if (decision.action === 'clarify' && decision.questions.length > 0) {
      this.#dialogue.push(`Planner's questions: ${decision.questions.join(' | ')}`);
      return { phase: 'clarifying', questions: decision.questions };
    }
    return this.#makePlan();
  }

  async #makePlan(): Promise<PlanningStep> {
    this.#setPhase('planning');
    const signal = this.#controller.signal;
    const plan = await decompose(this.#task!, {
      ...this.#conversation(),
      ...(this.#dialogue.length ? { context: this.#dialogue.join('\n\n') } : {}),
      ...(this.#options.planRoles ? { roles: this.#options.planRoles } : {}),
      ...defined({ maxAttempts: this.#options.maxPlanAttempts }),
    });
    this.#guard(signal);
    this.#plan = plan;
    this.#setPhase('awaiting-approval');
    return { phase: 'awaiting-approval', plan };
  }

  async #execute(): Promise<PlanningStep> {
    const plan = this.#plan!;
    const task = this.#task!;
    const signal = this.#controller.signal;
    const resuming = this.#interrupted;
    this.#interrupted = false;
    if (!resuming) this.#instructions = [];
    const instructions = this.#instructions;
    this.#setPhase('executing');
    const { adapter, adapters, clock, store, emitter: _e, id: _i, maxClarifyRounds: _m, planRoles: _p, maxPlanAttempts: _a, signal: _s, ...scheduling } = this.#options;
    const flow = defineRunnable<ExecutionOutcome>({
      name: 'planning-session',
      kind: 'planning-session',
      run: async (input, ctx) => {
        const checkpoint = ctx.checkpoint<SessionState, ExecutionOutcome>(sessionCheckpoint);
        const saved = await checkpoint.restore();
        if (saved?.outcome) return saved.outcome;
        this.#checkpoint = checkpoint;
        try {
          await checkpoint.save(this.#state());
          return await this.#executePlan(plan, input, ctx, { ...scheduling, adapter, instructions: () => instructions }, checkpoint);
        } finally {
          this.#checkpoint = undefined;
        }
      },
    });
    const options = { adapter, signal, emitter: this.emitter, ...(adapters ? { adapters } : {}), ...(clock ? { clock } : {}) };
    const result = resuming && store ? await resume(flow, this.id, { ...options, store }) : await run(flow, task, { ...options, runId: this.id, ...(store ? { store } : {}) });
    this.#guard(signal);
    const { planOutcome, report } = result;
    const final: PlanOutcome = { ...planOutcome, output: report.summary, agent: 'synthesis', report, stats: report.stats, usage: report.stats.usage };
    this.#runs.push({ task, plan, instructions: [...instructions], outcome: final, report });
    this.#setPhase('completed');
    return { phase: 'completed', plan, outcome: final };
  }

  /** Execute the plan and aggregate its results in the execution's context; a finished execution is saved in its checkpoint. */
  async #executePlan(
    plan: Plan,
    task: string,
    ctx: RunContext,
    options: PlanRunOptions & { adapter: ModelAdapter },
    checkpoint: Checkpoint<SessionState, ExecutionOutcome>,
  ): Promise<Omit<ExecutionOutcome, 'usage'>> {
    const outcome = await executePlan(plan, { ...options, ctx, task, planId: options.planId ?? this.id });
    if (ctx.signal.aborted) throw new CancelledError('The planning session was cancelled');
    this.#setPhase('aggregating');
    const report = await aggregate(plan, outcome.results, { ctx, adapter: options.adapter, task, durationMs: outcome.stats.durationMs });
    const { usage: _usage, ...planOutcome } = outcome;
    const result: Omit<ExecutionOutcome, 'usage'> = { output: report.summary, agent: 'synthesis', status: outcome.status, planOutcome, report };
    await checkpoint.finish(this.#state(), result);
    return result;
  }

  /** The execution's checkpoint state. */
  #state(): SessionState {
    return { schemaVersion: 1, sessionId: this.id, task: this.#task ?? '', plan: this.#plan!, instructions: [...this.#instructions] };
  }

  /** Run `work`, cancelling the session when the `signal` option aborts (the listener lives only as long as the call). */
  async #watch<T>(work: () => Promise<T>): Promise<T> {
    const outer = this.#options.signal;
    if (!outer) return work();
    const onAbort = (): void => {
      if (!['idle', 'completed', 'cancelled'].includes(this.#phase)) this.cancel();
    };
    if (outer.aborted) {
      onAbort();
      throw new CancelledError('The planning session was cancelled', { cause: outer.reason });
    }
    outer.addEventListener('abort', onAbort, { once: true });
    try {
      return await work();
    } finally {
      outer.removeEventListener('abort', onAbort);
    }
  }

  #conversation() {
    return { adapter: this.#options.adapter, signal: this.#controller.signal, clock: this.#clock };
  }

  #guard(signal: AbortSignal): void {
    if (signal.aborted) throw new CancelledError('The planning session was cancelled');
  }

  #expect(method: string, allowed: readonly PlanningPhase[]): void {
    if (!allowed.includes(this.#phase)) throw new PlanningPhaseError(method, this.#phase, allowed);
  }

  #setPhase(to: PlanningPhase): void {
    const from = this.#phase;
    if (from === to) return;
    this.#phase = to;
    this.#emit({ type: 'phase.changed', sessionId: this.id, from, to });
  }

  #emit(payload: { type: 'phase.changed'; sessionId: string; from: string; to: string } | { type: 'plan.instruction'; planId: string; instruction: string }): void {
    const event = { runId: this.id, time: this.#clock.now(), ...payload } as TroupeEvent;
    (this.emitter.emit as (t: string, e: unknown) => boolean)(payload.type, event);
    this.emitter.emit('*', event);
  }
}

const clarifySchema = z.object({ action: z.literal('clarify'), questions: z.array(z.unknown()) });

/** The planner's decision: the first JSON object that asks to clarify (with questions), else plan. */
function parseDecision(text: string): { action: 'clarify'; questions: string[] } | { action: 'plan' } {
  const found = safeFindJson(text, { kind: 'object', schema: clarifySchema });
  if (!found.success) return { action: 'plan' };
  return { action: 'clarify', questions: found.data.data.questions.filter((q): q is string => typeof q === 'string') };
}

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
import { planOrAsk, readQuestions } from './decompose.js';
import { executePlan } from './execute.js';
import { PlanControl } from './plan-control.js';
import { PlanChangeError, type PlanChange, type PlanChangeRecord } from './replan.js';
import { PlanMessageError, type PlanMessage, type PlanMessageInput } from './messages.js';
import { checkPlanEdit, planSchema, type ChunkRole, type Plan } from './plan.js';
import { resolveRole } from './roles.js';
import type { ConversationSettings, PlanOutcome, PlanRunOptions } from './types.js';
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
  /** The planner's session: adapter, model, temperature and system prompt. Default: the Planning role's (after `roles` overrides) on `adapter`. */
  planner?: ConversationSettings;
  /** The aggregator's session: adapter, model, temperature and system prompt. Default: the Synthesis role's (after `roles` overrides) on `adapter`. */
  aggregator?: ConversationSettings;
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

/** One message of the session's conversation with the user. */
export interface PlanningMessage {
  /** `user`: what the user said; `planner`: the planner's questions and plans; `orchestrator`: what the execution reports (acknowledged instructions, merge conflicts). */
  from: 'user' | 'planner' | 'orchestrator';
  text: string;
  /** Clock time. */
  time: number;
}

/** The session's answer to an injected instruction: who gets it, and what it said in the conversation. */
export interface InstructionAcknowledgement {
  instruction: string;
  /** Ids of the chunks running now: they get it at their next turn. */
  running: string[];
  /** The acknowledgement, as added to the conversation. */
  message: string;
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
  /** Changes the executing plan (the options' control, else one per execution). */
  #control: PlanControl | undefined;
  #runs: PlanningRun[] = [];
  #controller = new AbortController();
  /** The execution's checkpoint while it runs. */
  #checkpoint: Checkpoint<SessionState, ExecutionOutcome> | undefined;
  /** Set by {@link PlanningSession.restore}: the next approval resumes the interrupted execution. */
  #interrupted = false;
  #messages: PlanningMessage[] = [];
  /** Chunks running now (from `chunk.status`), for acknowledgements. */
  readonly #running = new Set<string>();

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
    this.emitter.on('chunk.status', (e) => {
      if (e.status === 'running') this.#running.add(e.chunkId);
      else this.#running.delete(e.chunkId);
    });
    this.emitter.on('chunk.conflict', (e) => {
      const others = e.with.length ? ` with chunk ${e.with.map((w) => w.chunkId).join(', ')}` : '';
      const next = e.outcome === 'retrying' ? 'it runs again from the merged files, told about the other change' : e.outcome === 'resolved' ? 'resolved: the new attempt merged' : 'it failed';
      this.#say('orchestrator', `Chunk ${e.chunkId} ("${e.title}") conflicted in ${e.paths.join(', ')}${others}; ${next}.`);
    });
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
  /** The conversation with the user so far: the task, questions and answers, plans, feedback, instructions and what the orchestrator answered. */
  get messages(): readonly PlanningMessage[] {
    return this.#messages;
  }
  /** The roles the planner may assign (the `planRoles` option), which an edited plan must keep to; undefined: every role. */
  get planRoles(): readonly ChunkRole[] | undefined {
    return this.#options.planRoles;
  }

  /** Start with a task: the planner asks questions (`clarifying`) or plans (`awaiting-approval`). */
  async submitTask(task: string): Promise<PlanningStep> {
    this.#expect('submitTask', ['idle']);
    if (typeof task !== 'string' || task.trim() === '') throw new ConfigurationError(`Expected \`task\` to be a non-empty string, got ${describeValue(task)}`);
    this.#task = task;
    this.#dialogue = [];
    this.#rounds = 0;
    this.#say('user', task);
    this.#setPhase('clarifying');
    return this.#watch(() => this.#decide());
  }

  /** Answer the planner's questions. */
  async answerClarification(answers: string): Promise<PlanningStep> {
    this.#expect('answerClarification', ['clarifying']);
    this.#dialogue.push(`User's answers: ${answers}`);
    this.#say('user', answers);
    return this.#watch(() => this.#decide());
  }

  /**
   * Go back from the plan awaiting approval to clarifying: the user has
   * something to say or ask first (`note`). The planner may ask questions
   * again (`clarifying`) or plan with the note (`awaiting-approval`).
   */
  async clarify(note?: string): Promise<PlanningStep> {
    this.#expect('clarify', ['awaiting-approval']);
    if (note !== undefined && typeof note !== 'string') throw new ConfigurationError(`Expected \`note\` to be a string, got ${describeValue(note)}`);
    if (this.#plan) this.#dialogue.push(`The plan proposed so far:\n${JSON.stringify(this.#plan)}`);
    this.#dialogue.push(`The user went back to clarifying${note ? `: ${note}` : '.'}`);
    if (note) this.#say('user', note);
    this.#rounds = 0;
    this.#setPhase('clarifying');
    return this.#watch(() => this.#decide());
  }

  /**
   * Replace the plan awaiting approval by one the user edited (a plan, or
   * its JSON text), validated like a generated one: the schema, the graph,
   * and the roles the planner may use. An invalid plan throws a
   * `ConfigurationError` (`invalid_argument`) listing every error, and the
   * plan awaiting approval stays as it was. Approve it with
   * `approvePlan('approve')`.
   *
   * @example
   * ```ts
   * const edited = structuredClone(session.plan!);
   * edited.chunks[1]!.prompt += ' Keep the public API unchanged.';
   * await session.editPlan(edited);
   * await session.approvePlan('approve');
   * ```
   */
  editPlan(plan: Plan | string): PlanningStep {
    this.#expect('editPlan', ['awaiting-approval']);
    const edited = this.#checkEdited(plan);
    this.#plan = edited;
    this.#dialogue.push(`The user edited the plan to:\n${JSON.stringify(edited)}`);
    this.#say('user', `Edited the plan: ${edited.planSummary}`);
    return { phase: 'awaiting-approval', plan: edited };
  }

  #checkEdited(plan: Plan | string): Plan {
    const checked = checkPlanEdit(plan, this.#options.planRoles);
    if (!checked.plan) throw new ConfigurationError(`The edited plan is invalid: ${checked.errors.join('; ')}`, { code: 'invalid_argument', details: { errors: checked.errors } });
    return checked.plan;
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
      this.#say('user', `Changes requested: ${feedback ?? '(no feedback)'}`);
      return this.#watch(() => this.#makePlan(true));
    }
    if (decision !== 'approve') throw new ConfigurationError(`Expected \`decision\` to be approve, request-changes or reject, got ${describeValue(decision)}`);
    return this.#watch(() => this.#execute());
  }

  /**
   * Add an instruction while the plan executes: chunks that start later
   * see it in their prompt, and chunks running now get it at their next
   * turn (a `chunk.instruction` event each). The session acknowledges it
   * in its conversation ({@link PlanningSession.messages}) and returns the
   * acknowledgement.
   */
  inject(instruction: string): InstructionAcknowledgement {
    this.#expect('inject', ['executing']);
    if (typeof instruction !== 'string' || instruction.trim() === '') {
      throw new ConfigurationError(`Expected \`instruction\` to be a non-empty string, got ${describeValue(instruction)}`);
    }
    this.#instructions.push(instruction);
    const running = [...this.#running].sort((a, b) => Number(a) - Number(b));
    const message =
      running.length === 0
        ? 'Noted: the chunks that start from now on will follow it.'
        : `Noted: chunk${running.length > 1 ? 's' : ''} ${running.join(', ')} will get it at ${running.length > 1 ? 'their' : 'its'} next turn, and the chunks that start from now on will follow it.`;
    this.#say('user', instruction);
    this.#say('orchestrator', message);
    this.#emit({ type: 'plan.instruction', planId: this.id, instruction, running, acknowledgement: message });
    void this.#checkpoint?.save(this.#state());
    return { instruction, running, message };
  }

  /**
   * Change the plan while it executes (add, cancel, split, rewire chunks;
   * see `PlanControl.change`): validated against the live graph and
   * applied at once, or refused with a `PlanChangeError`. The session says
   * what changed in its conversation.
   */
  changePlan(change: PlanChange): PlanChangeRecord {
    this.#expect('changePlan', ['executing']);
    const control = this.#control;
    if (!control?.running) throw new PlanChangeError('not_running', 'The plan has not started executing yet');
    const record = control.changeAs(change, 'session');
    const plan = control.plan();
    this.#plan = plan;
    this.#say('orchestrator', `Plan changed (change ${record.id}${change.reason ? `: ${change.reason}` : ''}): it now has ${plan.chunks.length} chunks.`);
    return record;
  }

  /** Post a message to the executing plan's workers (a chunk, a role or everyone): see `PlanControl.post`. */
  postMessage(message: PlanMessageInput): PlanMessage {
    this.#expect('postMessage', ['executing']);
    if (!this.#control?.running) throw new PlanMessageError('not_running', 'The plan has not started executing yet');
    return this.#control.post(message);
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
    this.#say('user', prompt);
    return this.#watch(() => this.#makePlan(true));
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
    if (this.#rounds >= max) return this.#makePlan(false);
    this.#rounds++;
    const prompt = `## Task\n\n${this.#task}\n\n${this.#dialogue.join('\n\n')}\n\nAnswer with the JSON object only.`;
    const signal = this.#controller.signal;
    const planner = this.#planner();
    const system = this.#options.planner?.system === undefined ? decideSystem : `${this.#options.planner.system}\n\n${decideSystem}`;
    const { value: text } = await withConversation('planner', system, planner, async (s) => (await s.send(prompt, { signal })).text);
    this.#guard(signal);
    const questions = readQuestions(text);
    if (questions) return this.#ask(questions);
    return this.#makePlan(false);
  }

  /** Back to (or still in) clarifying with the planner's questions. */
  #ask(questions: string[]): PlanningStep {
    this.#dialogue.push(`Planner's questions: ${questions.join(' | ')}`);
    this.#say('planner', questions.join('\n'));
    this.#setPhase('clarifying');
    return { phase: 'clarifying', questions };
  }

  /** Plan; with `mayAsk` (a revision or a follow-up) the planner may go back to clarifying with questions instead, within `maxClarifyRounds`. */
  async #makePlan(mayAsk: boolean): Promise<PlanningStep> {
    this.#setPhase('planning');
    const signal = this.#controller.signal;
    const max = this.#options.maxClarifyRounds ?? 3;
    const planner = this.#planner();
    const answer = await planOrAsk(
      this.#task!,
      {
        ...planner,
        ...(this.#dialogue.length ? { context: this.#dialogue.join('\n\n') } : {}),
        ...(this.#options.planRoles ? { roles: this.#options.planRoles } : {}),
        ...defined({ maxAttempts: this.#options.maxPlanAttempts }),
        system: this.#options.planner?.system ?? resolveRole('Planning', this.#options.roles).system,
      },
      mayAsk && this.#rounds < max,
    );
    this.#guard(signal);
    if (answer.questions) {
      this.#rounds++;
      return this.#ask(answer.questions);
    }
    const plan = answer.plan;
    this.#plan = plan;
    this.#say('planner', `Proposed plan: ${plan.planSummary} (${plan.chunks.length} chunks)`);
    this.#setPhase('awaiting-approval');
    return { phase: 'awaiting-approval', plan };
  }

  /** The planner's session settings: the `planner` option over the Planning role's model and temperature. */
  #planner() {
    const role = resolveRole('Planning', this.#options.roles);
    const own = this.#options.planner ?? {};
    const model = own.model ?? role.model;
    const temperature = own.temperature ?? role.temperature;
    return {
      ...this.#conversation(),
      ...defined({ adapter: own.adapter, model, temperature }),
    };
  }

  #say(from: PlanningMessage['from'], text: string): void {
    this.#messages.push({ from, text, time: this.#clock.now() });
  }

  async #execute(): Promise<PlanningStep> {
    const plan = this.#plan!;
    const task = this.#task!;
    const signal = this.#controller.signal;
    const resuming = this.#interrupted;
    this.#interrupted = false;
    if (!resuming) this.#instructions = [];
    this.#running.clear();
    const instructions = this.#instructions;
    this.#setPhase('executing');
    const { adapter, adapters, clock, store, emitter: _e, id: _i, maxClarifyRounds: _m, planRoles: _p, maxPlanAttempts: _a, signal: _s, planner: _pl, aggregator: _ag, ...scheduling } = this.#options;
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
    const control = (this.#control = options.control ?? new PlanControl());
    const outcome = await executePlan(plan, { ...options, control, ctx, task, planId: options.planId ?? this.id });
    if (ctx.signal.aborted) throw new CancelledError('The planning session was cancelled');
    this.#setPhase('aggregating');
    const settings = this.#options.aggregator ?? {};
    const report = await aggregate(outcome.plan, outcome.results, {
      ...settings,
      ctx,
      adapter: settings.adapter ?? options.adapter,
      task,
      durationMs: outcome.stats.durationMs,
      ...defined({ roles: this.#options.roles }),
    });
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

  #emit(
    payload: { type: 'phase.changed'; sessionId: string; from: string; to: string } | { type: 'plan.instruction'; planId: string; instruction: string; running: string[]; acknowledgement: string },
  ): void {
    const event = { runId: this.id, time: this.#clock.now(), ...payload } as TroupeEvent;
    (this.emitter.emit as (t: string, e: unknown) => boolean)(payload.type, event);
    this.emitter.emit('*', event);
  }
}

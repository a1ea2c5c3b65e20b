/**
 * The interactive planning session: clarify the task, plan, wait for the
 * user's approval, execute, aggregate, and take follow-ups, one phase at a
 * time. Every call and every step is a move of the one table of
 * `phases.ts`, checked when it is made: a call in the wrong phase throws a
 * {@link PlanningPhaseError}. Its checkpoint is its {@link PlanningSnapshot}.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { Checkpoint } from '../../core/checkpoint.js';
import { realClock, type Clock } from '../../core/clock.js';
import type { RunContext, TroupeEmitter } from '../../core/context.js';
import { CancelledError, ConfigurationError, describeValue } from '../../core/errors.js';
import type { TroupeEvent, TroupeEventListeners } from '../../core/events.js';
import { resume } from '../../core/resume.js';
import { run } from '../../core/run.js';
import { defineRunnable } from '../../core/runnable.js';
import { aggregate, type AggregateReport } from './aggregate.js';
import { withConversation } from './conversation.js';
import { planOrAsk, readQuestions } from './decompose.js';
import { executePlan } from '../engine/execute.js';
import { PlanControl, type PlanControlCallOptions } from '../live/control.js';
import type { PlanChange, PlanChangeRecord } from '../live/replan.js';
import type { PlanMessage, PlanMessageInput } from '../live/messages.js';
import { checkPlanEdit, type ChunkRole, type Plan } from '../model/plan.js';
import { resolveRole } from '../model/roles.js';
import type { PlanOutcome, PlanRunOptions } from '../engine/types.js';
import { defined } from '../../core/defined.js';
import { nextPhase, phasesAllowing, PlanningPhaseError, type PlanningMove, type PlanningPhase } from './phases.js';
import { planningSessionOptions, type PlanningSessionOptions } from './options.js';
import { parsePlanningSnapshot, readSnapshot, snapshotCheckpoint, snapshotKey, snapshotState, type PlanningSnapshot } from './snapshot.js';

export { PlanningPhaseError, type PlanningPhase } from './phases.js';
export type { PlanningSessionOptions } from './options.js';
export type { PlanningSnapshot } from './snapshot.js';

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
  /** `user`: what the user said; `planner`: the planner's questions and plans; `session`: what the session reports of the execution (acknowledged instructions, changes of the plan, merge conflicts). */
  from: 'user' | 'planner' | 'session';
  text: string;
  /** Clock time. */
  time: number;
}

/** The session's answer to an instruction posted while the plan executes: who gets it, and what it said in the conversation. */
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

const decideSystem =
  'You decide whether a task is clear enough to plan. Answer with one JSON object: {"action":"clarify","questions":["..."]} ' +
  'to ask the user questions first, or {"action":"plan"} when you can plan.';

/**
 * An interactive planning session with phases `idle → clarifying → planning
 * → awaiting-approval → executing → aggregating → completed` (or
 * `cancelled`); see `planningMoves` for every move.
 *
 * @example
 * ```ts
 * const session = new PlanningSession({ adapter });
 * let step = await session.submitTask('Fix the memory leaks in the cache');
 * while (step.phase === 'clarifying') step = await session.answerClarification(await ask(step.questions));
 * const done = await session.approvePlan();
 * console.log(done.outcome?.output);
 * ```
 */
export class PlanningSession {
  /** The session's run id: its executions run with it (and a store keeps them under it). */
  readonly runId: string;
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
  /** The executing plan's control (one per execution). */
  #control: PlanControl | undefined;
  #runs: PlanningRun[] = [];
  #controller = new AbortController();
  /** The execution's checkpoint while it runs. */
  #checkpoint: Checkpoint<Omit<PlanningSnapshot, 'outcome'>, PlanOutcome> | undefined;
  /** Set by {@link PlanningSession.restore}: the next approval resumes the interrupted execution (when its run is in the store). */
  #interrupted = false;
  #messages: PlanningMessage[] = [];
  /** Chunks running now (from `chunk.status`), for acknowledgements. */
  readonly #running = new Set<string>();

  constructor(options: PlanningSessionOptions) {
    planningSessionOptions.check(options);
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.runId = options.runId ?? randomUUID();
    this.emitter = options.emitter ?? new EventEmitter<TroupeEventListeners>();
    this.emitter.on('chunk.status', (e) => {
      if (e.status === 'running') this.#running.add(e.chunkId);
      else this.#running.delete(e.chunkId);
    });
    this.emitter.on('chunk.conflict', (e) => {
      const others = e.with.length ? ` with chunk ${e.with.map((w) => w.chunkId).join(', ')}` : '';
      const next = e.outcome === 'retrying' ? 'it runs again from the merged files, told about the other change' : e.outcome === 'resolved' ? 'resolved: the new attempt merged' : 'it failed';
      this.#say('session', `Chunk ${e.chunkId} ("${e.title}") conflicted in ${e.paths.join(', ')}${others}; ${next}.`);
    });
  }

  /**
   * A session from its snapshot: one taken with {@link PlanningSession.snapshot},
   * or, given a run id, the checkpoint of that run in `options.store` (an
   * execution a crash or a restart interrupted). Without an outcome the
   * session is `awaiting-approval` with its task, plan and instructions, and
   * `approvePlan()` continues the execution (`resume`: chunks that
   * completed are not run again) when its run is in the store, else starts
   * it; with one it is `completed`, with the execution in `runs`.
   *
   * @example
   * ```ts
   * const session = await PlanningSession.restore('release-42', { adapter, store });
   * if (session.phase === 'awaiting-approval') await session.approvePlan();
   * ```
   */
  static async restore(from: PlanningSnapshot | string, options: PlanningSessionOptions): Promise<PlanningSession> {
    planningSessionOptions.check(options);
    let snapshot: PlanningSnapshot;
    if (typeof from === 'string') {
      if (!options.store) throw new ConfigurationError('Expected `store` to read the snapshot of run "' + from + '" from', { details: { runId: from } });
      snapshot = await readSnapshot(from, options.store, defined({ signal: options.signal }));
    } else {
      snapshot = parsePlanningSnapshot(from);
    }
    if (options.runId !== undefined && options.runId !== snapshot.runId) {
      throw new ConfigurationError(`Expected \`runId\` to be the snapshot's run id "${snapshot.runId}" (or left out), got ${describeValue(options.runId)}`);
    }
    const session = new PlanningSession({ ...options, runId: snapshot.runId });
    session.#task = snapshot.task;
    session.#plan = snapshot.plan;
    session.#instructions = [...snapshot.instructions];
    if (snapshot.outcome === undefined) {
      session.#interrupted = true;
      session.#phase = 'awaiting-approval';
      return session;
    }
    const outcome = finalOutcome(snapshot.outcome);
    session.#runs.push({ task: snapshot.task, plan: snapshot.plan, instructions: [...snapshot.instructions], outcome, report: outcome.report! });
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
  /** Instructions posted during the current or last execution. */
  get instructions(): readonly string[] {
    return this.#instructions;
  }
  /** Executions so far, oldest first. */
  get runs(): readonly PlanningRun[] {
    return this.#runs;
  }
  /** The conversation with the user so far: the task, questions and answers, plans, feedback, instructions and what the session answered. */
  get messages(): readonly PlanningMessage[] {
    return this.#messages;
  }
  /** The roles the planner may assign (the `planRoles` option), which an edited plan must keep to; undefined: every role. */
  get planRoles(): readonly ChunkRole[] | undefined {
    return this.#options.planRoles;
  }

  /** Start with a task: the planner asks questions (`clarifying`) or plans (`awaiting-approval`). */
  async submitTask(task: string): Promise<PlanningStep> {
    this.#allowed('submitTask');
    if (typeof task !== 'string' || task.trim() === '') throw new ConfigurationError(`Expected \`task\` to be a non-empty string, got ${describeValue(task)}`);
    this.#task = task;
    this.#dialogue = [];
    this.#rounds = 0;
    this.#say('user', task);
    this.#move('submitTask');
    return this.#watch(() => this.#decide());
  }

  /** Answer the planner's questions. */
  async answerClarification(answers: string): Promise<PlanningStep> {
    this.#move('answerClarification');
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
    this.#allowed('clarify');
    if (note !== undefined && typeof note !== 'string') throw new ConfigurationError(`Expected \`note\` to be a string, got ${describeValue(note)}`);
    if (this.#plan) this.#dialogue.push(`The plan proposed so far:\n${JSON.stringify(this.#plan)}`);
    this.#dialogue.push(`The user went back to clarifying${note ? `: ${note}` : '.'}`);
    if (note) this.#say('user', note);
    this.#rounds = 0;
    this.#move('clarify');
    return this.#watch(() => this.#decide());
  }

  /**
   * Replace the plan awaiting approval by one the user edited (a plan, or
   * its JSON text), validated like a generated one: the schema, the graph,
   * and the roles the planner may use. An invalid plan throws a
   * `ConfigurationError` (`invalid_argument`) listing every error, and the
   * plan awaiting approval stays as it was. Approve it with `approvePlan()`.
   *
   * @example
   * ```ts
   * const edited = structuredClone(session.plan!);
   * edited.chunks[1]!.prompt += ' Keep the public API unchanged.';
   * await session.editPlan(edited);
   * await session.approvePlan();
   * ```
   */
  editPlan(plan: Plan | string): PlanningStep {
    this.#allowed('editPlan');
    const edited = this.#checkEdited(plan);
    this.#plan = edited;
    this.#dialogue.push(`The user edited the plan to:\n${JSON.stringify(edited)}`);
    this.#say('user', `Edited the plan: ${edited.planSummary}`);
    this.#move('editPlan');
    return { phase: 'awaiting-approval', plan: edited };
  }

  #checkEdited(plan: Plan | string): Plan {
    const checked = checkPlanEdit(plan, this.#options.planRoles);
    if (!checked.plan) throw new ConfigurationError(`The edited plan is invalid: ${checked.errors.join('; ')}`, { code: 'invalid_argument', details: { errors: checked.errors } });
    return checked.plan;
  }

  /** Approve the plan awaiting approval: it executes, its results are aggregated, and the session completes. */
  async approvePlan(): Promise<PlanningStep> {
    this.#allowed('approvePlan');
    // A new execution starts without the last one's instructions (an interrupted one keeps its own), cleared before the move so that
    // instructions posted as it enters `executing` (by a listener of `phase.changed`) are kept.
    if (!this.#interrupted) this.#instructions = [];
    this.#move('approvePlan');
    return this.#watch(() => this.#execute());
  }

  /** Ask for changes to the plan awaiting approval: the planner plans again with `feedback` (or asks questions first). */
  async requestChanges(feedback: string): Promise<PlanningStep> {
    this.#allowed('requestChanges');
    if (typeof feedback !== 'string') throw new ConfigurationError(`Expected \`feedback\` to be a string, got ${describeValue(feedback)}`);
    this.#dialogue.push(`The user asked for changes to this plan:\n${JSON.stringify(this.#plan)}\nFeedback: ${feedback || '(none)'}`);
    this.#say('user', `Changes requested: ${feedback || '(no feedback)'}`);
    this.#move('requestChanges');
    return this.#watch(() => this.#makePlan(true));
  }

  /** Reject the plan awaiting approval: the session is `cancelled`. */
  rejectPlan(): PlanningStep {
    this.#move('rejectPlan');
    return { phase: 'cancelled' };
  }

  /**
   * Tell the executing plan something for its next turns (docs/conventions.md:
   * `post`). A text is an instruction from the user for every chunk: chunks
   * that start later see it in their prompt, chunks running now get it at
   * their next turn (a `chunk.instruction` event each); the session
   * acknowledges it in its conversation ({@link PlanningSession.messages})
   * and returns the acknowledgement. A message `{ to, text }` goes to one
   * chunk, a role or everyone as a message of the plan (see
   * `PlanControl.post`), once the plan runs: posted at once, it resolves
   * once it is in the run's store.
   */
  post(instruction: string): InstructionAcknowledgement;
  post(message: PlanMessageInput): Promise<PlanMessage>;
  post(message: string | PlanMessageInput): InstructionAcknowledgement | Promise<PlanMessage> {
    this.#allowed('post');
    if (typeof message !== 'string') return this.#planControl().post(message);
    if (message.trim() === '') throw new ConfigurationError(`Expected the instruction to be a non-empty string, got ${describeValue(message)}`);
    this.#instructions.push(message);
    const running = [...this.#running].sort((a, b) => Number(a) - Number(b));
    const acknowledgement =
      running.length === 0
        ? 'Noted: the chunks that start from now on will follow it.'
        : `Noted: chunk${running.length > 1 ? 's' : ''} ${running.join(', ')} will get it at ${running.length > 1 ? 'their' : 'its'} next turn, and the chunks that start from now on will follow it.`;
    this.#say('user', message);
    this.#say('session', acknowledgement);
    this.#emit({ type: 'plan.instruction', planId: this.#planId(), instruction: message, running, acknowledgement });
    void this.#checkpoint?.save(snapshotState(this.#snapshot()));
    return { instruction: message, running, message: acknowledgement };
  }

  /**
   * Change the plan while it executes (add, cancel, split, rewire chunks;
   * see `PlanControl.change`): validated against the live graph and
   * applied at once, or refused at once with a `PlanChangeError` thrown (a
   * `NotRunningError` before the plan starts). The session says what
   * changed in its conversation. Resolves with the change's record once it
   * is in the run's store (see `PlanControl`).
   */
  changePlan(change: PlanChange, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    this.#allowed('changePlan');
    const control = this.#planControl();
    const { record, saved } = control.applyChange(change, 'session', options);
    const plan = control.plan();
    this.#plan = plan;
    this.#say('session', `Plan changed (change ${record.id}${change.reason ? `: ${change.reason}` : ''}): it now has ${plan.chunks.length} chunks.`);
    return saved;
  }

  /**
   * The session as it stands, to keep and give to
   * {@link PlanningSession.restore} later: its run id, task, plan and
   * instructions, and the last execution's outcome once it completed. The
   * same snapshot is the session's checkpoint in its run.
   */
  snapshot(): PlanningSnapshot {
    this.#allowed('snapshot');
    return structuredClone(this.#snapshot());
  }

  /** After completion: plan a follow-up, with the previous plan and report as context. */
  async followUp(prompt: string): Promise<PlanningStep> {
    this.#allowed('followUp');
    const last = this.#runs.at(-1)!;
    this.#task = prompt;
    this.#rounds = 0;
    this.#dialogue = [
      `This is a follow-up to an earlier task: ${last.task}`,
      `The earlier plan:\n${JSON.stringify(last.plan)}`,
      `The earlier report:\n${last.report.summary}`,
    ];
    this.#say('user', prompt);
    this.#move('followUp');
    return this.#watch(() => this.#makePlan(true));
  }

  /** Stop whatever runs (model calls, the execution) and move to `cancelled`. */
  cancel(): void {
    this.#move('cancel');
    this.#controller.abort();
  }

  /** Forget the task and plan (keeping earlier runs) and go back to `idle`. */
  reset(): void {
    this.#move('reset');
    this.#controller.abort();
    this.#controller = new AbortController();
    this.#task = undefined;
    this.#plan = undefined;
    this.#dialogue = [];
    this.#instructions = [];
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
    this.#move('ask');
    return { phase: 'clarifying', questions };
  }

  /** Plan; with `mayAsk` (a revision or a follow-up) the planner may go back to clarifying with questions instead, within `maxClarifyRounds`. */
  async #makePlan(mayAsk: boolean): Promise<PlanningStep> {
    this.#move('plan');
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
    this.#move('propose');
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

  /** Run the approved plan (or continue its interrupted run) and aggregate; the phase is `executing`. */
  async #execute(): Promise<PlanningStep> {
    const plan = this.#plan!;
    const task = this.#task!;
    const signal = this.#controller.signal;
    const { adapter, adapters, clock, store } = this.#options;
    const resuming = this.#interrupted && store !== undefined && (await store.get(snapshotKey(this.runId), { signal })) !== undefined;
    this.#guard(signal);
    this.#interrupted = false;
    this.#running.clear();
    const control = (this.#control = new PlanControl());
    const flow = defineRunnable<PlanOutcome>({
      name: 'planning-session',
      kind: 'planning-session',
      run: async (input, ctx) => {
        const checkpoint = ctx.checkpoint<Omit<PlanningSnapshot, 'outcome'>, PlanOutcome>(snapshotCheckpoint);
        const saved = await checkpoint.restore();
        if (saved?.outcome) return saved.outcome;
        this.#checkpoint = checkpoint;
        try {
          await checkpoint.save(snapshotState(this.#snapshot()));
          return await this.#executePlan(plan, input, ctx, checkpoint);
        } finally {
          this.#checkpoint = undefined;
        }
      },
    });
    const options = { adapter, signal, control, emitter: this.emitter, ...defined({ adapters, clock }) };
    const result = resuming ? await resume(flow, this.runId, { ...options, store }) : await run(flow, task, { ...options, runId: this.runId, ...defined({ store }) });
    this.#guard(signal);
    const { runId: _runId, trace: _trace, durationMs: _durationMs, ...outcome } = result;
    const final = finalOutcome(outcome);
    this.#runs.push({ task, plan, instructions: [...this.#instructions], outcome: final, report: final.report! });
    this.#move('complete');
    return { phase: 'completed', plan, outcome: final };
  }

  /** Execute the plan and aggregate its results in the execution's context; a finished execution is saved in its checkpoint. */
  async #executePlan(plan: Plan, task: string, ctx: RunContext, checkpoint: Checkpoint<Omit<PlanningSnapshot, 'outcome'>, PlanOutcome>): Promise<Omit<PlanOutcome, 'usage'>> {
    const { adapter, adapters: _a, clock: _c, store: _st, emitter: _e, runId: _r, maxClarifyRounds: _m, planRoles: _p, maxPlanAttempts: _pa, signal: _s, planner: _pl, aggregator, ...scheduling } = this.#options;
    const instructions = this.#instructions;
    const planOptions: PlanRunOptions = { ...scheduling, adapter, instructions: () => instructions };
    const outcome = await executePlan(plan, { ...planOptions, ctx, task });
    if (ctx.signal.aborted) throw new CancelledError('The planning session was cancelled');
    this.#move('aggregate');
    const settings = aggregator ?? {};
    const report = await aggregate(outcome.plan, outcome.results, {
      ...settings,
      ctx,
      adapter: settings.adapter ?? adapter,
      task,
      durationMs: outcome.stats.durationMs,
      ...defined({ roles: this.#options.roles }),
    });
    const { usage: _usage, ...planOutcome } = outcome;
    const result: Omit<PlanOutcome, 'usage'> = { ...planOutcome, output: report.summary, agent: 'synthesis', report, stats: report.stats };
    await checkpoint.finish(snapshotState(this.#snapshot()), result);
    return result;
  }

  /** The session as it stands (its plan's control need not be running). */
  #snapshot(): PlanningSnapshot {
    const last = this.#phase === 'completed' ? this.#runs.at(-1) : undefined;
    const snapshot: PlanningSnapshot = { schemaVersion: 1, runId: this.runId, task: this.#task ?? '', plan: this.#plan!, instructions: [...this.#instructions] };
    if (last) {
      const { usage: _usage, ...outcome } = last.outcome;
      snapshot.outcome = outcome;
    }
    return snapshot;
  }

  /** The id of the session's plan: its own (`planId`, default `plan`). */
  #planId(): string {
    return this.#options.planId ?? 'plan';
  }

  /** The executing plan's control, or a `NotRunningError` before the execution starts. */
  #planControl(): PlanControl {
    return this.#control ?? new PlanControl();
  }

  /** Run `work`, cancelling the session when the `signal` option aborts (the listener lives only as long as the call). */
  async #watch<T>(work: () => Promise<T>): Promise<T> {
    const outer = this.#options.signal;
    if (!outer) return work();
    const onAbort = (): void => {
      if (phasesAllowing('cancel').includes(this.#phase)) this.cancel();
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

  /** Throw a {@link PlanningPhaseError} unless the phase allows `move` (checked before a call does anything). */
  #allowed(move: PlanningMove): void {
    nextPhase(this.#phase, move);
  }

  /** Make `move`: the one table of phases says where it leads, or refuses it. */
  #move(move: PlanningMove): void {
    const from = this.#phase;
    const to = nextPhase(from, move);
    if (from === to) return;
    this.#phase = to;
    this.#emit({ type: 'phase.changed', from, to });
  }

  #emit(payload: { type: 'phase.changed'; from: PlanningPhase; to: PlanningPhase } | { type: 'plan.instruction'; planId: string; instruction: string; running: string[]; acknowledgement: string }): void {
    const event = { runId: this.runId, time: this.#clock.now(), ...payload } as TroupeEvent;
    (this.emitter.emit as (t: string, e: unknown) => boolean)(payload.type, event);
    this.emitter.emit('*', event);
  }
}

/** An execution's outcome as the session gives it: the plan's, with the synthesis as its output and the usage of its report. */
function finalOutcome(outcome: Omit<PlanOutcome, 'usage'> & { usage?: PlanOutcome['usage'] }): PlanOutcome {
  const report = outcome.report!;
  return { ...outcome, output: report.summary, agent: 'synthesis', report, stats: report.stats, usage: report.stats.usage };
}

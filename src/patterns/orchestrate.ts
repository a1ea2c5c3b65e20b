/**
 * `orchestrate`: a lead plans, workers execute in parallel, an
 * evaluator scores, and (in `orchestrator-reflect` mode) the loop goes on
 * until the goal is met, quality stalls, or a budget runs out — and says why.
 * @module
 */
import { throwIfAborted } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, ModelBehaviorError, TroupeError, describeValue, isTroupeError } from '../core/errors.js';
import { delegate, enabledTargets } from '../core/delegate.js';
import type { DelegationHooks, DelegationMessage } from '../core/delegation.js';
import { defineOptions, fraction, nonEmptyString, nonNegativeInteger, oneOf, positiveInteger, positiveNumber, required, string, type OptionCheck } from '../core/options.js';
import { agentCheck, delegationOption, stallOption } from './checks.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { emptyUsage } from '../core/usage.js';
import { parseAssignments, type Assignment } from '../reflection/assignments.js';
import { feedbackAdjustments, DEFAULT_MIN_ANSWER_CHARS } from '../reflection/adjust.js';
import { NEEDS_ITERATION_SCORE, SELF_EVALUATION_SCORE, parseEvaluation } from '../reflection/evaluation.js';
import { QualityTracker } from '../reflection/quality.js';
import { parseSentinels, stripSentinels } from '../reflection/sentinels.js';
import { StallDetector, type StallDetectorOptions } from '../reflection/stall.js';
import type { Agent, Conversation } from './agent.js';
import { broadcast } from './broadcast.js';
import { sequential } from './sequential.js';
import { fanOut, limiter, type Limiter } from './fan-out.js';
import {
  driveLoop, loopLimits, loopRunnable,
  type DriveLoopResult, type Loop, type LoopReason, type LoopRun, type LoopStatus, type StepResult,
} from './loop.js';
import {
  DEFAULT_EVALUATOR_ANSWER_CHARS, DEFAULT_WORKER_TIMEOUT_MS, delegateTool, evaluationPrompt, nudgePrompt, planPrompt, runWorker, synthesisPrompt, workerPrompt,
  type PromptContext,
} from './orchestrate-dispatch.js';
import {
  orchestrateModes, orchestrateStateSchema,
  type LoopEvaluation, type OrchestrateMode, type OrchestrateState, type WorkerResult,
} from './orchestrate-state.js';
import { defined } from '../core/defined.js';
import { retryOptions, type RetryOptions } from '../core/retry.js';

/** Options of {@link orchestrate}. */
export interface OrchestrateOptions {
  /** The runnable's name. Default: `orchestrate`. */
  name?: string;
  /** The lead: plans, dispatches and synthesises. Required except in `broadcast` and `sequential` mode (where it synthesises when given). */
  lead?: Agent;
  /** The workers; names must be unique. */
  workers: Agent[];
  /** Default: `orchestrator-reflect`. */
  mode?: OrchestrateMode;
  /** Scores each synthesis (`SCORE:` / `RATIONALE:`); without one the lead judges itself with sentinels. */
  evaluator?: Agent;
  /** Most iterations of the reflect loop. Default: 5. */
  maxIterations?: number;
  /** The score at which the goal is met. Default: 0.9. */
  goalScore?: number;
  /** How the lead assigns tasks: `@worker:` blocks or the `delegate_to_worker` tool. Default: `text`. */
  dispatch?: 'text' | 'tool';
  /** Text every worker receives before its task. */
  sharedContext?: string;
  /** Guidance for the lead on who should do what. */
  routingContext?: string;
  /** Most workers running at once (in every mode, and for the lead's `delegate_to_worker` calls). Default: all of them. */
  maxParallel?: number;
  /** Time limit of one worker call, in ms. Default: 600000 (10 minutes). */
  workerTimeoutMs?: number;
  /** Nudges when the first plan assigns nothing. Default: 3. */
  maxNudges?: number;
  /** Stall detector options. Default: threshold 0.9, window 5, tolerance 2. */
  stall?: StallDetectorOptions;
  /**
   * Adjustment from feedback: after each evaluation that does not meet the
   * goal, failed workers, too short answers (from iteration 2 on) and a
   * score drop become `reflect.adjustment` events and a `## Adjustments`
   * section of the next planning prompt. `false` turns it off. Default:
   * on, with `minAnswerChars` 100.
   */
  autoAdjust?: boolean | { minAnswerChars?: number };
  /** Longest worker answer quoted in the evaluator's prompt, in characters; longer ones are cut with a note. Default: 2000. */
  evaluatorAnswerChars?: number;
  /**
   * Hooks on every delegation to a worker (with those of guarded runnables
   * around it): `enabled` decides at run time which workers the
   * lead is offered (the others are left out of its prompt and of
   * the `delegate_to_worker` tool); `inputFilter` and `beforeDelegation`
   * shape or refuse what a worker gets. A refusal is the worker's failed
   * result: an error result of the lead's `delegate_to_worker` call,
   * or a failed worker in the synthesis prompt (text dispatch).
   */
  delegation?: DelegationHooks;
  /**
   * How an iteration that threw is retried: `maxRetries` (default 2: the
   * third failed attempt in a row ends the loop, status `failed`, reason
   * `error-budget`) and `delayMs` before each retry (default 2000).
   */
  retry?: RetryOptions;
}

/** What {@link orchestrate} produces. */
export interface OrchestrateOutcome extends Outcome {
  /** How the loop ended: `completed`, `failed` (after its retries), `cancelled`, `paused` or `budget-exhausted`. */
  status: LoopStatus;
  /** Why: `goal-met`, `max-iterations` or `stalled` (completed; a one-pass mode's pass has none), `error-budget` (failed). */
  reason?: LoopReason;
  /** The goal was met (always true for the one-pass modes when they complete). */
  goalMet: boolean;
  /** Iterations completed. */
  iterations: number;
  /** Every evaluation, oldest first. */
  evaluations: LoopEvaluation[];
  /** A human summary such as `✅ Goal met (2/5) in 3.1 s`. */
  summary: string;
  /** The worker results of the last iteration. */
  results: WorkerResult[];
  /** The final state (what the loop's checkpoint holds). */
  state: OrchestrateState;
  /** The last error, when the error budget ran out. */
  error?: string;
}

/** An orchestration: a runnable, paused and cancelled through the control of its run (`LoopControl`). */
export type Orchestration = Loop<'orchestrate', OrchestrateOutcome>;

/**
 * Create an orchestration of workers by a lead agent.
 *
 * @example
 * ```ts
 * const loop = orchestrate({ lead, workers: [coder, tester], evaluator: judge, maxIterations: 5 });
 * const result = await run(loop, 'Add a login form', { adapter });
 * console.log(result.summary); // ✅ Goal met (2/5) in 3.1 s
 * ```
 */
export function orchestrate(options: OrchestrateOptions): Orchestration {
  const o = validate(options);
  return loopRunnable<'orchestrate', OrchestrateState, OrchestrateOutcome>({
    name: o.name,
    kind: 'orchestrate',
    stateSchema: orchestrateStateSchema,
    run: (input, ctx, loop) => runOrchestration(o, input, ctx, loop),
  });
}

type Resolved = ReturnType<typeof validate>;

async function runOrchestration(
  o: Resolved, input: string, ctx: RunContext, loop: LoopRun<OrchestrateState>,
): Promise<Omit<OrchestrateOutcome, 'usage'>> {
  const { checkPause, checkpoint } = loop;
  const run = new OrchestrationRun(o, input, ctx, loop);
  try {
    const ended = await driveLoop({
      ctx, checkPause, loop: o.name, state: run.state, stall: run.stall, checkpoint, maxIterations: run.maxIterations,
      retry: o.retry,
      goalMetOn: (end) => end.reason === 'goal-met' || (!run.reflect && end.status === 'completed'),
      fatal: (error) => error instanceof ConfigurationError || isTroupeError(error, 'no_assignments'),
      step: (iteration, sig) => run.step(iteration, sig),
      onError: () => run.dropLead(),
    });
    return run.outcome(ended);
  } finally {
    await run.close();
  }
}

/** What a plan of one iteration gave: the reply and its assignments, or `exit` when the reply is the answer. */
type Planned = { exit?: 'goal-met'; reply: string; assignments: Assignment[] };

/** One run of an orchestration: its state, its conversations, and one method per part of an iteration. */
class OrchestrationRun {
  readonly state: OrchestrateState;
  readonly stall: StallDetector;
  readonly reflect: boolean;
  readonly maxIterations: number;
  readonly #o: Resolved;
  readonly #ctx: RunContext;
  /** Throws at a step boundary when the run's control is paused. */
  readonly #checkPause: () => void;
  readonly #request: string;
  readonly #quality: QualityTracker;
  #orch: Conversation | undefined;
  #judge: Conversation | undefined;
  #current: { iteration: number; results: WorkerResult[] } = { iteration: 0, results: [] };
  #toolMode = false;
  /** The workers the lead is offered (those enabled, once it has opened). */
  #offered: readonly Agent[];
  /** Results that are refused delegations: the tool form reports them as errors. */
  readonly #refused = new WeakSet<WorkerResult>();
  #output: string | undefined;
  /** At most `maxParallel` workers at once, for the `delegate_to_worker` calls of the lead's turns. */
  readonly #limit: Limiter;

  constructor(o: Resolved, input: string, ctx: RunContext, loop: LoopRun<OrchestrateState>) {
    const { from, resetStall } = loop;
    this.#o = o;
    this.#ctx = ctx;
    this.#offered = o.workers;
    this.#checkPause = loop.checkPause;
    this.#limit = limiter(o.maxParallel);
    this.stall = new StallDetector(o.stall);
    if (from && !resetStall) this.stall.restore(from.stall);
    this.state = from
      ? { ...structuredClone(from), stall: this.stall.snapshot() }
      : { schemaVersion: 1, kind: 'orchestrate', loop: o.name, mode: o.mode, request: input, iteration: 0, maxIterations: o.maxIterations, evaluations: [], stall: this.stall.snapshot(), lastResults: [], startedAt: ctx.clock.now() };
    this.state.maxIterations = o.maxIterations;
    this.#request = this.state.request;
    this.#quality = new QualityTracker(this.state.evaluations);
    this.reflect = o.mode === 'orchestrator-reflect';
    this.maxIterations = this.reflect ? o.maxIterations : 1;
  }

  /** Iteration `iteration`: plan, dispatch, collect, synthesise and (in `orchestrator-reflect`) evaluate and adjust. */
  async step(iteration: number, sig: AbortSignal): Promise<StepResult> {
    const o = this.#o;
    const state = this.state;
    this.#current = { iteration, results: [] };
    this.#ctx.emit('reflect.iteration.started', { loop: o.name, iteration, maxIterations: this.maxIterations });
    if (o.mode === 'broadcast' || o.mode === 'sequential') return this.#passThrough(sig);
    const planned = await this.#plan(iteration, sig);
    if (planned.exit) return { exit: planned.exit };
    this.#checkPause();
    // In text mode, the assignments refused while reading the lead's reply come first, then the workers' results in order.
    const refused = [...this.#current.results];
    const results = this.#toolMode ? this.#current.results : [...refused, ...(await this.#dispatchAll(planned.assignments, sig))];
    this.#checkPause();
    const synthesis = this.#toolMode ? planned.reply : await this.#synthesise(results, sig);
    const clean = stripSentinels(synthesis);
    state.lastResults = results;
    state.lastSynthesis = clean;
    if (!this.reflect) return { exit: 'completed' };
    this.#checkPause();
    const evaluation = await this.#evaluate(iteration, synthesis, clean, results, sig);
    if (evaluation.goalMet) {
      delete state.adjustments;
      return { exit: 'goal-met' };
    }
    this.#adjust(iteration, results);
    return this.#checkStall(iteration, clean);
  }

  /** The outcome of the run once the loop ended. */
  outcome(ended: DriveLoopResult): Omit<OrchestrateOutcome, 'usage'> {
    const o = this.#o;
    const state = this.state;
    const { goalMet, summary } = ended;
    const result: Omit<OrchestrateOutcome, 'usage'> = {
      output: this.#output ?? state.lastSynthesis ?? '',
      agent: o.lead?.name ?? (o.mode === 'sequential' ? (o.workers.at(-1)?.name ?? o.name) : o.name),
      status: ended.status, ...defined({ reason: ended.reason }), goalMet, iterations: ended.completed,
      evaluations: [...state.evaluations], summary, results: [...state.lastResults],
      state: structuredClone(state),
    };
    if (ended.error !== undefined) result.error = ended.error;
    return result;
  }

  /** After a failed iteration: the lead's session is in an unknown state, open a new one next time. */
  dropLead(): void {
    void this.#orch?.close().catch(() => undefined);
    this.#orch = undefined;
  }

  async close(): Promise<void> {
    await this.#orch?.close().catch(() => undefined);
    await this.#judge?.close().catch(() => undefined);
  }

  /**
   * Ask the lead for this iteration's assignments, nudging it when it
   * assigns nothing. From the second iteration on, a plan that assigns
   * nothing is the lead's direct answer: the goal is met.
   */
  async #plan(iteration: number, sig: AbortSignal): Promise<Planned> {
    const o = this.#o;
    const state = this.state;
    const conversation = await this.#openLead();
    const last = state.evaluations.at(-1);
    const previous = { ...(last ? { evaluation: last } : {}), ...defined({ synthesis: state.lastSynthesis }), ...(state.adjustments ? { adjustments: state.adjustments } : {}) };
    let reply = await conversation.send(planPrompt(this.#prompts(), iteration, this.maxIterations, previous), { signal: sig, context: { iteration } });
    const names = this.#offered.map((w) => w.name);
    let assignments = this.#toolMode ? [] : this.#assignmentsOf(reply.text);
    const nothing = () => (this.#toolMode ? this.#current.results.length === 0 : assignments.length === 0);
    if (nothing() && iteration > 1) {
      this.#output = stripSentinels(reply.text);
      state.lastSynthesis = this.#output;
      delete state.adjustments;
      return { exit: 'goal-met', reply: reply.text, assignments };
    }
    for (let nudge = 1; nothing(); nudge++) {
      if (nudge > o.maxNudges) {
        throw new ModelBehaviorError(`Lead "${o.lead!.name}" assigned no task to a worker after ${o.maxNudges} nudges (workers: ${names.join(', ')})`, {
          code: 'no_assignments',
          details: { lead: o.lead!.name, nudges: o.maxNudges },
        });
      }
      throwIfAborted(sig);
      reply = await conversation.send(nudgePrompt(this.#offered, this.#toolMode ? 'tool' : 'text'), { signal: sig, context: { iteration } });
      if (!this.#toolMode) assignments = this.#assignmentsOf(reply.text);
    }
    return { reply: reply.text, assignments };
  }

  /**
   * The lead's `@worker:` assignments to the workers it was offered. One to
   * a worker it was not offered (disabled by an `enabled` hook) or to a
   * name that is no worker's is refused, not dropped: a failed result the
   * synthesis sees, and a `delegation.decided` event.
   */
  #assignmentsOf(text: string): Assignment[] {
    const o = this.#o;
    const offered = new Set(this.#offered.map((w) => w.name));
    const parsed = parseAssignments(text, o.workers.map((w) => w.name));
    const from = o.lead?.name ?? o.name;
    const refuse = (to: string, task: string, decision: 'disabled' | 'refused', reason: string) => {
      this.#ctx.emit('delegation.decided', { kind: 'delegate', from, to, decision, reason });
      const result: WorkerResult = { worker: to, task, success: false, output: '', error: `Delegation refused: ${reason}`, durationMs: 0 };
      this.#refused.add(result);
      this.#current.results.push(result);
    };
    for (const a of parsed.assignments) if (!offered.has(a.worker)) refuse(a.worker, a.task, 'disabled', `"${a.worker}" is not available`);
    for (const name of parsed.unmatched) refuse(name, '', 'refused', `no worker is named "${name}" (workers: ${[...offered].join(', ')})`);
    return parsed.assignments.filter((a) => offered.has(a.worker));
  }

  /**
   * broadcast and sequential: no planning. The workers run as the
   * `broadcast` or `sequential` pattern, with its rule (the first failed
   * worker fails the pass, which the loop then retries); the lead, when
   * there is one, synthesises their answers.
   */
  async #passThrough(sig: AbortSignal): Promise<StepResult> {
    const o = this.#o;
    const steps = o.workers.map((w) => this.#workerStep(w));
    const pass = o.mode === 'broadcast' ? broadcast(steps, { name: o.name, ...defined({ maxParallel: o.maxParallel }) }) : sequential(steps, { name: o.name });
    this.#ctx.emit('reflect.dispatched', { loop: o.name, iteration: this.#current.iteration, assignments: o.workers.map((w) => ({ worker: w.name, task: this.#request })) });
    const answered = await pass.run(this.#request, this.#ctx.withSignal(sig));
    throwIfAborted(sig);
    this.#checkPause();
    this.#output = o.lead ? await this.#synthesise(this.#current.results, sig) : answered.output;
    this.state.lastSynthesis = this.#output;
    this.state.lastResults = this.#current.results;
    return { exit: 'completed' };
  }

  /** A worker as one step of a pass-through pattern: its answer, or a thrown error when it failed. */
  #workerStep(worker: Agent): Runnable {
    const o = this.#o;
    return {
      name: worker.name,
      kind: 'worker',
      run: async (input, ctx) => {
        const prompt = o.sharedContext ? `${o.sharedContext}\n\n${input}` : input;
        const result = await this.#dispatchOne(ctx, worker.name, this.#request, prompt);
        if (!result.success) {
          throw new TroupeError('execution_failed', `Worker "${worker.name}" failed: ${result.error ?? 'unknown error'}`, { details: { worker: worker.name } });
        }
        return { output: result.output, agent: worker.name, status: 'completed', usage: emptyUsage() };
      },
    };
  }

  #prompts(): PromptContext {
    const o = this.#o;
    return { request: this.#request, workers: this.#offered, sharedContext: o.sharedContext, routingContext: o.routingContext, dispatch: this.#toolMode ? 'tool' : 'text', reflect: this.reflect };
  }

  #promptFor(a: Assignment): string {
    return workerPrompt(this.#o.workers.find((w) => w.name === a.worker)!, this.#request, a.task, this.#o.sharedContext);
  }

  /** Run worker `name` on `task` with `prompt` in `ctx` (its signal cancels it): the delegation hooks, then the worker with its time-out; a failure is a result. */
  async #dispatchOne(ctx: RunContext, name: string, task: string, prompt: string): Promise<WorkerResult> {
    const o = this.#o;
    const worker = o.workers.find((w) => w.name === name)!;
    const from = o.lead?.name ?? o.name;
    const history: DelegationMessage[] = [{ role: 'user', content: this.#request }, { role: 'assistant', name: from, content: task }];
    const decided = await delegate(ctx, { kind: 'delegate', from, to: name, input: prompt, history }, o.delegation);
    let result: WorkerResult;
    if ('refused' in decided) {
      result = { worker: name, task, success: false, output: '', error: `Delegation refused: ${decided.refused}`, durationMs: 0 };
      this.#refused.add(result);
    } else {
      result = await runWorker(ctx, worker, task, decided.input, { signal: ctx.signal, timeoutMs: o.workerTimeoutMs });
    }
    this.#ctx.emit('reflect.worker.completed', {
      loop: o.name, iteration: this.#current.iteration, worker: name, success: result.success, durationMs: result.durationMs,
      ...defined({ error: result.error }),
    });
    this.#current.results.push(result);
    return result;
  }

  async #dispatchAll(assignments: Assignment[], sig: AbortSignal): Promise<WorkerResult[]> {
    this.#ctx.emit('reflect.dispatched', { loop: this.#o.name, iteration: this.#current.iteration, assignments });
    const results = await fanOut(this.#ctx.withSignal(sig), assignments, (a, branch) => this.#dispatchOne(branch, a.worker, a.task, this.#promptFor(a)), { maxParallel: this.#o.maxParallel });
    throwIfAborted(sig);
    return results;
  }

  async #openLead(): Promise<Conversation> {
    if (this.#orch) return this.#orch;
    const o = this.#o;
    const lead = o.lead!;
    this.#toolMode = o.dispatch === 'tool' && lead.resolveAdapter(this.#ctx).capabilities.tools;
    const enabled = await enabledTargets(this.#ctx, 'delegate', lead.name, o.workers.map((w) => w.name), o.delegation);
    if (enabled.length === 0) {
      throw new ConfigurationError(`Lead "${lead.name}" has no enabled worker (workers: ${o.workers.map((w) => w.name).join(', ')})`, { details: { lead: lead.name } });
    }
    this.#offered = o.workers.filter((w) => enabled.includes(w.name));
    if (!this.#toolMode) {
      this.#orch = await lead.converse(this.#ctx, {});
      return this.#orch;
    }
    const tool = delegateTool(this.#offered, async (worker, task, sig) => {
      this.#ctx.emit('reflect.dispatched', { loop: o.name, iteration: this.#current.iteration, assignments: [{ worker, task }] });
      const result = await this.#limit(() => this.#dispatchOne(this.#ctx.withSignal(sig), worker, task, this.#promptFor({ worker, task })));
      // A refusal goes back to the lead as a tool error.
      if (this.#refused.has(result)) throw new TroupeError('execution_failed', result.error ?? 'Delegation refused');
      return result;
    });
    this.#orch = await lead.converse(this.#ctx, { extraTools: [tool] });
    return this.#orch;
  }

  async #synthesise(results: WorkerResult[], sig: AbortSignal): Promise<string> {
    const conversation = await this.#openLead();
    const context = { iteration: this.#current.iteration, kind: 'results' as const };
    return (await conversation.send(synthesisPrompt(this.#prompts(), results), { signal: sig, context })).text;
  }

  /** After an evaluation that did not meet the goal: the adjustments for the next plan, each also an event. */
  #adjust(iteration: number, results: WorkerResult[]): void {
    const o = this.#o;
    const state = this.state;
    if (o.autoAdjust === false) return;
    const last = state.evaluations.at(-1);
    const previous = state.evaluations.at(-2);
    const adjustments = feedbackAdjustments({
      iteration, results, minAnswerChars: o.minAnswerChars,
      ...(last?.iteration === iteration ? { score: last.score, ...(previous ? { previous: previous.score } : {}) } : {}),
    });
    state.adjustments = adjustments;
    for (const adjustment of adjustments) this.#ctx.emit('reflect.adjustment', { loop: o.name, iteration, ...adjustment });
  }

  /** Score the iteration (by the evaluator, else by the lead's sentinels) and record the trend. */
  async #evaluate(iteration: number, synthesis: string, clean: string, results: WorkerResult[], sig: AbortSignal): Promise<LoopEvaluation> {
    const o = this.#o;
    const state = this.state;
    let score: number;
    let rationale: string;
    let goalMet: boolean;
    let evaluator: string;
    if (o.evaluator) {
      this.#judge ??= await o.evaluator.converse(this.#ctx);
      const prompt = evaluationPrompt({ request: this.#request, synthesis: clean, iteration, maxIterations: this.maxIterations, previous: state.evaluations.at(-1), results, answerChars: o.evaluatorAnswerChars });
      const text = (await this.#judge.send(prompt, { signal: sig, context: { iteration, kind: 'results' } })).text;
      ({ score, rationale } = parseEvaluation(text));
      goalMet = score >= o.goalScore || parseSentinels(text).groupComplete;
      evaluator = o.evaluator.name;
    } else {
      const sentinels = parseSentinels(synthesis);
      goalMet = sentinels.groupComplete;
      score = goalMet ? 1 : sentinels.needsIteration ? NEEDS_ITERATION_SCORE : SELF_EVALUATION_SCORE;
      rationale = goalMet ? 'The lead declared the goal met.' : sentinels.needsIteration ? 'The lead asked for another iteration.' : 'The lead gave no verdict.';
      evaluator = o.lead!.name;
    }
    const previous = this.#quality.history.at(-1)?.score;
    const trend = this.#quality.record({ score, rationale, evaluator });
    const evaluation: LoopEvaluation = { iteration, score, rationale, evaluator, trend, goalMet };
    state.evaluations.push(evaluation);
    this.#ctx.emit('reflect.evaluated', { loop: o.name, ...evaluation });
    if (trend === 'degrading' && previous !== undefined) {
      this.#ctx.emit('reflect.quality.degrading', {
        loop: o.name, iteration, score, previous,
        suggestion: 'Quality is degrading: consider another model for the lead, or other workers for the tasks.',
      });
    }
    return evaluation;
  }

  #checkStall(iteration: number, clean: string): StepResult {
    const check = this.stall.check(clean);
    this.state.stall = this.stall.snapshot();
    const loop = this.#o.name;
    if (check.warn && !check.stalled) this.#ctx.emit('reflect.stall.warning', { loop, iteration, similarity: check.similarity, consecutive: check.consecutive });
    if (!check.stalled) return {};
    this.#ctx.emit('reflect.stalled', { loop, iteration, consecutive: check.consecutive });
    return { exit: 'stalled' };
  }
}

/** `autoAdjust`: a boolean, or `{ minAnswerChars }`. */
const autoAdjustOptions = defineOptions<{ minAnswerChars?: number }>('autoAdjust', { minAnswerChars: nonNegativeInteger });
const autoAdjustCheck: OptionCheck = (name, value) => {
  if (value === undefined || typeof value === 'boolean') return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a boolean or an object, got ${describeValue(value)}`);
  autoAdjustOptions.check(value, `${name}.`, 'orchestrate');
};

/** The description {@link orchestrate} checks its options against (`fromPreset` passes most of them through). */
export const orchestrateOptions = defineOptions<OrchestrateOptions>('orchestrate', {
  name: nonEmptyString,
  lead: agentCheck,
  workers: required((name, v) => {
    if (!Array.isArray(v) || v.length === 0) throw new ConfigurationError(`Expected \`${name}\` to be a non-empty array of agents, got ${describeValue(v)}`);
    v.forEach((w: unknown, i) => agentCheck(`${name}[${i}]`, w));
  }),
  mode: oneOf(orchestrateModes),
  evaluator: agentCheck,
  maxIterations: positiveInteger,
  goalScore: fraction,
  dispatch: oneOf(['text', 'tool']),
  sharedContext: string,
  routingContext: string,
  maxParallel: positiveInteger,
  workerTimeoutMs: positiveNumber,
  maxNudges: nonNegativeInteger,
  stall: stallOption,
  autoAdjust: autoAdjustCheck,
  evaluatorAnswerChars: positiveInteger,
  delegation: delegationOption,
  retry: retryOptions,
});

function validate(options: OrchestrateOptions) {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected orchestrate options to be an object, got ${describeValue(options)}`);
  orchestrateOptions.check(options);
  const mode = options.mode ?? 'orchestrator-reflect';
  const names = new Set<string>();
  for (const w of options.workers) {
    if (names.has(w.name)) throw new ConfigurationError(`Worker "${w.name}" is listed twice`);
    names.add(w.name);
  }
  if (!options.lead && mode !== 'broadcast' && mode !== 'sequential') {
    throw new ConfigurationError(`Mode "${mode}" needs a \`lead\` agent`);
  }
  const dispatch = options.dispatch ?? 'text';
  const goalScore = options.goalScore ?? 0.9;
  const workerTimeoutMs = options.workerTimeoutMs ?? DEFAULT_WORKER_TIMEOUT_MS;
  const maxNudges = options.maxNudges ?? 3;
  const limits = loopLimits(options);
  const evaluatorAnswerChars = options.evaluatorAnswerChars ?? DEFAULT_EVALUATOR_ANSWER_CHARS;
  const autoAdjust = options.autoAdjust ?? true;
  const minAnswerChars = typeof autoAdjust === 'object' ? (autoAdjust.minAnswerChars ?? DEFAULT_MIN_ANSWER_CHARS) : DEFAULT_MIN_ANSWER_CHARS;
  return {
    ...options, ...limits, name: options.name ?? 'orchestrate', mode, dispatch, goalScore, workerTimeoutMs, maxNudges,
    evaluatorAnswerChars, autoAdjust: autoAdjust !== false, minAnswerChars,
  };
}

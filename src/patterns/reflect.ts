/**
 * `reflect`: one agent works toward a goal over several iterations, each
 * prompt naming the goal and `iteration i/N`, until it ends a reply with
 * `[[REFLECTION_COMPLETE]]` (or an evaluator says PASS), stalls, or runs out
 * of iterations.
 * @module
 */
import { z } from 'zod';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { Outcome } from '../core/runnable.js';
import { parseVerdict } from '../reflection/evaluation.js';
import { QualityTracker } from '../reflection/quality.js';
import { REFLECTION_COMPLETE, parseSentinels, stripSentinels } from '../reflection/sentinels.js';
import { PROMPT_HEADINGS, iterationHeading, section, requestSection } from '../text/headings.js';
import { StallDetector, type StallDetectorOptions } from '../reflection/stall.js';
import type { Agent, Conversation } from './agent.js';
import { driveLoop, loopLimits, loopRunnable, type Loop, type LoopReason, type LoopRun, type LoopStatus, type StepResult } from './loop.js';
import { defined } from '../core/defined.js';
import { retryOptions, type RetryOptions } from '../core/retry.js';
import { defineOptions, nonEmptyString, positiveInteger, string } from '../core/options.js';
import { agentCheck, stallOption } from './checks.js';
import { loopEvaluationSchema, stallSnapshotSchema, type LoopEvaluation } from './orchestrate-state.js';

/** The default instruction of a reflect evaluator. */
export const DEFAULT_EVALUATION_PROMPT =
  'Judge whether the response fully achieves the goal. Reply PASS if it does, or FAIL: <what is missing> if it does not.';

/** The schema of {@link ReflectState} (`schemaVersion: 1`). */
export const reflectStateSchema = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('reflect'),
  loop: z.string(),
  agent: z.string(),
  request: z.string(),
  goal: z.string(),
  /** Iterations completed. */
  iteration: z.number().int().min(0),
  maxIterations: z.number().int().min(1),
  lastOutput: z.string().optional(),
  /** The evaluator's last feedback, carried into the next prompt. */
  feedback: z.string().optional(),
  evaluations: z.array(loopEvaluationSchema),
  stall: stallSnapshotSchema,
  startedAt: z.number(),
});
/** The state of a reflect loop after an iteration: a plain, JSON-serialisable object. */
export type ReflectState = z.infer<typeof reflectStateSchema>;

/** Options of {@link reflect}. */
export interface ReflectOptions {
  /** The runnable's name. Default: `reflect:<agent>`. */
  name?: string;
  /** What the agent must achieve. Default: the run's input. */
  goal?: string;
  /** Most iterations. Default: 5. */
  maxIterations?: number;
  /** Judges each answer with PASS / FAIL: reason; its feedback goes into the next prompt. */
  evaluator?: Agent;
  /** The evaluator's instruction. Default: {@link DEFAULT_EVALUATION_PROMPT}. */
  evaluationPrompt?: string;
  /** Stall detector options. */
  stall?: StallDetectorOptions;
  /**
   * How an iteration that threw is retried: `maxRetries` (default 2: the
   * third failed attempt in a row ends the loop, status `failed`, reason
   * `error-budget`) and `delayMs` before each retry (default 2000).
   */
  retry?: RetryOptions;
}

/** The description {@link reflect} checks its options against. */
const reflectOptions = defineOptions<ReflectOptions>('reflect', {
  name: nonEmptyString,
  goal: string,
  maxIterations: positiveInteger,
  evaluator: agentCheck,
  evaluationPrompt: string,
  stall: stallOption,
  retry: retryOptions,
});

/** What {@link reflect} produces. */
export interface ReflectOutcome extends Outcome {
  /** How the loop ended: `completed`, `failed` (after its retries), `cancelled`, `paused` or `budget-exhausted`. */
  status: LoopStatus;
  /** Why: `goal-met`, `max-iterations` or `stalled` (completed), `error-budget` (failed). */
  reason?: LoopReason;
  /** The sentinel or a PASS ended the loop. */
  goalMet: boolean;
  /** Iterations completed. */
  iterations: number;
  /** The evaluator's verdicts as scores (PASS 1, FAIL 0). */
  evaluations: LoopEvaluation[];
  /** A human summary such as `✅ Goal met (2/5) in 1.0 s`. */
  summary: string;
  /** The final state. */
  state: ReflectState;
  /** The last error, when the error budget ran out. */
  error?: string;
}

/** A reflect loop: a runnable, paused and cancelled through the control of its run (`LoopControl`). */
export type Reflection = Loop<'reflect', ReflectOutcome>;

/** The prompt of iteration `i`. */
export function reflectPrompt(state: ReflectState, iteration: number): string {
  const parts = [section(PROMPT_HEADINGS.goal, state.goal), iterationHeading(iteration, state.maxIterations)];
  if (state.request !== state.goal) parts.push(requestSection(state.request));
  if (state.lastOutput !== undefined) parts.push(section(PROMPT_HEADINGS.previousAnswer, state.lastOutput));
  if (state.feedback !== undefined) parts.push(section(PROMPT_HEADINGS.lastEvaluation, state.feedback));
  parts.push(`Work toward the goal. End your reply with ${REFLECTION_COMPLETE} on a line of its own only when the goal is fully achieved.`);
  return parts.join('\n\n');
}

/** The evaluator's prompt: its instruction, the goal and the answer to judge. */
function evaluatorPrompt(instruction: string, goal: string, answer: string): string {
  return [instruction, section(PROMPT_HEADINGS.goal, goal), section(PROMPT_HEADINGS.responseToEvaluate, answer)].join('\n\n');
}

/**
 * Make `agent` reflect on its own work until the goal is met.
 *
 * @example
 * ```ts
 * const loop = reflect(writer, { goal: 'A haiku about autumn', maxIterations: 3, evaluator: critic });
 * const result = await run(loop, 'Write it', { adapter });
 * ```
 */
export function reflect(worker: Agent, options: ReflectOptions = {}): Reflection {
  if (!worker || typeof worker.converse !== 'function') throw new ConfigurationError(`Expected an agent to reflect, got ${describeValue(worker)}`);
  reflectOptions.check(options);
  const limits = loopLimits(options);
  const name = options.name ?? `reflect:${worker.name}`;
  return loopRunnable<'reflect', ReflectState, ReflectOutcome>({
    name,
    kind: 'reflect',
    agent: worker.name,
    stateSchema: reflectStateSchema,
    run: (input, ctx, loop) => runReflect(worker, { ...options, ...limits, name }, input, ctx, loop),
  });
}

async function runReflect(
  worker: Agent,
  o: ReflectOptions & ReturnType<typeof loopLimits> & { name: string },
  input: string, ctx: RunContext, loop: LoopRun<ReflectState>,
): Promise<Omit<ReflectOutcome, 'usage'>> {
  const { checkPause, from, resetStall, checkpoint } = loop;
  const stall = new StallDetector(o.stall);
  if (from && !resetStall) stall.restore(from.stall);
  const state: ReflectState = from
    ? { ...structuredClone(from), stall: stall.snapshot(), maxIterations: o.maxIterations }
    : { schemaVersion: 1, kind: 'reflect', loop: o.name, agent: worker.name, request: input, goal: o.goal ?? input, iteration: 0, maxIterations: o.maxIterations, evaluations: [], stall: stall.snapshot(), startedAt: ctx.clock.now() };
  const quality = new QualityTracker(state.evaluations);
  let conversation: Conversation | undefined;
  let judge: Conversation | undefined;

  const step = async (iteration: number, sig: AbortSignal): Promise<StepResult> => {
    ctx.emit('reflect.iteration.started', { loop: o.name, iteration, maxIterations: o.maxIterations });
    conversation ??= await worker.converse(ctx);
    const reply = await conversation.send(reflectPrompt(state, iteration), { signal: sig });
    const clean = stripSentinels(reply.text);
    const complete = parseSentinels(reply.text).reflectionComplete;
    state.lastOutput = clean;
    let pass = false;
    if (o.evaluator) {
      checkPause();
      judge ??= await o.evaluator.converse(ctx);
      const text = (await judge.send(evaluatorPrompt(o.evaluationPrompt ?? DEFAULT_EVALUATION_PROMPT, state.goal, clean), { signal: sig })).text;
      const verdict = parseVerdict(text);
      pass = verdict.pass;
      if (verdict.feedback === undefined) delete state.feedback;
      else state.feedback = verdict.feedback;
      const score = pass ? 1 : 0;
      const previous = quality.history.at(-1)?.score;
      const rationale = verdict.feedback ?? (pass ? 'PASS' : 'FAIL');
      const trend = quality.record({ score, rationale, evaluator: o.evaluator.name });
      const evaluation: LoopEvaluation = { iteration, score, rationale, evaluator: o.evaluator.name, trend, goalMet: pass || complete };
      state.evaluations.push(evaluation);
      ctx.emit('reflect.evaluated', { loop: o.name, ...evaluation });
      if (trend === 'degrading' && previous !== undefined) {
        ctx.emit('reflect.quality.degrading', { loop: o.name, iteration, score, previous, suggestion: 'Quality is degrading: consider another model or another agent.' });
      }
    }
    if (complete || pass) return { exit: 'goal-met' };
    const check = stall.check(clean);
    if (check.warn && !check.stalled) ctx.emit('reflect.stall.warning', { loop: o.name, iteration, similarity: check.similarity, consecutive: check.consecutive });
    if (check.stalled) {
      ctx.emit('reflect.stalled', { loop: o.name, iteration, consecutive: check.consecutive });
      return { exit: 'stalled' };
    }
    return {};
  };

  try {
    const ended = await driveLoop({
      ctx, checkPause, loop: o.name, state, stall, checkpoint, maxIterations: o.maxIterations,
      retry: o.retry,
      fatal: (error) => error instanceof ConfigurationError,
      step,
      onError() {
        void conversation?.close().catch(() => undefined);
        conversation = undefined;
      },
    });
    const { goalMet, summary } = ended;
    state.stall = stall.snapshot();
    const result: Omit<ReflectOutcome, 'usage'> = {
      output: state.lastOutput ?? '', agent: worker.name, status: ended.status, ...defined({ reason: ended.reason }), goalMet,
      iterations: ended.completed, evaluations: [...state.evaluations], summary, state: structuredClone(state),
    };
    if (ended.error !== undefined) result.error = ended.error;
    return result;
  } finally {
    await conversation?.close().catch(() => undefined);
    await judge?.close().catch(() => undefined);
  }
}

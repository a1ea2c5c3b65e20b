/**
 * What a run asks people, answered remotely: tool approvals (an
 * `ApprovalQueue` handler), questions from any agent (the lead's included,
 * through the `ask_person` tool), and a planning session's questions and
 * plan approval.
 * @module
 */
import { z } from 'zod';
import { combineSignals } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { RunContext } from '../../core/context.js';
import { ConfigurationError, errorMessage, isTroupeError } from '../../core/errors.js';
import { abortSignal, clock as clockCheck, defineOptions, nonEmptyString, positiveNumber, required, store as storeCheck } from '../../core/options.js';
import type { TroupeEvent } from '../../core/events.js';
import { createOp } from '../../core/ops.js';
import { defineTool, type ToolDefinition } from '../../core/tools.js';
import { emptyUsage } from '../../core/usage.js';
import { createRunLogWriter } from '../../core/run-log-writer.js';
import type { Store } from '../../core/store.js';
import type { ApprovalHandler } from '../../guardrails/approvals.js';
import type { PlanningSession, PlanningStep } from '../../plan/session/planning-session.js';
import { askPerson, askPersonOptions, type AskPersonOptions } from './requests.js';
import { followInstructions } from './instructions.js';
import type { Plan } from '../../plan/model/plan.js';
import { defined } from '../../core/defined.js';

/**
 * An `ApprovalQueue` handler that asks a person through the run's store:
 * the request arrives on the run's event stream (`input.requested`, kind
 * `approval`), and the answer posted to `POST /runs/:id/requests/:requestId`
 * (`{ "approved": true, "scope": "session" }`) decides it, from any process.
 *
 * @example
 * ```ts
 * const approvals = new ApprovalQueue({ handler: remoteApprovals(), store });
 * await run(agent({ name: 'ops', tools: [approvals.guard(deploy)] }), 'Deploy', { adapter, store });
 * ```
 */
export function remoteApprovals(options: AskPersonOptions = {}): ApprovalHandler {
  askPersonOptions.check(options, '', 'remoteApprovals');
  return async (request, signal, ctx) => {
    if (!ctx) {
      throw new ConfigurationError('remoteApprovals() decides requests made by a running agent (through `approvals.guard(tool)`), which carry the run context; this one has none');
    }
    const answer = await askPerson(
      ctx,
      {
        kind: 'approval',
        prompt: `${request.agent} asks to call \`${request.tool}\``,
        agent: request.agent,
        tool: request.tool,
        risk: request.risk ?? 'writes',
        ...defined({ toolCallId: request.toolCallId, arguments: request.arguments }),
      },
      { ...options, signal: combineSignals(signal, options.signal) },
    );
    return { approved: answer.approved, scope: answer.scope ?? 'once' };
  };
}

/** Options of {@link askPersonTool}: those of `askPerson`, and the tool's name. */
export interface AskPersonToolOptions extends AskPersonOptions {
  /** The tool's name. Default: `ask_person`. */
  name?: string;
}

const askPersonToolOptions = defineOptions<AskPersonToolOptions>('askPersonTool', { ...askPersonOptions.shape, name: nonEmptyString });

/**
 * A tool that lets an agent ask a person a question and wait for the
 * answer (kind `question` on the event stream). Give it to a coordination's
 * lead so that the lead's questions reach people.
 *
 * @example
 * ```ts
 * const lead = agent({ name: 'lead', tools: [askPersonTool()] });
 * ```
 */
export function askPersonTool(options: AskPersonToolOptions = {}): ToolDefinition<{ question: string }> {
  askPersonToolOptions.check(options);
  const { name = 'ask_person', ...ask } = options;
  return defineTool({
    name,
    description: 'Ask the person who runs this work a question, and wait for the answer. Use it only for what you cannot decide yourself.',
    parameters: z.object({ question: z.string().min(1) }),
    execute: async ({ question }, context) => {
      const answer = await askPerson(
        context.ctx,
        { kind: 'question', prompt: question, agent: context.agent, toolCallId: context.callId },
        { ...ask, signal: combineSignals(context.signal, ask.signal) },
      );
      return answer.text;
    },
  });
}

/** Options of {@link runPlanningSession}. */
export interface RunPlanningSessionOptions {
  /** Where the session's run log and requests go (the session's id is the run id). It needs compare-and-set. */
  store: Store;
  /** Use the session's clock here too. Default: the real clock. */
  clock?: Clock;
  /** How often to look for answers, in ms. Default: 250. */
  pollMs?: number;
  /** Cancels the session. */
  signal?: AbortSignal;
}

const runPlanningSessionOptions = defineOptions<RunPlanningSessionOptions>('runPlanningSession', { store: required(storeCheck), clock: clockCheck, pollMs: positiveNumber, signal: abortSignal });

/**
 * Drive a planning session to its end with a person answering remotely:
 * the planner's questions (kind `question`, with `questions`) and the plan
 * (kind `plan-approval`, with `plan`) arrive on the event stream of run
 * `session.runId`, and the answers posted to the HTTP handler move the session
 * on. The session's events are logged as one run (its execution's own run
 * start and end are folded into it), ending with `run.completed`.
 *
 * @example
 * ```ts
 * const session = new PlanningSession({ adapter });
 * void runPlanningSession(session, 'Fix the memory leaks', { store });
 * // the page streams /runs/<session.runId>/events and posts the answers
 * ```
 */
export async function runPlanningSession(session: PlanningSession, task: string, options: RunPlanningSessionOptions): Promise<PlanningStep> {
  runPlanningSessionOptions.check(options ?? ({} as RunPlanningSessionOptions));
  const clock = options.clock ?? realClock;
  const controller = new AbortController();
  const signal = combineSignals(options.signal, controller.signal);
  const emitter = session.emitter;
  let logFailure: unknown;
  const writer = createRunLogWriter(options.store, session.runId, (error) => (logFailure ??= error));
  const started = clock.now();
  const own = (type: 'run.started' | 'run.completed' | 'run.failed', payload: Record<string, unknown>) =>
    writer.write({ type, runId: session.runId, time: clock.now(), ...payload } as TroupeEvent);
  // The execution's own `run.*` events are part of this run, not runs of their own.
  const log = (event: TroupeEvent) => {
    if (event.type !== 'run.started' && event.type !== 'run.completed' && event.type !== 'run.failed') writer.write(event);
  };
  emitter.on('*', log);
  const ctx = RunContext.create({ runId: session.runId, clock, signal, emitter, root: createOp('op-0', 'run', 'planning-session', started), store: options.store });
  const onAbort = () => {
    if (!['idle', 'completed', 'cancelled'].includes(session.phase)) session.cancel();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const ask = { ...defined({ pollMs: options.pollMs }) };
  const instructions = new AbortController();
  passInstructions(session, options.store, { signal: instructions.signal, clock, ...ask });
  own('run.started', { runnable: 'planning-session', input: task });
  try {
    const step = await driveSession(session, task, ctx, ask);
    instructions.abort(); // its warnings, if any, come before the run's end
    const outcome = step.outcome;
    own('run.completed', {
      runnable: 'planning-session',
      status: step.phase === 'completed' && outcome ? outcome.status : 'cancelled',
      ...(step.phase === 'completed' && outcome?.reason ? { reason: outcome.reason } : {}),
      output: outcome?.output ?? '',
      usage: outcome?.usage ?? emptyUsage(),
      durationMs: clock.now() - started,
    });
    return step;
  } catch (error) {
    instructions.abort();
    own('run.failed', { runnable: 'planning-session', error: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) });
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    instructions.abort();
    await writer.flush({ clock });
    emitter.off('*', log);
    controller.abort();
    if (logFailure !== undefined) emitter.emit('warning', { type: 'warning', runId: session.runId, time: clock.now(), message: `The run log could not be written: ${errorMessage(logFailure)}`, code: 'run_log_failed' });
  }
}

/** The session from its task to its end: the planner's questions and the plan are asked of a person, whose answers move it on. */
async function driveSession(session: PlanningSession, task: string, ctx: RunContext, ask: AskPersonOptions): Promise<PlanningStep> {
  let step = await session.submitTask(task);
  let refused: string | undefined;
  for (;;) {
    if (step.phase === 'clarifying') {
      const { text } = await askPerson(ctx, { kind: 'question', prompt: 'The planner has questions before it plans.', questions: step.questions ?? [] }, ask);
      step = await session.answerClarification(text);
    } else if (step.phase === 'awaiting-approval') {
      const prompt = refused === undefined ? 'Approve the plan, ask for changes, or reject it.' : `The edited plan was refused (${refused}). Approve the plan, ask for changes, or reject it.`;
      const roles = session.planRoles;
      const answer = await askPerson(ctx, { kind: 'plan-approval', prompt, plan: step.plan, ...(roles ? { roles: [...roles] } : {}) }, ask);
      refused = undefined;
      if (answer.plan !== undefined) {
        try {
          step = session.editPlan(answer.plan as Plan);
        } catch (error) {
          // answerRequest checks edits as editPlan does; should one still be refused, the person is asked again.
          if (!isTroupeError(error, 'invalid_argument')) throw error;
          refused = errorMessage(error);
          continue;
        }
      }
      const { decision, feedback } = answer;
      step = decision === 'approve' ? await session.approvePlan() : decision === 'request-changes' ? await session.requestChanges(feedback ?? '') : session.rejectPlan();
    } else return step;
  }
}

/**
 * Pass the instructions people send to the session's run (`POST
 * /runs/:id/instructions`) to its running workers: each is injected while
 * the plan executes; one that arrives in another phase waits for the next
 * execution, and is dropped with a warning when the session ends first.
 */
function passInstructions(session: PlanningSession, store: Store, options: { signal: AbortSignal; clock: Clock; pollMs?: number }): void {
  const waiting: string[] = [];
  const flush = () => {
    while (waiting.length > 0 && session.phase === 'executing') session.post(waiting.shift()!);
  };
  // After the move's own event is out (the log says the plan executes, then what it was told).
  const onPhase = (event: TroupeEvent<'phase.changed'>) => {
    if (event.to === 'executing') queueMicrotask(flush);
  };
  session.emitter.on('phase.changed', onPhase);
  options.signal.addEventListener(
    'abort',
    () => {
      session.emitter.off('phase.changed', onPhase);
      for (const text of waiting.splice(0)) {
        const warning: TroupeEvent<'warning'> = { type: 'warning', runId: session.runId, time: options.clock.now(), message: `An instruction arrived when no plan was executing, and was not used: ${text}`, code: 'instruction_unused' };
        session.emitter.emit('warning', warning);
        session.emitter.emit('*', warning);
      }
    },
    { once: true },
  );
  void (async () => {
    for await (const record of followInstructions(session.runId, { ...options, store })) {
      waiting.push(record.text);
      flush();
    }
  })().catch(() => undefined);
}

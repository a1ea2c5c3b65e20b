/**
 * Enforcing guardrails. A guarded runnable runs in a context that carries a
 * guard scope (inherited by everything it runs, so nested agents and
 * sub-agents are guarded too, by every guarded runnable around them). The
 * kernel checks the scope at three points only: {@link runGuarded} (input
 * and output), the session handle ({@link sendGuard}: streamed replies and
 * the hold of a parallel input check) and the tool loop
 * ({@link guardToolCall}). A trip halts the run (`RunContext.halt`).
 * @module
 */
import { defined } from './defined.js';
import type { ModelTurn, SessionEvent, ToolCall, ToolResult } from './adapter.js';
import { abortError } from './clock.js';
import { ContextKey, type RunContext } from './context.js';
import { errorMessage } from './errors.js';
import {
  GuardrailTripError,
  type Guardrail,
  type GuardrailOptions,
  type GuardrailStage,
  type GuardrailVerdict,
  type ToolGuardrail,
  type ToolGuardrailDecision,
  type TripVerdict,
} from './guardrails.js';
import type { SendGuard, SendWatch } from './session.js';

/**
 * The guardrails of one guarded runnable, linked to those around it.
 * @internal
 */
export interface GuardScope {
  /** The scope of the guarded runnable around this one, if any. */
  readonly parent: GuardScope | undefined;
  /** The guarded runnable's name. */
  readonly runnable: string;
  /** Its guardrails and hooks. */
  readonly options: GuardrailOptions;
  /** A parallel input check: model replies are held until it settles. */
  gate?: Promise<void>;
  /** The first model call under a parallel input check has started (later ones wait for the check). */
  firstCall?: boolean;
}

const guardKey = new ContextKey<GuardScope | undefined>('guardrails');

/**
 * The guard scope `ctx` runs in (the innermost guarded runnable's), if any.
 * @internal
 */
export function guardScope(ctx: RunContext): GuardScope | undefined {
  return ctx.value(guardKey);
}

/**
 * `ctx` without guard scopes: guardrails run their checks (a classifier
 * agent) here, so a guardrail never guards itself or waits on its own check.
 * @internal
 */
export function unguarded(ctx: RunContext): RunContext {
  // A check is beside the run's conversation: its agents never take a thread's history.
  return guardScope(ctx) === undefined ? ctx.aside() : ctx.withValue(guardKey, undefined).aside();
}

/**
 * Every scope from `scope` outwards.
 * @internal
 */
export function scopeChain(scope: GuardScope | undefined): GuardScope[] {
  const out: GuardScope[] = [];
  for (let s = scope; s; s = s.parent) out.push(s);
  return out;
}

/** Where a trip happened, for its error and events. */
interface TripPlace {
  runnable?: string;
  agent?: string;
  tool?: string;
}

/** Make the trip error, emit `guardrail.tripped` and halt the run (unless something halted it first); returns the run's halting error. */
function trip(ctx: RunContext, guardrail: string, stage: GuardrailStage, verdict: TripVerdict, place: TripPlace, cause?: unknown): Error {
  const error = new GuardrailTripError({ guardrail, stage, verdict, trace: ctx.trace, ...place }, cause === undefined ? {} : { cause });
  if (!ctx.halted) {
    const reason = 'reason' in verdict ? verdict.reason : undefined;
    ctx.emit('guardrail.tripped', { guardrail, stage, ...place, ...defined({ reason }) });
    ctx.halt(error);
  }
  return ctx.halted ?? error;
}

/** A check's result as a verdict; anything else fails closed. */
function asVerdict(value: unknown): GuardrailVerdict {
  if (value && typeof value === 'object' && typeof (value as GuardrailVerdict).tripped === 'boolean') return value as GuardrailVerdict;
  return { tripped: true, reason: 'The guardrail returned no verdict (expected `{ tripped: boolean }`)' };
}

/**
 * Run text guardrails on `text` in parallel; every verdict is a
 * `guardrail.checked` event. The first to trip halts the run and rejects
 * with its {@link GuardrailTripError}. A check that throws trips (fails
 * closed), with the error as `cause`.
 * @internal
 */
export async function checkText(
  ctx: RunContext,
  guardrails: readonly Guardrail[],
  stage: 'input' | 'output' | 'stream',
  text: string,
  place: { runnable: string; agent?: string; delta?: string },
): Promise<void> {
  const { delta, ...where } = place;
  const free = unguarded(ctx);
  await Promise.all(
    guardrails.map(async (g) => {
      const start = ctx.clock.now();
      let verdict: GuardrailVerdict;
      let cause: unknown;
      try {
        verdict = asVerdict(await g.check(text, { ctx: free, stage, signal: ctx.signal, ...where, ...defined({ delta }) }));
      } catch (error) {
        if (ctx.signal.aborted) throw abortError(ctx.signal);
        cause = error;
        verdict = { tripped: true, reason: `The guardrail failed: ${errorMessage(error)}` };
      }
      ctx.emit('guardrail.checked', {
        guardrail: g.name,
        stage,
        tripped: verdict.tripped,
        ...where,
        ...defined({ reason: verdict.reason }),
        ...defined({ info: verdict.info }),
        durationMs: ctx.clock.now() - start,
      });
      if (verdict.tripped) throw trip(ctx, g.name, stage, verdict, where, cause);
    }),
  );
}

/**
 * Run `body` as a guarded runnable named `runnable`: the input guardrails
 * first (or alongside the first model call, with `parallelInput`), `body`
 * in a context carrying the scope (so every model call and tool call under
 * it is guarded), then the output guardrails on its output. A trip rejects
 * with the {@link GuardrailTripError} and halts the run.
 * @internal
 */
export async function runGuarded<O extends { output: string }>(
  ctx: RunContext,
  runnable: string,
  options: GuardrailOptions,
  input: string,
  body: (ctx: RunContext) => Promise<O>,
): Promise<O> {
  const scope: GuardScope = { parent: guardScope(ctx), runnable, options };
  const inner = ctx.withValue(guardKey, scope);
  if (options.input && options.input.length > 0) {
    const check = checkText(inner, options.input, 'input', input, { runnable });
    if (options.parallelInput === true) {
      scope.gate = check;
      check.catch(() => undefined);
    } else {
      await check;
    }
  }
  let outcome: O;
  try {
    outcome = await body(inner);
  } catch (error) {
    // A trip of the parallel input check wins over what it made the body throw.
    if (scope.gate) await scope.gate;
    throw error;
  }
  if (scope.gate) await scope.gate;
  if (options.output && options.output.length > 0) await checkText(inner, options.output, 'output', outcome.output, { runnable });
  return outcome;
}

/**
 * The hooks the session handle of `agent`'s session calls around each send
 * in `ctx`, or `undefined` when nothing guards `ctx`. A send under a
 * parallel input check that has not settled waits for it (except the
 * first), and its reply is held until it passes; streamed text goes to the
 * stream guardrails of every scope (the whole reply, once, when nothing
 * streamed); a trip halts the run, which aborts the send.
 * @internal
 */
export function sendGuard(ctx: RunContext, agent: string): SendGuard | undefined {
  const scopes = scopeChain(guardScope(ctx));
  if (scopes.length === 0) return undefined;
  const streamed = scopes.filter((s) => (s.options.stream?.length ?? 0) > 0);
  return {
    async begin(): Promise<SendWatch> {
      for (const s of scopes) {
        if (!s.gate) continue;
        if (s.firstCall) await s.gate;
        else s.firstCall = true;
      }
      return streamWatch(ctx, agent, scopes, streamed);
    },
  };
}

/** The watch of one send: feeds streamed text to the stream guardrails, and holds the reply for the gates. */
function streamWatch(ctx: RunContext, agent: string, scopes: readonly GuardScope[], streamed: readonly GuardScope[]): SendWatch {
  let text = '';
  let delta = '';
  let seen = false;
  let dirty = false;
  let checking: Promise<void> | undefined;
  let failure: unknown;
  const loop = async (): Promise<void> => {
    while (dirty) {
      dirty = false;
      const [snapshot, newest] = [text, delta];
      delta = '';
      for (const s of streamed) await checkText(ctx, s.options.stream!, 'stream', snapshot, { runnable: s.runnable, agent, delta: newest });
    }
  };
  const start = (): void => {
    checking = loop().then(
      () => {
        checking = undefined;
        if (dirty) start();
      },
      (error: unknown) => {
        failure ??= error;
        checking = undefined;
      },
    );
  };
  const schedule = (): void => {
    dirty = true;
    if (!checking) start();
  };
  return {
    event(event: SessionEvent): void {
      if (event.type !== 'text-delta' || streamed.length === 0 || failure !== undefined) return;
      seen = true;
      text += event.text;
      delta += event.text;
      schedule();
    },
    async end(turn: ModelTurn): Promise<void> {
      if (!seen && turn.text !== '' && streamed.length > 0) {
        text = turn.text;
        delta = turn.text;
        schedule();
      }
      while (checking && failure === undefined) await checking;
      if (failure !== undefined) throw failure;
      for (const s of scopes) if (s.gate) await s.gate;
    },
  };
}

/** The tool guardrails of every scope of `ctx` that watch `tool`. */
function toolGuards(ctx: RunContext, tool: string): ToolGuardrail[] {
  return scopeChain(guardScope(ctx)).flatMap((s) => (s.options.tools ?? []).filter((g) => g.tools === undefined || g.tools.includes(tool)));
}

/**
 * Run one tool call through the tool guardrails of `ctx` (innermost scope
 * first): `beforeCall` may refuse it (the tool does not run; the model gets
 * the refusal as an error result) or stop the run; `afterCall` may replace
 * the result with a refusal or stop the run. Every decision is a
 * `guardrail.checked` event. Without tool guardrails, just `execute()`.
 * @internal
 */
export async function guardToolCall(
  env: { ctx: RunContext; agent: string; signal: AbortSignal },
  call: ToolCall,
  execute: () => Promise<ToolResult>,
): Promise<ToolResult> {
  const guards = toolGuards(env.ctx, call.name);
  if (guards.length === 0) return execute();
  const free = { ...env, ctx: unguarded(env.ctx) };
  const refusal = (message: string): ToolResult => ({ callId: call.id, name: call.name, content: message, isError: true });
  for (const g of guards) {
    if (!g.beforeCall) continue;
    const decision = await decide(env, g, call, () => g.beforeCall!(call, free));
    if (decision.action === 'refuse') return refusal(decision.message);
  }
  let result = await execute();
  for (const g of guards) {
    if (!g.afterCall) continue;
    const seen = result;
    const decision = await decide(env, g, call, () => g.afterCall!(call, seen, free));
    if (decision.action === 'refuse') result = refusal(decision.message);
  }
  return result;
}

/** One tool guardrail's decision, as an event; `stop` (or a throw, or no decision) halts the run and throws. */
async function decide(
  env: { ctx: RunContext; agent: string; signal: AbortSignal },
  g: ToolGuardrail,
  call: ToolCall,
  check: () => ToolGuardrailDecision | Promise<ToolGuardrailDecision>,
): Promise<ToolGuardrailDecision> {
  const { ctx, agent, signal } = env;
  const start = ctx.clock.now();
  let decision: ToolGuardrailDecision;
  let cause: unknown;
  try {
    decision = asDecision(await check());
  } catch (error) {
    if (signal.aborted) throw abortError(signal);
    cause = error;
    decision = { action: 'stop', reason: `The guardrail failed: ${errorMessage(error)}` };
  }
  const reason = decision.action === 'stop' ? decision.reason : decision.action === 'refuse' ? decision.message : undefined;
  ctx.emit('guardrail.checked', {
    guardrail: g.name,
    stage: 'tool',
    tripped: decision.action === 'stop',
    action: decision.action,
    agent,
    tool: call.name,
    ...defined({ reason }),
    ...defined({ info: decision.info }),
    durationMs: ctx.clock.now() - start,
  });
  if (decision.action === 'stop') throw trip(ctx, g.name, 'tool', decision, { agent, tool: call.name }, cause);
  return decision;
}

function asDecision(value: unknown): ToolGuardrailDecision {
  const action = (value as { action?: unknown } | null | undefined)?.action;
  if (action === 'allow') return value as ToolGuardrailDecision;
  if (action === 'refuse' && typeof (value as { message?: unknown }).message === 'string') return value as ToolGuardrailDecision;
  if (action === 'stop' && typeof (value as { reason?: unknown }).reason === 'string') return value as ToolGuardrailDecision;
  return { action: 'stop', reason: 'The guardrail returned no decision (expected `{ action: "allow" | "refuse" | "stop" }`)' };
}

/**
 * `otelTracing`: a listener that turns a run's op tree into OpenTelemetry
 * spans through `@opentelemetry/api`, so whatever SDK and exporter the
 * application registered receives them.
 * @module
 */
import type { Attributes, Context, HrTime, Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import { otelApi } from './api.js';
import { isAgentOp } from '../../core/event-fold.js';
import type { TroupeEvent } from '../../core/events.js';
import { boolean, check, defineOptions, either, func } from '../../core/options.js';
import { RunTracker, type TrackedOp } from '../../views/tracker.js';
import {
  GEN_AI,
  TROUPE,
  finishReason,
  inputMessages,
  outputMessages,
  rollupAttributes,
  systemInstructions,
  type GenAiOperation,
} from './attributes.js';
import { injectTraceContext, type TraceCarrier } from './propagation.js';
import { defined } from '../../core/defined.js';

/** `@opentelemetry/api` (loaded on first use). */
const api = () => otelApi('troupe/otel');

/** Options of {@link otelTracing}. */
export interface OtelTracingOptions {
  /** The tracer spans are made with. Default: `trace.getTracer('troupe')` from the globally registered provider. */
  tracer?: Tracer;
  /**
   * Record prompts, answers, system prompts, tool arguments and tool results
   * (`gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.system_instructions`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). They may hold personal or secret data, so
   * they are left out unless you opt in. Default: false.
   */
  captureContent?: boolean;
  /**
   * The parent of each run's root span: a context (for example one
   * {@link extractTraceContext} read from a job), or a function of the run
   * id. Default: the active context when the run starts.
   */
  parent?: Context | ((runId: string) => Context | undefined);
  /** The propagator {@link OtelTracing.inject} writes with. Default: the globally registered one. */
  propagator?: TextMapPropagator;
}

const otelTracingOptions = defineOptions<OtelTracingOptions>('otelTracing', {
  tracer: check('an OpenTelemetry Tracer', (v) => typeof (v as { startSpan?: unknown } | null)?.startSpan === 'function'),
  captureContent: boolean,
  parent: either('an OpenTelemetry Context or a function of the run id', func, check('a Context', (v) => typeof (v as { getValue?: unknown } | null)?.getValue === 'function')),
  propagator: check('a TextMapPropagator', (v) => typeof (v as { inject?: unknown } | null)?.inject === 'function'),
});

/** Which op of which run: what {@link OtelTracing.context} and {@link OtelTracing.inject} take. */
export interface OpRef {
  /** The run's id (`ctx.runId`). */
  runId: string;
  /** The op's id (`ctx.op.id`); the run's root span when absent or unknown. */
  opId?: string;
}

/** The listener of {@link otelTracing} and what it offers to carry traces across processes. */
export interface OtelTracing {
  /** Pass to `run(..., { onEvent })` (or `emitter.on('*', ...)`): one tracing serves any number of runs. */
  readonly onEvent: (event: TroupeEvent) => void;
  /** The context holding the span of an op (or of the nearest op above it that has one); `undefined` for a run it does not trace. */
  context(ref: OpRef): Context | undefined;
  /**
   * Write the trace context of an op into `carrier` (a plain object of
   * strings, for example a job's `traceContext` field) and return it, so a
   * process that runs part of the work continues the same trace. Empty when
   * the op is not traced (or no propagator is registered).
   */
  inject<C extends TraceCarrier>(ref: OpRef, carrier?: C): C;
  /** End every span still open (ops of runs that never ended, for example at shutdown) at its run's last event, marked `abandoned`. */
  end(): void;
}

interface RunSpans {
  readonly ops: Map<string, Span>;
  /** Tool calls in flight, by op id and call id. */
  readonly tools: Map<string, Span>;
  /** Which chat span asked for a tool call, by call id. */
  readonly callers: Map<string, Span>;
  /** Clock time of the run's latest event. */
  last: number;
}

/**
 * Trace runs with OpenTelemetry. Every op becomes a span and the op tree the
 * span tree: the run and each pattern are `invoke_workflow` spans, agents
 * `invoke_agent`, each model turn a `chat` span under its agent, and each
 * tool call an `execute_tool` span under the turn that asked for it, with the
 * GenAI semantic-convention attributes and troupe's own (`troupe.*`).
 *
 * @example
 * ```ts
 * import { otelTracing } from 'troupe/otel';
 * const tracing = otelTracing(); // spans go to the SDK you registered
 * await run(flow, input, { adapter, onEvent: tracing.onEvent });
 * ```
 */
export function otelTracing(options: OtelTracingOptions = {}): OtelTracing {
  otelTracingOptions.check(options);
  const spans = new RunSpanTracker(options);
  return {
    onEvent: (event) => spans.onEvent(event),
    context(ref) {
      const span = spans.spanOf(ref.runId, ref.opId);
      return span ? api().trace.setSpan(api().context.active(), span) : undefined;
    },
    inject<C extends TraceCarrier>(ref: OpRef, carrier?: C): C {
      const target = (carrier ?? {}) as C;
      const ctx = this.context(ref);
      if (ctx) injectTraceContext(ctx, target, options.propagator);
      return target;
    },
    end: () => spans.end(),
  };
}

/** The spans of the runs one tracing follows, kept in step with the run tracker's ops. */
class RunSpanTracker {
  readonly #options: OtelTracingOptions;
  readonly #tracer: Tracer;
  readonly #content: boolean;
  readonly #tracker = new RunTracker();
  readonly #runs = new Map<string, RunSpans>();

  constructor(options: OtelTracingOptions) {
    this.#options = options;
    // Without the peer, otelTracing() itself says which package to install.
    const otel = otelApi('otelTracing');
    this.#tracer = options.tracer ?? otel.trace.getTracer('troupe');
    this.#content = options.captureContent === true;
  }

  onEvent(event: TroupeEvent): void {
    const runs = this.#runs;
    if (event.type === 'run.started') {
      if (runs.has(event.runId)) this.#endRun(event.runId, event.time);
      runs.set(event.runId, { ops: new Map(), tools: new Map(), callers: new Map(), last: event.time });
    }
    // A turn began at the boundary before it: read it before the turn moves the boundary.
    const turnStart = event.type === 'model.turn' ? this.#tracker.turnStart(event) : 0;
    this.#tracker.apply(event);
    const spans = runs.get(event.runId);
    if (!spans) return;
    spans.last = Math.max(spans.last, event.time);
    switch (event.type) {
      case 'run.started':
      case 'op.started':
      case 'op.completed':
      case 'run.completed':
      case 'run.failed':
        return this.#lifecycle(event, spans);
      case 'model.turn':
        return this.#chatSpan(event, spans, turnStart);
      case 'tool.called':
      case 'tool.completed':
        return this.#toolSpan(event, spans);
      default:
        return this.#annotate(event, spans);
    }
  }

  /** The span of an op, or of the nearest op above it that has one (the run's, else). */
  spanOf(runId: string, opId: string | undefined): Span | undefined {
    const spans = this.#runs.get(runId);
    if (!spans) return undefined;
    for (let op = this.#tracker.op(runId, opId); op; op = this.#tracker.parent(op)) {
      const span = spans.ops.get(op.id);
      if (span) return span;
    }
    return spans.ops.get('op-0');
  }

  /** End every span still open (ops of runs that never ended), marked `abandoned`. */
  end(): void {
    for (const [runId, spans] of [...this.#runs]) {
      for (const op of this.#tracker.ops(runId)) if (op.status === 'running') op.error = 'abandoned';
      this.#endRun(runId, spans.last);
    }
  }

  /** Runs and ops start and end their spans. */
  #lifecycle(event: TroupeEvent<'run.started' | 'op.started' | 'op.completed' | 'run.completed' | 'run.failed'>, spans: RunSpans): void {
    const tracker = this.#tracker;
    const content = this.#content;
    switch (event.type) {
      case 'run.started': {
        const root = tracker.op(event.runId, event.opId ?? 'op-0');
        if (!root) return;
        const extra: Attributes = {};
        if (event.resumed === true) extra[TROUPE.resumed] = true;
        if (content) extra[GEN_AI.inputMessages] = inputMessages(event.input);
        return this.#startOp(root, this.#parentOf(event.runId), extra);
      }
      case 'op.started': {
        const op = tracker.op(event.runId, event.opId);
        if (!op) return;
        const parent = this.spanOf(event.runId, op.parentId);
        return this.#startOp(op, parent ? api().trace.setSpan(api().context.active(), parent) : this.#parentOf(event.runId));
      }
      case 'op.completed': {
        const op = tracker.op(event.runId, event.opId);
        if (op) this.#endOp(event.runId, op, event.time);
        return;
      }
      default: {
        const root = spans.ops.get(event.opId ?? 'op-0');
        if (root && event.type === 'run.completed' && content) root.setAttribute(GEN_AI.outputMessages, outputMessages(event.output));
        return this.#endRun(event.runId, event.time);
      }
    }
  }

  /** A tool call's `execute_tool` span, under the chat span that asked for it. */
  #toolSpan(event: TroupeEvent<'tool.called' | 'tool.completed'>, spans: RunSpans): void {
    if (event.type === 'tool.completed') {
      const key = `${event.opId ?? ''}|${event.callId}`;
      const span = spans.tools.get(key);
      if (!span) return;
      spans.tools.delete(key);
      if (this.#content) span.setAttribute(GEN_AI.toolCallResult, event.content);
      if (event.isError) finishError(span, 'tool_error', event.content, false);
      span.end(hr(event.time));
      return;
    }
    const parent = spans.callers.get(event.call.id) ?? this.spanOf(event.runId, event.opId);
    spans.callers.delete(event.call.id);
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'execute_tool' satisfies GenAiOperation,
      [GEN_AI.toolName]: event.call.name,
      [GEN_AI.toolCallId]: event.call.id,
      [GEN_AI.toolType]: 'function',
      [GEN_AI.agentName]: event.agent,
      [TROUPE.runId]: event.runId,
    };
    if (this.#content) attributes[GEN_AI.toolCallArguments] = JSON.stringify(event.call.arguments ?? event.call.rawArguments ?? null);
    const span = this.#tracer.startSpan(
      `execute_tool ${event.call.name}`,
      { kind: api().SpanKind.INTERNAL, startTime: hr(event.time), attributes },
      parent ? api().trace.setSpan(api().context.active(), parent) : this.#parentOf(event.runId),
    );
    spans.tools.set(`${event.opId ?? ''}|${event.call.id}`, span);
  }

  /** Other events as attributes and span events of their op's span. */
  #annotate(event: TroupeEvent, spans: RunSpans): void {
    const content = this.#content;
    const at = hr(event.time);
    switch (event.type) {
      case 'agent.started':
        if (content) spans.ops.get(event.opId ?? '')?.setAttribute(GEN_AI.inputMessages, inputMessages(event.input));
        return;
      case 'agent.completed':
        if (content) spans.ops.get(event.opId ?? '')?.setAttribute(GEN_AI.outputMessages, outputMessages(event.output));
        return;
      case 'plan.started':
        spans.ops.get(event.opId ?? '')?.setAttributes({ [TROUPE.planId]: event.planId, [TROUPE.planChunks]: event.chunks });
        return;
      case 'chunk.status':
        spans.ops.get(event.opId ?? '')?.addEvent(
          'troupe.chunk.status',
          {
            [TROUPE.chunkId]: event.chunkId,
            [TROUPE.chunkAttempt]: event.attempt,
            'troupe.chunk.title': event.title,
            'troupe.chunk.status': event.status,
            ...defined({ 'troupe.chunk.error': event.error }),
          },
          at,
        );
        return;
      case 'reflect.evaluated':
        this.spanOf(event.runId, event.opId)?.addEvent(
          'troupe.evaluation',
          { [TROUPE.iteration]: event.iteration, 'troupe.evaluation.score': event.score, 'troupe.evaluation.trend': event.trend, 'troupe.evaluation.goal_met': event.goalMet },
          at,
        );
        return;
      case 'reflect.stall.warning':
      case 'reflect.stalled':
        this.spanOf(event.runId, event.opId)?.addEvent(`troupe.${event.type.slice('reflect.'.length)}`, { [TROUPE.iteration]: event.iteration, 'troupe.stall.consecutive': event.consecutive }, at);
        return;
      case 'router.selected':
        this.spanOf(event.runId, event.opId)?.addEvent('troupe.router.selected', { 'troupe.router.destination': event.destination, 'troupe.router.form': event.form }, at);
        return;
      case 'warning':
        this.spanOf(event.runId, event.opId)?.addEvent('troupe.warning', { 'troupe.warning.message': event.message, ...defined({ 'troupe.warning.code': event.code }) }, at);
        return;
      default:
        return;
    }
  }

  #parentOf(runId: string): Context {
    const p = this.#options.parent;
    const chosen = typeof p === 'function' ? p(runId) : p;
    return chosen ?? api().context.active();
  }

  #opAttributes(op: TrackedOp): Attributes {
    // An op that names an agent is the agent's (the kernel's event fold has the one rule).
    const agentOp = isAgentOp(op);
    const attributes: Attributes = {
      [GEN_AI.operationName]: (agentOp ? 'invoke_agent' : 'invoke_workflow') satisfies GenAiOperation,
      [TROUPE.runId]: op.runId,
      [TROUPE.opId]: op.id,
      [TROUPE.opKind]: op.kind,
    };
    if (agentOp) attributes[GEN_AI.agentName] = op.agent;
    else attributes[GEN_AI.workflowName] = op.name;
    Object.assign(attributes, scopeAttributes(op));
    return attributes;
  }

  #startOp(op: TrackedOp, parent: Context, extra: Attributes = {}): void {
    const spans = this.#runs.get(op.runId);
    if (!spans) return;
    const name = isAgentOp(op) ? `invoke_agent ${op.agent}` : `invoke_workflow ${op.name}`;
    const span = this.#tracer.startSpan(name, { kind: api().SpanKind.INTERNAL, startTime: hr(op.start), attributes: { ...this.#opAttributes(op), ...extra } }, parent);
    spans.ops.set(op.id, span);
  }

  #endOp(runId: string, op: TrackedOp, time: number): void {
    const spans = this.#runs.get(runId);
    const span = spans?.ops.get(op.id);
    if (!spans || !span) return;
    // Tool calls that never reported back were cut off with their op.
    for (const [key, tool] of spans.tools) {
      if (!key.startsWith(`${op.id}|`)) continue;
      finishError(tool, 'cancelled', `The ${op.kind} ended before the tool call did`, false);
      tool.end(hr(time));
      spans.tools.delete(key);
    }
    span.setAttribute(TROUPE.status, op.status);
    if (op.reason !== undefined) span.setAttribute(TROUPE.reason, op.reason);
    if (op.usage) span.setAttributes(rollupAttributes(op.usage));
    if (op.status === 'failed') finishError(span, op.code ?? '_OTHER', op.error ?? 'failed', true);
    else if (op.status === 'cancelled') finishError(span, 'cancelled', op.error ?? 'cancelled', false);
    span.end(hr(time));
    spans.ops.delete(op.id);
  }

  #endRun(runId: string, time: number): void {
    const spans = this.#runs.get(runId);
    if (!spans) return;
    for (const span of spans.tools.values()) {
      finishError(span, 'cancelled', 'The run ended before the tool call did', false);
      span.end(hr(time));
    }
    // Ops still open when their run ended (children first, the run last).
    const open = this.#tracker.ops(runId).filter((op) => spans.ops.has(op.id)).reverse();
    for (const op of open) {
      if (op.status === 'running') {
        op.status = 'cancelled';
        op.error ??= 'The run ended before the op did';
      }
      this.#endOp(runId, op, op.end ?? time);
    }
    this.#runs.delete(runId);
    this.#tracker.forget(runId);
  }

  /** One model turn: a `chat` span under its op, from the turn's reconstructed start to its end. */
  #chatSpan(event: TroupeEvent<'model.turn'>, spans: RunSpans, start: number): void {
    const parent = this.spanOf(event.runId, event.opId);
    const model = event.spec.model;
    const span = this.#tracer.startSpan(
      model === undefined ? 'chat' : `chat ${model}`,
      { kind: api().SpanKind.CLIENT, startTime: hr(start), attributes: this.#chatAttributes(event) },
      parent ? api().trace.setSpan(api().context.active(), parent) : this.#parentOf(event.runId),
    );
    if (event.error !== undefined) finishError(span, '_OTHER', event.error, true);
    for (const call of event.reply?.toolCalls ?? []) spans.callers.set(call.id, span);
    span.end(hr(event.time));
  }

  #chatAttributes(event: TroupeEvent<'model.turn'>): Attributes {
    const op = this.#tracker.op(event.runId, event.opId);
    const model = event.spec.model;
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'chat' satisfies GenAiOperation,
      [GEN_AI.providerName]: event.adapter,
      [GEN_AI.agentName]: event.agent,
      [TROUPE.runId]: event.runId,
      [TROUPE.session]: event.session,
      [TROUPE.turn]: event.turn,
    };
    if (model !== undefined) attributes[GEN_AI.requestModel] = model;
    if (event.spec.temperature !== undefined) attributes[GEN_AI.requestTemperature] = event.spec.temperature;
    if (op) {
      Object.assign(attributes, scopeAttributes(op));
      if (op.currentIteration !== undefined) attributes[TROUPE.iteration] = op.currentIteration;
      if (op.currentRound !== undefined) attributes[TROUPE.round] = op.currentRound;
    }
    const reply = event.reply;
    if (reply) {
      attributes[GEN_AI.responseFinishReasons] = [finishReason(reply.toolCalls)];
      if (reply.usage?.inputTokens !== undefined) attributes[GEN_AI.inputTokens] = reply.usage.inputTokens;
      if (reply.usage?.outputTokens !== undefined) attributes[GEN_AI.outputTokens] = reply.usage.outputTokens;
      if (reply.usage?.cachedTokens) attributes[GEN_AI.cacheReadInputTokens] = reply.usage.cachedTokens;
      if (reply.usage?.costUsd) attributes[TROUPE.costUsd] = reply.usage.costUsd;
    }
    if (this.#content) {
      if (event.spec.system !== undefined && event.turn === 1) attributes[GEN_AI.systemInstructions] = systemInstructions(event.spec.system);
      attributes[GEN_AI.inputMessages] = inputMessages(event.input);
      if (reply) attributes[GEN_AI.outputMessages] = outputMessages(reply.text, reply.toolCalls);
    }
    return attributes;
  }
}

/**
 * A clock time (ms) as an `HrTime`: the SDK takes a plain number below its
 * performance clock's reading for a performance timestamp and shifts it, so
 * a simulated clock's small times would not come out as given.
 */
function hr(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** Where an op sits: its plan, chunk and attempt, iteration and round. */
function scopeAttributes(op: TrackedOp): Attributes {
  const attributes: Attributes = {};
  const planId = op.kind === 'plan' ? (op.planId ?? op.name) : op.plan?.planId;
  if (planId !== undefined) attributes[TROUPE.planId] = planId;
  if (op.plan?.chunkId !== undefined) attributes[TROUPE.chunkId] = op.plan.chunkId;
  if (op.plan?.attempt !== undefined) attributes[TROUPE.chunkAttempt] = op.plan.attempt;
  if (op.iteration !== undefined) attributes[TROUPE.iteration] = op.iteration;
  if (op.round !== undefined) attributes[TROUPE.round] = op.round;
  return attributes;
}

/** Mark a span as failed: status, `error.type`, and (for errors, not cancellations) an exception event. */
function finishError(span: Span, type: string, message: string, exception: boolean): void {
  span.setStatus({ code: api().SpanStatusCode.ERROR, message });
  span.setAttribute(GEN_AI.errorType, type);
  if (exception) span.recordException({ name: type, message });
}

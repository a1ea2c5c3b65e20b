/**
 * The AG-UI protocol (the events of `@ag-ui/core`, which CopilotKit-style
 * front ends consume) from a run log. troupe writes the wire format itself:
 * `@ag-ui/core` is types and schemas, so it is no runtime dependency.
 *
 * An AG-UI run is one request: it opens with `RUN_STARTED` and ends with
 * `RUN_FINISHED` or `RUN_ERROR`. A troupe run that waits for a person ends
 * the AG-UI run with an `interrupt` outcome; the client answers in the next
 * request's `resume` entries, and that request streams on from the
 * interrupt. The AG-UI thread is a troupe thread (`run(..., { thread })`):
 * its first run has the thread's id, and a message on a thread whose run
 * has ended starts its next run.
 * @module
 */
import { z } from 'zod';
import type { TroupeEvent } from '../../core/events.js';
import { answerJsonSchema } from './requests.js';
import { defined } from '../../core/defined.js';

/** One AG-UI event on the wire (see `@ag-ui/core`'s `EventSchemas` for every field). */
export interface AguiEvent {
  type: string;
  [field: string]: unknown;
}

/** The AG-UI event types troupe emits. */
export const AGUI_EVENT_TYPES = [
  'RUN_STARTED',
  'RUN_FINISHED',
  'RUN_ERROR',
  'STEP_STARTED',
  'STEP_FINISHED',
  'TEXT_MESSAGE_START',
  'TEXT_MESSAGE_CONTENT',
  'TEXT_MESSAGE_END',
  'TOOL_CALL_START',
  'TOOL_CALL_ARGS',
  'TOOL_CALL_END',
  'TOOL_CALL_RESULT',
  'STATE_SNAPSHOT',
  'CUSTOM',
] as const;

/** The AG-UI protocol version troupe speaks. */
export const AGUI_PROTOCOL_VERSION = '1.0';

/** The shared state troupe publishes in `STATE_SNAPSHOT` (under `troupe`). */
export interface AguiRunState {
  /** The planning session's phase, when there is one. */
  phase?: string;
  /** The plan's chunks and their status, when the run executes a plan. */
  chunks?: Array<{ id: string; title: string; role: string; status: string }>;
}

/**
 * troupe events passed on as `CUSTOM` (`name: 'troupe.<type>'`); the rest map to AG-UI events or are internal
 * (`thread.loaded` among them: the client has the thread's messages already).
 */
const INTERNAL = new Set<string>(['model.turn', 'session.event', 'agent.started', 'agent.completed', 'agent.failed', 'op.started', 'op.completed', 'run.started', 'thread.loaded']);

/**
 * Maps a run log onto AG-UI events. Keeps what a later request needs to
 * continue: open steps and the published state (`prime` rebuilds them from
 * the log before a resume point).
 */
export class AguiMapper {
  readonly #threadId: string;
  readonly #runId: string;
  readonly #steps = new Map<string, string>();
  readonly #chunks = new Map<string, { id: string; title: string; role: string; status: string }>();
  /** The message of each agent's latest turn: its tool calls' parent (`parentMessageId`). */
  readonly #messages = new Map<string, string>();
  /** When this request's `RUN_STARTED` was stamped: no later event is stamped before it. */
  #openedAt: number | undefined;
  #phase: string | undefined;

  /** Put before message ids, so that they are unique in a thread of several runs. */
  readonly #ids: string;

  /**
   * `threadId`: the AG-UI thread (a troupe thread, or the run itself);
   * `runId`: the AG-UI run (this request); `troupeRunId`: the troupe run
   * mapped, when it is not the thread's id (a thread's later runs): message
   * ids then name it, so they are unique in the thread.
   */
  constructor(threadId: string, runId: string, troupeRunId?: string) {
    this.#threadId = threadId;
    this.#runId = runId;
    this.#ids = troupeRunId === undefined || troupeRunId === threadId ? '' : `${troupeRunId}-`;
  }

  /** `RUN_STARTED`, the steps still open and the state, to open a request. */
  open(time: number, input?: unknown): AguiEvent[] {
    this.#openedAt = time;
    const events: AguiEvent[] = [
      { type: 'RUN_STARTED', threadId: this.#threadId, runId: this.#runId, protocolVersion: AGUI_PROTOCOL_VERSION, timestamp: time, ...defined({ input }) },
    ];
    for (const stepName of this.#steps.values()) events.push({ type: 'STEP_STARTED', stepName, timestamp: time });
    if (this.#phase !== undefined || this.#chunks.size > 0) events.push(this.#snapshot(time));
    return events;
  }

  /** Follow an event that came before this request's start, without output. */
  prime(event: TroupeEvent, seq: number): void {
    this.#track(event, seq);
  }

  /**
   * The AG-UI events of one troupe event. `pending` says, for
   * `input.requested`, whether the request still waits: then the request
   * ends with an interrupt (`end: true`).
   */
  map(seq: number, event: TroupeEvent, pending = false): { events: AguiEvent[]; end: boolean } {
    // Events logged before this request opened (a step already running) are stamped at its start, not before it.
    const timestamp = Math.max(event.time, this.#openedAt ?? event.time);
    const stateChanged = this.#track(event, seq);
    switch (event.type) {
      case 'op.started': {
        const step = this.#steps.get(event.opId ?? '');
        return { events: step === undefined ? [] : [{ type: 'STEP_STARTED', stepName: step, timestamp }], end: false };
      }
      case 'op.completed':
        return { events: this.#closedStep ? [{ type: 'STEP_FINISHED', stepName: this.#closedStep, timestamp }] : [], end: false };
      case 'agent.turn': {
        // A turn that only calls tools is an assistant message without text: its tool calls go under it.
        if (event.text === '' && event.toolCalls === 0) return { events: [], end: false };
        const messageId = `msg-${this.#ids}${seq}`;
        return {
          events: [
            { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant', name: event.agent, timestamp },
            ...(event.text === '' ? [] : [{ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: event.text, timestamp }]),
            { type: 'TEXT_MESSAGE_END', messageId, timestamp },
          ],
          end: false,
        };
      }
      case 'tool.called': {
        const { id, name, arguments: args } = event.call;
        const delta = JSON.stringify(args ?? {});
        return {
          events: [
            { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name, ...defined({ parentMessageId: this.#messages.get(event.agent) }), timestamp },
            ...(delta === '' ? [] : [{ type: 'TOOL_CALL_ARGS', toolCallId: id, delta, timestamp }]),
            { type: 'TOOL_CALL_END', toolCallId: id, timestamp },
          ],
          end: false,
        };
      }
      case 'tool.completed':
        return { events: [{ type: 'TOOL_CALL_RESULT', messageId: `tool-${this.#ids}${seq}`, toolCallId: event.callId, content: event.content, role: 'tool', timestamp }], end: false };
      case 'input.requested': {
        if (!pending) return { events: [this.#custom(event, timestamp)], end: false };
        const interrupt = {
          id: event.requestId,
          reason: event.kind,
          message: event.prompt,
          ...defined({ toolCallId: event.toolCallId }),
          responseSchema: answerJsonSchema(event.kind),
          metadata: {
            ...defined({ agent: event.agent, tool: event.tool, risk: event.risk, arguments: event.arguments, questions: event.questions, plan: event.plan, roles: event.roles }),
            seq,
          },
        };
        return { events: [...this.#closeSteps(timestamp), { type: 'RUN_FINISHED', threadId: this.#threadId, runId: this.#runId, timestamp, outcome: { type: 'interrupt', interrupts: [interrupt] } }], end: true };
      }
      case 'run.completed':
        return {
          events: [
            ...this.#closeSteps(timestamp),
            {
              type: 'RUN_FINISHED',
              threadId: this.#threadId,
              runId: this.#runId,
              timestamp,
              result: event.output,
              outcome: event.status === 'cancelled' ? { type: 'cancelled' } : { type: 'success' },
            },
          ],
          end: true,
        };
      case 'run.failed':
        if (event.code === 'cancelled') return { events: [...this.#closeSteps(timestamp), { type: 'RUN_FINISHED', threadId: this.#threadId, runId: this.#runId, timestamp, outcome: { type: 'cancelled' } }], end: true };
        return { events: [{ type: 'RUN_ERROR', message: event.error, ...defined({ code: event.code }), timestamp }], end: true };
      default: {
        const events = INTERNAL.has(event.type) ? [] : [this.#custom(event, timestamp)];
        if (stateChanged) events.push(this.#snapshot(timestamp));
        return { events, end: false };
      }
    }
  }

  #closedStep: string | undefined;

  /** Update open steps and state; true when the published state changed. */
  #track(event: TroupeEvent, seq: number): boolean {
    this.#closedStep = undefined;
    switch (event.type) {
      case 'agent.turn':
        if (event.text !== '' || event.toolCalls > 0) this.#messages.set(event.agent, `msg-${this.#ids}${seq}`);
        return false;
      case 'op.started':
        if (event.opId !== undefined) this.#steps.set(event.opId, `${event.kind}:${event.name} (${event.opId})`);
        return false;
      case 'op.completed':
        if (event.opId !== undefined) {
          this.#closedStep = this.#steps.get(event.opId);
          this.#steps.delete(event.opId);
        }
        return false;
      case 'phase.changed':
        this.#phase = event.to;
        return true;
      case 'plan.started':
        this.#chunks.clear();
        for (const node of event.graph ?? []) this.#chunks.set(node.chunkId, { id: node.chunkId, title: node.title, role: node.role, status: 'pending' });
        return true;
      case 'chunk.status':
        this.#chunks.set(event.chunkId, { id: event.chunkId, title: event.title, role: event.role, status: event.status });
        return true;
      default:
        return false;
    }
  }

  #closeSteps(timestamp: number): AguiEvent[] {
    const events = [...this.#steps.values()].reverse().map((stepName) => ({ type: 'STEP_FINISHED', stepName, timestamp }));
    return events;
  }

  #snapshot(timestamp: number): AguiEvent {
    const troupe: AguiRunState = {
      ...defined({ phase: this.#phase }),
      ...(this.#chunks.size === 0 ? {} : { chunks: [...this.#chunks.values()] }),
    };
    return { type: 'STATE_SNAPSHOT', snapshot: { troupe }, timestamp };
  }

  #custom(event: TroupeEvent, timestamp: number): AguiEvent {
    return { type: 'CUSTOM', name: `troupe.${event.type}`, value: event, timestamp };
  }
}

/** The part of AG-UI's `RunAgentInput` troupe reads (the rest is passed over). */
export const aguiInputSchema = z.looseObject({
  threadId: z.string(),
  runId: z.string(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })),
  forwardedProps: z.unknown().optional(),
  resume: z
    .array(z.looseObject({ interruptId: z.string(), status: z.enum(['resolved', 'cancelled']), payload: z.unknown().optional() }))
    .optional(),
});

/** AG-UI's `RunAgentInput`, as troupe reads it. */
export type AguiInput = z.infer<typeof aguiInputSchema>;

/** The text of the last user message of an AG-UI input (what a new run is asked), or undefined. */
export function lastUserText(input: AguiInput): string | undefined {
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const m = input.messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      const text = m.content
        .map((part: unknown) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? String((part as { text?: unknown }).text ?? '') : ''))
        .join('');
      return text;
    }
  }
  return undefined;
}

/**
 * The typed event map. Every event troupe emits is listed here once, with a
 * dot-namespaced name; listeners receive the payload plus {@link EventBase}.
 * @module
 */
import type { SessionEvent, ToolCall } from './adapter.js';
import type { OutcomeStatus } from './runnable.js';
import type { Usage } from './usage.js';

/** A plan chunk's status (see `chunkStatuses` in the scheduler). */
export type ChunkStatusName =
  | 'Pending'
  | 'WaitingForDependencies'
  | 'Queued'
  | 'Running'
  | 'Succeeded'
  | 'Failed'
  | 'Retrying'
  | 'Aborted'
  | 'Skipped';

/** Fields every event carries. */
export interface EventBase {
  /** The run that emitted the event. */
  runId: string;
  /** Clock time of the event (ms). */
  time: number;
  /** The op node the event belongs to, when there is one. */
  opId?: string;
}

/** Payloads of every troupe event, by name. */
export interface TroupeEventPayloads {
  'run.started': { runnable: string; input: string };
  'run.completed': { runnable: string; status: OutcomeStatus; output: string; usage: Usage; durationMs: number };
  'run.failed': { runnable: string; error: string; code?: string };
  'op.started': { kind: string; name: string; agent?: string; parentId?: string; depth: number };
  'op.completed': { kind: string; name: string; agent?: string; status: OutcomeStatus; usage: Usage; durationMs: number };
  'agent.started': { agent: string; input: string };
  'agent.turn': { agent: string; turn: number; text: string; toolCalls: number; usage: Usage };
  'agent.completed': { agent: string; output: string; turns: number; usage: Usage };
  'agent.failed': { agent: string; error: string; code?: string };
  'session.event': { agent: string; sessionId: string; event: SessionEvent };
  'tool.called': { agent: string; call: ToolCall };
  'tool.completed': { agent: string; callId: string; name: string; isError: boolean; content: string };
  'plan.started': { planId: string; chunks: number; resumed: boolean };
  'plan.completed': { planId: string; status: OutcomeStatus; succeeded: number; failed: number; skipped: number };
  'chunk.status': {
    planId: string;
    chunkId: string;
    sequenceIndex: number;
    title: string;
    role: string;
    attempt: number;
    status: ChunkStatusName;
    previous: ChunkStatusName;
    error?: string;
  };
  'phase.changed': { sessionId: string; from: string; to: string };
  'plan.instruction': { planId: string; instruction: string };
  'warning': { message: string; code?: string; data?: unknown };
}

/** Names of every troupe event. */
export type TroupeEventName = keyof TroupeEventPayloads;

/** The object a listener receives for event `K`. */
export type TroupeEvent<K extends TroupeEventName = TroupeEventName> = {
  [P in K]: { type: P } & EventBase & TroupeEventPayloads[P];
}[K];

/** The listener map for eventemitter3's typed `EventEmitter`. */
export type TroupeEventListeners = {
  [K in TroupeEventName]: (event: TroupeEvent<K>) => void;
} & {
  /** Every event, after its own listeners. */
  '*': (event: TroupeEvent) => void;
};

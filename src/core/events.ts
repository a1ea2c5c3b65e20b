/**
 * The typed event map. Every event troupe emits is listed here once, with a
 * dot-namespaced name; listeners receive the payload plus {@link EventBase}.
 * @module
 */
import type { SessionEvent, ToolCall } from './adapter.js';
import type { OutcomeStatus } from './runnable.js';
import type { TurnRecord } from './turn-record.js';
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

/** One chunk of a plan as `plan.started` describes it: enough to draw the dependency graph. */
export interface PlanGraphNode {
  /** The chunk's id (its sequence index, as text). */
  chunkId: string;
  title: string;
  role: string;
  /** Ids of the chunks it depends on. */
  dependsOn: string[];
}

/** Fields every event carries. */
export interface EventBase {
  /** The run that emitted the event. */
  runId: string;
  /** Clock time of the event (ms). */
  time: number;
  /** The op node the event belongs to, when there is one. */
  opId?: string;
}

/** A message of a team's channel, as team events carry it (the pattern's `TeamMessage`). */
export interface TeamChannelMessage {
  from: string;
  round: number;
  text: string;
  member?: string | undefined;
  to?: string | undefined;
  vote?: boolean | undefined;
}

/** Status of a task of a lead coordination. */
export type CoordTaskStatus = 'pending' | 'claimed' | 'in-progress' | 'blocked' | 'done' | 'failed' | 'cancelled';

/** Kinds of messages between a coordination's lead and its workers. */
export type CoordMessageKind =
  | 'status'
  | 'question'
  | 'answer'
  | 'plan-submission'
  | 'plan-approval'
  | 'text'
  | 'shutdown-request'
  | 'shutdown-response';

/** A message of a coordination's bus, as `coord.message` events carry it. */
export interface CoordMessageRecord {
  id: string;
  kind: CoordMessageKind;
  sender: string;
  recipient: string;
  time: number;
  text: string;
  taskId?: string | undefined;
  approved?: boolean | undefined;
  inReplyTo?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** What a coordination decided (`coord.decision`). */
export type CoordDecisionKind =
  | 'tasks-planned'
  | 'plan-approved'
  | 'plan-rejected'
  | 'task-blocked'
  | 'task-added'
  | 'task-split'
  | 'task-cancelled'
  | 'task-reassigned'
  | 'status-check'
  | 'worker-stuck'
  | 'worker-spawned'
  | 'worker-stopped'
  | 'question-unanswered';

/** What a run asks a person for: a tool approval, an answer to a question, a verdict on a plan. */
export type InputKind = 'approval' | 'question' | 'plan-approval';

/** Payloads of every troupe event, by name. */
export interface TroupeEventPayloads {
  /** `resumed` is set when the run continues an earlier one with the same id. */
  'run.started': { runnable: string; input: string; resumed?: boolean };
  'run.completed': { runnable: string; status: OutcomeStatus; output: string; usage: Usage; durationMs: number };
  'run.failed': { runnable: string; error: string; code?: string };
  /**
   * `path` is the op's place in the run (its `RunContext.checkpointPath`):
   * views read a plan chunk's ops from it (they run under `<plan path>/chunk-<n>`).
   */
  'op.started': { kind: string; name: string; agent?: string; parentId?: string; depth: number; path?: string };
  /** `error` and `code` say why an op `failed` or was `cancelled`. */
  'op.completed': { kind: string; name: string; agent?: string; status: OutcomeStatus; usage: Usage; durationMs: number; error?: string; code?: string };
  'agent.started': { agent: string; input: string };
  'agent.turn': { agent: string; turn: number; text: string; toolCalls: number; usage: Usage };
  'agent.completed': { agent: string; output: string; turns: number; usage: Usage };
  'agent.failed': { agent: string; error: string; code?: string };
  'session.event': { agent: string; sessionId: string; event: SessionEvent };
  'tool.called': { agent: string; call: ToolCall };
  'tool.completed': { agent: string; callId: string; name: string; isError: boolean; content: string };
  /** `graph` lists every chunk with the chunks it depends on, so views can draw the plan. */
  'plan.started': { planId: string; chunks: number; resumed: boolean; graph?: PlanGraphNode[] };
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
  'team.round.started': { team: string; round: number; members: string[] };
  'team.message': { team: string; message: TeamChannelMessage };
  'team.vote': { team: string; member: string; round: number; vote: boolean; reason?: string };
  'team.concluded': { team: string; status: OutcomeStatus; rounds: number; output: string; transcript: TeamChannelMessage[] };
  'workspace.fallback': { message: string; primary: string; fallback: string; baseDir: string };
  // patterns: handoff, router, advisors, broadcast, sequential
  'handoff.started': { from: string; to: string };
  'handoff.completed': { from: string; to: string; agent: string };
  'handoff.failed': { from: string; to: string; stage: string; error: string; code?: string };
  'handoff.declined': { from: string; to: string; label?: string; reason: 'denied' | 'no-approvals' | 'limit' };
  'router.selected': { router: string; destination: string; reason?: string; attempt: number; form: 'tool' | 'text' | 'fallback' };
  'router.retry': { router: string; choice?: string; valid: string[] };
  'advisor.completed': { main: string; advisor: string; output: string; usage: Usage };
  'advisor.failed': { main: string; advisor: string; error: string; code?: string };
  'broadcast.completed': { name: string; answered: string[] };
  'sequential.step': { name: string; step: number; agent: string };
  'reflect.iteration.started': { loop: string; iteration: number; maxIterations: number };
  'reflect.iteration.failed': { loop: string; iteration: number; error: string; code?: string; consecutive: number };
  'reflect.dispatched': { loop: string; iteration: number; assignments: Array<{ worker: string; task: string }> };
  'reflect.worker.completed': { loop: string; iteration: number; worker: string; success: boolean; durationMs: number; error?: string };
  'reflect.evaluated': { loop: string; iteration: number; score: number; rationale: string; trend: 'improving' | 'stable' | 'degrading'; goalMet: boolean; evaluator: string };
  'reflect.quality.degrading': { loop: string; iteration: number; score: number; previous: number; suggestion: string };
  /** An adjustment the last evaluation calls for (a failed worker, a short answer, a score drop), also put into the next planning prompt. */
  'reflect.adjustment': {
    loop: string;
    iteration: number;
    kind: 'worker-failed' | 'short-answer' | 'score-drop';
    message: string;
    worker?: string;
    error?: string;
    chars?: number;
    score?: number;
    previous?: number;
  };
  'reflect.stall.warning': { loop: string; iteration: number; similarity: number; consecutive: number };
  'reflect.stalled': { loop: string; iteration: number; consecutive: number };
  'reflect.completed': { loop: string; status: OutcomeStatus; goalMet: boolean; iterations: number; summary: string; durationMs: number };
  /** A checkpointing pattern picked up its checkpoint in a resumed run (`completed`: it returns its saved outcome). */
  'checkpoint.restored': { kind: string; name: string; path: string; completed: boolean };
  'coord.task': { coordination: string; task: string; title: string; from?: CoordTaskStatus; to: CoordTaskStatus; worker?: string; reason?: string; version: number };
  'coord.message': { coordination: string; message: CoordMessageRecord };
  'coord.decision': { coordination: string; decision: CoordDecisionKind; task?: string; worker?: string; detail?: string };
  'coord.completed': { coordination: string; done: string[]; failed: string[]; cancelled: string[]; blocked: string[]; durationMs: number };
  /**
   * The run waits for a person (`troupe/http` serves these): `requestId`
   * names the request document `runs/<runId>/requests/<requestId>` of the
   * run's store, where the answer is written.
   */
  'input.requested': {
    requestId: string;
    kind: InputKind;
    prompt: string;
    agent?: string;
    tool?: string;
    toolCallId?: string;
    arguments?: unknown;
    questions?: string[];
    plan?: unknown;
  };
  /** The request was answered (from any process, through the store). */
  'input.answered': { requestId: string; kind: InputKind; answer: Record<string, unknown> };
  /** The run stopped waiting without an answer (cancelled or timed out). */
  'input.withdrawn': { requestId: string; kind: InputKind; reason: string };
  /**
   * One model turn, with everything needed to replay it: the adapter, the
   * agent, which session of that agent in the run (1-based, in opening
   * order), the turn within the session, the session's spec, the input and
   * the reply (or the error). Same fields as a recording's `TurnRecord`.
   */
  'model.turn': TurnRecord;
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

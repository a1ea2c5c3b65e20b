/**
 * The typed event map. Every event has a dot-namespaced name and a payload;
 * listeners receive the payload plus {@link EventBase}.
 *
 * The kernel declares its own events here ({@link KernelEvents}: the run,
 * its ops, agents' turns and tool calls, checkpoints, warnings). Each layer
 * declares its events in its own `events.ts` and adds them to the map by
 * merging an interface into `TroupeLayerEvents`:
 *
 * ```ts
 * export interface PlanEvents { 'plan.started': { planId: string; chunks: number } }
 * declare global {
 *   interface TroupeLayerEvents extends PlanEvents {}
 * }
 * ```
 *
 * The merge point is a global interface because a module augmentation
 * (`declare module '../core/events.js'`) does not survive the bundled
 * declaration files of the package (see docs/decisions.md). An integration
 * adds its own events the same way.
 * @module
 */
import type { ConversationMessage, SessionEvent, ToolCall } from './adapter.js';
import type { OutcomeReason, OutcomeStatus } from './outcome.js';
import type { BudgetExhaustion, BudgetLimitKey, BudgetLimits, BudgetSpend } from './budget.js';
import type { TurnRecord } from './turn-record.js';
import type { Usage } from './usage.js';

declare global {
  /**
   * The events of the layers above the kernel, merged in by each layer's
   * `events.ts` (`interface TroupeLayerEvents extends PlanEvents {}`).
   * Read the whole map as `TroupeEventPayloads`.
   */
  interface TroupeLayerEvents {}
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

/** The kernel's events, by name. */
export interface KernelEvents {
  /**
   * A run starts, with the runnable's name and the input; `resumed` is set
   * when it continues an earlier run with the same id, and `parent` when
   * the run was made from another one (a fork or a what-if replay), and
   * `thread` when it continues a thread (`run(..., { thread })`), and
   * `resource` when it is about one (`run(..., { resource })`).
   */
  'run.started': { runnable: string; input: string; resumed?: boolean; parent?: RunParent; thread?: string; resource?: string };
  /**
   * A run that continues a thread holds it: `messages` are the thread's
   * earlier messages, the history its entry agent is given (so the log
   * holds what the run saw, and a replay gives the same), `runs` how many
   * runs took the thread, this one included.
   */
  'thread.loaded': { thread: string; messages: ConversationMessage[]; runs: number };
  /**
   * A run gave its thread back: `added` messages (its input and answer,
   * when it completed; none otherwise) and the thread's size after.
   */
  'thread.saved': { thread: string; added: number; messages: number };
  /**
   * The first record of a run made from another run, written before it
   * runs: the runnable and input it continues with, the run and checkpoint
   * it comes from, `mode` (`fork`: seeded from a checkpoint of the parent,
   * continued by `resume`; `what-if`: run again with model calls answered
   * from the parent's log) and what was changed, one line each.
   */
  'run.forked': { runnable: string; input: string; parent: RunParent; mode: 'fork' | 'what-if'; changes: string[] };
  /** A run resolved: its status, the answer, the usage of the whole op tree and its duration on the run's clock. */
  'run.completed': { runnable: string; status: OutcomeStatus; reason?: OutcomeReason; output: string; usage: Usage; durationMs: number };
  /** A run rejected (it failed or was cancelled), with the error's message and code. */
  'run.failed': { runnable: string; error: string; code?: string };
  /**
   * An op node opened (every runnable opens one): its kind, name and agent,
   * its parent op and depth, and `path`, its place in the run
   * (`RunContext.checkpointPath`): views read a plan chunk's ops from it
   * (they run under `<plan path>/chunk-<n>`).
   */
  'op.started': { kind: string; name: string; agent?: string; parentId?: string; depth: number; path?: string };
  /** An op node closed with its status, the usage of its subtree and its duration; `error` and `code` say why an op `failed` or was `cancelled`. */
  'op.completed': { kind: string; name: string; agent?: string; status: OutcomeStatus; reason?: OutcomeReason; usage: Usage; durationMs: number; error?: string; code?: string };
  /** An agent starts on its input (its session is opened on the first turn). */
  'agent.started': { agent: string; input: string };
  /** One turn of an agent's tool loop ended: its number, the reply's text, how many tool calls it asked for, and its usage. */
  'agent.turn': { agent: string; turn: number; text: string; toolCalls: number; usage: Usage };
  /** An agent answered: the answer, the turns it took and their usage. */
  'agent.completed': { agent: string; output: string; turns: number; usage: Usage };
  /** An agent failed (not for cancellations), with the error's message and code. */
  'agent.failed': { agent: string; error: string; code?: string };
  /** An event the adapter streamed during a turn (a text delta, a tool call as it arrives), from session `sessionId` of `agent`. */
  'session.event': { agent: string; sessionId: string; event: SessionEvent };
  /** The tool loop runs a tool call the model asked for (unknown tools and bad arguments included: they get an error result). */
  'tool.called': { agent: string; call: ToolCall };
  /** A tool call finished; its result (or error, with `isError`) goes back to the model. */
  'tool.completed': { agent: string; callId: string; name: string; isError: boolean; content: string };
  /**
   * One model turn, with everything needed to replay it: the adapter, the
   * agent, which session of that agent in the run (1-based, in opening
   * order), the turn within the session, the session's spec, the input and
   * the reply (or the error). Same fields as a recording's `TurnRecord`.
   */
  'model.turn': TurnRecord;
  /** A checkpointing pattern picked up its checkpoint in a resumed run (`completed`: it returns its saved outcome without running). */
  'checkpoint.restored': { kind: string; name: string; path: string; completed: boolean };
  /**
   * A checkpointing pattern saved its state (after an iteration, a round, a
   * batch of task transitions, the start of a plan) or, with `finished`,
   * its outcome: `state` (and `outcome`) as saved, so the run log holds
   * every checkpoint a run went through (see `troupe/travel`). Do not
   * modify them.
   */
  'checkpoint.saved': { kind: string; name: string; path: string; finished: boolean; state: unknown; outcome?: unknown };
  /**
   * An entry was added to a checkpoint's stream (a plan's chunk that
   * succeeded), by this run or, reported back by an executor, by another
   * process: `entry` as appended. Do not modify it.
   */
  'checkpoint.appended': { kind: string; name: string; path: string; entry: unknown };
  /**
   * A guardrail decided (every verdict is one event, and so one run-log
   * record): which guardrail, at which stage (`input`, `output`, `stream`,
   * `tool`), whether it tripped, its reason and findings, and where —
   * the guarded runnable, the agent whose reply streamed, the tool and the
   * calling agent. A tool guardrail's `action` is `allow`, `refuse` (the
   * model gets the refusal as an error result) or `stop` (`tripped`).
   */
  'guardrail.checked': {
    guardrail: string;
    stage: 'input' | 'output' | 'stream' | 'tool';
    tripped: boolean;
    action?: 'allow' | 'refuse' | 'stop';
    reason?: string;
    info?: Record<string, unknown>;
    runnable?: string;
    agent?: string;
    tool?: string;
    durationMs: number;
  };
  /** A guardrail tripped and halted the run: the run rejects with a `GuardrailTripError` naming it. Follows its `guardrail.checked`. */
  'guardrail.tripped': { guardrail: string; stage: 'input' | 'output' | 'stream' | 'tool'; reason?: string; runnable?: string; agent?: string; tool?: string };
  /**
   * Delegation hooks decided on a handoff, route, delegation or agent-tool
   * call (only where hooks are set): `allowed` as built, `changed` (a
   * filter or hook changed what the receiver gets), `refused` (with the
   * hook's reason) or `disabled` (the target is not enabled).
   */
  'delegation.decided': {
    kind: 'handoff' | 'route' | 'delegate' | 'agent-tool';
    from: string;
    to: string;
    decision: 'allowed' | 'changed' | 'refused' | 'disabled';
    reason?: string;
  };
  /**
   * A budget's meter was created: when the first op entered with it opens
   * (`opId` is that op). `budgetId` is unique in the run; `shared` budgets
   * have one meter for every op entered with them.
   */
  'budget.opened': { budgetId: string; budget: string; limits: BudgetLimits; shared: boolean };
  /**
   * A budget ran out: `limit` reached its `max` (`reached`), the next model
   * call would have passed it (`would-overrun`, emitted by the op whose
   * call was refused), or its time ran out (`deadline`). `spent` is the
   * whole spend so far. The ops it stops end with status `budget-exhausted`.
   */
  'budget.exhausted': { budgetId: string; budget: string; limit: BudgetLimitKey; max: number; reason: BudgetExhaustion; spent: BudgetSpend };
  /** An op entered with a budget closed: the budget's limits and its whole spend so far (the last one of a budget is its final spend). */
  'budget.closed': { budgetId: string; budget: string; limits: BudgetLimits; spent: BudgetSpend; exhausted: boolean };
  /**
   * A session's conversation was compacted before a turn that would have
   * passed its context budget: tokens before and after (by the session's
   * counter), how (`summary` by a summariser, `drop` of tool output, worker
   * results and earlier exchanges), what was dropped, and the ordinal of
   * the session that continues it (the conversation goes on in a new
   * session of the same agent, so a replay finds the same turns).
   */
  'context.compacted': {
    agent: string;
    budget: number;
    before: number;
    after: number;
    strategy: 'summary' | 'drop';
    dropped: { toolOutputs: number; results: number; exchanges: number };
    session: number;
  };
  /**
   * Something went wrong that does not stop the run: a listener threw
   * (`listener_error`), the run log or a checkpoint could not be written
   * (`run_log_failed`, `checkpoint_failed`), a model answer was repaired
   * (`json_repaired`), a team member or a worker failed, a workspace could
   * not be cleaned up. `code` says which; `data` may hold details.
   */
  'warning': { message: string; code?: string; data?: unknown };
}

/** Where a run made from another run comes from: the parent's id and, for a fork, the checkpoint (its number in the parent's log, see `listCheckpoints`). */
export interface RunParent {
  /** The run it was made from. */
  runId: string;
  /** The checkpoint of the parent a fork starts from (1-based, in the order of the parent's log). */
  checkpoint?: number;
}

/** Payloads of every troupe event, by name: the kernel's and every layer's. */
export interface TroupeEventPayloads extends KernelEvents, TroupeLayerEvents {}

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

/**
 * The event fold: a run's events folded, one at a time, into its op tree,
 * with one rule for what counts as an agent. Every reader that needs the op
 * tree of a run from its events builds on it: the run tracker (and so the
 * report, OpenTelemetry and the command line's progress) and the outcome
 * statistics. It needs nothing but the kernel's events.
 *
 * **What counts as an agent.** An op is an agent's work when it is of one
 * of the {@link agentOpKinds} and its `op.started` names an `agent`: `agent`
 * (an agent's turns: `agent()`, a router's or a handoff's own turn, a plan
 * chunk's agent), `worker` (an orchestration's worker), `team-member` (a
 * team's participant that is an agent). Other ops may name the agent they
 * speak for (a router, a loop) but are patterns. Ops of one agent nest (an
 * orchestration's `worker` op holds the worker agent's own op): the
 * outermost is the agent's run ({@link EventFold.isAgentRun}), which is
 * what a count of agent runs counts.
 *
 * Statuses are read in today's words ({@link loggedOutcome}): a log written
 * before outcomes had a `reason` folds as `status` + `reason`.
 * @module
 */
import type { TroupeEvent } from './events.js';
import { loggedOutcome, type OutcomeReason, type OutcomeStatus } from './outcome.js';
import type { Usage } from './usage.js';

/** An op as the fold knows it from `op.started`, `op.completed` and its model turns (the run itself is `op-0`, kind `run`). */
export interface FoldedOp {
  /** The run the op belongs to. */
  readonly runId: string;
  /** The op's id (`op-0` for the run). */
  readonly id: string;
  /** The kind of runnable (`run`, `agent`, `router`, `plan`, ...). */
  readonly kind: string;
  /** The runnable's name. */
  readonly name: string;
  /** The agent the op names: the agent whose work it is, for agent ops (see the module's rule), or the one a pattern speaks for. */
  readonly agent?: string;
  /** The parent op's id (none for the run). */
  readonly parentId?: string;
  /** Nesting depth (0 for the run). */
  readonly depth: number;
  /** Its place in the run (`RunContext.checkpointPath`), when the log has it. */
  readonly path?: string;
  /** Clock time it started. */
  readonly start: number;
  /** Clock time it ended. */
  end?: number;
  /** `running` until it ends. */
  status: OutcomeStatus | 'running';
  /** Why it ended so, when its pattern says (`goal-met`, `max-rounds`, ...). */
  reason?: OutcomeReason;
  /** Its usage with everything under it, once it ended. */
  usage?: Usage;
  /** Why it failed or was cancelled. */
  error?: string;
  /** The error's code, for troupe errors. */
  code?: string;
  /** The adapter and model of its last model turn (`model` is the session spec's, when it names one). */
  lastTurn?: { adapter: string; model?: string };
}

/** The kinds of op that are one agent's work when they name the agent (see the module's rule). */
export const agentOpKinds: readonly string[] = ['agent', 'worker', 'team-member'];
const AGENT_OP_KINDS: ReadonlySet<string> = new Set(agentOpKinds);

/** True when `op` is an agent's work: an op of one of the {@link agentOpKinds} that names its agent (the module's one rule). */
export function isAgentOp<O extends Pick<FoldedOp, 'kind' | 'agent'>>(op: O): op is O & { agent: string } {
  return op.agent !== undefined && AGENT_OP_KINDS.has(op.kind);
}

/** The ops of one run. */
interface FoldedRun<O extends FoldedOp> {
  readonly ops: Map<string, O>;
  ended: boolean;
}

/**
 * Folds events into op trees, per run. Feed it every event of a run in
 * order ({@link EventFold.apply}), then read the ops. A resumed run (a
 * second `run.started` with the same run id) starts afresh, since its op
 * ids start again; a log that starts mid-run is folded from where it
 * starts. Events of ops it never saw start are ignored. Never throws on a
 * malformed event.
 *
 * Extend it to keep more per op: `createOp` makes each op (give it the
 * fields of your own op type), `runStarted` is called when a run starts
 * afresh.
 *
 * @example
 * ```ts
 * const fold = new EventFold();
 * await run(flow, input, { adapter, onEvent: (e) => fold.apply(e) });
 * const agentRuns = fold.ops(runId).filter((op) => fold.isAgentRun(op));
 * ```
 */
export class EventFold<O extends FoldedOp = FoldedOp> {
  readonly #runs = new Map<string, FoldedRun<O>>();

  /** Fold one event in. */
  apply(event: TroupeEvent): void {
    switch (event.type) {
      case 'run.started':
        return this.#runStarted(event);
      case 'run.completed':
      case 'run.failed':
        return this.#runEnded(event);
      case 'op.started':
        return this.#opStarted(event);
      case 'op.completed':
        return this.#opCompleted(event);
      case 'model.turn': {
        const op = this.op(event.runId, event.opId);
        if (op && typeof event.adapter === 'string') op.lastTurn = { adapter: event.adapter, ...(typeof event.spec?.model === 'string' ? { model: event.spec.model } : {}) };
        return;
      }
      default:
        return;
    }
  }

  /** Make the op of an `op.started` event (or of `run.started`, with no parent). Override to add fields. */
  protected createOp(base: FoldedOp, _parent: O | undefined): O {
    return base as O;
  }

  /** Called when run `runId` starts afresh (its first `run.started`, or a resumed run's). Override to reset per-run state. */
  protected runStarted(_runId: string): void {}

  #runStarted(event: TroupeEvent<'run.started'>): void {
    const state: FoldedRun<O> = { ops: new Map(), ended: false };
    this.#runs.set(event.runId, state);
    this.runStarted(event.runId);
    const id = event.opId ?? 'op-0';
    state.ops.set(id, this.createOp({ runId: event.runId, id, kind: 'run', name: event.runnable, depth: 0, start: event.time, status: 'running' }, undefined));
  }

  #runEnded(event: TroupeEvent<'run.completed' | 'run.failed'>): void {
    const state = this.#runs.get(event.runId);
    if (!state) return;
    state.ended = true;
    const root = state.ops.get(event.opId ?? 'op-0');
    if (!root || root.kind !== 'run') return;
    root.end = event.time;
    if (event.type === 'run.completed') {
      Object.assign(root, loggedOutcome(event.status, event.reason));
      root.usage = event.usage;
    } else {
      root.status = event.code === 'cancelled' ? 'cancelled' : 'failed';
      root.error = event.error;
      if (event.code !== undefined) root.code = event.code;
    }
  }

  #opStarted(event: TroupeEvent<'op.started'>): void {
    if (event.opId === undefined) return;
    const state = this.#state(event.runId);
    const parent = event.parentId === undefined ? undefined : state.ops.get(event.parentId);
    const base: FoldedOp = {
      runId: event.runId,
      id: event.opId,
      kind: event.kind,
      name: event.name,
      ...(typeof event.agent === 'string' ? { agent: event.agent } : {}),
      ...(event.parentId === undefined ? {} : { parentId: event.parentId }),
      depth: event.depth,
      ...(event.path === undefined ? {} : { path: event.path }),
      start: event.time,
      status: 'running',
    };
    state.ops.set(base.id, this.createOp(base, parent));
  }

  #opCompleted(event: TroupeEvent<'op.completed'>): void {
    const op = this.op(event.runId, event.opId);
    if (!op) return;
    op.end = event.time;
    Object.assign(op, loggedOutcome(event.status, event.reason));
    op.usage = event.usage;
    if (event.error !== undefined) op.error = event.error;
    if (event.code !== undefined) op.code = event.code;
  }

  #state(runId: string): FoldedRun<O> {
    let state = this.#runs.get(runId);
    if (!state) {
      // A log that starts mid-run (no `run.started`): fold what follows.
      state = { ops: new Map(), ended: false };
      this.#runs.set(runId, state);
      this.runStarted(runId);
    }
    return state;
  }

  /** The op `opId` of run `runId`. */
  op(runId: string, opId: string | undefined): O | undefined {
    return opId === undefined ? undefined : this.#runs.get(runId)?.ops.get(opId);
  }

  /** Every op of a run, in start order. */
  ops(runId: string): O[] {
    return [...(this.#runs.get(runId)?.ops.values() ?? [])];
  }

  /** The runs folded so far, in the order they started. */
  runs(): string[] {
    return [...this.#runs.keys()];
  }

  /** The parent of an op. */
  parent(op: O): O | undefined {
    return this.op(op.runId, op.parentId);
  }

  /**
   * True when `op` is an agent's run: an agent op (see {@link isAgentOp})
   * with no op of the same agent above it.
   */
  isAgentRun(op: O): boolean {
    if (!isAgentOp(op)) return false;
    for (let up = this.parent(op); up; up = this.parent(up)) if (up.agent === op.agent) return false;
    return true;
  }

  /** The agent's run an op belongs to: the outermost op of the nearest agent at or above it. */
  agentRun(op: O): O | undefined {
    let found: O | undefined;
    for (let at: O | undefined = op; at; at = this.parent(at)) {
      if (found === undefined) {
        if (isAgentOp(at)) found = at;
      } else if (at.agent === found.agent) found = at;
      else if (isAgentOp(at)) break;
    }
    return found;
  }

  /** True once the run's `run.completed` or `run.failed` was applied. */
  ended(runId: string): boolean {
    return this.#runs.get(runId)?.ended ?? false;
  }

  /** Forget a run. */
  forget(runId: string): void {
    this.#runs.delete(runId);
  }
}

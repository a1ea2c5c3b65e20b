/**
 * The run tracker: the kernel's event fold (`src/core/event-fold.ts`: the
 * op tree and what counts as an agent) with what each view needs to know
 * about an op besides (its plan chunk and attempt, its loop iteration and
 * team round, when its current model turn began, its budgets).
 * OpenTelemetry spans, the HTML report and the CLI's progress all read runs
 * through it; it keeps no state in the kernel and needs nothing but events.
 * @module
 */
import type { TroupeEvent } from '../core/events.js';
// The events of the layers this reader folds (their declarations merge into `TroupeEvent`; these modules hold types only).
import '../patterns/events.js';
import '../coordination/events.js';
import type { PlanGraphNode } from '../plan/events.js';
import { currentChunkStatus, type ChunkStatus } from '../plan/engine/state.js';
import { EventFold, type FoldedOp } from '../core/event-fold.js';
import { emptySpend, type BudgetExhaustion, type BudgetLimitKey, type BudgetLimits, type BudgetSpend } from '../core/budget.js';
import { defined } from '../core/defined.js';

/** An op as the tracker knows it: the fold's op (see `FoldedOp`) and what the views need besides. */
export interface TrackedOp extends FoldedOp {
  /** The plan the op runs in (the nearest plan op's id), with the chunk and attempt it serves. */
  plan?: { opId: string; planId: string; chunkId?: string; attempt?: number };
  /** The iteration of the nearest enclosing loop when the op started. */
  iteration?: number;
  /** The round of the nearest enclosing team when the op started. */
  round?: number;
  /** This op's current iteration, for loops (from `reflect.iteration.started`). */
  currentIteration?: number;
  /** This op's current round, for teams (from `team.round.started`). */
  currentRound?: number;
  /** The plan id, for plan ops (from `plan.started`). */
  planId?: string;
  /** Clock time of this op's last turn boundary (its start, a finished turn, tool call or child op, an iteration or round). */
  mark: number;
  /** Clock time its current iteration or round started (ops inside it make no turn before). */
  stepMark?: number;
  /** The budgets this op opened (from `budget.*` events): limits, the latest spend, and why it ran out. */
  budgets?: TrackedBudget[];
}

/** A budget as the tracker knows it. */
export interface TrackedBudget {
  readonly budgetId: string;
  readonly name: string;
  readonly limits: BudgetLimits;
  spent: BudgetSpend;
  exhausted?: { limit: BudgetLimitKey; reason: BudgetExhaustion };
}

/** The state of one chunk of a plan, from `plan.started` and `chunk.status`. */
export interface TrackedChunk {
  /** The plan op's id. */
  readonly planOpId: string;
  readonly planId: string;
  readonly chunkId: string;
  title: string;
  role: string;
  /** Chunks it depends on (from `plan.started`; empty when the log predates it). */
  dependsOn: string[];
  status: ChunkStatus;
  /** The current (or last) attempt, 0 before the first. */
  attempt: number;
}

/** The state of one plan. */
export interface TrackedPlan {
  readonly opId: string;
  readonly planId: string;
  /** Chunks in the plan. */
  total: number;
  /** Chunks that reached a status after which they do not run again. */
  done: number;
  /** Chunks by id, in plan order. */
  readonly chunks: Map<string, TrackedChunk>;
}

/** Statuses after which a chunk does not run again. */
export const FINISHED_CHUNK_STATUSES: ReadonlySet<ChunkStatus> = new Set(['completed', 'failed', 'cancelled', 'skipped']);

/** What the tracker keeps of a run besides its ops. */
interface RunExtras {
  readonly plans: Map<string, TrackedPlan>;
  readonly budgets: Map<string, TrackedBudget>;
}

/**
 * Folds events into ops, plans and chunks, per run: the kernel's
 * `EventFold` (ops, their status and reason, agents) and plans, chunks,
 * loop iterations, team rounds, budgets and turn boundaries. Feed it every
 * event of a run in order ({@link RunTracker.apply}), then read what
 * changed. A resumed run (a second `run.started` with the same run id)
 * starts afresh, since its op ids start again.
 *
 * @example
 * ```ts
 * const tracker = new RunTracker();
 * await run(flow, input, { adapter, onEvent: (e) => tracker.apply(e) });
 * ```
 */
export class RunTracker extends EventFold<TrackedOp> {
  readonly #extras = new Map<string, RunExtras>();

  /** Fold one event in. Events of ops it never saw start are ignored. */
  override apply(event: TroupeEvent): void {
    super.apply(event);
    switch (event.type) {
      case 'op.completed': {
        // The op above goes on from here (a turn it makes next starts now).
        const op = this.op(event.runId, event.opId);
        const parent = op && this.parent(op);
        if (parent) parent.mark = Math.max(parent.mark, event.time);
        return;
      }
      case 'agent.started':
      case 'tool.completed':
      case 'model.turn': {
        const op = this.op(event.runId, event.opId);
        if (op) op.mark = event.time;
        return;
      }
      case 'reflect.iteration.started':
      case 'team.round.started':
        return this.#stepStarted(event);
      case 'plan.started':
        return this.#planStarted(event);
      case 'chunk.status':
        return this.#chunkStatus(event);
      case 'budget.opened':
      case 'budget.exhausted':
      case 'budget.closed':
        return this.#budget(event);
      default:
        return;
    }
  }

  protected override createOp(base: FoldedOp, parent: TrackedOp | undefined): TrackedOp {
    const op: TrackedOp = { ...base, mark: base.start };
    if (parent) inherit(op, parent, this.#extras.get(op.runId)?.plans);
    return op;
  }

  protected override runStarted(runId: string): void {
    this.#extras.set(runId, { plans: new Map(), budgets: new Map() });
  }

  /** A budget opened on an op (its meter's first op), ran out or was left: kept on the op that opened it. */
  #budget(event: TroupeEvent<'budget.opened' | 'budget.exhausted' | 'budget.closed'>): void {
    const extras = this.#extras.get(event.runId);
    if (!extras) return;
    if (event.type === 'budget.opened') {
      const op = this.op(event.runId, event.opId);
      if (!op) return;
      const budget: TrackedBudget = { budgetId: event.budgetId, name: event.budget, limits: { ...event.limits }, spent: emptySpend() };
      (op.budgets ??= []).push(budget);
      extras.budgets.set(event.budgetId, budget);
      return;
    }
    const budget = extras.budgets.get(event.budgetId);
    if (!budget) return;
    budget.spent = { ...event.spent };
    if (event.type === 'budget.exhausted') budget.exhausted ??= { limit: event.limit, reason: event.reason };
  }

  /** The budgets of a run, by id. */
  budgets(runId: string): ReadonlyMap<string, TrackedBudget> {
    return this.#extras.get(runId)?.budgets ?? new Map();
  }

  /** A loop's iteration or a team's round starts: the ops below it belong to it. */
  #stepStarted(event: TroupeEvent<'reflect.iteration.started' | 'team.round.started'>): void {
    const op = this.op(event.runId, event.opId);
    if (!op) return;
    if (event.type === 'reflect.iteration.started') op.currentIteration = event.iteration;
    else op.currentRound = event.round;
    op.mark = event.time;
    op.stepMark = event.time;
  }

  #planStarted(event: TroupeEvent<'plan.started'>): void {
    const op = this.op(event.runId, event.opId);
    const extras = this.#extras.get(event.runId);
    if (!op || !extras) return;
    op.planId = event.planId;
    const plan: TrackedPlan = { opId: op.id, planId: event.planId, total: event.chunks, done: 0, chunks: new Map() };
    for (const node of event.graph ?? []) plan.chunks.set(node.chunkId, newChunk(plan, node));
    extras.plans.set(op.id, plan);
  }

  #chunkStatus(event: TroupeEvent<'chunk.status'>): void {
    const plan = this.plan(event.runId, event.opId);
    if (!plan) return;
    let chunk = plan.chunks.get(event.chunkId);
    if (!chunk) {
      chunk = newChunk(plan, { chunkId: event.chunkId, title: event.title, role: event.role, dependsOn: [] });
      plan.chunks.set(event.chunkId, chunk);
    }
    const wasDone = FINISHED_CHUNK_STATUSES.has(chunk.status);
    // A run log written before the statuses were renamed says `succeeded` and `aborted`.
    chunk.status = currentChunkStatus(event.status) as ChunkStatus;
    chunk.attempt = event.attempt;
    plan.done += (FINISHED_CHUNK_STATUSES.has(chunk.status) ? 1 : 0) - (wasDone ? 1 : 0);
  }

  /** The plans of a run, in start order. */
  plans(runId: string): TrackedPlan[] {
    return [...(this.#extras.get(runId)?.plans.values() ?? [])];
  }

  /** The plan whose op is `opId`. */
  plan(runId: string, opId: string | undefined): TrackedPlan | undefined {
    return opId === undefined ? undefined : this.#extras.get(runId)?.plans.get(opId);
  }

  /**
   * When the model turn recorded by `event` began. The kernel emits one
   * `model.turn` when a turn ends, so the start is its op's last turn
   * boundary (the op's start, the previous turn, the last tool result or
   * child op to finish) or, when later, the start of the current iteration
   * or round of an op above it. Ask before applying the `model.turn` event
   * itself, which moves the boundary.
   */
  turnStart(event: TroupeEvent<'model.turn'>): number {
    const own = this.op(event.runId, event.opId);
    if (!own) return event.time;
    let start = own.mark;
    // Above it, only where an iteration or round began counts: siblings running in parallel move their parent's own mark.
    for (let op = this.parent(own); op; op = this.parent(op)) if (op.stepMark !== undefined) start = Math.max(start, op.stepMark);
    return Math.min(start, event.time);
  }

  /** Forget a run (its ops and plans). */
  override forget(runId: string): void {
    super.forget(runId);
    this.#extras.delete(runId);
  }
}

function newChunk(plan: TrackedPlan, node: PlanGraphNode): TrackedChunk {
  return { planOpId: plan.opId, planId: plan.planId, chunkId: node.chunkId, title: node.title, role: node.role, dependsOn: [...node.dependsOn], status: 'pending', attempt: 0 };
}

/**
 * What an op takes from its parent: the plan and chunk it serves (a chunk's
 * ops run under `<plan path>/chunk-<id>`), the iteration and the round.
 */
function inherit(op: TrackedOp, parent: TrackedOp, plans: ReadonlyMap<string, TrackedPlan> | undefined): void {
  if (parent.kind === 'plan') {
    const plan = plans?.get(parent.id);
    const planId = parent.planId ?? parent.name;
    const chunkId = op.path !== undefined && parent.path !== undefined ? chunkOf(op.path, parent.path) : undefined;
    const attempt = chunkId === undefined ? undefined : plan?.chunks.get(chunkId)?.attempt;
    op.plan = { opId: parent.id, planId, ...defined({ chunkId }), ...(attempt ? { attempt } : {}) };
  } else if (parent.plan) {
    op.plan = parent.plan;
  }
  const iteration = parent.currentIteration ?? parent.iteration;
  if (iteration !== undefined) op.iteration = iteration;
  const round = parent.currentRound ?? parent.round;
  if (round !== undefined) op.round = round;
}

/** The chunk id in `path` right under the plan at `planPath` (`<planPath>/chunk-<id>/...`). */
function chunkOf(path: string, planPath: string): string | undefined {
  const prefix = `${planPath}/chunk-`;
  if (!path.startsWith(prefix)) return undefined;
  const end = path.indexOf('/', prefix.length);
  return end < 0 ? undefined : path.slice(prefix.length, end);
}

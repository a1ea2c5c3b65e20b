/**
 * The coordinator's copy of remote work: the events a worker publishes are
 * emitted again in the coordinator's run (the run log, `onEvent` and every
 * view see them), and the worker's ops become nodes of the coordinator's op
 * tree under the op the work belongs to, so usage rolls up as if the work
 * had run here. Op ids, parents, depths, checkpoint paths and session
 * ordinals are translated into the coordinator's run.
 * @module
 */
import type { RunContext } from '../../core/context.js';
import type { TroupeEvent } from '../../core/events.js';
import { createOp, totalUsage, type OpNode } from '../../core/ops.js';
import type { OutcomeStatus } from '../../core/outcome.js';
import { addUsage, emptyUsage, type Usage } from '../../core/usage.js';
import { defined } from '../../core/defined.js';
import type { JobWatcher } from './client.js';
import type { JobKind } from './wire.js';

/** An event as it arrives from a worker: an object with a `type`, checked field by field where it is read. */
export type RemoteEvent = { type: string } & Record<string, unknown>;

/** Mirrors the events and ops of one remote job into `ctx`. */
export class RemoteMirror {
  readonly #ctx: RunContext;
  /** The execution whose events are applied; another one's first event abandons it. */
  #exec: string | undefined;
  /** Executions abandoned (their worker was lost): their late events are dropped. */
  readonly #gone = new Set<string>();
  /** The worker's op ids → nodes of the coordinator's tree. */
  readonly #ops = new Map<string, OpNode>();
  /** Nodes opened and not yet closed, in opening order. */
  readonly #open = new Set<OpNode>();
  /** The worker's `agent#session` → the coordinator's session ordinal of that agent. */
  readonly #ordinals = new Map<string, number>();
  /** Top-level mirrored nodes (children of `ctx.op`). */
  readonly #roots: OpNode[] = [];
  #closed = false;

  /** @param ctx The context the remote work belongs to: its op receives the worker's top-level ops, its path prefixes theirs. */
  constructor(ctx: RunContext) {
    this.#ctx = ctx;
  }

  /** The execution being mirrored, once its first batch arrived. */
  get exec(): string | undefined {
    return this.#exec;
  }

  /** Apply the events of execution `exec`, in order. A new execution abandons the one before it. */
  apply(exec: string, events: readonly RemoteEvent[]): void {
    if (this.#closed || this.#gone.has(exec)) return;
    if (this.#exec !== exec) {
      if (this.#exec !== undefined) this.abandon('The worker running this attempt was lost; another worker took the job over');
      this.#exec = exec;
    }
    for (const event of events) this.#apply(event);
  }

  /** The current execution ended without a result (its worker was lost or handed the job back): close what it left open, as failed. */
  abandon(error: string): void {
    if (this.#exec !== undefined) this.#gone.add(this.#exec);
    this.#exec = undefined;
    this.#closeOpen('failed', error);
    this.#ops.clear();
    this.#ordinals.clear();
  }

  /** The job ended: close every node still open with `status`, and apply nothing more. */
  close(status: OutcomeStatus, error?: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeOpen(status, error);
  }

  /** Usage of every mirrored op, rolled up. */
  usage(): Usage {
    return addUsage(emptyUsage(), ...this.#roots.map(totalUsage));
  }

  #apply(e: RemoteEvent): void {
    const type = e.type;
    if (type.startsWith('run.')) return; // the worker's own run; the coordinator's run has its own
    const ctx = this.#ctx;
    const now = ctx.clock.now();
    if (type === 'op.started') return this.#opStarted(e, now);
    const node = typeof e.opId === 'string' ? this.#ops.get(e.opId) : undefined;
    if (type === 'op.completed') {
      // An op whose start this coordinator never saw (it took over a job already running) has no node to close.
      if (!node) return;
      this.#opCompleted(node, e, now);
    }
    // A model turn of the worker counts toward every budget the remote work spends from (its usage is in its op already).
    if (type === 'agent.turn' && isUsage(e.usage)) ctx.budgets.record(e.usage);
    const event: Record<string, unknown> = { ...e, runId: ctx.runId, time: now, opId: node?.id ?? ctx.op.id };
    if (type === 'model.turn' && typeof e.agent === 'string' && typeof e.session === 'number') event.session = this.#ordinal(e.agent, e.session);
    ctx.emitEvent(event as unknown as TroupeEvent);
  }

  #opStarted(e: RemoteEvent, now: number): void {
    const { opId, kind, name, agent, parentId, depth, path } = e;
    if (typeof opId !== 'string' || typeof kind !== 'string' || typeof name !== 'string') return;
    const ctx = this.#ctx;
    const parent = (typeof parentId === 'string' ? this.#ops.get(parentId) : undefined) ?? ctx.op;
    const node = createOp(ctx.nextOpId(), kind, name, now, typeof agent === 'string' ? agent : undefined);
    parent.children.push(node);
    if (parent === ctx.op) this.#roots.push(node);
    this.#ops.set(opId, node);
    this.#open.add(node);
    ctx.emitEvent({
      ...e,
      type: 'op.started',
      runId: ctx.runId,
      time: now,
      opId: node.id,
      kind,
      name,
      parentId: parent.id,
      depth: ctx.depth + (typeof depth === 'number' ? depth : 1),
      path: `${ctx.checkpointPath}${typeof path === 'string' ? path : ''}`,
    } as TroupeEvent<'op.started'>);
  }

  /** Close `node`: its own usage is the event's rolled-up usage less its children's. */
  #opCompleted(node: OpNode, e: RemoteEvent, now: number): void {
    node.end = now;
    node.status = typeof e.status === 'string' ? (e.status as OutcomeStatus) : 'failed';
    if (typeof e.error === 'string') node.error = e.error;
    if (isUsage(e.usage)) node.usage = minusUsage(e.usage, addUsage(emptyUsage(), ...node.children.map(totalUsage)));
    this.#open.delete(node);
  }

  #ordinal(agent: string, session: number): number {
    const key = `${agent}#${session}`;
    let ordinal = this.#ordinals.get(key);
    if (ordinal === undefined) this.#ordinals.set(key, (ordinal = this.#ctx.nextSessionOrdinal(agent)));
    return ordinal;
  }

  /** Close the open nodes, innermost first, each with an `op.completed` event. */
  #closeOpen(status: OutcomeStatus, error: string | undefined): void {
    const ctx = this.#ctx;
    const open = [...this.#open].reverse();
    this.#open.clear();
    for (const node of open) {
      const now = ctx.clock.now();
      node.end = now;
      node.status = status;
      if (error !== undefined) node.error = error;
      ctx.emitEvent({
        type: 'op.completed',
        runId: ctx.runId,
        time: now,
        opId: node.id,
        kind: node.kind,
        name: node.name,
        ...defined({ agent: node.agent, error }),
        status,
        usage: totalUsage(node),
        durationMs: now - node.start,
      });
    }
  }
}

/** `a - b`, field by field, never below zero (floating-point cost sums may differ in the last bit). */
function minusUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: Math.max(0, a.inputTokens - b.inputTokens),
    outputTokens: Math.max(0, a.outputTokens - b.outputTokens),
    cachedTokens: Math.max(0, a.cachedTokens - b.cachedTokens),
    costUsd: Math.max(0, a.costUsd - b.costUsd),
    turns: Math.max(0, a.turns - b.turns),
  };
}

function isUsage(value: unknown): value is Usage {
  if (typeof value !== 'object' || value === null) return false;
  const u = value as Record<string, unknown>;
  return ['inputTokens', 'outputTokens', 'cachedTokens', 'costUsd', 'turns'].every((k) => typeof u[k] === 'number');
}

/**
 * What a coordinator hears of one job, into its run: `remote.queued`,
 * `remote.started` and `remote.stalled` in `ctx`, and the worker's events
 * through `mirror`.
 */
export function watchJob(ctx: RunContext, mirror: RemoteMirror, job: { jobId: string; queue: string; kind: JobKind }): JobWatcher {
  const { jobId, queue, kind } = job;
  return {
    queued: (adopted) => ctx.emit('remote.queued', { jobId, queue, kind, adopted }),
    started: (worker, waitMs) => ctx.emit('remote.started', { jobId, queue, worker, waitMs }),
    batch: (exec, batch) => mirror.apply(exec, batch.events),
    stalled: (worker) => {
      ctx.emit('remote.stalled', { jobId, queue, ...defined({ worker }) });
      mirror.abandon(`The worker running this ${kind === 'chunk' ? 'attempt' : 'job'} was lost; the job went back to the queue`);
    },
  };
}

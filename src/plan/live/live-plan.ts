/**
 * The plan of one execution as it is now: what a {@link PlanControl}, a
 * planning session and the `change_plan` and `post_message` tools act on.
 * A change is validated against the live graph (the chunks' statuses
 * included), recorded (a `plan.changed` event and one checkpoint entry),
 * then applied by the state machine in one synchronous step. Chunks keep
 * their positions: new chunks are appended and removed ones stay as
 * records marked `removed`, so the machine's arrays indexed by position
 * only grow.
 * @module
 */
import type { RunContext } from '../../core/context.js';
import { NotRunningError } from '../../core/control.js';
import { indexPlan, type PlanIndex } from '../model/dag.js';
import type { MachineChange, PlanMachine } from '../engine/machine.js';
import { PlanMessages, type MessageLimits, type PlanMessage, type PlanMessageInput } from './messages.js';
import type { Plan, PlanChunk } from '../model/plan.js';
import type { PlanCheckpoints } from '../engine/checkpoint.js';
import { retiredBy } from '../engine/checkpoint.js';
import type { PlanControlTarget } from './control.js';
import type { ChunkRecord } from '../engine/record.js';
import { applyPlanChange, type PlanChange, type PlanChangeRecord, type PlanChangeSource } from './replan.js';

/** What a {@link LivePlan} works with. */
export interface LivePlanOptions {
  ctx: RunContext;
  planId: string;
  /** The plan the execution starts from (a resumed one: the changed plan of its checkpoint). */
  plan: Plan;
  records: ChunkRecord[];
  /** The live index (the scheduler's, replaced by each change). */
  index: () => PlanIndex;
  /** Changes and messages restored from a checkpoint. */
  changes?: readonly PlanChangeRecord[] | undefined;
  messages?: readonly PlanMessage[] | undefined;
  limits?: MessageLimits | undefined;
  /** Recorded changes to apply again (a replay), each once `after` chunks have completed. */
  replay?: readonly PlanChangeRecord[] | undefined;
}

/** A running plan that can change and carries its workers' messages. */
export class LivePlan implements PlanControlTarget {
  readonly messageBox: PlanMessages;
  readonly #o: LivePlanOptions;
  /** Every chunk by position, removed ones included (without dependencies). */
  #chunks: PlanChunk[];
  readonly #changes: PlanChangeRecord[];
  readonly #retired: Set<number>;
  #machine: PlanMachine | undefined;
  #checkpoints: PlanCheckpoints | undefined;
  readonly #pending: PlanChangeRecord[];

  constructor(options: LivePlanOptions) {
    this.#o = options;
    this.#chunks = [...options.plan.chunks];
    this.#changes = [...(options.changes ?? [])];
    this.#retired = retiredBy(this.#changes);
    // A replay skips the changes a resumed run already holds.
    this.#pending = (options.replay ?? []).filter((r) => r.id > this.#changes.length);
    const { ctx, planId } = options;
    this.messageBox = new PlanMessages({
      clock: ctx.clock,
      ...options.limits,
      ...(options.messages ? { restored: options.messages } : {}),
      exists: (to) => {
        if (to === 'all') return true;
        const records = options.records;
        if ('chunk' in to) {
          const p = this.#position(to.chunk);
          return p !== undefined && !records[p]!.removed;
        }
        return records.some((r) => !r.removed && r.chunk.role === to.role);
      },
      onMessage: (message) => {
        this.#checkpoints?.message(message);
        ctx.emit('plan.message', { planId, message });
      },
    });
  }

  /** Start serving: the machine applies changes, the checkpoints record them. */
  attach(machine: PlanMachine, checkpoints: PlanCheckpoints | undefined): void {
    this.#machine = machine;
    this.#checkpoints = checkpoints;
  }

  /** A chunk completed: apply the recorded changes (a replay) that were applied once as many chunks had completed. */
  completed(): void {
    if (this.#pending.length > 0) this.applyDue();
  }

  /** Apply the recorded changes due now (a replay). */
  applyDue(): void {
    while (this.#pending.length > 0 && this.#pending[0]!.after <= this.#completed() && this.#accepting()) {
      const next = this.#pending.shift()!;
      this.change(next.change, next.source);
    }
  }

  /** The plan as it is now, without removed chunks. */
  plan(): Plan {
    if (this.#changes.length === 0) return this.#o.plan;
    const records = this.#o.records;
    return { ...this.#o.plan, chunks: this.#chunks.filter((_, p) => !records[p]?.removed) };
  }

  /** The changes so far. */
  changes(): readonly PlanChangeRecord[] {
    return this.#changes;
  }

  messages(): readonly PlanMessage[] {
    return this.messageBox.list;
  }

  post(message: PlanMessageInput): PlanMessage {
    return this.messageBox.post(message);
  }

  /** Resolves once every checkpoint entry and run-log event so far is in the run's store (at once without one). */
  async saved(): Promise<void> {
    await Promise.all([this.#checkpoints?.written(), this.#o.ctx.logged()]);
  }

  change(change: PlanChange, source: PlanChangeSource): PlanChangeRecord {
    const machine = this.#machine;
    if (!machine || !this.#accepting()) throw new NotRunningError('PlanControl', 'change');
    const records = this.#o.records;
    const statusOf = (id: number): ChunkRecord['status'] | undefined => {
      const p = this.#position(id);
      return p === undefined ? undefined : records[p]!.status;
    };
    const applied = applyPlanChange(this.plan().chunks, change, statusOf, this.#retired);
    // Every chunk keeps its position; new ones are appended; removed ones stay, without dependencies.
    const byId = new Map(applied.chunks.map((c) => [c.sequenceIndex, c]));
    const removed: number[] = [];
    const chunks = this.#chunks.map((c, p) => {
      const now = byId.get(c.sequenceIndex);
      if (now !== undefined) return now;
      if (!records[p]!.removed) removed.push(p);
      return c.dependsOnIndexes.length === 0 ? c : { ...c, dependsOnIndexes: [] };
    });
    for (const id of applied.added) chunks.push(byId.get(id)!);
    const plan: Plan = { ...this.#o.plan, chunks };
    const index = indexPlan(plan);
    const record: PlanChangeRecord = { id: this.#changes.length + 1, change, source, after: this.#completed(), time: this.#o.ctx.clock.now() };
    this.#chunks = chunks;
    this.#changes.push(record);
    for (const id of applied.removed) this.#retired.add(id);
    this.#checkpoints?.changed(record);
    const { ctx, planId } = this.#o;
    ctx.emit('plan.changed', { planId, id: record.id, change, source, after: record.after, added: applied.added, removed: applied.removed, rewired: applied.rewired });
    const reason = `Removed by plan change ${record.id}${change.reason ? `: ${change.reason}` : ''}`;
    const step: MachineChange = { index, chunks, removed, reason, plan };
    machine.replan(step);
    return record;
  }

  /** Chunks that have completed so far. */
  #completed(): number {
    let n = 0;
    for (const r of this.#o.records) if (r.status === 'completed' && !r.removed) n++;
    return n;
  }

  #accepting(): boolean {
    return this.#machine !== undefined && this.#machine.stopping === undefined && !this.#machine.ended;
  }

  #position(id: number): number | undefined {
    return this.#o.index().position(id);
  }
}

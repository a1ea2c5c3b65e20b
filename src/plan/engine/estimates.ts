/**
 * How long each chunk should take, and from that the ready queue's priority:
 * the remaining critical path of every chunk. An estimate comes from the
 * `weight` option when given; else from the chunk's `estimatedMs`, its
 * role's `estimatedMs`, or what the run has learned: the mean duration of the
 * chunks of the same role that succeeded, per unit of complexity (Low 1,
 * Medium 2, High 3). Chunks with nothing to go on use the mean over every
 * role, or complexity alone before anything finished.
 * @module
 */
import { complexityWeight, remainingPaths, type ChunkWeight, type PlanIndex } from '../model/dag.js';
import type { Plan, PlanChunk } from '../model/plan.js';
import type { RoleConfig } from '../model/roles.js';

/** Learned durations of one role (or of all roles), per unit of complexity. */
interface Mean {
  sum: number;
  count: number;
}

/** Relative change of a role's learned duration that reorders the queue. */
const CHANGE = 0.1;
/** At most this many recomputations after the first sighting of each role (each is linear in the plan). */
const RECOMPUTATIONS = 64;

/** The duration estimates of a plan's chunks and the priorities that follow from them. */
export class DurationEstimates {
  /** The remaining critical path of every chunk, by position: the ready queue's priorities, updated in place. */
  priority: Float64Array;
  #plan: Plan;
  #index: PlanIndex;
  /** A fixed estimate per position; NaN where the run must learn one. */
  #fixed: Float64Array;
  readonly #roleOf: (chunk: PlanChunk) => RoleConfig;
  readonly #weight: ChunkWeight | undefined;
  /** The roles of chunks without a fixed estimate (nothing to learn when empty). */
  readonly #learning: Set<string>;
  readonly #prior: number;
  /** No fixed estimates: only the learned units relative to each other matter. */
  readonly #scaleFree: boolean;
  readonly #byRole = new Map<string, Mean>();
  readonly #all: Mean = { sum: 0, count: 0 };
  /** The per-role units the priorities were computed with. */
  #used = new Map<string, number>();
  #since = 0;
  #every: number;

  constructor(plan: Plan, index: PlanIndex, roleOf: (chunk: PlanChunk) => RoleConfig, weight?: ChunkWeight) {
    const n = plan.chunks.length;
    this.#plan = plan;
    this.#index = index;
    this.#roleOf = roleOf;
    this.#weight = weight;
    this.#fixed = new Float64Array(n);
    this.#learning = new Set();
    let known = 0;
    let perUnit = 0;
    for (let i = 0; i < n; i++) {
      const fixed = this.#fix(i);
      if (!Number.isNaN(fixed)) {
        known++;
        perUnit += fixed / complexityWeight(plan.chunks[i]!);
      }
    }
    // Before anything finished, a chunk without an estimate counts as the average known chunk of its complexity.
    this.#prior = known > 0 && !weight ? perUnit / known : 1;
    this.#scaleFree = known === 0;
    this.#every = Math.max(1, Math.ceil(n / RECOMPUTATIONS));
    this.priority = new Float64Array(n);
    this.#compute();
  }

  /**
   * The plan changed while it ran (chunks appended, dependencies rewired):
   * estimate the new chunks, keep what was learned, and compute every
   * priority again into a new array of the plan's length (`priority`).
   */
  replan(plan: Plan, index: PlanIndex): void {
    const n = plan.chunks.length;
    const old = this.#fixed;
    this.#plan = plan;
    this.#index = index;
    this.#fixed = new Float64Array(n);
    this.#fixed.set(old.subarray(0, Math.min(old.length, n)));
    for (let i = old.length; i < n; i++) this.#fix(i);
    this.#every = Math.max(1, Math.ceil(n / RECOMPUTATIONS));
    this.priority = new Float64Array(n);
    this.#compute();
  }

  /** Set the fixed estimate of the chunk at `position` (NaN, and its role learned, when there is none). */
  #fix(position: number): number {
    const c = this.#plan.chunks[position]!;
    const weight = this.#weight;
    const fixed = weight ? weight(c) : (c.estimatedMs ?? this.#roleOf(c).estimatedMs ?? Number.NaN);
    this.#fixed[position] = fixed;
    if (Number.isNaN(fixed)) this.#learning.add(c.role);
    return fixed;
  }

  /** The estimate of the chunk at `position`. */
  estimate(position: number): number {
    const fixed = this.#fixed[position]!;
    if (!Number.isNaN(fixed)) return fixed;
    const c = this.#plan.chunks[position]!;
    return complexityWeight(c) * this.#unit(c.role);
  }

  /**
   * Learn that the chunk at `position` succeeded after `ms` (below 1 ms
   * counts as 1). True when the priorities changed (the queue must reorder).
   */
  observe(position: number, ms: number): boolean {
    if (this.#learning.size === 0) return false;
    const c = this.#plan.chunks[position]!;
    const sample = Math.max(ms, 1) / complexityWeight(c);
    let mean = this.#byRole.get(c.role);
    const first = mean === undefined;
    if (mean === undefined) this.#byRole.set(c.role, (mean = { sum: 0, count: 0 }));
    mean.sum += sample;
    mean.count++;
    this.#all.sum += sample;
    this.#all.count++;
    if (!first && ++this.#since < this.#every) return false;
    this.#since = 0;
    if (!this.#changed()) return false;
    this.#compute();
    return true;
  }

  #unit(role: string): number {
    const mean = this.#byRole.get(role) ?? this.#all;
    return mean.count > 0 ? mean.sum / mean.count : this.#prior;
  }

  /** Whether a learned unit moved by more than {@link CHANGE} (relative to each other when nothing is fixed). */
  #changed(): boolean {
    let reference = 1;
    let usedReference = 1;
    if (this.#scaleFree) {
      const first = this.#learning.values().next().value!;
      reference = this.#unit(first);
      usedReference = this.#used.get(first) ?? reference;
    }
    for (const role of this.#learning) {
      const now = this.#unit(role) / reference;
      const before = (this.#used.get(role) ?? Number.NaN) / usedReference;
      if (!(Math.abs(now - before) <= CHANGE * before)) return true;
    }
    return false;
  }

  #compute(): void {
    const units = new Map<string, number>();
    for (const role of this.#learning) units.set(role, this.#unit(role));
    const chunks = this.#plan.chunks;
    const fixed = this.#fixed;
    remainingPaths(this.#index, (i) => (Number.isNaN(fixed[i]!) ? complexityWeight(chunks[i]!) * units.get(chunks[i]!.role)! : fixed[i]!), this.priority);
    this.#used = units;
  }
}

/**
 * Makespan of the 200-chunk workload (5–50 ms chunks, maxParallel 8) against
 * the lower bound max(critical path, work / 8), in three forms: chunks that
 * carry their duration as `estimatedMs` (a baseline without estimates gets
 * it as `weight`), chunks with nothing to tell them apart (every chunk the
 * same role and complexity), and chunks whose role follows their duration
 * band (Testing 5–19 ms, CodeAnalysis 20–34, Implementation 35–50) but carry
 * no estimate, so the scheduler must learn per role.
 */
import type { ChunkRole, Plan, PlanChunk } from '../../src/plan/index.js';
import type { SimulatedClock as SimulatedClockType } from '../../src/testing/index.js';
import type { BenchTroupe } from './load.js';
import { randomDag } from './workloads.js';

type Troupe = BenchTroupe;
type Testing = typeof import('../../src/testing/index.js');

export type Variant = 'estimates' | 'unlabelled' | 'roles';
export const variants: Record<Variant, string> = {
  estimates: 'durations given (estimatedMs)',
  unlabelled: 'nothing to tell chunks apart',
  roles: 'role follows duration, no estimates (learned)',
};

const band = (ms: number): ChunkRole => (ms < 20 ? 'Testing' : ms < 35 ? 'CodeAnalysis' : 'Implementation');

/** The workload's plan for `variant`, and its chunks' durations. */
export function workload(variant: Variant, seed = 200): { plan: Plan; durations: number[] } {
  const { plan, durations } = randomDag(seed);
  if (variant === 'unlabelled') return { plan, durations };
  if (variant === 'roles') return { plan: { ...plan, chunks: plan.chunks.map((c, i) => ({ ...c, role: band(durations[i]!) })) }, durations };
  return { plan: { ...plan, chunks: plan.chunks.map((c, i) => ({ ...c, estimatedMs: durations[i]! })) }, durations };
}

/** max(critical path, work / slots) for the given durations. */
export function lowerBound(troupe: Troupe, plan: Plan, durations: readonly number[], slots = 8): number {
  const critical = troupe.criticalPath(plan, (c) => durations[c.sequenceIndex]!).length;
  return Math.max(critical, durations.reduce((a, b) => a + b, 0) / slots);
}

/** Whether this version of troupe reads `estimatedMs` (older ones need `weight` instead). */
function readsEstimates(troupe: Troupe): boolean {
  return 'estimatedMs' in troupe.planChunkSchema.shape;
}

function optionsFor(troupe: Troupe, variant: Variant, durations: readonly number[]): { weight?: (c: PlanChunk) => number } {
  return variant === 'estimates' && !readsEstimates(troupe) ? { weight: (c) => durations[c.sequenceIndex]! } : {};
}

/** The makespan on a simulated clock: exact, the ordering alone (no overhead, no timer lateness). */
export async function simulatedMakespan(troupe: Troupe, testing: Testing, variant: Variant, seed = 200): Promise<number> {
  const { plan, durations } = workload(variant, seed);
  const clock: SimulatedClockType = new testing.SimulatedClock();
  let end = -1;
  const done = troupe
    .executePlan(plan, {
      clock,
      maxParallel: 8,
      ...optionsFor(troupe, variant, durations),
      runChunk: async ({ chunk, signal }) => {
        await troupe.sleep(clock, durations[chunk.sequenceIndex]!, signal);
        return 'ok';
      },
    })
    .then(() => void (end = clock.now()));
  await clock.runAll(100_000);
  await done;
  return end / lowerBound(troupe, plan, durations);
}

/** The makespan on real timers: ordering, overhead and timer lateness together; also against the durations the timers really took. */
export async function realMakespan(troupe: Troupe, variant: Variant): Promise<{ nominal: number; measured: number }> {
  const { plan, durations } = workload(variant);
  const took = new Array<number>(durations.length).fill(0);
  const start = performance.now();
  await troupe.executePlan(plan, {
    maxParallel: 8,
    ...optionsFor(troupe, variant, durations),
    runChunk: async ({ chunk }) => {
      const s = performance.now();
      // A plain timer, the same for every version and for bench/peers (the scheduler is measured, not the clock).
      await new Promise((resolve) => setTimeout(resolve, durations[chunk.sequenceIndex]!));
      took[chunk.sequenceIndex] = performance.now() - s;
      return 'ok';
    },
  });
  const makespan = performance.now() - start;
  return { nominal: makespan / lowerBound(troupe, plan, durations), measured: makespan / lowerBound(troupe, plan, took) };
}

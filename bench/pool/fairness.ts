/**
 * The fairness workload of `npm run bench -- pool`: plans of 200
 * independent chunks (durations drawn from 5–50 ms, seeded) run at once
 * through one pool of 8 slots, on a simulated clock (exact: the ordering
 * alone) or on real timers. Every chunk's run is recorded; the worker time
 * each plan got is then compared over every window of 50 consecutive
 * finished chunks (sliding by one) while both plans had chunks waiting.
 */
import type { Executor, Plan } from '../../src/plan/index.js';
import type { SimulatedClock as SimulatedClockType } from '../../src/testing/index.js';
import type { BenchTroupe } from '../scheduler/load.js';
import { makeChunk, median, rng } from '../scheduler/workloads.js';

type Testing = typeof import('../../src/testing/index.js');

/** One chunk's run: its plan's position, when the worker started and ended it. */
export interface Span {
  plan: number;
  start: number;
  end: number;
}

/** A plan of the workload: its weight, and when it is started (ms after the first). */
export interface PlanSpec {
  weight: number;
  startAt?: number;
}

/** Where the plans' attempts run: one `sharedPool`, or one p-limit `inProcessExecutor` (first come, first served). */
export type PoolKind = 'sharedPool' | 'p-limit';

/** Independent chunks with their durations. */
export function flatPlan(n: number, seed: number): { plan: Plan; durations: number[] } {
  const random = rng(seed);
  const durations = Array.from({ length: n }, () => 5 + Math.floor(random() * 46));
  return { plan: { planSummary: `flat ${seed}`, chunks: durations.map((_, i) => makeChunk(i, [])) }, durations };
}

/** Run the plans through one pool of `slots`; the spans of every chunk. Without `testing`, on real timers. */
export async function runPlans(troupe: BenchTroupe, testing: Testing | undefined, kind: PoolKind, specs: readonly PlanSpec[], seed: number, slots = 8, chunks = 200): Promise<Span[]> {
  const clock: SimulatedClockType | undefined = testing ? new testing.SimulatedClock() : undefined;
  const now = clock ? () => clock.now() : () => performance.now();
  const t0 = now();
  const wait = (ms: number, signal?: AbortSignal) => (clock ? troupe.sleep(clock, ms, signal) : new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const pool = troupe.sharedPool({ maxParallel: slots, ...(clock ? { clock } : {}) });
  const limit = troupe.inProcessExecutor({ maxParallel: slots });
  const spans: Span[] = [];
  const runs = specs.map(async ({ weight, startAt = 0 }, p) => {
    const { plan, durations } = flatPlan(chunks, seed * 7 + p);
    const executor: Executor = kind === 'sharedPool' ? pool.executor(`plan-${p}`, { weight }) : limit;
    if (startAt > 0) await wait(startAt);
    return troupe.executePlan(plan, {
      planId: `plan-${p}`,
      executor,
      ...(clock ? { clock } : {}),
      runChunk: async ({ chunk, signal }) => {
        const start = now() - t0;
        await wait(durations[chunk.sequenceIndex]!, signal);
        spans.push({ plan: p, start, end: now() - t0 });
        return 'ok';
      },
    });
  });
  const all = Promise.all(runs);
  if (clock) await clock.runAll(1_000_000);
  await all;
  return spans;
}

/**
 * The ratio (plan 0 / plan 1) of the worker time each plan got in every
 * window of `size` consecutive finished chunks, sliding by one, over the
 * time from the finish before the window to the window's last finish.
 * Windows start once both plans have started a chunk, and end before
 * either plan's last chunk started (after that it has nothing waiting, and
 * the other takes the freed slots, as it should).
 */
export function windowRatios(spans: readonly Span[], size = 50): number[] {
  const done = [...spans].sort((a, b) => a.end - b.end);
  const starts = [0, 1].map((p) => spans.filter((s) => s.plan === p).map((s) => s.start));
  const begun = Math.max(...starts.map((s) => Math.min(...s)));
  const contended = Math.min(...starts.map((s) => Math.max(...s)));
  const ratios: number[] = [];
  for (let i = 0; i + size <= done.length; i++) {
    const from = i === 0 ? 0 : done[i - 1]!.end;
    const to = done[i + size - 1]!.end;
    if (from < begun) continue;
    if (to > contended) break;
    const time = [0, 0];
    for (const s of spans) time[s.plan]! += Math.max(0, Math.min(s.end, to) - Math.max(s.start, from));
    ratios.push(time[0]! / time[1]!);
  }
  return ratios;
}

/** What one configuration gave over several seeds, each window's ratio divided by the weights' ratio (1 is exact). */
export interface Fairness {
  /** Median over the seeds of each run's median window. */
  median: number;
  /** Median over the seeds of each run's largest deviation from 1 (either way). */
  worst: number;
  /** The largest deviation of any window of any seed. */
  worstOfAll: number;
  /** Share of all windows within 10 % of the weights' ratio. */
  within10: number;
  windows: number;
}

/** Fairness of `specs` (two plans) over `seeds`. */
export async function fairness(troupe: BenchTroupe, testing: Testing | undefined, kind: PoolKind, specs: readonly PlanSpec[], seeds: readonly number[]): Promise<Fairness> {
  const target = specs[0]!.weight / specs[1]!.weight;
  const medians: number[] = [];
  const worsts: number[] = [];
  let windows = 0;
  let within = 0;
  for (const seed of seeds) {
    const ratios = windowRatios(await runPlans(troupe, testing, kind, specs, seed)).map((r) => r / target);
    const deviations = ratios.map((r) => Math.abs(r - 1));
    medians.push(median(ratios));
    worsts.push(Math.max(...deviations));
    windows += ratios.length;
    within += deviations.filter((d) => d <= 0.1).length;
  }
  return { median: median(medians), worst: median(worsts), worstOfAll: Math.max(...worsts), within10: within / windows, windows };
}

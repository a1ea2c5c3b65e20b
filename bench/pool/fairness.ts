/**
 * The fairness workload of `npm run bench -- pool`: two plans of 200
 * independent chunks (durations drawn from 5–50 ms, seeded) run at once
 * through one `sharedPool` of 8 slots, on a simulated clock (exact: the
 * ordering alone) or on real timers. Every chunk's run time is recorded;
 * the worker time each plan got is then compared over every window of 50
 * consecutive finished chunks (sliding by one) while both plans still had
 * chunks waiting.
 */
import type { Plan } from '../../src/scheduler/index.js';
import type { SimulatedClock as SimulatedClockType } from '../../src/testing/index.js';
import type { BenchTroupe } from '../scheduler/load.js';
import { makeChunk, rng } from '../scheduler/workloads.js';

type Testing = typeof import('../../src/testing/index.js');

/** One chunk's run: its plan (0 or 1), when the worker started and ended it. */
export interface Span {
  plan: number;
  start: number;
  end: number;
}

/** Independent chunks with their durations. */
export function flatPlan(n: number, seed: number): { plan: Plan; durations: number[] } {
  const random = rng(seed);
  const durations = Array.from({ length: n }, () => 5 + Math.floor(random() * 46));
  return { plan: { planSummary: `flat ${seed}`, chunks: durations.map((_, i) => makeChunk(i, [])) }, durations };
}

/** Run two plans with the given weights through one pool of `slots`; the spans of every chunk. */
export async function runPair(troupe: BenchTroupe, testing: Testing | undefined, weights: [number, number], seed: number, slots = 8, chunks = 200): Promise<Span[]> {
  const clock: SimulatedClockType | undefined = testing ? new testing.SimulatedClock() : undefined;
  const now = clock ? () => clock.now() : () => performance.now();
  const pool = troupe.sharedPool({ capacity: slots, ...(clock ? { clock } : {}) });
  const spans: Span[] = [];
  const runs = weights.map((weight, p) => {
    const { plan, durations } = flatPlan(chunks, seed * 2 + p);
    return troupe.executePlan(plan, {
      planId: `plan-${p}`,
      executor: pool.executor(`plan-${p}`, { weight }),
      ...(clock ? { clock } : {}),
      runChunk: async ({ chunk, signal }) => {
        const start = now();
        const ms = durations[chunk.sequenceIndex]!;
        if (clock) await troupe.sleep(clock, ms, signal);
        else await new Promise((resolve) => setTimeout(resolve, ms));
        spans.push({ plan: p, start, end: now() });
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
 * time from the finish before the window to the window's last finish;
 * windows end before either plan's last chunk started (after that it has
 * nothing waiting, and the other takes the freed slots, as it should).
 */
export function windowRatios(spans: readonly Span[], size = 50): number[] {
  const done = [...spans].sort((a, b) => a.end - b.end);
  const contended = Math.min(...[0, 1].map((p) => Math.max(...spans.filter((s) => s.plan === p).map((s) => s.start))));
  const ratios: number[] = [];
  for (let i = 0; i + size <= done.length; i++) {
    const from = i === 0 ? 0 : done[i - 1]!.end;
    const to = done[i + size - 1]!.end;
    if (to > contended) break;
    const time = [0, 0];
    for (const s of spans) time[s.plan]! += Math.max(0, Math.min(s.end, to) - Math.max(s.start, from));
    ratios.push(time[0]! / time[1]!);
  }
  return ratios;
}

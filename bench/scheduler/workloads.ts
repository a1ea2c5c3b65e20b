/**
 * The scheduler benchmarks' workloads, shared by the overhead, makespan and
 * memory measurements (and by `bench/peers`): deterministic plans, the bare
 * Kahn loop that is the floor, and the statistics.
 */
import type { ChunkRole, Plan, PlanChunk } from '../../src/plan/index.js';

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeChunk(i: number, deps: number[], role: ChunkRole = 'Generic'): PlanChunk {
  return { sequenceIndex: i, title: `c${i}`, prompt: `Work item number ${i}`, dependsOnIndexes: deps, complexity: 'Low', role };
}

/** Layers of `width` chunks; each chunk depends on two chunks of the layer before (seeded by `n`). */
export function layered(n: number, width = 100): Plan {
  const random = rng(n);
  const chunks: PlanChunk[] = [];
  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / width);
    const deps = new Set<number>();
    if (layer > 0) for (let k = 0; k < 2; k++) deps.add((layer - 1) * width + Math.floor(random() * width));
    chunks.push(makeChunk(i, [...deps]));
  }
  return { planSummary: 'layered', chunks };
}

/** The makespan workload: 200 chunks, each depending on up to three earlier ones, lasting 5–50 ms. */
export function randomDag(seed = 200): { plan: Plan; durations: number[] } {
  const random = rng(seed);
  const durations: number[] = [];
  const chunks: PlanChunk[] = [];
  for (let i = 0; i < 200; i++) {
    durations.push(5 + Math.floor(random() * 46));
    const deps = new Set<number>();
    if (i > 0) for (let k = 0; k < 3; k++) if (random() < 0.5) deps.add(Math.floor(random() * i));
    chunks.push(makeChunk(i, [...deps]));
  }
  return { plan: { planSummary: 'random', chunks }, durations };
}

/**
 * The floor: Kahn's algorithm with a slot count and nothing else — index the
 * plan, start every chunk whose dependencies are done while a slot is free,
 * and await `work(i)` for each.
 */
export async function bareKahn(plan: Plan, maxParallel: number, work: (i: number) => Promise<unknown>): Promise<void> {
  const n = plan.chunks.length;
  const pending = new Int32Array(n);
  const dependents: number[][] = [];
  for (let i = 0; i < n; i++) dependents.push([]);
  for (let i = 0; i < n; i++) {
    for (const d of plan.chunks[i]!.dependsOnIndexes) {
      dependents[d]!.push(i);
      pending[i]!++;
    }
  }
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (pending[i] === 0) ready.push(i);
  let running = 0;
  let left = n;
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (running < maxParallel && ready.length > 0) {
        const i = ready.pop()!;
        running++;
        void work(i).then(() => {
          running--;
          for (const d of dependents[i]!) if (--pending[d]! === 0) ready.push(d);
          if (--left === 0) resolve();
          else pump();
        });
      }
    };
    pump();
  });
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const fmt = (x: number, digits = 2): string => x.toFixed(digits);

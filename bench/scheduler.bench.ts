/**
 * Scheduler benchmark (`npm run bench -- scheduler`):
 * (1) overhead per chunk with zero-cost work on layered DAGs of 1,000 and
 *     10,000 chunks, against a minimal hand-written Kahn + p-limit loop;
 * (2) makespan of a random 200-chunk DAG whose chunks take 5–50 ms at
 *     maxParallel 8, against the lower bound max(critical path, work / 8).
 */
import pLimit from 'p-limit';
import { criticalPath, executePlan, inProcessExecutor, realClock, sleep, type Plan, type PlanChunk } from 'troupe';

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeChunk(i: number, deps: number[]): PlanChunk {
  return { sequenceIndex: i, title: `c${i}`, prompt: `Work item number ${i}`, dependsOnIndexes: deps, complexity: 'Low', role: 'Generic' };
}

/** Layers of `width` chunks; each depends on two chunks of the layer before. */
function layered(n: number, width: number, random: () => number): Plan {
  const chunks: PlanChunk[] = [];
  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / width);
    const deps = new Set<number>();
    if (layer > 0) for (let k = 0; k < 2; k++) deps.add((layer - 1) * width + Math.floor(random() * width));
    chunks.push(makeChunk(i, [...deps]));
  }
  return { planSummary: 'layered', chunks };
}

/** The baseline: Kahn's algorithm feeding p-limit. */
async function handWritten(plan: Plan, maxParallel: number, work: (i: number) => Promise<unknown>): Promise<void> {
  const n = plan.chunks.length;
  const pending = new Int32Array(n);
  const dependents: number[][] = Array.from({ length: n }, () => []);
  plan.chunks.forEach((c, i) => {
    for (const d of c.dependsOnIndexes) {
      dependents[d]!.push(i);
      pending[i]!++;
    }
  });
  const limit = pLimit(maxParallel);
  let left = n;
  await new Promise<void>((resolve) => {
    const start = (i: number): void => {
      void limit(() => work(i)).then(() => {
        for (const d of dependents[i]!) if (--pending[d]! === 0) start(d);
        if (--left === 0) resolve();
      });
    };
    for (let i = 0; i < n; i++) if (pending[i] === 0) start(i);
  });
}

async function best(times: number, fn: () => Promise<void>): Promise<number> {
  let min = Infinity;
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

export default async function schedulerBench(): Promise<void> {
  const zero = async () => 'ok';
  console.log('| DAG | chunks | hand-written Kahn + p-limit (µs/chunk) | executePlan (µs/chunk) | ratio | executePlan on a shared p-limit pool (µs/chunk) | ratio |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const n of [1_000, 10_000]) {
    const plan = layered(n, 100, rng(n));
    const runs = n >= 10_000 ? 15 : 40;
    const baseline = () => handWritten(plan, 8, zero);
    const scheduler = async () => {
      await executePlan(plan, { maxParallel: 8, runChunk: zero });
    };
    const pool = inProcessExecutor({ maxParallel: 8 });
    const pooled = async () => {
      await executePlan(plan, { executor: pool, runChunk: zero });
    };
    // Warm up every path, then alternate them and keep each one's best run.
    for (let i = 0; i < 5; i++) {
      await baseline();
      await scheduler();
      await pooled();
    }
    let base = Infinity;
    let ours = Infinity;
    let shared = Infinity;
    for (let i = 0; i < runs; i++) {
      base = Math.min(base, await best(1, baseline));
      ours = Math.min(ours, await best(1, scheduler));
      shared = Math.min(shared, await best(1, pooled));
    }
    console.log(`| layered (width 100) | ${n} | ${((base * 1000) / n).toFixed(2)} | ${((ours * 1000) / n).toFixed(2)} | ${(ours / base).toFixed(2)}× | ${((shared * 1000) / n).toFixed(2)} | ${(shared / base).toFixed(2)}× |`);
  }

  // Makespan of a random 200-chunk DAG, real timers.
  const random = rng(200);
  const durations: number[] = [];
  const chunks: PlanChunk[] = [];
  for (let i = 0; i < 200; i++) {
    durations.push(5 + Math.floor(random() * 46));
    const deps = new Set<number>();
    if (i > 0) for (let k = 0; k < 3; k++) if (random() < 0.5) deps.add(Math.floor(random() * i));
    chunks.push(makeChunk(i, [...deps]));
  }
  const plan: Plan = { planSummary: 'random', chunks };
  const weight = (c: PlanChunk) => durations[c.sequenceIndex]!;
  const measured = new Array<number>(200).fill(0);
  const t0 = performance.now();
  await executePlan(plan, {
    maxParallel: 8,
    weight,
    runChunk: async ({ chunk, signal }) => {
      const s = performance.now();
      await sleep(realClock, durations[chunk.sequenceIndex]!, signal);
      measured[chunk.sequenceIndex] = performance.now() - s;
      return 'ok';
    },
  });
  const makespan = performance.now() - t0;
  const bound = (w: (c: PlanChunk) => number, all: number[]) => Math.max(criticalPath(plan, w).length, all.reduce((a, b) => a + b, 0) / 8);
  const nominal = bound(weight, durations);
  const actual = bound((c) => measured[c.sequenceIndex]!, measured);
  console.log('\n| random DAG | chunks | maxParallel | makespan (ms) | lower bound, nominal durations (ms) | ratio | lower bound, measured durations (ms) | ratio |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  console.log(
    `| 5–50 ms chunks | 200 | 8 | ${makespan.toFixed(0)} | ${nominal.toFixed(0)} | ${(makespan / nominal).toFixed(3)}× | ${actual.toFixed(0)} | ${(makespan / actual).toFixed(3)}× |`,
  );
}

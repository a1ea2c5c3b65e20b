/**
 * One engine in one process: `node --import tsx worker.ts <engine> <overhead|makespan> <chunks> <runs>`.
 * overhead: a layered plan of zero-cost chunks; prints the µs per chunk of each timed run (at least
 * `runs`, and at least one second of them, after half a second of warm-up).
 * makespan: the 200-chunk workload (5–50 ms chunks on real timers); prints each run's makespan / lower bound.
 */
import { criticalPath } from '../../src/plan/index.js';
import { layered, randomDag } from '../scheduler/workloads.js';
import type { Engine } from './engines/types.js';

const [engine, workload, chunksArg, runsArg] = process.argv.slice(2) as [string, string, string, string];
const { run } = (await import(`./engines/${engine}.ts`)) as { run: Engine };
const runs = Number(runsArg);
const results: number[] = [];

if (workload === 'overhead') {
  const n = Number(chunksArg);
  const plan = layered(n);
  const zero = async (): Promise<void> => {};
  // Warm up for at least two runs and half a second, then time at least `runs` runs and one second.
  for (let i = 0, t = performance.now(); i < 2 || performance.now() - t < 500; i++) await run(plan, 8, zero);
  for (let t = performance.now(); results.length < runs || performance.now() - t < 1000; ) {
    const start = performance.now();
    await run(plan, 8, zero);
    results.push(((performance.now() - start) * 1000) / n);
  }
} else {
  const { plan, durations } = randomDag(200);
  const bound = Math.max(criticalPath(plan, (c) => durations[c.sequenceIndex]!).length, durations.reduce((a, b) => a + b, 0) / 8);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let i = 0; i < runs + 1; i++) {
    const start = performance.now();
    await run(plan, 8, (p) => sleep(durations[p]!));
    if (i > 0) results.push((performance.now() - start) / bound);
  }
}
process.stdout.write(`${JSON.stringify(results)}\n`);

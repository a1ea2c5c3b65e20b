/**
 * One process of the pool's overhead benchmark: runs one configuration on
 * zero-cost chunks `runs` times after a warm-up and prints the µs per chunk
 * of each run as JSON, in wall time and in CPU time. Started by
 * `pool.bench.ts`, one process per configuration.
 *
 *   node --import tsx bench/pool/overhead-worker.ts <direct|p-limit|sharedPool|sharedPool-2> <chunks> <runs>
 */
import { loadTroupe } from '../scheduler/load.js';
import { printTimedRuns } from '../scheduler/timed-runs.js';
import { layered } from '../scheduler/workloads.js';

const [config, chunksArg, runsArg] = process.argv.slice(2) as [string, string, string];
const n = Number(chunksArg);
const runs = Number(runsArg);
const troupe = await loadTroupe(new URL('../../src/index.ts', import.meta.url).pathname);
const zero = async (): Promise<string> => 'ok';

/** One run over `n` chunks in all: one plan, or two plans of n/2 at once through one pool. */
async function once(): Promise<unknown> {
  if (config === 'direct') return troupe.executePlan(layered(n), { maxParallel: 8, runChunk: zero });
  if (config === 'p-limit') return troupe.executePlan(layered(n), { executor: troupe.inProcessExecutor({ maxParallel: 8 }), runChunk: zero });
  const pool = troupe.sharedPool({ maxParallel: 8 });
  if (config === 'sharedPool') return troupe.executePlan(layered(n), { executor: pool.executor('a'), runChunk: zero });
  const half = layered(n / 2);
  return Promise.all([
    troupe.executePlan(half, { executor: pool.executor('a'), runChunk: zero }),
    troupe.executePlan(half, { executor: pool.executor('b', { weight: 2 }), runChunk: zero }),
  ]);
}

await printTimedRuns(once, n, runs, Math.max(3, Math.ceil(30_000 / n)));

/**
 * One process of the overhead benchmark: runs one engine on one layered
 * plan `runs` times after a warm-up and prints the µs per chunk of each run
 * as JSON, in wall time and in CPU time (user + system, every thread of the
 * process, so garbage collection counts; unlike wall time it does not grow
 * when other processes take the CPU). Started by `scheduler.bench.ts`, one process per configuration,
 * so no configuration pays for another's garbage.
 *
 *   node --import tsx bench/scheduler/overhead-worker.ts <floor|troupe> <src/index.ts> <chunks> <runs> <quiet|events|runlog|store>
 */
import { EventEmitter } from 'eventemitter3';
import { loadRunLogWriter, loadTroupe } from './load.js';
import { printTimedRuns } from './timed-runs.js';
import { bareKahn, layered } from './workloads.js';

const [engine, source, chunksArg, runsArg, mode] = process.argv.slice(2) as [string, string, string, string, string];
const n = Number(chunksArg);
const runs = Number(runsArg);
const plan = layered(n);
const zero = async (): Promise<string> => 'ok';

let once: () => Promise<unknown>;
if (engine === 'floor') {
  once = () => bareKahn(plan, 8, zero);
} else {
  const troupe = await loadTroupe(source);
  const createRunLogWriter = await loadRunLogWriter(source);
  let events = 0;
  let id = 0;
  once = async () => {
    if (mode === 'quiet') return troupe.executePlan(plan, { maxParallel: 8, runChunk: zero });
    if (mode === 'events') return troupe.executePlan(plan, { maxParallel: 8, runChunk: zero, onEvent: () => void events++ });
    if (mode === 'store') return troupe.executePlan(plan, { maxParallel: 8, runChunk: zero, store: troupe.memoryStore() });
    // The run log alone: what `store` attaches to the run's events, without the plan's checkpoints.
    const runId = `run-${id++}`;
    const emitter = new EventEmitter();
    const log = createRunLogWriter(troupe.memoryStore(), runId, (error) => {
      throw error;
    });
    emitter.on('*', log.write);
    const outcome = await troupe.executePlan(plan, { maxParallel: 8, runChunk: zero, runId, emitter: emitter as never });
    await log.flush();
    return outcome;
  };
}

// Warm up (fewer runs for the slow configurations), then time each run.
const warmUp = mode === 'store' || mode === 'runlog' ? 2 : Math.max(3, Math.ceil(30_000 / n));
await printTimedRuns(once, n, runs, warmUp);

/**
 * One process of the pattern benchmark: builds one flow against one
 * version of troupe, runs it `batch` times per timed sample after a
 * warm-up of five such batches, and prints two lines of JSON: the model calls one run makes,
 * then the µs per run of each sample in wall time and in CPU time. Every
 * run must make the same number of model calls, or the worker fails.
 * Started by `patterns.bench.ts`, one process per (version, flow), so no
 * configuration pays for another's garbage.
 *
 *   node --import tsx bench/patterns/overhead-worker.ts <src/index.ts> <flow> <batch> <samples>
 */
import { printTimedRuns } from '../scheduler/timed-runs.js';
import { buildFlow, flows, loadPatterns, type Flow } from './flows.js';

const [source, flowArg, batchArg, samplesArg] = process.argv.slice(2) as [string, string, string, string];
if (!(flowArg in flows)) throw new Error(`Unknown flow "${flowArg}" (flows: ${Object.keys(flows).join(', ')})`);
const flow = flowArg as Flow;
const batch = Number(batchArg);
const samples = Number(samplesArg);
const troupe = await loadPatterns(source);
const { runnable, adapter } = buildFlow(troupe, flow);
const input = 'Review the change to the invoice form.';

/** One run; the adapter's record of calls is emptied after each, so it does not grow over the runs. */
async function one(): Promise<number> {
  await troupe.run(runnable, input, { adapter });
  const calls = adapter.calls.length;
  adapter.calls.length = 0;
  adapter.sessions.length = 0;
  return calls;
}

const calls = await one();
if (calls !== flows[flow].calls) throw new Error(`${flow} made ${calls} model calls in a run of ${source}, not ${flows[flow].calls}`);
process.stdout.write(`${JSON.stringify({ calls })}\n`);
await printTimedRuns(
  async () => {
    for (let i = 0; i < batch; i++) {
      const made = await one();
      if (made !== calls) throw new Error(`${flow} made ${made} model calls in a run of ${source}, ${calls} in its first`);
    }
  },
  batch,
  samples,
  5,
);

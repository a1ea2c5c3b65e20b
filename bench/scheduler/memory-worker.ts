/**
 * One process of the memory benchmark, started with
 * `--max-old-space-size=200 --expose-gc`: runs a layered plan of `chunks`
 * chunks whose runner reads its prompt (the dependencies' outputs are in it)
 * and answers 200 characters, with events on. Every 10,000 finished chunks it
 * collects garbage and samples the live heap; at the end it reports how many
 * attempts (each holds its prompt) are still reachable after the outcome was
 * dropped. Prints one JSON line.
 *
 *   node --max-old-space-size=200 --expose-gc --import tsx bench/scheduler/memory-worker.ts <src/index.ts> <chunks>
 */
import { loadTroupe, type BenchTroupe } from './load.js';
import { layered } from './workloads.js';

type Troupe = BenchTroupe;
const [source, chunksArg] = process.argv.slice(2) as [string, string];
const troupe = await loadTroupe(source);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const n = Number(chunksArg);
const plan = layered(n);
const mb = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;

let collected = 0;
const attempts = new FinalizationRegistry<undefined>(() => void collected++);
let finished = 0;
let promptChars = 0;
let peakLive = 0;
let events = 0;
const start = performance.now();
let outcome: Awaited<ReturnType<Troupe['executePlan']>> | undefined = await troupe.executePlan(plan, {
  maxParallel: 8,
  onEvent: () => void events++,
  runChunk: async (input) => {
    attempts.register(input, undefined);
    promptChars += input.prompt.length;
    const i = input.chunk.sequenceIndex;
    if (++finished % 10_000 === 0) {
      gc();
      peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
    }
    return `result ${i} `.padEnd(200, '.');
  },
});
const ms = performance.now() - start;
gc();
const withOutcome = process.memoryUsage().heapUsed;
// `completed` since the chunk statuses were renamed (a baseline tree may count `succeeded`).
const stats = outcome.stats as { completed?: number; succeeded?: number };
const succeeded = stats.completed ?? stats.succeeded;
outcome = undefined;
for (let i = 0; i < 3; i++) {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
process.stdout.write(
  `${JSON.stringify({ chunks: n, succeeded, events, ms: Math.round(ms), peakLiveMB: mb(peakLive), withOutcomeMB: mb(withOutcome), promptMB: mb(promptChars), attemptsAlive: n - collected })}\n`,
);

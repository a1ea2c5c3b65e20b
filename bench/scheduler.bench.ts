/**
 * Scheduler benchmark (`npm run bench -- scheduler`):
 *
 * 1. Overhead per chunk through the public `executePlan`, with a `runChunk`
 *    that only awaits a resolved promise, on layered DAGs of 1,000, 10,000
 *    and 100,000 chunks at maxParallel 8: with events on (an `onEvent`
 *    listener), with nobody listening, with the run log on, and with a store
 *    (run log and checkpoints). The floor is a bare Kahn loop measured in the
 *    same run. Each configuration runs in its own process, the processes
 *    interleaved over three rounds (`BENCH_ROUNDS=<n>` for more); the tables give the median over every
 *    timed run, the min and the max, in wall time, and the median in CPU
 *    time (which other processes on a loaded machine do not inflate).
 * 2. Makespan of the 200-chunk workload against its lower bound, on a
 *    simulated clock (exact) and on real timers (median of 5 runs).
 * 3. Memory: a 100,000-chunk plan in a process whose old space is capped at
 *    200 MB.
 *
 * `BENCH_BASELINE=<git ref>` (for example `main`) checks that ref's sources
 * out into a temporary folder and measures them the same way in the same
 * run, for before/after medians.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchRounds, withVersions, type Version } from './baseline.js';
import { loadTroupe } from './scheduler/load.js';
import { realMakespan, simulatedMakespan, variants, type Variant } from './scheduler/makespan.js';
import { fmt, median } from './scheduler/workloads.js';

type Testing = typeof import('../src/testing/index.js');

const root = resolve(import.meta.dirname, '..');
const here = join(root, 'bench', 'scheduler');

export default async function schedulerBench(): Promise<void> {
  await withVersions(async (versions) => {
    overhead(versions);
    await makespan(versions);
    memory(versions);
  });
}

const ROUNDS = benchRounds();

interface Config {
  label: string;
  engine: 'floor' | 'troupe';
  src: string;
  mode: 'quiet' | 'events' | 'runlog' | 'store';
}

interface Times {
  wall: number[];
  cpu: number[];
}

/** One worker process: the µs per chunk of each timed run, in wall and in CPU time. */
function measure(config: Config, chunks: number, runs: number): Times {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(here, 'overhead-worker.ts'), config.engine, config.src, String(chunks), String(runs), config.mode], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Times;
}

function overhead(versions: Version[]): void {
  console.log('### Overhead per chunk (zero-cost chunks, layered DAG of width 100, maxParallel 8)\n');
  const [current] = versions;
  const configs: Config[] = [{ label: 'bare Kahn loop (floor)', engine: 'floor', src: '', mode: 'quiet' }];
  for (const v of versions) {
    configs.push({ label: `executePlan, events on (${v.name})`, engine: 'troupe', src: v.src, mode: 'events' });
    configs.push({ label: `executePlan, no listener (${v.name})`, engine: 'troupe', src: v.src, mode: 'quiet' });
  }
  configs.push({ label: `executePlan, run log on (${current!.name})`, engine: 'troupe', src: current!.src, mode: 'runlog' });
  configs.push({ label: `executePlan, store: run log + checkpoints (${current!.name})`, engine: 'troupe', src: current!.src, mode: 'store' });
  const sizes: Array<[number, number]> = [
    [1_000, 40],
    [10_000, 20],
    [100_000, 3],
  ];
  for (const [chunks, runs] of sizes) {
    // A store saves the plan's whole state after chunks finish (quadratic): measured at 1,000 chunks only.
    const wanted = configs.filter((c) => (c.mode !== 'store' || chunks <= 1_000) && (c.mode !== 'runlog' || chunks <= 10_000));
    const times = new Map<Config, Times>(wanted.map((c) => [c, { wall: [], cpu: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of wanted) {
        const t = measure(c, chunks, c.mode === 'store' || c.mode === 'runlog' ? 3 : runs);
        times.get(c)!.wall.push(...t.wall);
        times.get(c)!.cpu.push(...t.cpu);
      }
    }
    const floor = times.get(wanted[0]!)!;
    console.log(`${chunks.toLocaleString('en')} chunks:\n`);
    console.log('| engine | median µs/chunk | min | max | × floor (medians) | median CPU µs/chunk | × floor (CPU) |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const c of wanted) {
      const { wall, cpu } = times.get(c)!;
      console.log(
        `| ${c.label} | ${fmt(median(wall))} | ${fmt(Math.min(...wall))} | ${fmt(Math.max(...wall))} | ${fmt(median(wall) / median(floor.wall), 1)}× | ${fmt(median(cpu))} | ${fmt(median(cpu) / median(floor.cpu), 1)}× |`,
      );
    }
    if (versions.length > 1) {
      const of = (mode: Config['mode'], v: Version) => times.get(wanted.find((c) => c.mode === mode && c.src === v.src)!)!;
      for (const mode of ['events', 'quiet'] as const) {
        const [now, before] = [of(mode, versions[0]!), of(mode, versions[1]!)];
        console.log(
          `\n${mode === 'events' ? 'Events on' : 'No listener'}: ${versions[0]!.name} / ${versions[1]!.name} = ${fmt(median(now.wall) / median(before.wall))} (wall medians), ${fmt(median(now.cpu) / median(before.cpu))} (CPU medians)`,
        );
      }
    }
    console.log('');
  }
}

async function makespan(versions: Version[]): Promise<void> {
  console.log('### Makespan: 200 chunks of 5–50 ms, maxParallel 8, / max(critical path, work / 8)\n');
  const loaded = await Promise.all(
    versions.map(async (v) => ({
      v,
      troupe: await loadTroupe(v.src),
      testing: (await import(pathToFileURL(v.src.replace(/index\.ts$/, 'testing/index.ts')).href)) as Testing,
    })),
  );
  console.log('| chunks | version | simulated clock | real timers, median of 5 (min–max) | real timers, against the measured durations |');
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const variant of Object.keys(variants) as Variant[]) {
    const real = new Map<string, Array<{ nominal: number; measured: number }>>();
    for (let i = 0; i < 5; i++) for (const { v, troupe } of loaded) (real.get(v.name) ?? real.set(v.name, []).get(v.name)!).push(await realMakespan(troupe, variant));
    for (const { v, troupe, testing } of loaded) {
      const simulated = await simulatedMakespan(troupe, testing, variant);
      const r = real.get(v.name)!;
      const nominal = r.map((x) => x.nominal);
      console.log(
        `| ${variants[variant]} | ${v.name} | ${fmt(simulated, 3)}× | ${fmt(median(nominal), 3)}× (${fmt(Math.min(...nominal), 3)}–${fmt(Math.max(...nominal), 3)}) | ${fmt(median(r.map((x) => x.measured)), 3)}× |`,
      );
    }
  }
  console.log('');
}

function memory(versions: Version[]): void {
  console.log('### Memory: 100,000 chunks, 200-character answers, events on, `--max-old-space-size=200`\n');
  console.log('| version | finished | live heap, peak (MB) | heap with the outcome (MB) | prompts built (MB) | attempts alive after the run | time (ms) |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const v of versions) {
    try {
      const out = execFileSync(process.execPath, ['--max-old-space-size=200', '--expose-gc', '--import', 'tsx', join(here, 'memory-worker.ts'), v.src, '100000'], { cwd: root, encoding: 'utf8' });
      const m = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>;
      console.log(`| ${v.name} | ${m.succeeded === m.chunks ? 'yes' : 'no'} | ${m.peakLiveMB} | ${m.withOutcomeMB} | ${m.promptMB} | ${m.attemptsAlive} | ${m.ms} |`);
    } catch {
      console.log(`| ${v.name} | no (out of memory or crashed) | | | | | |`);
    }
  }
  console.log('');
}

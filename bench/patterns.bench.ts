/**
 * Pattern benchmark (`npm run bench -- patterns`): the library's own
 * overhead per run of each pattern, through the public `run`, on the
 * scripted adapter answering at once (so the time is troupe's: the run,
 * its context, ops and events, the pattern, the agents' sessions and the
 * scripted adapter's bookkeeping). The flows: a single agent, a handoff
 * chain of 3, a router choosing 1 of 3 specialists, 4 advisors in parallel,
 * a broadcast to 3, a sequence of 3, a team of 3 for 2 rounds, orchestrate
 * (a lead and 2 workers, 3 iterations) and reflect (a writer, 3 iterations);
 * see bench/patterns/flows.ts.
 *
 * Each (version, flow) runs in its own process (a warm-up, then 20 timed
 * samples of a batch of runs), the processes interleaved over three rounds
 * (`BENCH_ROUNDS=<n>` for more); the table gives the median µs per run over every sample, the min and the
 * max, in wall time, and the median in CPU time (which other processes on a
 * loaded machine inflate less).
 *
 * `BENCH_BASELINE=<git ref>` (for example `main`) checks that ref's sources
 * out into a temporary folder and measures them the same way in the same
 * run, for the ratio this tree / baseline per flow. Every flow makes the
 * same model calls in both versions, or the bench fails.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { benchRounds, withVersions, type Version } from './baseline.js';
import { flows, type Flow } from './patterns/flows.js';
import { fmt, median } from './scheduler/workloads.js';

const root = resolve(import.meta.dirname, '..');
const here = join(root, 'bench', 'patterns');
const ROUNDS = benchRounds();
const SAMPLES = 20;

interface Times {
  calls: number;
  wall: number[];
  cpu: number[];
}

export default async function patternsBench(): Promise<void> {
  await withVersions((versions) => overhead(versions));
  console.log(`Load average ${loadavg()[0]!.toFixed(1)} at the end.\n`);
}

/** One worker process: the model calls of a run, and the µs per run of each timed sample, in wall and in CPU time. */
function measure(v: Version, flow: Flow): Times {
  const { runs } = flows[flow];
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(here, 'overhead-worker.ts'), v.src, flow, String(runs / SAMPLES), String(SAMPLES)], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const [calls, times] = out
    .trim()
    .split('\n')
    .slice(-2)
    .map((line) => JSON.parse(line) as Partial<Times>);
  return { calls: calls!.calls!, wall: times!.wall!, cpu: times!.cpu! };
}

function overhead(versions: Version[]): void {
  console.log(`### Overhead per run (scripted adapter, no latency; ${SAMPLES} samples a process, ${ROUNDS} rounds)\n`);
  const names = Object.keys(flows) as Flow[];
  const times = new Map<string, Times>();
  const key = (flow: Flow, v: Version) => `${flow} ${v.name}`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const flow of names) {
      for (const v of versions) {
        const t = measure(v, flow);
        const had = times.get(key(flow, v));
        if (!had) times.set(key(flow, v), t);
        else {
          had.wall.push(...t.wall);
          had.cpu.push(...t.cpu);
        }
      }
      // The flows must do the same work in every version: the same model calls per run.
      const counts = versions.map((v) => times.get(key(flow, v))!.calls);
      if (counts.some((c) => c !== counts[0])) {
        throw new Error(`The flow "${flow}" makes ${versions.map((v, i) => `${counts[i]} model calls per run in ${v.name}`).join(', ')}: the versions are not compared on the same work`);
      }
    }
  }
  console.log('| flow | version | model calls per run | median µs/run | min | max | median CPU µs/run | CPU µs per model call |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const flow of names) {
    for (const v of versions) {
      const { calls, wall, cpu } = times.get(key(flow, v))!;
      console.log(
        `| ${flows[flow].label} | ${v.name} | ${calls} | ${fmt(median(wall), 0)} | ${fmt(Math.min(...wall), 0)} | ${fmt(Math.max(...wall), 0)} | ${fmt(median(cpu), 0)} | ${fmt(median(cpu) / calls, 0)} |`,
      );
    }
  }
  console.log('');
  if (versions.length > 1) {
    const [now, before] = versions as [Version, Version];
    console.log(`${now.name} / ${before.name}, medians:\n`);
    console.log('| flow | model calls per run | wall | CPU |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const flow of names) {
      const [a, b] = [times.get(key(flow, now))!, times.get(key(flow, before))!];
      console.log(`| ${flows[flow].label} | ${a.calls} | ${fmt(median(a.wall) / median(b.wall))} | ${fmt(median(a.cpu) / median(b.cpu))} |`);
    }
    console.log('');
  }
}

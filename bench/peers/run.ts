/**
 * `npm run bench` in this folder: the scheduler's DAG workloads on each
 * engine, one process per engine and workload, printing the median, min
 * and max of the timed runs and each engine's ratio to the floor (a bare
 * Kahn loop) measured in the same run. `PEERS_CHUNKS=1000,10000` sets the
 * overhead plan sizes (default 1000).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fmt, median } from '../scheduler/workloads.js';

const here = import.meta.dirname;
const root = join(here, '..', '..');
const engines = ['kahn', 'troupe', 'langgraph', 'mastra'] as const;
const names: Record<(typeof engines)[number], string> = { kahn: 'bare Kahn loop (floor)', troupe: 'troupe executePlan', langgraph: 'LangGraph.js', mastra: 'Mastra' };

function version(engine: (typeof engines)[number]): string {
  const read = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  if (engine === 'kahn') return '-';
  if (engine === 'troupe') {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    return `${read(join(root, 'package.json'))} (${commit})`;
  }
  const pkg = engine === 'langgraph' ? '@langchain/langgraph' : '@mastra/core';
  return read(join(here, 'node_modules', pkg, 'package.json'));
}

function measure(engine: string, workload: string, chunks: number, runs: number): number[] {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(here, 'worker.ts'), engine, workload, String(chunks), String(runs)], { cwd: here, encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1)!) as number[];
}

console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} at the start\n`);
console.log('| engine | version |');
console.log('| --- | --- |');
for (const e of engines) console.log(`| ${names[e]} | ${version(e)} |`);

for (const chunks of (process.env.PEERS_CHUNKS ?? '1000').split(',').map(Number)) {
  console.log(`\nOverhead: ${chunks.toLocaleString('en')} zero-cost chunks (layered DAG of width 100), 8 slots, µs per chunk:\n`);
  console.log('| engine | median | min | max | × floor (medians) |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const floor = new Map<string, number>();
  for (const e of engines) {
    const t = measure(e, 'overhead', chunks, chunks > 1000 ? 3 : 9);
    floor.set(e, median(t));
    console.log(`| ${names[e]} | ${fmt(median(t))} | ${fmt(Math.min(...t))} | ${fmt(Math.max(...t))} | ${fmt(median(t) / floor.get('kahn')!, 1)}× |`);
  }
}

console.log('\nMakespan: 200 chunks of 5–50 ms on real timers, 8 slots, no duration estimates; makespan / max(critical path, work / 8):\n');
console.log('| engine | median | min | max | × floor (medians) |');
console.log('| --- | ---: | ---: | ---: | ---: |');
let floorMakespan = 0;
for (const e of engines) {
  const r = measure(e, 'makespan', 200, 5);
  if (e === 'kahn') floorMakespan = median(r);
  console.log(`| ${names[e]} | ${fmt(median(r), 3)}× | ${fmt(Math.min(...r), 3)}× | ${fmt(Math.max(...r), 3)}× | ${fmt(median(r) / floorMakespan, 3)}× |`);
}

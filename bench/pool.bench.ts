/**
 * Shared pool benchmark (`npm run bench -- pool`):
 *
 * 1. Fairness: two plans of 200 independent chunks (5–50 ms each, seeded)
 *    through one pool of 8 slots, weights 1:1 and 2:1, and 1:1 with the
 *    second plan started 300 ms after the first. For every window of 50
 *    consecutive finished chunks while both plans had chunks waiting, the
 *    ratio of the worker time they got, divided by the ratio of their
 *    weights (1 is exact). On a simulated clock (exact, 15 seeds) and on
 *    real timers (3 seeds). The baseline, measured in the same run, is the
 *    same plans sharing one p-limit `inProcessExecutor` (first come, first
 *    served), which knows no weights.
 * 2. Overhead per chunk on zero-cost chunks (layered DAG of width 100, 8
 *    slots): `sharedPool` against the default `directExecutor` and the
 *    p-limit executor, one process per configuration, three interleaved
 *    rounds, medians.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fairness, type PlanSpec, type PoolKind } from './pool/fairness.js';
import { loadTroupe } from './scheduler/load.js';
import { fmt, median } from './scheduler/workloads.js';

const root = resolve(import.meta.dirname, '..');

export default async function poolBench(): Promise<void> {
  console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} at the start\n`);
  await fair();
  overhead();
}

const workloads: Array<{ label: string; specs: PlanSpec[] }> = [
  { label: 'weights 1:1', specs: [{ weight: 1 }, { weight: 1 }] },
  { label: 'weights 2:1', specs: [{ weight: 2 }, { weight: 1 }] },
  { label: 'weights 1:1, the second plan added after 300 ms', specs: [{ weight: 1 }, { weight: 1, startAt: 300 }] },
];

async function fair(): Promise<void> {
  const troupe = await loadTroupe(join(root, 'src', 'index.ts'));
  const testing = await import('../src/testing/index.js');
  const seeds = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  console.log('### Fairness: two plans of 200 chunks (5–50 ms), 8 slots, windows of 50 finished chunks\n');
  console.log('Each window: (worker time of plan 1 / worker time of plan 2) / (weight 1 / weight 2); 1 is exact.\n');
  console.log('| workload | clock | executor | median window | worst window, median over seeds | worst window of all | windows within ±10 % |');
  console.log('| --- | --- | --- | ---: | ---: | ---: | ---: |');
  for (const { label, specs } of workloads) {
    for (const [clock, n] of [['simulated', 15], ['real timers', 3]] as const) {
      for (const kind of ['sharedPool', 'p-limit'] as PoolKind[]) {
        const f = await fairness(troupe, clock === 'simulated' ? testing : undefined, kind, specs, seeds(n));
        console.log(
          `| ${label} | ${clock} (${n} seeds) | ${kind} | ${fmt(f.median, 3)} | ±${fmt(f.worst * 100, 1)} % | ±${fmt(f.worstOfAll * 100, 1)} % | ${fmt(f.within10 * 100, 1)} % of ${f.windows} |`,
        );
      }
    }
  }
  console.log('');
}

interface Times {
  wall: number[];
  cpu: number[];
}

function measure(config: string, chunks: number, runs: number): Times {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'pool', 'overhead-worker.ts'), config, String(chunks), String(runs)], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Times;
}

function overhead(): void {
  const chunks = 10_000;
  console.log(`### Overhead per chunk: ${chunks.toLocaleString('en')} zero-cost chunks (layered DAG of width 100), 8 slots\n`);
  const configs: Array<[string, string]> = [
    ['direct', 'one plan, directExecutor (the default; baseline)'],
    ['p-limit', 'one plan, inProcessExecutor (p-limit)'],
    ['sharedPool', 'one plan, sharedPool'],
    ['sharedPool-2', 'two plans of 5,000 at once, sharedPool (weights 1 and 2)'],
  ];
  const times = new Map<string, Times>(configs.map(([c]) => [c, { wall: [], cpu: [] }]));
  for (let round = 0; round < 3; round++) {
    for (const [c] of configs) {
      const t = measure(c, chunks, 10);
      times.get(c)!.wall.push(...t.wall);
      times.get(c)!.cpu.push(...t.cpu);
    }
  }
  const base = times.get('direct')!;
  console.log('| configuration | median µs/chunk | min | max | × direct (medians) | median CPU µs/chunk | × direct (CPU) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [c, label] of configs) {
    const { wall, cpu } = times.get(c)!;
    console.log(
      `| ${label} | ${fmt(median(wall))} | ${fmt(Math.min(...wall))} | ${fmt(Math.max(...wall))} | ${fmt(median(wall) / median(base.wall))}× | ${fmt(median(cpu))} | ${fmt(median(cpu) / median(base.cpu))}× |`,
    );
  }
  console.log('');
}

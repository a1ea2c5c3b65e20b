/**
 * Distributed execution benchmark (`npm run bench:distributed`):
 *
 * - overhead per chunk through Redis (a bullmqExecutor and one worker
 *   process) against the same plan in process, with chunks that cost
 *   nothing: a wide plan (64 chunks in flight) and a chain (one at a time),
 *   beside plain BullMQ jobs that do nothing (the queue without troupe);
 *   with the Redis commands per chunk (`INFO commandstats`: every command
 *   Redis ran, those of BullMQ's Lua scripts included);
 * - throughput of chunks that sleep 20 ms, with 1, 2 and 4 worker
 *   processes (one job at a time each), against the ideal rate and two
 *   floors measured in the same rounds: the same chunks in process (no
 *   queue), and plain BullMQ workers whose jobs wait 20 ms (the queue
 *   without troupe);
 * - where the time of a chunk goes, for both: the CPU time per chunk of the
 *   coordinator (this process), the worker processes and Redis, and the
 *   time they spent ready to run but waiting for a CPU (Linux only:
 *   `/proc/<pid>/task/<tid>/schedstat`; Redis only when the bench started it);
 * - how long a cancellation takes to reach the attempt running on a worker.
 *
 * Each figure is the median of several runs (min and max beside it). Uses
 * REDIS_URL, or starts a redis-server on a free port of 127.0.0.1 (the
 * commands per chunk only then: on a shared Redis, other clients' commands
 * count too).
 *
 * `BENCH_BASELINE=<git ref>` (for example `main`) checks that ref's sources
 * out into a temporary folder and measures them the same way in the same
 * run, the two versions taking turns, for before/after medians on a
 * machine whose load changes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import type { Plan, PlanChunk } from '../src/plan/index.js';
import { checkout } from './baseline.js';
import { benchRedis } from './redis.js';

const ROUNDS = 5;
const root = resolve(import.meta.dirname, '..');
const tsxLoader = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** One version of troupe's sources, loaded. */
interface Version {
  name: string;
  /** Its `src` folder. */
  src: string;
  plan: typeof import('../src/plan/index.js');
  bullmq: typeof import('../src/integrations/bullmq/index.js');
  testing: typeof import('../src/testing/index.js');
  /** What its options call jobs at once: `maxParallel` now, `concurrency` (worker) and `capacity` (executor) in a baseline from before the rename. */
  parallel: { worker: string; executor: string };
}

async function load(name: string, src: string): Promise<Version> {
  const at = (file: string) => import(pathToFileURL(join(src, file)).href);
  // The plan layer's entry: src/plan/index.ts, or src/scheduler/index.ts in a baseline from before the move.
  const planEntry = existsSync(join(src, 'plan', 'model')) ? 'plan/index.ts' : 'scheduler/index.ts';
  const [plan, bullmq, testing] = await Promise.all([at(planEntry), at('integrations/bullmq/index.ts'), at('testing/index.ts')]);
  const renamed = readFileSync(join(src, 'integrations', 'bullmq', 'worker.ts'), 'utf8').includes('maxParallel?: number');
  const parallel = renamed ? { worker: 'maxParallel', executor: 'maxParallel' } : { worker: 'concurrency', executor: 'capacity' };
  return { name, src, plan, bullmq, testing, parallel } as Version;
}

interface Workers {
  readonly queueName: string;
  readonly lines: string[];
  /** The worker processes' ids. */
  readonly pids: number[];
  stop(): Promise<void>;
}

function chunk(i: number, deps: number[]): PlanChunk {
  return { sequenceIndex: i, title: `c${i}`, prompt: `Carry out step number ${i}.`, dependsOnIndexes: deps, complexity: 'Low', role: 'Generic' };
}
const wide = (n: number): Plan => ({ planSummary: 'wide', chunks: Array.from({ length: n }, (_, i) => chunk(i, [])) });
const chain = (n: number): Plan => ({ planSummary: 'chain', chunks: Array.from({ length: n }, (_, i) => chunk(i, i === 0 ? [] : [i - 1])) });

/** Start `count` worker processes of `version` on a queue of their own. */
async function startWorkers(version: Version, url: string, prefix: string, count: number, concurrency: number, delayMs: number): Promise<Workers> {
  return startProcesses('worker.ts', count, (queueName, i) => ({ src: version.src, url, queueName, prefix, parallel: { [version.parallel.worker]: concurrency }, delayMs, name: `b${i}` }));
}

/** Start `count` processes of `script` (in bench/distributed) on a queue of their own, each given its config as JSON. */
async function startProcesses(script: string, count: number, configOf: (queueName: string, index: number) => object): Promise<Workers> {
  const queueName = `bench-${randomUUID().slice(0, 8)}`;
  const children: ChildProcess[] = [];
  const lines: string[] = [];
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, ['--import', tsxLoader, join(import.meta.dirname, 'distributed', script), JSON.stringify(configOf(queueName, i))], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      return new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          lines.push(line);
          if (line === 'ready') resolve();
        });
        child.once('exit', (code) => reject(new Error(`bench worker exited (${code})`)));
      });
    }),
  );
  return {
    queueName,
    lines,
    pids: children.map((c) => c.pid!),
    stop: async () => {
      await Promise.all(children.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM'))))));
    },
  };
}

interface Stats {
  median: number;
  min: number;
  max: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! };
}

const fmt = (s: Stats, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Redis's command counts (`INFO commandstats`), to count what a run costs. */
class CommandStats {
  readonly #redis: Redis;
  constructor(url: string) {
    this.#redis = new Redis(url);
  }
  async reset(): Promise<void> {
    await this.#redis.config('RESETSTAT');
  }
  /** Commands Redis ran since the reset, those of Lua scripts included (`INFO commandstats`). */
  async read(): Promise<number> {
    const info = await this.#redis.info('commandstats');
    let all = 0;
    for (const line of info.split('\n')) {
      const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
      if (m && m[1] !== 'info' && !m[1]!.startsWith('config')) all += Number(m[2]);
    }
    return all;
  }
  close(): void {
    this.#redis.disconnect();
  }
}

/** CPU time and time spent ready to run but waiting for a CPU, in ms. */
interface Sched {
  run: number;
  wait: number;
}

/** The summed {@link Sched} of the threads of process `pid` (Linux); undefined where `/proc` does not tell. */
function schedOf(pid: number): Sched | undefined {
  try {
    const total = { run: 0, wait: 0 };
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      total.run += run! / 1e6;
      total.wait += wait! / 1e6;
    }
    return total;
  } catch {
    return undefined;
  }
}

/** Where a run's time went, by part (coordinator, workers, Redis): CPU time and waits for a CPU, summed over the runs measured. */
class Where {
  readonly #parts: Array<{ name: string; pids: number[] }>;
  readonly #sums = new Map<string, Sched>();
  #chunks = 0;
  constructor(parts: Array<{ name: string; pids: number[] }>) {
    this.#parts = parts.filter((p) => p.pids.length > 0);
  }
  /** Measure `fn`, a run of `chunks` chunks. */
  async measure<T>(chunks: number, fn: () => Promise<T>): Promise<T> {
    const read = () => this.#parts.map((p) => p.pids.map(schedOf));
    const before = read();
    const result = await fn();
    const after = read();
    this.#parts.forEach((part, i) =>
      part.pids.forEach((_, j) => {
        const [a, b] = [before[i]![j], after[i]![j]];
        if (!a || !b) return;
        const sum = this.#sums.get(part.name) ?? { run: 0, wait: 0 };
        this.#sums.set(part.name, { run: sum.run + b.run - a.run, wait: sum.wait + b.wait - a.wait });
      }),
    );
    this.#chunks += chunks;
    return result;
  }
  /** `name: CPU/waiting µs per chunk`, for each part; empty where nothing was measured. */
  toString(): string {
    return [...this.#sums]
      .map(([name, s]) => `${name} ${((s.run * 1000) / this.#chunks).toFixed(0)} / ${((s.wait * 1000) / this.#chunks).toFixed(0)}`)
      .join(', ');
  }
}

export default async function bench(): Promise<void> {
  const redis = await benchRedis();
  if (!redis) return;
  const { url } = redis;
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const ref = process.env.BENCH_BASELINE;
  const folder = ref ? checkout(ref) : undefined;
  const versions = [await load('this tree', join(root, 'src'))];
  if (ref && folder) versions.push(await load(ref, join(folder, 'src')));
  const counts = process.env.REDIS_URL ? undefined : new CommandStats(url);
  try {
    console.log(`Redis at ${url}; Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} at the start; ${ROUNDS} runs each; median (min–max).\n`);
    await overhead(versions, url, prefix, counts, redis.pid);
    await throughput(versions, url, prefix, redis.pid);
    await cancellation(versions, url, prefix);
    console.log(`\nLoad average ${loadavg()[0]!.toFixed(1)} at the end.`);
  } finally {
    counts?.close();
    const raw = new Redis(url);
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await raw.del(...keys);
    } while (cursor !== '0');
    raw.disconnect();
    await redis.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  }
}

/** µs per chunk in process and through Redis, chunks that cost nothing; Redis commands per chunk. */
async function overhead(versions: Version[], url: string, prefix: string, counts: CommandStats | undefined, redisPid: number | undefined): Promise<void> {
  const WIDE = 2000;
  const CHAIN = 200;
  const setups = await Promise.all(
    versions.map(async (v) => {
      const adapter = v.testing.scriptedAdapter({ fallback: 'done' });
      const workers = await startWorkers(v, url, prefix, 1, 64, 0);
      const executor = v.bullmq.bullmqExecutor({ connection: url, queueName: workers.queueName, prefix, [v.parallel.executor]: 64 } as Parameters<Version['bullmq']['bullmqExecutor']>[0]);
      // Warm both paths up.
      await v.plan.executePlan(wide(200), { adapter, maxParallel: 64 });
      await v.plan.executePlan(wide(200), { executor });
      return { v, adapter, workers, executor };
    }),
  );
  // The floor: plain BullMQ jobs that do nothing, on one plain worker taking 64 at once (no troupe).
  const plain = await startProcesses('bullmq-worker.ts', 1, (queueName) => ({ url, queueName, prefix, delayMs: 0, concurrency: 64 }));
  const alone = await bullmqAlone(url, prefix, plain.queueName);
  await alone.run(200, 64);
  try {
    const kinds: Array<[string, number, (n: number) => Plan, number]> = [
      [`wide, ${WIDE} chunks, 64 in flight`, WIDE, wide, 64],
      [`chain, ${CHAIN} chunks, one at a time`, CHAIN, chain, 1],
    ];
    const rows: string[] = [];
    const commandRows: string[] = [];
    const whereRows: string[] = [];
    for (const [name, n, shape, maxParallel] of kinds) {
      const local = new Map<Version, number[]>();
      const remote = new Map<Version, number[]>();
      const commands = new Map<Version, number>();
      const where = new Map(setups.map((s) => [s.v, placesOf(s.workers, redisPid)]));
      const plainWhere = placesOf(plain, redisPid);
      const floor: number[] = [];
      let floorCommands: number | undefined;
      for (let round = 0; round < ROUNDS; round++) {
        await counts?.reset();
        floor.push(((await plainWhere.measure(n, () => timed(() => alone.run(n, maxParallel)))) * 1000) / n);
        if (counts && round === 0) floorCommands = await counts.read();
        for (const { v, adapter, executor } of setups) {
          const l = (await timed(() => v.plan.executePlan(shape(n), { adapter, maxParallel }))) * 1000 / n;
          await counts?.reset();
          const r = (await where.get(v)!.measure(n, () => timed(() => v.plan.executePlan(shape(n), { executor })))) * 1000 / n;
          if (counts && round === 0) commands.set(v, await counts.read());
          local.set(v, [...(local.get(v) ?? []), l]);
          remote.set(v, [...(remote.get(v) ?? []), r]);
        }
      }
      rows.push(`| ${name} | BullMQ alone (no troupe) | — | ${fmt(stats(floor))} | ${fmt(stats(floor))} |${setups.length > 1 ? ' |' : ''}`);
      if (floorCommands !== undefined) commandRows.push(`| ${name} | BullMQ alone (no troupe) | ${(floorCommands / n).toFixed(1)} |`);
      const pw = plainWhere.toString();
      if (pw !== '') whereRows.push(`| ${name} | BullMQ alone (no troupe) | ${pw} |`);
      for (const { v } of setups) {
        const l = local.get(v)!;
        const r = remote.get(v)!;
        const added = stats(r.map((x, i) => x - l[i]!));
        const base = setups.at(-1)!.v;
        const baseAdded = stats(remote.get(base)!.map((x, i) => x - local.get(base)![i]!)).median;
        rows.push(`| ${name} | ${v.name} | ${fmt(stats(l))} | ${fmt(stats(r))} | ${fmt(added)} |${setups.length > 1 ? ` ${(added.median / baseAdded).toFixed(2)} |` : ''}`);
        const c = commands.get(v);
        if (c !== undefined) commandRows.push(`| ${name} | ${v.name} | ${(c / n).toFixed(1)} |`);
        const w = where.get(v)!.toString();
        if (w !== '') whereRows.push(`| ${name} | ${v.name} | ${w} |`);
      }
    }
    const ratio = versions.length > 1 ? ` × ${versions.at(-1)!.name} |` : '';
    console.log(`| plan | version | in process µs/chunk | through Redis µs/chunk | added µs/chunk |${ratio}`);
    console.log(`| --- | --- | ---: | ---: | ---: |${versions.length > 1 ? ' ---: |' : ''}`);
    for (const row of rows) console.log(row);
    if (commandRows.length > 0) {
      console.log('\n| plan | version | Redis commands per chunk (scripts\' own included; first run) |');
      console.log('| --- | --- | ---: |');
      for (const row of commandRows) console.log(row);
    }
    printWhere('plan', whereRows);
  } finally {
    await alone.close();
    await plain.stop();
    for (const { executor, workers } of setups) {
      await executor.close();
      await workers.stop();
    }
  }
}

/** Chunks per second of 20 ms chunks with 1, 2 and 4 worker processes. */
async function throughput(versions: Version[], url: string, prefix: string, redisPid: number | undefined): Promise<void> {
  const CHUNKS = 200;
  const IN_FLIGHT = 16;
  console.log(`\n| worker processes (1 job at a time each) | version | ${CHUNKS} chunks of 20 ms: chunks/s | × 1 worker | % of ideal | % of BullMQ alone | ideal chunks/s |`);
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
  const one = new Map<string, number>();
  const whereRows: string[] = [];
  for (const count of [1, 2, 4]) {
    const setups: Array<{ name: string; rates: number[]; run: () => Promise<number>; where?: Where; stop: () => Promise<void> }> = [];
    // The floors, measured in the same rounds: the same chunks in process (no queue), and plain BullMQ workers whose job waits 20 ms (no troupe).
    const local = versions[0]!;
    const adapter = local.testing.scriptedAdapter({ fallback: { text: 'done', delayMs: 20 } });
    setups.push({ name: 'in process (no queue)', rates: [], run: () => timed(() => local.plan.executePlan(wide(CHUNKS), { adapter, maxParallel: count })), stop: async () => {} });
    const plain = await startProcesses('bullmq-worker.ts', count, (queueName) => ({ url, queueName, prefix, delayMs: 20, concurrency: 1 }));
    const alone = await bullmqAlone(url, prefix, plain.queueName);
    await alone.run(count * 4, IN_FLIGHT);
    const plainWhere = placesOf(plain, redisPid);
    const floorSetup = { name: 'BullMQ alone (no troupe)', rates: [] as number[], run: () => plainWhere.measure(CHUNKS, () => timed(() => alone.run(CHUNKS, IN_FLIGHT))), where: plainWhere, stop: async () => (await alone.close(), await plain.stop()) };
    setups.push(floorSetup);
    for (const v of versions) {
      const workers = await startWorkers(v, url, prefix, count, 1, 20);
      const executor = v.bullmq.bullmqExecutor({ connection: url, queueName: workers.queueName, prefix, [v.parallel.executor]: IN_FLIGHT } as Parameters<Version['bullmq']['bullmqExecutor']>[0]);
      await v.plan.executePlan(wide(count * 4), { executor });
      const where = placesOf(workers, redisPid);
      setups.push({ name: v.name, rates: [], run: () => where.measure(CHUNKS, () => timed(() => v.plan.executePlan(wide(CHUNKS), { executor }))), where, stop: async () => (await executor.close(), await workers.stop()) });
    }
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of setups) s.rates.push(CHUNKS / ((await s.run()) / 1000));
      }
      const floor = stats(floorSetup.rates).median;
      for (const s of setups) {
        const r = stats(s.rates);
        if (count === 1) one.set(s.name, r.median);
        console.log(`| ${count} | ${s.name} | ${fmt(r, 1)} | ${(r.median / one.get(s.name)!).toFixed(2)} | ${((100 * r.median) / (count * 50)).toFixed(1)} % | ${((100 * r.median) / floor).toFixed(1)} % | ${count * 50} |`);
        const w = s.where?.toString() ?? '';
        if (w !== '') whereRows.push(`| ${count} | ${s.name} | ${w} |`);
      }
    } finally {
      for (const s of setups) await s.stop();
    }
  }
  printWhere('worker processes', whereRows);
}

/** A driver of plain BullMQ jobs: `run(n, inFlight)` adds `n` jobs, `inFlight` at a time (the next as each completes), and resolves once all completed. */
async function bullmqAlone(url: string, prefix: string, queueName: string): Promise<{ run(n: number, inFlight: number): Promise<void>; close(): Promise<void> }> {
  const { Queue, QueueEvents } = await import('bullmq');
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port) };
  const queue = new Queue(queueName, { connection, prefix });
  const events = new QueueEvents(queueName, { connection, prefix });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  return {
    run: (n, inFlight) =>
      new Promise<void>((resolve, reject) => {
        let added = 0;
        let done = 0;
        const add = () => {
          if (added < n) queue.add('job', { prompt: `Carry out step number ${added++}.` }, { removeOnComplete: { age: 3600 } }).catch(reject);
        };
        const onCompleted = () => {
          if (++done < n) return add();
          events.off('completed', onCompleted);
          resolve();
        };
        events.on('completed', onCompleted);
        for (let i = 0; i < inFlight; i++) add();
      }),
    close: async () => {
      await events.close();
      await queue.close();
    },
  };
}

/** The parts of a distributed run whose time is measured: this process (the coordinator), the workers, and Redis when the bench started it. */
function placesOf(workers: Workers, redisPid: number | undefined): Where {
  return new Where([
    { name: 'coordinator', pids: [process.pid] },
    { name: 'workers', pids: workers.pids },
    { name: 'Redis', pids: redisPid === undefined ? [] : [redisPid] },
  ]);
}

/** The table of where a chunk's time went (nothing where `/proc` does not tell). */
function printWhere(first: string, rows: string[]): void {
  if (rows.length === 0) return;
  console.log(`\n| ${first} | version | per chunk, µs: CPU time / ready but waiting for a CPU (all runs) |`);
  console.log('| --- | --- | --- |');
  for (const row of rows) console.log(row);
}

/** Milliseconds from aborting a plan to its running attempt aborting on the worker. */
async function cancellation(versions: Version[], url: string, prefix: string): Promise<void> {
  console.log('\n| cancellation | version | ms |\n| --- | --- | ---: |');
  for (const v of versions) {
    const workers = await startWorkers(v, url, prefix, 1, 1, 60_000);
    const executor = v.bullmq.bullmqExecutor({ connection: url, queueName: workers.queueName, prefix });
    const latencies: number[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const controller = new AbortController();
        const started = new Promise<void>((resolve) => executor.events.once('job.started', () => resolve()));
        const running = v.plan.executePlan(wide(1), { executor, signal: controller.signal }).catch(() => undefined);
        await started;
        const seen = workers.lines.length;
        const at = Date.now();
        controller.abort();
        await running;
        let line: string | undefined;
        while (!(line = workers.lines.slice(seen).find((l) => l.startsWith('aborted ')))) await new Promise((resolve) => setTimeout(resolve, 1));
        latencies.push(Number(line.slice(8)) - at);
      }
      console.log(`| abort → the running attempt aborted on its worker | ${v.name} | ${fmt(stats(latencies))} |`);
    } finally {
      await executor.close();
      await workers.stop();
    }
  }
}

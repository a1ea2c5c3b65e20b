/**
 * Distributed execution benchmark (`npm run bench:distributed`):
 *
 * - overhead per chunk through Redis (a bullmqExecutor and one worker
 *   process) against the same plan in process, with chunks that cost
 *   nothing: a wide plan (64 chunks in flight) and a chain (one at a time);
 * - throughput of chunks that sleep 20 ms, with 1, 2 and 4 worker
 *   processes (one job at a time each);
 * - how long a cancellation takes to reach the attempt running on a worker.
 *
 * Each figure is the median of several runs (min and max beside it). Uses
 * REDIS_URL, or starts a redis-server on a free port of 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { executePlan, type Plan, type PlanChunk } from 'troupe/plan';
import { bullmqExecutor } from 'troupe/bullmq';
import { scriptedAdapter } from 'troupe/testing';
import { benchRedis } from './redis.js';

const ROUNDS = 5;
const tsxLoader = pathToFileURL(join(import.meta.dirname, '..', 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

interface Workers {
  readonly queueName: string;
  readonly lines: string[];
  stop(): Promise<void>;
}

function chunk(i: number, deps: number[]): PlanChunk {
  return { sequenceIndex: i, title: `c${i}`, prompt: `Carry out step number ${i}.`, dependsOnIndexes: deps, complexity: 'Low', role: 'Generic' };
}
const wide = (n: number): Plan => ({ planSummary: 'wide', chunks: Array.from({ length: n }, (_, i) => chunk(i, [])) });
const chain = (n: number): Plan => ({ planSummary: 'chain', chunks: Array.from({ length: n }, (_, i) => chunk(i, i === 0 ? [] : [i - 1])) });

/** Start `count` worker processes on a queue of their own. */
async function startWorkers(url: string, prefix: string, count: number, concurrency: number, delayMs: number): Promise<Workers> {
  const queueName = `bench-${randomUUID().slice(0, 8)}`;
  const children: ChildProcess[] = [];
  const lines: string[] = [];
  await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const config = { url, queueName, prefix, concurrency, delayMs, name: `b${i}` };
      const child = spawn(process.execPath, ['--import', tsxLoader, join(import.meta.dirname, 'distributed', 'worker.ts'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    stop: async () => {
      await Promise.all(children.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM'))))));
    },
  };
}

function stats(values: number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! };
}

const fmt = (s: { median: number; min: number; max: number }, digits = 0) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

async function timeRuns(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

export default async function bench(): Promise<void> {
  const redis = await benchRedis();
  if (!redis) return;
  const { url } = redis;
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  try {
    console.log(`Redis at ${url}; ${ROUNDS} runs each; median (min–max).\n`);
    await overhead(url, prefix);
    await throughput(url, prefix);
    await cancellation(url, prefix);
  } finally {
    const raw = new Redis(url);
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await raw.del(...keys);
    } while (cursor !== '0');
    raw.disconnect();
    await redis.stop();
  }
}

/** µs per chunk in process and through Redis, chunks that cost nothing. */
async function overhead(url: string, prefix: string): Promise<void> {
  const WIDE = 2000;
  const CHAIN = 200;
  const adapter = scriptedAdapter({ fallback: 'done' });
  const workers = await startWorkers(url, prefix, 1, 64, 0);
  const executor = bullmqExecutor({ connection: url, queueName: workers.queueName, prefix, capacity: 64 });
  try {
    // Warm both paths up.
    await executePlan(wide(200), { adapter, maxParallel: 64 });
    await executePlan(wide(200), { executor });
    const rows: Array<[string, number, () => Promise<unknown>, () => Promise<unknown>]> = [
      [`wide, ${WIDE} chunks, 64 in flight`, WIDE, () => executePlan(wide(WIDE), { adapter, maxParallel: 64 }), () => executePlan(wide(WIDE), { executor })],
      [`chain, ${CHAIN} chunks, one at a time`, CHAIN, () => executePlan(chain(CHAIN), { adapter }), () => executePlan(chain(CHAIN), { executor })],
    ];
    console.log('| plan | in process µs/chunk | through Redis µs/chunk | added µs/chunk |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const [name, n, local, remote] of rows) {
      const l: number[] = [];
      const r: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        l.push(...(await timeRuns(1, local)).map((ms) => (ms * 1000) / n));
        r.push(...(await timeRuns(1, remote)).map((ms) => (ms * 1000) / n));
      }
      const added = r.map((v, i) => v - l[i]!);
      console.log(`| ${name} | ${fmt(stats(l))} | ${fmt(stats(r))} | ${fmt(stats(added))} |`);
    }
  } finally {
    await executor.close();
    await workers.stop();
  }
}

/** Chunks per second of 20 ms chunks with 1, 2 and 4 worker processes. */
async function throughput(url: string, prefix: string): Promise<void> {
  const CHUNKS = 200;
  console.log(`\n| worker processes (1 job at a time each) | ${CHUNKS} chunks of 20 ms: chunks/s | × 1 worker | ideal chunks/s |`);
  console.log('| ---: | ---: | ---: | ---: |');
  let one = 0;
  for (const count of [1, 2, 4]) {
    const workers = await startWorkers(url, prefix, count, 1, 20);
    const executor = bullmqExecutor({ connection: url, queueName: workers.queueName, prefix, capacity: 16 });
    try {
      await executePlan(wide(count * 4), { executor });
      const rates = (await timeRuns(ROUNDS, () => executePlan(wide(CHUNKS), { executor }))).map((ms) => CHUNKS / (ms / 1000));
      const s = stats(rates);
      if (count === 1) one = s.median;
      console.log(`| ${count} | ${fmt(s, 1)} | ${(s.median / one).toFixed(2)} | ${count * 50} |`);
    } finally {
      await executor.close();
      await workers.stop();
    }
  }
}

/** Milliseconds from aborting a plan to its running attempt aborting on the worker. */
async function cancellation(url: string, prefix: string): Promise<void> {
  const workers = await startWorkers(url, prefix, 1, 1, 60_000);
  const executor = bullmqExecutor({ connection: url, queueName: workers.queueName, prefix });
  const latencies: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const controller = new AbortController();
      const started = new Promise<void>((resolve) => executor.events.once('job.started', () => resolve()));
      const running = executePlan(wide(1), { executor, signal: controller.signal }).catch(() => undefined);
      await started;
      const seen = workers.lines.length;
      const at = Date.now();
      controller.abort();
      await running;
      let line: string | undefined;
      while (!(line = workers.lines.slice(seen).find((l) => l.startsWith('aborted ')))) await new Promise((resolve) => setTimeout(resolve, 1));
      latencies.push(Number(line.slice(8)) - at);
    }
    console.log(`\n| cancellation | ms |\n| --- | ---: |\n| abort → the running attempt aborted on its worker | ${fmt(stats(latencies))} |`);
  } finally {
    await executor.close();
    await workers.stop();
  }
}

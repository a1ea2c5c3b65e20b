/**
 * Distributed execution in one command: uses the Redis at REDIS_URL (or
 * 127.0.0.1:6379), or starts a redis-server of its own when none answers;
 * starts three worker processes (`worker.ts`); and runs a plan of 30 chunks
 * from this process, the coordinator, through a BullMQ queue. Prints which
 * worker ran each chunk, and the totals. Offline on the scripted adapter;
 * the workers use a real model when the environment names one
 * (TROUPE_ADAPTER=openai OPENAI_BASE_URL=... for example).
 *
 *   npx tsx examples/distributed/index.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { executePlan, type Plan, type PlanChunk } from 'troupe/plan';
import { bullmqExecutor } from 'troupe/bullmq';

const WORKERS = ['w1', 'w2', 'w3'];
const children: ChildProcess[] = [];
let ownRedis: { process: ChildProcess; dir: string } | undefined;

/** 30 chunks: ten independent analyses, then each of the next twenty builds on an earlier one. */
function thirtyChunks(): Plan {
  const chunks: PlanChunk[] = [];
  for (let i = 0; i < 30; i++) {
    chunks.push({
      sequenceIndex: i,
      title: i < 10 ? `Analyse module ${i}` : `Improve module ${i - 10}`,
      prompt: i < 10 ? `Read module ${i} and list its problems.` : `Fix the problems found in module ${(i - 10) % 10}.`,
      dependsOnIndexes: i < 10 ? [] : [i - 10],
      complexity: 'Low',
      role: i < 10 ? 'CodeAnalysis' : 'Implementation',
    });
  }
  return { planSummary: 'Analyse and improve thirty modules', chunks };
}

/** The Redis to use: REDIS_URL or 127.0.0.1:6379 when one answers, else a redis-server started here. */
async function redisUrl(): Promise<string> {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (await answers(url)) return url;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'troupe-example-redis-'));
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  ownRedis = { process: server, dir };
  const failed = new Promise<never>((_, reject) => server.once('error', () => reject(new Error(`No Redis at ${url}, and redis-server could not be started: install it (apt-get install redis-server) or set REDIS_URL`))));
  const started = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await Promise.race([answers(started), failed])); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  console.log(`No Redis at ${url}: started redis-server on port ${port}`);
  return started;
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Start a worker process (with this process's TypeScript loader) and resolve once it is taking jobs. */
function startWorkerProcess(name: string, env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, 'worker.ts')], { env: { ...process.env, ...env, WORKER_NAME: name }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => text.includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker ${name} exited (${code}) before it was ready`)));
  });
}

async function main(): Promise<void> {
  const url = await redisUrl();
  const queue = { connection: url, queueName: `example-${randomUUID().slice(0, 8)}`, prefix: 'troupe-example' };
  await Promise.all(WORKERS.map((name) => startWorkerProcess(name, { REDIS_URL: url, QUEUE_NAME: queue.queueName, QUEUE_PREFIX: queue.prefix })));
  console.log(`${WORKERS.length} workers ready; running 30 chunks through queue ${queue.queueName}\n`);

  const executor = bullmqExecutor({ ...queue, maxParallel: 6 });
  const ranOn = new Map<number, string>();
  executor.events.on('job.completed', (job) => {
    ranOn.set(job.sequenceIndex!, job.worker);
    console.log(`chunk ${String(job.sequenceIndex).padStart(2)} ran on ${job.worker} (${job.durationMs} ms from queued to done)`);
  });
  const started = Date.now();
  try {
    const outcome = await executePlan(thirtyChunks(), { executor, retry: { delayMs: 200 } });
    const perWorker = WORKERS.map((w) => `${w} ${[...ranOn.values()].filter((x) => x === w).length}`).join(', ');
    console.log(`\n${outcome.stats.completed}/${outcome.stats.total} chunks ${outcome.status} in ${Date.now() - started} ms on ${WORKERS.length} workers (${perWorker}); ${outcome.usage.turns} model turns, ${outcome.usage.inputTokens + outcome.usage.outputTokens} tokens`);
  } finally {
    await executor.close();
    await cleanUp(url, queue.prefix, queue.queueName);
  }
}

/** Stop the workers (SIGTERM: they finish and close), delete the example's keys, stop our redis-server. */
async function cleanUp(url: string, prefix: string, queueName: string): Promise<void> {
  await Promise.all(children.map((child) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))))));
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:${queueName}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  client.disconnect();
  if (ownRedis) {
    ownRedis.process.kill('SIGTERM');
    await new Promise((resolve) => ownRedis!.process.once('exit', resolve));
    rmSync(ownRedis.dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  for (const child of children) child.kill('SIGKILL');
  ownRedis?.process.kill('SIGKILL');
  process.exitCode = 1;
});

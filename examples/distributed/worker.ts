/**
 * One worker process of the distributed example (`index.ts` starts three):
 * takes chunk attempts from the queue and runs them on the scripted adapter,
 * or on a real model when the environment names one (TROUPE_ADAPTER, see
 * `adapterFromEnv`). Closes gracefully on SIGTERM.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 WORKER_NAME=w1 npx tsx examples/distributed/worker.ts
 */
import { adapterFromEnv } from 'troupe/adapters/env';
import { startWorker } from 'troupe/bullmq';
import { scriptedAdapter } from 'troupe/testing';

const name = process.env.WORKER_NAME || `worker-${process.pid}`;
// Offline: every chunk "takes" 40 to 160 ms, by its index, and says who did it.
const adapter =
  adapterFromEnv() ??
  scriptedAdapter({
    fallback: (r) => {
      const index = Number(/^# Chunk (\d+):/.exec(r.text)?.[1] ?? 0);
      return { text: `${name} finished chunk ${index}`, delayMs: 40 + (index % 4) * 40 };
    },
  });

const worker = await startWorker({
  connection: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  queueName: process.env.QUEUE_NAME || 'troupe',
  prefix: process.env.QUEUE_PREFIX || 'troupe',
  name,
  adapter,
  maxParallel: 2,
  handleSignals: true,
});
worker.events.on('worker.warning', (w) => console.error(`${name}: ${w.message}`));
console.log(`${name} ready`);

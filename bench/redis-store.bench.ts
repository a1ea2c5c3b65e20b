/**
 * Redis store benchmark (`npm run bench -- redis`): time per call of
 * `redisStore` against the same Redis command sent with a bare ioredis
 * client in the same run, one call at a time and 64 in flight. Uses
 * REDIS_URL, or starts a redis-server on a free port of 127.0.0.1.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisStore } from 'troupe/redis';
import { benchRedis } from './redis.js';

const BATCHES = 7;
const CALLS = 2000;

/** Median over batches of µs per call, running `calls` calls `inFlight` at a time. */
async function measure(fn: (i: number) => Promise<unknown>, inFlight: number): Promise<number> {
  const times: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i += inFlight) {
      await Promise.all(Array.from({ length: Math.min(inFlight, CALLS - i) }, (_, k) => fn(i + k)));
    }
    times.push(Number(process.hrtime.bigint() - start) / 1000 / CALLS);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export default async function bench(): Promise<void> {
  const redis = await benchRedis();
  if (!redis) return;
  const { url } = redis;
  const prefix = `bench-${randomUUID()}:`;
  const raw = new Redis(url);
  const store = redisStore({ connection: url, prefix });
  const doc = { step: 3, done: ['a', 'b', 'c'], note: 'x'.repeat(200) };
  const text = JSON.stringify(doc);
  try {
    await store.set('warm', doc);
    for (let i = 0; i < 100; i++) await store.append('log', { i, type: 'op.completed' });
    let version = (await store.getVersioned('cas'))?.version ?? null;
    const rows: Array<[string, (i: number) => Promise<unknown>, (i: number) => Promise<unknown>]> = [
      ['set', () => raw.set(`${prefix}d:raw`, text), () => store.set('doc', doc)],
      ['get', () => raw.get(`${prefix}d:doc`), () => store.get('doc')],
      ['append', (i) => raw.rpush(`${prefix}s:raw`, JSON.stringify({ i })), (i) => store.append('stream', { i })],
      ['read 100 records', () => raw.lrange(`${prefix}s:log`, 0, -1), () => store.read('log')],
      [
        'setIf (baseline: SET)',
        () => raw.set(`${prefix}d:raw`, text),
        async (i) => {
          const written = await store.setIf('cas', { ...doc, i }, { ifVersion: version });
          if (written.ok) version = written.version;
        },
      ],
    ];
    console.log(`Redis at ${url}; median of ${BATCHES} batches of ${CALLS} calls; µs per call.\n`);
    console.log('| call | in flight | ioredis µs | redisStore µs | × ioredis |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    for (const inFlight of [1, 64]) {
      for (const [name, baseline, subject] of rows) {
        if (name.startsWith('setIf') && inFlight > 1) continue; // concurrent setIfs on one key conflict by design
        const b = await measure(baseline, inFlight);
        const s = await measure(subject, inFlight);
        console.log(`| ${name} | ${inFlight} | ${b.toFixed(1)} | ${s.toFixed(1)} | ${(s / b).toFixed(2)} |`);
      }
    }
  } finally {
    await store.close();
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length) await raw.del(...keys);
    raw.disconnect();
    await redis.stop();
  }
}

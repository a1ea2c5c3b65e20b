import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { bullmqExecutor, startWorker, type TroupeWorker } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import type { Executor } from '../../../src/plan/engine/executor.js';
import { sharedPool } from '../../../src/plan/engine/pool.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

// A shared pool in front of the queue-backed executor: the pool decides which plan's attempt enters the queue next.
describe.skipIf(!url)('sharedPool around bullmqExecutor', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  it('admits two plans\' attempts by weight, never more than the executor\'s capacity, and workers on Redis run them', async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const workers: TroupeWorker[] = [];
    for (let i = 0; i < 2; i++) {
      const adapter = scriptedAdapter({ latencyMs: 20, fallback: (r) => `w${i} did chunk ${chunkOf(r.text)}` });
      const worker = await startWorker({ ...place, adapter, name: `w${i}`, maxParallel: 2 });
      open.push(worker);
      workers.push(worker);
    }
    const executor = bullmqExecutor({ ...place, maxParallel: 3, reconcileIntervalMs: 500 });
    open.push(executor);
    const admitted: string[] = [];
    let inQueue = 0;
    let peak = 0;
    // What the pool hands to the queue, counted on the way in.
    const counted: Executor = {
      kind: 'counted-bullmq',
      maxParallel: executor.maxParallel,
      async dispatch(job) {
        admitted.push(job.planId);
        peak = Math.max(peak, ++inQueue);
        try {
          return await executor.dispatch(job);
        } finally {
          inQueue--;
        }
      },
    };
    const pool = sharedPool({ executor: counted });
    expect(pool.maxParallel).toBe(3);
    const chunks = (n: number) => plan(Array.from({ length: n }, (_, i) => chunk(i)));
    const [web, api] = await Promise.all([
      executePlan(chunks(8), { planId: 'web', executor: pool.executor('web', { weight: 2 }), retry: { maxRetries: 0 } }),
      executePlan(chunks(4), { planId: 'api', executor: pool.executor('api'), retry: { maxRetries: 0 } }),
    ]);
    expect([web.status, api.status]).toEqual(['completed', 'completed']);
    expect(web.results.every((r) => /^w[01] did chunk \d$/.test(r.output ?? ''))).toBe(true);
    expect(peak).toBeLessThanOrEqual(3);
    // Both plans share the queue from the start: api (weight 1) gets one of the first six slots at least, web
    // (weight 2) most of them. (Exact shares by weight are tested on a simulated clock in test/plan/engine/pool.test.ts;
    // here a busy machine may start one plan a little before the other.)
    const firstSix = admitted.slice(0, 6);
    expect(firstSix.filter((p) => p === 'api').length).toBeGreaterThanOrEqual(1);
    expect(firstSix.filter((p) => p === 'web').length).toBeGreaterThanOrEqual(3);
    expect(pool.stats().map((s) => [s.name, s.settled, s.running, s.queued])).toEqual([
      ['web', 8, 0, 0],
      ['api', 4, 0, 0],
    ]);
  });
});

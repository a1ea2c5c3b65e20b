import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import { bullmqExecutor, startWorker, type TroupeWorker } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, startRedisCluster, type RedisClusterServers } from '../../helpers/redis.js';

const { binary } = redisTarget();

describe.skipIf(!binary)('past one Redis: a Redis Cluster with one queue per role', () => {
  let cluster: RedisClusterServers;
  const clients: Cluster[] = [];
  const client = () => {
    const c = new Cluster(cluster.nodes);
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    cluster = await startRedisCluster({ binary: binary!, masters: 3 });
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  });

  it('refuses a queue whose keys would span slots (no hash tag in the prefix or the queue name)', () => {
    expect(() => bullmqExecutor({ connection: client(), queueName: 'plans' })).toThrow(ConfigurationError);
    expect(() => bullmqExecutor({ connection: client(), queueName: '{plans}' })).not.toThrow();
    expect(() => bullmqExecutor({ connection: client(), prefix: '{troupe}' })).not.toThrow();
  });

  it('sends each role’s chunks to its own queue, hash-tagged so the queues spread over the masters; workers per role run them', { timeout: 60_000 }, async () => {
    const queueOf = (role: string) => `{troupe-${role}}`;
    const workers: TroupeWorker[] = [];
    for (const role of ['CodeAnalysis', 'Testing']) {
      const adapter = scriptedAdapter({ fallback: (r) => `${role} worker did chunk ${chunkOf(r.text)}` });
      workers.push(await startWorker({ connection: client(), queueName: queueOf(role), adapter, name: role, maxParallel: 2 }));
    }
    const executor = bullmqExecutor({ connection: client(), queueName: (job) => queueOf(job.chunk.role) });
    try {
      const chunks = [
        { ...chunk(0), role: 'CodeAnalysis' as const },
        { ...chunk(1), role: 'CodeAnalysis' as const },
        { ...chunk(2, [0]), role: 'Testing' as const },
        { ...chunk(3, [1, 2]), role: 'Testing' as const },
      ];
      const outcome = await executePlan(plan(chunks), { executor });
      expect(outcome.status).toBe('completed');
      expect(outcome.results.map((r) => r.output)).toEqual([
        'CodeAnalysis worker did chunk 0',
        'CodeAnalysis worker did chunk 1',
        'Testing worker did chunk 2',
        'Testing worker did chunk 3',
      ]);
      // The two queues live in different slots of the cluster.
      const slots = await Promise.all(['CodeAnalysis', 'Testing'].map((role) => clients[0]!.cluster('KEYSLOT', `troupe:${queueOf(role)}:wait`)));
      expect(new Set(slots).size).toBe(2);
      expect((await executor.stats({ queueName: queueOf('Testing') })).queueName).toBe('{troupe-Testing}');
      await expect(executor.stats()).rejects.toThrow(/several queues/);
    } finally {
      await executor.close();
      for (const w of workers) await w.close();
    }
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { bullmqExecutor, startWorker } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, startRedisServer, type RedisServer } from '../../helpers/redis.js';

const { binary } = redisTarget();

describe.skipIf(!binary)('Redis going away mid-plan', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  const servers: RedisServer[] = [];
  afterEach(async () => {
    for (const thing of open.splice(0)) await thing.close();
    for (const server of servers.splice(0)) await server.stop();
  });

  /**
   * A Redis of the test's own, a worker whose model turns take `delayMs` (a chunk's first turn waits for `hold`
   * first, if given), and an executor that gives Redis `unavailableTimeoutMs` to come back.
   */
  async function setup(unavailableTimeoutMs: number, delayMs: number, hold?: Promise<void>) {
    const server = await startRedisServer({ binary: binary! });
    servers.push(server);
    const calls: number[] = [];
    const adapter = scriptedAdapter({
      fallback: async (r) => {
        const first = !calls.includes(chunkOf(r.text)!);
        calls.push(chunkOf(r.text)!);
        if (first && hold) await hold;
        return { text: `did chunk ${chunkOf(r.text)}`, delayMs };
      },
    });
    const place = { connection: server.url, queueName: 'outage' };
    const worker = await startWorker({ ...place, adapter, maxParallel: 8, closeTimeoutMs: 200, timeoutMs: 2000, lockDurationMs: 2000, stalledIntervalMs: 1000 });
    open.push(worker);
    const executor = bullmqExecutor({ ...place, unavailableTimeoutMs, timeoutMs: 2000, reconcileIntervalMs: 200 });
    open.unshift(executor);
    return { server, executor, calls };
  }

  it('fails the attempts with a typed QueueError when Redis stays away: the plan ends, and no chunk is reported done', { timeout: 60_000 }, async () => {
    const { server, executor, calls } = await setup(1000, 60_000); // chunks that cannot finish before Redis stops
    const failures: Array<{ code: string; error: string }> = [];
    executor.events.on('job.failed', (e) => failures.push(e));
    const down: string[] = [];
    executor.events.on('queue.down', (e) => down.push(e.queueName));
    const running = executePlan(plan([chunk(0), chunk(1), chunk(2), chunk(3, [0])]), { executor, retry: { maxRetries: 1, delayMs: 50 }, abortThreshold: 10 });
    while (calls.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await server.stop();
    const outcome = await running;
    expect(outcome.status).toBe('failed');
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed', 'skipped']);
    for (const r of outcome.results.slice(0, 3)) expect(r.error).toMatch(/Redis/);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    expect(failures.every((f) => f.code === 'queue_error')).toBe(true);
    expect(down).toEqual(['outage']);
  });

  it('goes on when Redis comes back: jobs it lost run again, and the plan completes', { timeout: 60_000 }, async () => {
    // The first turns of chunks 0 and 1 end only once Redis is back without them, however slow the machine is
    // (a turn that ended before Redis went away would have no reason to run again).
    let back!: () => void;
    const { server, executor, calls } = await setup(20_000, 300, new Promise<void>((resolve) => (back = resolve)));
    const up: number[] = [];
    executor.events.on('queue.up', (e) => up.push(e.downMs));
    const lost: string[] = [];
    executor.events.on('job.failed', (e) => lost.push(e.error));
    const running = executePlan(plan([chunk(0), chunk(1), chunk(2, [0, 1])]), { executor, retry: { maxRetries: 2, delayMs: 50 } });
    while (calls.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    // Redis restarts on the same port without its data (no persistence): the two jobs in flight are gone.
    await server.stop();
    servers.push(await startRedisServer({ binary: binary!, port: server.port }));
    back();
    const outcome = await running;
    expect(outcome.status).toBe('completed');
    expect(outcome.results.map((r) => r.output)).toEqual(['did chunk 0', 'did chunk 1', 'did chunk 2']);
    expect(outcome.results.slice(0, 2).map((r) => r.attempts)).toEqual([2, 2]);
    expect(lost).toHaveLength(2);
    expect(lost.every((e) => /no longer in Redis/.test(e))).toBe(true);
    expect(up).toHaveLength(1);
  });
});

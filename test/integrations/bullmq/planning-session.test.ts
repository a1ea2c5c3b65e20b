import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src/core/memory-store.js';
import { bullmqExecutor, startWorker, type WorkerJobEvent } from '../../../src/integrations/bullmq/index.js';
import { PlanningSession } from '../../../src/plan/session/planning-session.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe.skipIf(!url)('a planning session on workers', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  it('executes on workers through the executor; restored after its coordinator went away, it keeps the chunk a worker finished meanwhile', { timeout: 30_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const store = memoryStore(); // shared by the coordinator and the worker, as a Redis store would be
    const calls: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const worker = await startWorker({
      ...place,
      store,
      name: 'w1',
      adapter: scriptedAdapter({
        fallback: async (r) => {
          const i = chunkOf(r.text)!;
          calls.push(i);
          if (i === 1) await gate;
          return `did ${i}`;
        },
      }),
    });
    open.push(worker);
    const finished: WorkerJobEvent[] = [];
    worker.events.on('job.completed', (e) => finished.push(e));
    const threeChunks = JSON.stringify(plan([chunk(0), chunk(1, [0]), chunk(2, [1])]));
    const planner = () => scriptedAdapter({ replies: { planner: ['{"action":"plan"}', threeChunks] }, rules: [{ agent: 'synthesis', reply: 'summary' }] });
    const id = `ps-${randomUUID()}`;

    const first = bullmqExecutor(place);
    const session = new PlanningSession({ adapter: planner(), runId: id, store, executor: first, retry: { delayMs: 0 } });
    await session.submitTask('Write the guide');
    const execution = session.approvePlan().catch((error: unknown) => error);
    // Chunk 1 is running on the worker when the coordinator's executor goes away.
    while (!calls.includes(1)) await new Promise((resolve) => setTimeout(resolve, 10));
    await first.close();
    await execution;
    // With no coordinator listening, the worker finishes chunk 1 and records it in the plan's checkpoint.
    release();
    while (!finished.some((e) => e.label.startsWith('chunk 1 '))) await new Promise((resolve) => setTimeout(resolve, 10));

    const second = bullmqExecutor(place);
    open.push(second);
    const restored = await PlanningSession.restore(id, { adapter: planner(), store, executor: second });
    expect(restored.phase).toBe('awaiting-approval');
    const done = await restored.approvePlan();
    expect(done.phase).toBe('completed');
    expect(done.outcome?.results.map((r) => [r.status, r.output])).toEqual([
      ['completed', 'did 0'],
      ['completed', 'did 1'],
      ['completed', 'did 2'],
    ]);
    expect(done.outcome?.output).toBe('summary');
    // Every chunk ran once, on the worker: the restored execution sent only chunk 2.
    expect(calls).toEqual([0, 1, 2]);
  });
});

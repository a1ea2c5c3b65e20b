/**
 * A store on Redis: log a run to Redis, read it back, and let two workers
 * (two connections, as two processes would have) claim tasks from one shared
 * task list with compare-and-set, so no task is claimed twice.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/redis-store.ts
 *
 * Without a Redis at REDIS_URL (default redis://127.0.0.1:6379) it says so
 * and stops.
 */
import { randomUUID } from 'node:crypto';
import { agent, run } from 'troupe';
import { readRun } from 'troupe/persistence';
import { TaskStore } from 'troupe/coordination';
import { StoreError } from 'troupe/kernel';
import { redisStore } from 'troupe/redis';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
// A hash-tagged prefix keeps every key of the example in one Redis Cluster slot.
const prefix = `{troupe-example-${randomUUID().slice(0, 8)}}:`;
const store = redisStore({ connection: url, prefix, timeoutMs: 2000 });
const second = redisStore({ connection: url, prefix, timeoutMs: 2000 });

try {
  await store.list('');
} catch (error) {
  if (!(error instanceof StoreError)) throw error;
  console.log(`No Redis at ${url} (${error.message}). Start redis-server or set REDIS_URL to run this example.`);
  await Promise.all([store.close(), second.close()]);
  process.exit(0);
}

try {
  // 1. A run logged to Redis: events in the list <prefix>s:runs/<id>/events.
  // A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env), else the scripted one.
  const adapter = adapterFromEnv() ?? scriptedAdapter({ replies: { summarizer: ['Redis keeps the run log; any process can read it.'] } });
  const summarizer = agent({ name: 'summarizer', system: 'Summarize in one sentence.' });
  const result = await run(summarizer, 'Why share a store?', { adapter, store, runId: 'shared-1' });
  const log = await readRun('shared-1', { store: second }); // read through the other connection
  console.log(`run ${log.runId}: ${log.events.length} events, status ${log.meta?.status}; answer: ${result.output}`);

  // 2. A task list shared by two workers: both load version 1 and claim at once.
  await new TaskStore([{ id: 'a', title: 'Parse' }, { id: 'b', title: 'Print' }]).save(store, 'tasks');
  const [w1, w2] = await Promise.all([TaskStore.load(store, 'tasks'), TaskStore.load(second, 'tasks')]);
  w1!.claim('worker-1');
  w2!.claim('worker-2'); // the same task, a, in its own copy
  const saved = await Promise.allSettled([w1!.save(store, 'tasks'), w2!.save(second, 'tasks')]);
  for (const [i, outcome] of saved.entries()) {
    console.log(`worker-${i + 1}: ${outcome.status === 'fulfilled' ? 'claimed a' : `conflict (${(outcome.reason as Error).message})`}`);
  }
  // The loser loads the list again and claims what is left.
  const loser = saved[0]!.status === 'rejected' ? { name: 'worker-1', via: store } : { name: 'worker-2', via: second };
  const fresh = (await TaskStore.load(loser.via, 'tasks'))!;
  const next = fresh.claim(loser.name);
  await fresh.save(loser.via, 'tasks');
  console.log(`${loser.name}: claimed ${next?.id ?? 'nothing'}`);
  const final = (await TaskStore.load(store, 'tasks'))!.list();
  console.log('tasks:', final.map((t) => `${t.id}=${t.status} by ${t.assignee}`).join(', '));
} finally {
  // Leave the Redis as it was.
  await store.deleteStream('runs/shared-1/events');
  for (const key of await store.list('')) await store.delete(key);
  await Promise.all([store.close(), second.close()]);
}

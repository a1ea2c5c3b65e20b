/**
 * Memory: a support agent that remembers a customer across three runs.
 * Each run continues the thread `customer-42` (the agent gets the earlier
 * exchanges as its conversation) and the agent keeps a small working memory
 * of the customer (a zod schema; it changes it with its `update_customer`
 * tool). The same three runs go through a memory store, then Redis (when
 * REDIS_URL names one), then `troupe/http` (`POST /runs` with a thread).
 *
 *   npx tsx examples/memory.ts
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/memory.ts
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { agent, run, startRun, type RunHandle, type Store } from 'troupe';
import { readWorkingMemory, workingMemory } from 'troupe/patterns';
import { readThread } from 'troupe/persistence';
import { runHandler } from 'troupe/http';
import { StoreError } from 'troupe/kernel';
import { redisStore } from 'troupe/redis';
import { adapterFromEnv } from 'troupe/adapters/env';
import { memoryStore, scriptedAdapter, type ScriptedRequest } from 'troupe/testing';

// What the agent keeps about a customer, whatever the conversation.
const customer = workingMemory({
  name: 'customer',
  scope: 'resource',
  description: 'What you know about this customer.',
  schema: z.object({ name: z.string().optional(), orders: z.array(z.string()).default([]) }),
});

const support = agent({
  name: 'support',
  system: 'You are the support agent of a bicycle shop. Be brief and use what you remember.',
  memory: customer,
});

/** The customer memory the scripted model finds at the end of its system prompt. */
function remembered(r: ScriptedRequest): { name?: string; orders: string[] } {
  const system = r.spec.system ?? '';
  const at = system.indexOf('## Working memory: customer');
  return JSON.parse(system.slice(system.indexOf('\n\n', at) + 2)) as { name?: string; orders: string[] };
}

// A real model when the environment names one (TROUPE_ADAPTER), else a scripted one that plays the support agent.
const adapter = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    {
      agent: 'support',
      reply: (r) => {
        if (r.turn === 1 && r.text.includes("I'm Ada")) {
          return { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'add', path: '/name', value: 'Ada' }, { op: 'add', path: '/orders/-', value: 'A-1042: bent wheel' }] } }] };
        }
        if (r.turn === 2) return 'Sorry about the bent wheel, Ada: a replacement for A-1042 is on its way.';
        const memory = remembered(r);
        const order = memory.orders[0]?.split(':')[0] ?? 'your order';
        const earlier = (r.spec.history?.length ?? 0) / 2;
        if (r.text.includes('shipped')) return `Yes, ${memory.name ?? 'there'}: the replacement for ${order} shipped today.`;
        return `You are ${memory.name ?? 'new here'}; we spoke about order ${order} (${earlier} earlier exchanges in this conversation).`;
      },
    },
  ],
});

const questions = ["Hi, I'm Ada. My order A-1042 arrived with a bent wheel.", 'Has the replacement shipped?', 'What do you know about me?'];

/** The three runs on one store, and what the store keeps afterwards. */
async function threeRuns(label: string, store: Store): Promise<void> {
  for (const [i, question] of questions.entries()) {
    const result = await run(support, question, { adapter, store, thread: 'customer-42', resource: 'customer-42' });
    console.log(`${label}: ${i + 1}. ${result.output}`);
  }
  await summary(label, store);
}

async function summary(label: string, store: Store): Promise<void> {
  const thread = await readThread('customer-42', { store });
  const memory = await readWorkingMemory(customer, { store, resource: 'customer-42' });
  console.log(`${label}: thread customer-42 has ${thread?.messages.length} messages; working memory (revision ${memory.revision}): ${JSON.stringify(memory.value)}`);
}

// 1. In memory.
await threeRuns('memory store', memoryStore());

// 2. In Redis, shared by every process that uses it: skipped without one.
const url = process.env.REDIS_URL;
if (!url) console.log('redis: skipped (set REDIS_URL to run the same three runs on Redis)');
else {
  const redis = redisStore({ connection: url, prefix: `{troupe-memory-${randomUUID().slice(0, 8)}}:` });
  try {
    // Only a Redis that does not answer at all is skipped; a failure once it answered is an error.
    const reachable = await redis.list('').then(
      () => true,
      (error: unknown) => {
        if (!(error instanceof StoreError)) throw error;
        console.log(`redis: skipped (no Redis at ${url}: ${error.message})`);
        return false;
      },
    );
    if (reachable) await threeRuns('redis', redis);
  } finally {
    await redis.close();
  }
}

// 3. Through troupe/http: POST /runs with a thread; the tenant's store keeps it.
const started: RunHandle[] = [];
const handle = runHandler({
  store: memoryStore(),
  authorize: (request) => (request.headers.get('authorization') === 'Bearer ada' ? { tenant: 'bike-shop', subject: 'customer-42' } : null),
  start: ({ store, runId, input, thread, principal }) => {
    // The customer is the principal: its working memory is kept per resource.
    started.push(startRun(support, input, { adapter, store, runId, ...(thread ? { thread } : {}), resource: principal.subject ?? 'anonymous' }));
  },
});
const call = (path: string, body?: unknown) =>
  handle(new Request(`http://localhost${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: 'Bearer ada', 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
for (const [i, question] of questions.entries()) {
  const response = await call('/runs', { input: question, thread: 'customer-42' });
  const result = await started[i]!.result;
  console.log(`http: ${i + 1}. (${response.status}) ${result.output}`);
}
const thread = (await (await call('/threads/customer-42')).json()) as { thread: { runs: number }; messages: unknown[] };
console.log(`http: GET /threads/customer-42: ${thread.thread.runs} runs, ${thread.messages.length} messages`);

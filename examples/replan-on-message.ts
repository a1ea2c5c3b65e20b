/**
 * Re-plan a running plan after one worker's message to another: an
 * auditor finds that the API it reads is paginated and tells the client
 * writer (`post_message`). The application sees the message and changes
 * the running plan: the client chunk is split into "write the client" and
 * "add pagination", and a documentation chunk is added after them. The
 * client writer, which had not started, gets the auditor's message in its
 * prompt. Runs offline on the scripted adapter with a simulated clock, or
 * on a real adapter named in the environment.
 *
 *   npx tsx examples/replan-on-message.ts
 */
import type { TroupeEvent } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { executePlan, PlanControl, type Plan, type PlanChunk } from 'troupe/plan';
import { SimulatedClock, scriptedAdapter } from 'troupe/testing';

const step = (sequenceIndex: number, title: string, role: PlanChunk['role'], dependsOnIndexes: number[]): PlanChunk => ({
  sequenceIndex, title, prompt: `${title}; say what you did in one line.`, dependsOnIndexes, complexity: 'Medium', role,
});
const plan: Plan = {
  planSummary: 'A client for the orders API',
  chunks: [
    step(0, 'Audit the orders API', 'CodeAnalysis', []),
    step(1, 'Write the orders client', 'Implementation', [0]),
    step(2, 'Test the orders client', 'Testing', [1]),
  ],
};

const clock = new SimulatedClock();
const scripted = scriptedAdapter({
  clock,
  rules: [
    // The auditor tells the client writer what it found, then reports.
    { agent: 'CodeAnalysis', match: '# Chunk 0', reply: { text: '', toolCalls: [{ id: 'm', name: 'post_message', arguments: { to: 'role:Implementation', text: 'GET /orders is paginated (cursor in the Link header).' } }] } },
    { agent: 'CodeAnalysis', reply: 'Audit done: two endpoints, GET /orders is paginated.' },
    { agent: 'Implementation', reply: (r) => (r.text.includes('paginated') ? `Done: ${/# Chunk \d+: (.*)/.exec(r.text)?.[1]} (knows about the cursor).` : 'Done.') },
    { agent: 'Generic', reply: 'Documented the cursor.' },
    { agent: 'Testing', reply: 'Tests pass, including a second page.' },
  ],
});
const live = adapterFromEnv();
const adapter = live ?? scripted;

const control = new PlanControl();
let replanned = false;
const onEvent = async (e: TroupeEvent): Promise<void> => {
  if (e.type === 'plan.message') {
    const m = e.message;
    console.log(`message from chunk ${String(m.from)} to ${m.to === 'all' ? 'everyone' : 'role' in m.to ? m.to.role : `chunk ${m.to.chunk}`}: ${m.text}`);
    if (replanned || !/paginat/i.test(m.text)) return;
    replanned = true;
    // The finding changes the work: split the client chunk and document the pagination.
    // It applies at once; the promise resolves once the change is in the run's store (at once here: no store).
    const change = await control.change({
      split: [{ chunk: 1, parts: [step(10, 'Write the orders client', 'Implementation', []), step(11, 'Add cursor pagination to the client', 'Implementation', [10])] }],
      add: [step(12, 'Document pagination', 'Generic', [11])],
      reason: 'the orders API is paginated',
    });
    console.log(`plan change ${change.id} (${change.change.reason}) after ${change.after} chunks completed`);
  }
};

const outcome = await executePlan(plan, { adapter, clock: live ? undefined : clock, control, workerMessages: true, maxParallel: 2, onEvent });
console.log(`plan now: ${outcome.plan.chunks.map((c) => `${c.sequenceIndex} ${c.title}${c.dependsOnIndexes.length ? ` (after ${c.dependsOnIndexes.join(', ')})` : ''}`).join(' | ')}`);
for (const r of outcome.results) console.log(`${r.sequenceIndex}. ${r.title}: ${r.status} - ${r.output ?? r.error}`);
console.log(`status: ${outcome.status}`);

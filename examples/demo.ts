/**
 * `npm run demo`: a small multi-agent flow, run offline on the scripted
 * adapter. A triage agent looks the customer up with a tool, a specialist
 * drafts the answer from the triage notes, and a reviewer polishes it. The
 * answer, the op tree with usage, and the event trace are printed.
 */
import { z } from 'zod';
import { agent, defineRunnable, defineTool, formatOpTree, startRun, usageByAgent } from 'troupe';
import { scriptedAdapter } from 'troupe/testing';

const lookupCustomer = defineTool({
  name: 'lookup_customer',
  description: 'Find a customer record by email',
  parameters: z.object({ email: z.string() }),
  execute: ({ email }) => ({ email, plan: 'Pro', lastInvoice: 'INV-77', overcharged: 12.5 }),
});

const adapter = scriptedAdapter({
  replies: {
    triage: [
      { toolCalls: [{ name: 'lookup_customer', arguments: { email: 'ada@example.com' } }] },
      'Billing issue: customer on Pro plan was overcharged 12.50 on INV-77.',
    ],
    billing: ['Refund 12.50 for INV-77 and apologise; the plan stays Pro.'],
    reviewer: [
      (req) =>
        `Hi Ada, we are sorry: invoice INV-77 overcharged you by 12.50. ` +
        `We have issued a refund; you stay on the Pro plan. (${req.text.length} chars reviewed)`,
    ],
  },
});

const triage = agent({ name: 'triage', system: 'Classify the request; look the customer up.', tools: [lookupCustomer] });
const billing = agent({ name: 'billing', system: 'You resolve billing issues.' });
const reviewer = agent({ name: 'reviewer', system: 'Rewrite the draft as a friendly reply.' });

// A three-step chain: each step gets the request and the previous step's notes.
const desk = defineRunnable({
  name: 'support-desk',
  kind: 'chain',
  async run(input, ctx) {
    const notes = await triage.run(input, ctx);
    const draft = await billing.run(`${input}\n\n## Triage notes\n${notes.output}`, ctx);
    const reply = await reviewer.run(`${input}\n\n## Draft\n${draft.output}`, ctx);
    return { output: reply.output, agent: reply.agent, status: 'completed' };
  },
});

const handle = startRun(desk, 'I was charged twice this month (ada@example.com).', { adapter });
const trace: string[] = [];
handle.emitter.on('*', (e) => {
  if (e.type === 'agent.completed' || e.type === 'tool.completed' || e.type === 'run.completed') {
    trace.push(`  ${e.type.padEnd(16)} ${'agent' in e ? e.agent : ''}`);
  }
});
const result = await handle.result;

console.log('Answer:');
console.log(`  ${result.output}`);
console.log(`\nTerminal agent: ${result.agent}   status: ${result.status}`);
console.log('\nOp tree (time, tokens, turns):');
console.log(formatOpTree(result.trace).replace(/^/gm, '  '));
console.log('\nUsage by agent:');
for (const [name, u] of Object.entries(usageByAgent(result.trace))) {
  console.log(`  ${name.padEnd(10)} in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}`);
}
console.log('\nEvents:');
console.log(trace.join('\n'));

/**
 * An approval chain of three handoffs: a clerk drafts, a manager reviews, a
 * director approves and owns the answer. Each stage gets the original
 * request and the previous stage's output. Runs offline on the scripted
 * adapter.
 *
 * The environment can name a real model instead (see docs/adapters.md):
 *
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/approval-chain.ts
 */
import { agent, formatOpTree, handoff, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const clerk = agent({ name: 'clerk', system: 'Draft a purchase order.' });
const manager = agent({ name: 'manager', system: 'Review the draft; correct it if needed.' });
const finance = agent({ name: 'finance', system: 'Check the budget.' });
const director = agent({ name: 'director', system: 'Approve or reject; write the decision.' });

const adapter = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    { agent: 'clerk', reply: 'PO draft: 3 laptops, 4,200 EUR.' },
    { agent: 'manager', reply: 'Reviewed: quantity confirmed, supplier is on the approved list.' },
    { agent: 'finance', reply: 'Within the Q3 hardware budget (5,000 EUR left).' },
    { agent: 'director', reply: (req) => (req.text.includes('Within the Q3') ? 'APPROVED: PO for 3 laptops, 4,200 EUR.' : 'REJECTED') },
  ],
});

// clerk -> manager -> finance -> director: three handoffs.
const chain = handoff(clerk, manager, finance, director);
const result = await run(chain, 'We need three laptops for the new hires.', { adapter });
console.log(`${result.output}\n(answered by ${result.agent})\n`);
console.log(formatOpTree(result.trace));

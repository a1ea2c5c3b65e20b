/**
 * A support desk: a router agent sends each request to one department. The
 * department gets the original request and owns the answer. Runs offline on
 * the scripted adapter; this adapter has no tools, so the router uses the
 * text form (`ROUTE: <name>`).
 *
 * The environment can name a real model instead (see docs/adapters.md):
 *
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/support-desk.ts
 */
import { agent, router, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const desk = agent({ name: 'desk', system: 'You are the front desk of an online shop.' });
const billing = agent({ name: 'billing', description: 'Charges, refunds, invoices', system: 'You resolve billing issues.' });
const technical = agent({ name: 'technical', description: 'Log-in and app problems', system: 'You fix technical problems.' });
const legal = agent({ name: 'legal', description: 'Contracts and terms', system: 'You answer questions about our terms.' });

const adapter = adapterFromEnv() ?? scriptedAdapter({
  capabilities: { tools: false },
  rules: [
    // The desk sees the request on its first line, then the destinations: match the first line only.
    { agent: 'desk', match: /^.*(password|log in)/i, reply: 'ROUTE: technical' },
    { agent: 'desk', match: /^.*(refund|charged)/i, reply: 'ROUTE: billing' },
    { agent: 'desk', reply: 'ROUTE: legal' },
    { agent: 'billing', reply: (req) => `Billing: refund issued for "${req.text}".` },
    { agent: 'technical', reply: 'Technical: a reset link is on its way.' },
    { agent: 'legal', reply: 'Legal: you may cancel within 14 days (terms, section 4).' },
  ],
});

const supportDesk = router(desk, [billing, technical, legal], { fallback: 'legal' });
for (const request of ['I was charged twice', 'I cannot log in', 'Can I cancel my contract?']) {
  const result = await run(supportDesk, request, { adapter });
  console.log(`${request.padEnd(28)} -> ${result.destination.padEnd(10)} ${result.output}`);
}

/**
 * A manager with advisors: three advisors analyse the question in parallel
 * (at most two at once, each with its own time-out); the manager decides on
 * the enriched message. A failed advisor becomes a note instead of failing
 * the decision. Runs offline on the scripted adapter.
 *
 * The environment can name a real model instead (see docs/adapters.md):
 *
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/manager-advisors.ts
 */
import { advisors, agent, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const manager = agent({ name: 'manager', system: 'Decide, using the analysis gathered.' });
const security = agent({ name: 'security', system: 'Assess security risk.' });
const ops = agent({ name: 'ops', system: 'Assess operational risk.' });
const product = agent({ name: 'product', system: 'Assess customer impact.' });

const adapter = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    { agent: 'security', reply: 'No new attack surface; the change is behind a flag.' },
    { agent: 'ops', reply: { fault: 'throw', error: 'on-call dashboard unavailable' } },
    { agent: 'product', reply: 'Customers asked for this; low risk of confusion.' },
    { agent: 'manager', reply: (req) => `Ship it behind the flag. (Decided on ${req.text.split('### From').length - 1} advisor sections.)` },
  ],
});

const board = advisors(manager, [security, ops, product], { maxParallel: 2, timeoutMs: 30_000 });
const result = await run(board, 'Should we ship the new checkout on Friday?', { adapter });
for (const a of result.advice) console.log(`${a.ok ? 'ok    ' : 'failed'} ${a.advisor}: ${a.output}`);
console.log(`\n${result.agent}: ${result.output}`);

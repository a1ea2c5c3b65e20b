/**
 * `npm run demo`: a support desk defined as agent files, validated as a
 * graph, compiled into patterns and run offline on the scripted adapter.
 *
 * The front desk consults two advisors (risk, compliance), routes the
 * request to billing with a `route_to` tool call, and billing hands off to an
 * approval agent, which owns the answer. The answer, the terminal agent, the
 * op tree with usage, and the pattern events are printed.
 */
import { formatOpTree, startRun } from 'troupe';
import { compileAgents, parseAgentFile, terminalsOf, validateAgents } from 'troupe/agents';
import { usageByAgent } from 'troupe/kernel';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

// Agent files: YAML frontmatter, the body is the system prompt.
const files: Record<string, string> = {
  'front-desk': `---
description: Front desk that routes requests
router: { destinations: [billing, technical-support] }
advisors: [risk, compliance]
---
You are the front desk. Decide which department handles the request.`,
  billing: `---
description: Resolves charges, refunds and invoices
handoff: approval
---
You resolve billing issues and propose a remedy.`,
  approval: `---
description: Approves remedies and writes the customer reply
---
Approve or reject the proposed remedy and write the reply to the customer.`,
  'technical-support': `---
description: Fixes technical problems
---
You fix technical problems.`,
  risk: `---
description: Flags fraud and financial risk
---
Assess the risk of the request.`,
  compliance: `---
description: Checks refund policy
---
Check the request against the refund policy.`,
};
const defs = Object.entries(files).map(([name, text]) => parseAgentFile(text, { name }));
const { errors } = validateAgents(defs);
if (errors.length) throw new Error(errors.map((e) => e.message).join('\n'));
const flows = compileAgents(defs);

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env), else the scripted one.
const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: {
    risk: ['Low risk: long-standing Pro customer, first dispute.'],
    compliance: ['A duplicate charge is refundable in full within 60 days.'],
    'front-desk': [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'billing', reason: 'a duplicate charge' } }] }],
    billing: ['Invoice INV-77 was charged twice (2 x 12.50). Proposed remedy: refund 12.50.'],
    approval: [
      (req) =>
        req.text.includes('refund 12.50')
          ? 'Approved. Hi Ada, invoice INV-77 charged you twice; we have refunded 12.50. Sorry for the trouble.'
          : 'Rejected: no remedy proposed.',
    ],
  },
});

const request = 'I was charged twice this month for INV-77 (ada@example.com).';
const handle = startRun(flows['front-desk']!, request, { adapter });
const events: string[] = [];
handle.emitter.on('*', (e) => {
  switch (e.type) {
    case 'advisor.completed':
      events.push(`advisor.completed   ${e.advisor} advised ${e.main}`);
      break;
    case 'router.selected':
      events.push(`router.selected     ${e.router} -> ${e.destination} (${e.form}: ${e.reason ?? 'no reason'})`);
      break;
    case 'handoff.started':
      events.push(`handoff.started     ${e.from} -> ${e.to}`);
      break;
    case 'handoff.completed':
      events.push(`handoff.completed   ${e.from} -> ${e.to}, answered by ${e.agent}`);
      break;
    case 'run.completed':
      events.push(`run.completed       ${e.status}`);
      break;
  }
});
const result = await handle.result;

console.log(`Request: ${request}\n`);
console.log('Answer:');
console.log(`  ${result.output}`);
console.log(`\nTerminal agent: ${result.agent}   status: ${result.status}   (possible: ${terminalsOf(defs, 'front-desk').join(', ')})`);
console.log('\nOp tree (time, tokens, turns):');
console.log(formatOpTree(result.trace).replace(/^/gm, '  '));
console.log('\nUsage by agent:');
for (const [name, u] of Object.entries(usageByAgent(result.trace))) {
  console.log(`  ${name.padEnd(12)} in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}`);
}
console.log('\nEvents:');
console.log(events.map((e) => `  ${e}`).join('\n'));

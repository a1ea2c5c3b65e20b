/**
 * Guardrails and delegation hooks: a support desk whose input is checked by
 * a classifier on a cheaper model (alongside the first model call), whose
 * tools are watched, and whose handoff to a writer passes only the last
 * answer. The second request trips the input guardrail and the run ends
 * with a typed error. Offline it runs on the scripted adapter; the
 * environment can name a real model instead:
 *
 *   npx tsx examples/guardrails.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/guardrails.ts
 */
import { z } from 'zod';
import { agent, defineTool, handoff, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { GuardrailTripError, classifierGuardrail, defineToolGuardrail, lastMessages, withGuardrails } from 'troupe/guardrails';
import { scriptedAdapter } from 'troupe/testing';

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order',
  parameters: z.object({ orderId: z.string(), amount: z.number() }),
  execute: ({ orderId, amount }) => `Refunded ${amount} EUR on ${orderId}.`,
});

// The scripted adapter stands in for the models: the classifier allows the
// first request and blocks the second; the desk tries a large refund first.
export const adapter = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    { agent: 'topic-check', match: 'homework', reply: 'VERDICT: block\nREASON: homework help is not what this desk is for' },
    { agent: 'topic-check', reply: 'VERDICT: allow\nREASON: an order question' },
    {
      agent: 'desk',
      reply: [
        { toolCalls: [{ name: 'refund', arguments: { orderId: 'A-1042', amount: 900 } }] },
        { toolCalls: [{ name: 'refund', arguments: { orderId: 'A-1042', amount: 40 } }] },
        'Refunded 40 EUR on A-1042; larger refunds need a manager.',
      ],
    },
    { agent: 'writer', reply: (request) => `Dear customer, ${request.text.includes('40 EUR') ? 'we refunded 40 EUR' : 'we looked into it'}. Kind regards.` },
  ],
});

const topicCheck = agent({ name: 'topic-check', model: 'small-model', system: 'You check that requests are about orders.' });
const desk = agent({ name: 'desk', system: 'You handle orders. Refund with the refund tool.', tools: [refund] });
const writer = agent({ name: 'writer', system: 'You write the reply to the customer.' });

// Refunds above 100 EUR are refused: the model sees the refusal and tries again.
const refundLimit = defineToolGuardrail({
  name: 'refund-limit',
  tools: ['refund'],
  beforeCall: (call) =>
    (call.arguments as { amount: number }).amount > 100
      ? { action: 'refuse', message: 'Refunds above 100 EUR need a manager; refund at most 100 EUR.' }
      : { action: 'allow' },
});

const flow = withGuardrails(
  // The writer sees only the desk's last answer, not the request or the tool results.
  handoff(desk, writer, { delegation: { inputFilter: lastMessages(1, { keepRequest: false }) } }),
  { input: [classifierGuardrail(topicCheck, { name: 'on-topic' })], parallelInput: true, tools: [refundLimit] },
);

const ok = await run(flow, 'Order A-1042 arrived broken, please refund it.', {
  adapter,
  onEvent: (e) => {
    if (e.type === 'guardrail.checked') console.log(`guardrail ${e.guardrail} (${e.stage}): ${e.action ?? (e.tripped ? 'tripped' : 'passed')}`);
  },
});
console.log(`answer by ${ok.agent}: ${ok.output}`);

try {
  await run(flow, 'Can you do my maths homework?', { adapter });
} catch (error) {
  if (!(error instanceof GuardrailTripError)) throw error;
  console.log(`stopped by ${error.guardrail} at the ${error.stage} stage: ${error.verdict.reason ?? ''}`);
}

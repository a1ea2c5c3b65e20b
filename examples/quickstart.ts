/**
 * Quick start: one agent with a tool. Offline it runs on the scripted
 * adapter; the environment can name a real model instead:
 *
 *   npx tsx examples/quickstart.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/quickstart.ts
 */
import { z } from 'zod';
import { agent, defineTool, formatOpTree, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

// A tool: declared once with a zod schema; adapters receive JSON Schema.
const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'DHL' }),
});

// The model named by the environment (TROUPE_ADAPTER), else the scripted
// adapter, which stands in for a model: first it calls the tool, then it answers.
export const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: {
    support: [
      { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A-1042' } }] },
      (request) => `Your order A-1042 is on its way (${request.text.includes('DHL') ? 'DHL' : 'carrier unknown'}).`,
    ],
  },
});

export const support = agent({
  name: 'support',
  system: 'You are a support agent. Use lookup_order to answer questions about orders.',
  tools: [lookupOrder],
});

const result = await run(support, 'Where is my order A-1042?', { adapter });
console.log(result.output);
console.log(formatOpTree(result.trace));

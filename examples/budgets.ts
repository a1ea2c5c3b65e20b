/**
 * Budgets and a context budget: an orchestration whose lead keeps its
 * conversation under 6,000 tokens (earlier worker results are dropped as
 * the loop goes on), a worker with a budget of its own that runs out (the
 * orchestration treats it as a failed worker and goes on), and a cost cap
 * on the whole run that ends the loop with what it had. Offline it runs on
 * the scripted adapter; the environment can name a real model instead:
 *
 *   npx tsx examples/budgets.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/budgets.ts
 */
import { agent, orchestrate, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { withBudget } from 'troupe/patterns';
import { scriptedAdapter } from 'troupe/testing';

let iteration = 0;
// The scripted lead plans three tasks, then synthesises and asks for another
// iteration; the workers answer at length; every turn costs $0.002.
const cost = { costUsd: 0.002 };
export const adapter = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    {
      agent: 'lead',
      reply: (r) =>
        r.text.slice(r.text.lastIndexOf('[The conversation continues]') + 1).includes('## WORKER RESULTS')
          ? { text: `Draft ${iteration}: pricing page, copy and tests merged. [[NEEDS_ITERATION]]`, usage: { inputTokens: Math.ceil(r.text.length / 4), outputTokens: 20, ...cost } }
          : { text: `@worker:designer\nLayout ${++iteration}\n@end\n@worker:writer\nCopy ${iteration}\n@end\n@worker:researcher\nPrices ${iteration}\n@end`, usage: { inputTokens: Math.ceil(r.text.length / 4), outputTokens: 30, ...cost } },
    },
    { agent: 'researcher', reply: { text: 'Still comparing prices…', toolCalls: [{ name: 'search', arguments: {} }], usage: { inputTokens: 900, outputTokens: 50, ...cost } } },
    { agent: /designer|writer/, reply: (r) => ({ text: `${r.agent} done: ${'details '.repeat(900)}`, usage: { inputTokens: 300, outputTokens: 1800, ...cost } }) },
  ],
});

const loop = orchestrate({
  lead: agent({ name: 'lead', system: 'You lead a small web team.', context: { maxTokens: 6_000 } }),
  workers: [
    agent({ name: 'designer' }),
    agent({ name: 'writer' }),
    // The researcher may spend 2,000 tokens per task; its unknown `search` tool keeps it busy.
    agent({ name: 'researcher', budget: { name: 'research', totalTokens: 2_000 } }),
  ],
  maxIterations: 20,
  autoAdjust: false,
});

const result = await run(withBudget(loop, { name: 'launch', costUsd: 0.1 }), 'Build a pricing page for the launch.', {
  adapter,
  onEvent: (e) => {
    if (e.type === 'context.compacted') console.log(`compacted ${e.agent}: ${e.before} -> ${e.after} tokens (${e.strategy}; ${e.dropped.results} worker results, ${e.dropped.exchanges} exchanges dropped)`);
    if (e.type === 'budget.exhausted') console.log(`budget ${e.budget} exhausted: ${e.limit} ${e.reason} (max ${e.max})`);
  },
});
console.log(`status: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
console.log(`answer so far: ${result.output}`);
console.log(`spent: $${result.usage.costUsd.toFixed(3)} in ${result.usage.turns} model calls`);

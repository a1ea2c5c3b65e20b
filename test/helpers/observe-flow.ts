// A nested flow for the observability tests: a router sends the request to
// a plan whose chunks each run a builder with two advisors. Chunk 3's first
// attempt fails (so the trace, the report and the progress show a retry),
// and chunk 2's builder calls a tool.
import { z } from 'zod';
import { advisors, agent, defineTool, orchestrate, router } from '../../src/index.js';
import { planRunnable, type ChunkRunInput, type PlanRunOptions } from '../../src/plan/engine/execute.js';
import type { Plan } from '../../src/plan/model/plan.js';
import { scriptedAdapter, type ScriptedAdapter } from '../../src/adapters/scripted.js';
import type { Clock } from '../../src/core/clock.js';

export const deliveryPlan: Plan = {
  planSummary: 'Ship the export feature',
  chunks: [
    { sequenceIndex: 1, title: 'Design the export', prompt: 'Design the CSV export.', dependsOnIndexes: [], complexity: 'Low', role: 'Planning' },
    { sequenceIndex: 2, title: 'Build the export', prompt: 'Build the CSV export.', dependsOnIndexes: [1], complexity: 'High', role: 'Implementation' },
    { sequenceIndex: 3, title: 'Test the export', prompt: 'Test the CSV export.', dependsOnIndexes: [1], complexity: 'Medium', role: 'Testing' },
    { sequenceIndex: 4, title: 'Document the export', prompt: 'Document the CSV export.', dependsOnIndexes: [2, 3], complexity: 'Low', role: 'Generic' },
  ],
};

export const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file of the repository',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `contents of ${path}`,
});

/** The scripted model of the flow: every turn takes `latencyMs` on `clock`. */
export function deliveryAdapter(clock: Clock, latencyMs = 10): ScriptedAdapter {
  let failedOnce = false;
  return scriptedAdapter({
    clock,
    latencyMs,
    replies: {
      desk: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'delivery', reason: 'a feature to build' } }], usage: { inputTokens: 40, outputTokens: 6, costUsd: 0.0004 } }],
    },
    rules: [
      { agent: 'security', reply: { text: 'No secrets in the export.', usage: { inputTokens: 30, outputTokens: 8, costUsd: 0.0003 } } },
      { agent: 'style', reply: { text: 'Name columns in snake_case.', usage: { inputTokens: 30, outputTokens: 7, costUsd: 0.0003 } } },
      {
        agent: 'builder',
        match: /# Chunk 3:/,
        reply: (request) => {
          if (!failedOnce) {
            failedOnce = true;
            return { fault: 'throw', error: 'The model service is overloaded' };
          }
          return { text: `Tests pass (turn ${request.turn}).`, usage: { inputTokens: 120, outputTokens: 20, costUsd: 0.002 } };
        },
      },
      {
        agent: 'builder',
        match: (request) => /# Chunk 2:/.test(request.text) && request.turn === 1,
        reply: { toolCalls: [{ id: 'call-read', name: 'read_file', arguments: { path: 'src/export.ts' } }], usage: { inputTokens: 150, outputTokens: 12, costUsd: 0.002 } },
      },
      { agent: 'builder', reply: (request) => ({ text: `Done: ${request.text.split('\n')[0]}`, usage: { inputTokens: 100, outputTokens: 25, costUsd: 0.0015 } }) },
    ],
  });
}

/** Each chunk: the builder, advised by security and style, in the chunk's context. */
export function chunkWithAdvisors(input: ChunkRunInput): Promise<string> {
  const builder = agent({ name: 'builder', model: 'gpt-test', tools: [readFile] });
  const security = agent({ name: 'security', model: 'gpt-mini' });
  const style = agent({ name: 'style', model: 'gpt-mini' });
  return advisors(builder, [security, style], { name: `chunk ${input.chunk.sequenceIndex} + advisors` })
    .run(input.prompt, input.ctx)
    .then((outcome) => outcome.output);
}

/** The whole flow: the desk routes to the delivery plan. */
export function deliveryFlow(options: PlanRunOptions = {}) {
  const desk = agent({ name: 'desk', model: 'gpt-mini', description: 'Front desk' });
  const delivery = planRunnable(deliveryPlan, {
    planId: 'delivery',
    maxParallel: 2,
    retry: { maxRetries: 1, delayMs: 5 },
    runChunk: chunkWithAdvisors,
    ...options,
  });
  return router(desk, { delivery });
}

/**
 * The showcase: the delivery flow whose last chunk is a review loop (a lead,
 * a writer and a judge scoring 0.55, 0.7 and 0.93; the second draft repeats
 * the first, so the loop warns of a stall). Used by the report's tests and
 * its screenshot.
 */
export function showcaseFlow() {
  return deliveryFlow({
    runChunk: (input) => {
      if (input.chunk.sequenceIndex !== 4) return chunkWithAdvisors(input);
      const review = orchestrate({
        name: 'docs-review',
        mode: 'orchestrator-reflect',
        lead: agent({ name: 'lead', model: 'gpt-test' }),
        workers: [agent({ name: 'writer', model: 'gpt-mini' })],
        evaluator: agent({ name: 'judge', model: 'gpt-mini' }),
        maxIterations: 4,
        goalScore: 0.9,
      });
      return review.run(input.prompt, input.ctx).then((outcome) => outcome.output);
    },
  });
}

/** The showcase's scripted model: the delivery adapter plus the review loop's agents. */
export function showcaseAdapter(clock: Clock, latencyMs = 10): ScriptedAdapter {
  const adapter = deliveryAdapter(clock, latencyMs);
  let leadTurns = 0;
  const drafts = ['Docs: how to export, the columns.', 'Docs: how to export, the columns.', 'Docs: how to export, every column with its type, and two examples.'];
  for (let i = 0; i < 3; i++) {
    adapter.enqueue('writer', { text: drafts[i]!, usage: { inputTokens: 90, outputTokens: 40, costUsd: 0.0006 } });
    adapter.enqueue('judge', [
      { text: 'SCORE: 0.55\nRATIONALE: Lists no columns.', usage: { inputTokens: 80, outputTokens: 12, costUsd: 0.0004 } },
      { text: 'SCORE: 0.7\nRATIONALE: The same draft again; still no examples.', usage: { inputTokens: 80, outputTokens: 14, costUsd: 0.0004 } },
      { text: 'SCORE: 0.93\nRATIONALE: Complete, with examples.', usage: { inputTokens: 80, outputTokens: 9, costUsd: 0.0004 } },
    ][i]!);
  }
  for (let i = 0; i < 6; i++) {
    adapter.enqueue('lead', () => {
      leadTurns++;
      const iteration = Math.ceil(leadTurns / 2);
      const text = leadTurns % 2 === 1 ? `@worker:writer\nWrite the export docs (draft ${iteration}).\n@end` : drafts[iteration - 1]!;
      return { text, usage: { inputTokens: 110, outputTokens: 30, costUsd: 0.0012 } };
    });
  }
  return adapter;
}

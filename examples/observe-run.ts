/**
 * See a run three ways: a front desk routes a feature request to a plan
 * whose chunks each run a builder with two advisors (one chunk fails once
 * and is retried). The same events feed
 * - OpenTelemetry spans (`troupe/otel`; here an in-memory exporter, in an
 *   app the SDK and exporter you register),
 * - the HTML run report (`troupe/report`), written from the run log,
 * - and the progress lines `troupe run` prints off a terminal.
 *
 *   npx tsx examples/observe-run.ts
 *
 * With TROUPE_ADAPTER set (see docs/adapters.md) the agents run on a real model.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { advisors, agent, router, run } from 'troupe';
import { planRunnable, type Plan } from 'troupe/plan';
import { memoryStore, readRun } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { otelTracing } from 'troupe/otel';
import { renderRunReport } from 'troupe/report';
import { scriptedAdapter } from 'troupe/testing';

const plan: Plan = {
  planSummary: 'Ship the CSV export',
  chunks: [
    { sequenceIndex: 1, title: 'Design the export', prompt: 'Design the CSV export of orders.', dependsOnIndexes: [], complexity: 'Low', role: 'Planning' },
    { sequenceIndex: 2, title: 'Build the export', prompt: 'Build the CSV export of orders.', dependsOnIndexes: [1], complexity: 'High', role: 'Implementation' },
    { sequenceIndex: 3, title: 'Test the export', prompt: 'Test the CSV export of orders.', dependsOnIndexes: [1], complexity: 'Medium', role: 'Testing' },
  ],
};

// The scripted model: the desk routes, advisors advise, the builder answers; its first try at chunk 3 fails.
let failed = false;
const adapter =
  adapterFromEnv() ??
  scriptedAdapter({
    latencyMs: 15,
    replies: { desk: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'delivery', reason: 'a feature to build' } }] }] },
    rules: [
      { agent: 'security', reply: 'Keep personal data out of the export.' },
      { agent: 'style', reply: 'Name the columns in snake_case.' },
      {
        agent: 'builder',
        reply: (r) => {
          if (r.text.includes('# Chunk 3') && !failed) {
            failed = true;
            return { fault: 'throw', error: 'The model service is overloaded' };
          }
          return `Done: ${/# Chunk \d+: (.*)/.exec(r.text)?.[1] ?? 'the work'}.`;
        },
      },
    ],
  });

const delivery = planRunnable(plan, {
  planId: 'delivery',
  maxParallel: 2,
  retry: { maxRetries: 1, delayMs: 10 },
  runChunk: async ({ prompt, ctx, chunk }) => {
    const builder = agent({ name: 'builder', system: 'You build what the chunk asks for.' });
    const panel = [agent({ name: 'security', system: 'You review for security.' }), agent({ name: 'style', system: 'You review for style.' })];
    const outcome = await advisors(builder, panel, { name: `chunk ${chunk.sequenceIndex} + advisors` }).run(prompt, ctx);
    return outcome.output;
  },
});
const desk = router(agent({ name: 'desk', description: 'Front desk' }), { delivery });

// 1. OpenTelemetry: every op a span. Register your own SDK and exporter instead of this one.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracing = otelTracing({ tracer: provider.getTracer('example') });

// 2. The run log, for the report.
const store = memoryStore();

const result = await run(desk, 'Add a CSV export of orders', { adapter, store, onEvent: tracing.onEvent });
console.log(`answer: ${result.output.split('\n')[0]} (${result.status})`);

// The span tree, one line per span.
const spans = exporter.getFinishedSpans();
const children = (parent: string | undefined) => spans.filter((s) => s.parentSpanContext?.spanId === parent);
const print = (span: ReadableSpan, depth: number): void => {
  const chunk = span.attributes['troupe.chunk.id'];
  console.log(`${'  '.repeat(depth)}${span.name}${chunk === undefined ? '' : ` [chunk ${String(chunk)}]`}${span.status.code === 2 ? ' (error)' : ''}`);
  for (const child of children(span.spanContext().spanId)) print(child, depth + 1);
};
console.log(`\n${spans.length} spans:`);
for (const root of children(undefined)) print(root, 1);
await provider.shutdown();

// 3. The report: one HTML file, everything inline.
const html = renderRunReport(await readRun(result.runId, { store }));
const file = join(tmpdir(), 'troupe-example-report.html');
writeFileSync(file, html);
console.log(`\nreport: ${file} (${Math.ceil(Buffer.byteLength(html) / 1024)} KB); open it in a browser`);

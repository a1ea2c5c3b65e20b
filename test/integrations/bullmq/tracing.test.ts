import { randomUUID } from 'node:crypto';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/core/run.js';
import { bullmqExecutor, startWorker } from '../../../src/integrations/bullmq/index.js';
import { extractTraceContext, otelTracing } from '../../../src/integrations/otel/index.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe.skipIf(!url)('trace context across the queue', () => {
  const open: Array<{ close(): Promise<void>; shutdown?: never }> = [];
  const providers: BasicTracerProvider[] = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
    await Promise.all(providers.splice(0).map((p) => p.shutdown()));
  });

  function tracer() {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    providers.push(provider);
    return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
  }

  it('carries the carrier the app provides: the worker’s spans join the coordinator’s trace under the plan', async () => {
    const propagator = new W3CTraceContextPropagator();
    const coordinator = tracer();
    const workerSide = tracer();
    const coordinatorTracing = otelTracing({ tracer: coordinator.tracer, propagator });
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const carriers: Array<Record<string, string> | undefined> = [];
    const worker = await startWorker({
      ...place,
      adapter: scriptedAdapter({ fallback: 'done' }),
      observe: (job) => {
        carriers.push(job.traceContext);
        return otelTracing({ tracer: workerSide.tracer, parent: extractTraceContext(job.traceContext, propagator) }).onEvent;
      },
    });
    open.push(worker);
    const executor = bullmqExecutor({ ...place, traceContext: (_job, op) => coordinatorTracing.inject(op) });
    open.push(executor);
    await run(planRunnable(plan([chunk(0), chunk(1)]), { executor, planId: 'traced' }), 'task', { onEvent: coordinatorTracing.onEvent });
    expect(carriers).toHaveLength(2);
    for (const c of carriers) expect(c?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const planSpan = coordinator.spans().find((s) => s.name === 'invoke_workflow traced')!;
    const roots = workerSide.spans().filter((s) => !workerSide.spans().some((p) => p.spanContext().spanId === parentOf(s)));
    expect(roots).toHaveLength(2);
    for (const r of roots) {
      expect(r.spanContext().traceId).toBe(planSpan.spanContext().traceId);
      expect(parentOf(r)).toBe(planSpan.spanContext().spanId);
    }
  });
});

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

import { randomUUID } from 'node:crypto';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import { bullmqExecutor, queueMetricNames, queueMetrics, startWorker } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

/** A reader the test collects from when it wants (the SDK's own collection path). */
class ManualReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The SDK's meter provider with a reader; `read()` collects and returns the metrics by name. */
function sdk() {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  const read = async (): Promise<Map<string, MetricData>> => {
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    return new Map(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
  };
  return { provider, meter: provider.getMeter('troupe-test'), read };
}

/** A gauge's points as `attribute value → value`, keyed by `key` (or the queue). */
function gauge(metric: MetricData | undefined, key = 'messaging.destination.name'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of metric?.dataPoints ?? []) out[String(p.attributes[key])] = p.value as number;
  return out;
}

describe('queueMetrics options', () => {
  it('refuses what is not an executor, a meter or a list of queues', () => {
    const { meter } = sdk();
    const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:1' });
    const routed = bullmqExecutor({ connection: 'redis://127.0.0.1:1', queueName: (job) => job.chunk.role });
    expect(() => queueMetrics({} as never, { meter })).toThrow(ConfigurationError);
    expect(() => queueMetrics(executor, { meter: {} as never })).toThrow(/OpenTelemetry meter/);
    expect(() => queueMetrics(executor, { meter, queueNames: [] })).toThrow(/queueNames/);
    expect(() => queueMetrics(routed, { meter })).toThrow(/required when the executor routes jobs to several queues/);
    expect(() => queueMetrics(routed, { meter, queueNames: ['Generic'] }).close()).not.toThrow();
  });
});

describe.skipIf(!url)('queueMetrics on Redis', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  it('reports the queue depth, active jobs, oldest wait, workers and each job’s wait through the OpenTelemetry SDK', { timeout: 30_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const executor = bullmqExecutor({ ...place, maxParallel: 8 });
    open.push(executor);
    const { meter, read, provider } = sdk();
    open.push({ close: () => provider.shutdown() });
    // The SDK's Meter is a QueueMetricsMeter: this compiles without a cast.
    const reporting = queueMetrics(executor, { meter, attributes: { 'deployment.environment.name': 'test' } });

    // Three independent chunks and no worker yet: all three wait.
    const running = executePlan(plan([chunk(0), chunk(1), chunk(2)]), { executor });
    while ((await executor.stats()).waiting < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 20));
    let metrics = await read();
    expect(gauge(metrics.get(queueMetricNames.jobs), 'troupe.job.state')).toEqual({ waiting: 3, active: 0, delayed: 0 });
    expect(metrics.get(queueMetricNames.jobs)!.dataPoints[0]!.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.destination.name': place.queueName,
      'deployment.environment.name': 'test',
    });
    expect(metrics.get(queueMetricNames.jobs)!.descriptor.unit).toBe('{job}');
    expect(gauge(metrics.get(queueMetricNames.oldestWait))[place.queueName]).toBeGreaterThan(0.01);
    expect(metrics.get(queueMetricNames.oldestWait)!.descriptor.unit).toBe('s');
    expect(gauge(metrics.get(queueMetricNames.inFlight))).toEqual({ [place.queueName]: 3 });
    const workersBefore = gauge(metrics.get(queueMetricNames.workers))[place.queueName];
    expect(workersBefore === undefined || workersBefore === 0).toBe(true);

    // A worker comes up and takes them: depth 0, one wait point per job.
    const worker = await startWorker({ ...place, adapter: scriptedAdapter({ fallback: (r) => `did ${chunkOf(r.text)}` }), maxParallel: 3, name: 'm1' });
    open.push(worker);
    expect((await running).status).toBe('completed');
    metrics = await read();
    expect(gauge(metrics.get(queueMetricNames.jobs), 'troupe.job.state')).toEqual({ waiting: 0, active: 0, delayed: 0 });
    expect(gauge(metrics.get(queueMetricNames.inFlight))).toEqual({ [place.queueName]: 0 });
    const workersNow = gauge(metrics.get(queueMetricNames.workers))[place.queueName];
    if (workersNow !== undefined) expect(workersNow).toBe(1); // CLIENT LIST allowed
    const waits = metrics.get(queueMetricNames.waitDuration)!;
    expect(waits.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(waits.descriptor.unit).toBe('s');
    const histogram = waits.dataPoints[0]!.value as { count: number; min?: number };
    expect(histogram.count).toBe(3);
    expect(histogram.min).toBeGreaterThan(0.01); // they waited for the worker

    // Closed: the queue is not read any more (a job waiting now is not seen), and later jobs add no wait.
    reporting.close();
    reporting.close();
    await executePlan(plan([chunk(0)]), { executor });
    await worker.close();
    const stop = new AbortController();
    const waiting = executePlan(plan([chunk(0)]), { executor, signal: stop.signal }).catch(() => undefined);
    while ((await executor.stats()).waiting < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    metrics = await read();
    expect(gauge(metrics.get(queueMetricNames.jobs), 'troupe.job.state').waiting).toBe(0);
    expect((metrics.get(queueMetricNames.waitDuration)!.dataPoints[0]!.value as { count: number }).count).toBe(3);
    stop.abort();
    await waiting;
  });

  it('leaves a queue it cannot read out of a collection, with a warning, and never holds the collection up', { timeout: 30_000 }, async () => {
    const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:1', timeoutMs: 200 });
    open.push(executor);
    const warnings: string[] = [];
    executor.events.on('queue.warning', (e) => warnings.push(e.message));
    const { meter, read, provider } = sdk();
    open.push({ close: () => provider.shutdown() });
    queueMetrics(executor, { meter });
    const metrics = await read();
    expect(metrics.get(queueMetricNames.jobs)?.dataPoints ?? []).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^Metrics of queue "troupe" could not be read: /)]);
  });
});

/**
 * `queueMetrics`: a queue's depth, active jobs, oldest wait, workers and
 * each job's wait as OpenTelemetry metrics, for autoscaling and
 * dashboards. It records on a meter you give (the OpenTelemetry API's
 * `Meter`, described here by the few methods it uses), so `troupe/bullmq`
 * loads nothing of OpenTelemetry itself.
 * @module
 */
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import { anything, defineOptions, object } from '../../core/options.js';
import type { QueueClientEvents } from './events.js';
import type { BullmqExecutor } from './executor.js';

/** Metric attributes: what OpenTelemetry's `Attributes` allows for these metrics. */
export type MetricAttributes = Record<string, string | number | boolean>;

/** An instrument that is observed in a callback (an OpenTelemetry `ObservableGauge`). */
export interface ObservableInstrument {
  addCallback(callback: (result: { observe(value: number, attributes?: MetricAttributes): void }) => void): void;
  removeCallback(callback: (result: { observe(value: number, attributes?: MetricAttributes): void }) => void): void;
}

/** The result a batch callback observes into. */
export interface BatchObservation {
  observe(instrument: ObservableInstrument, value: number, attributes?: MetricAttributes): void;
}

/** What {@link queueMetrics} needs of a meter: the methods of OpenTelemetry's `Meter` it calls (`metrics.getMeter(name)` is one). */
export interface QueueMetricsMeter {
  createObservableGauge(name: string, options?: { description?: string; unit?: string }): ObservableInstrument;
  createHistogram(name: string, options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } }): {
    record(value: number, attributes?: MetricAttributes): void;
  };
  addBatchObservableCallback(callback: (result: BatchObservation) => void | Promise<void>, observables: ObservableInstrument[]): void;
  removeBatchObservableCallback(callback: (result: BatchObservation) => void | Promise<void>, observables: ObservableInstrument[]): void;
}

/** Options of {@link queueMetrics}. */
export interface QueueMetricsOptions {
  /** Where to record: an OpenTelemetry meter (`metrics.getMeter('my-service')`). */
  meter: QueueMetricsMeter;
  /** The queues to report. Default: the executor's queue (required when its `queueName` is a function). */
  queueNames?: readonly string[];
  /** Attributes added to every point (a tenant, a deployment). Default: none. */
  attributes?: MetricAttributes;
}

/** Reporting metrics; `close()` stops it. */
export interface QueueMetrics {
  /** Stop observing and recording (idempotent). The executor stays open. */
  close(): void;
}

/** The metric names, for dashboards and autoscalers. */
export const queueMetricNames = {
  /** Gauge, `{job}`: the queue's jobs by `troupe.job.state` (`waiting`: the queue's depth, `active`, `delayed`). */
  jobs: 'troupe.queue.jobs',
  /** Gauge, `s`: how long the oldest waiting job has waited (0 when none waits). */
  oldestWait: 'troupe.queue.oldest_wait',
  /** Gauge, `{worker}`: workers connected to the queue (not reported when Redis refuses `CLIENT LIST`). */
  workers: 'troupe.queue.workers',
  /** Gauge, `{job}`: jobs this coordinator waits for. */
  inFlight: 'troupe.queue.in_flight',
  /** Histogram, `s`: from queued to started, one point per job a worker starts. */
  waitDuration: 'troupe.queue.wait.duration',
} as const;

/** Buckets of the wait histogram, in seconds: from 5 ms to 10 minutes. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

// `meter` and `queueNames` are checked below, with messages that say what they must be.
const queueMetricsOptions = defineOptions<QueueMetricsOptions>('queueMetrics', { meter: anything, queueNames: anything, attributes: object });

/**
 * Report the queues of `executor` as OpenTelemetry metrics: the gauges
 * are read with `executor.stats()` each time the meter's reader collects
 * (a queue that cannot be read then is left out of that collection), and
 * the wait of every job a worker starts goes into a histogram. Points carry
 * `messaging.system: 'bullmq'` and `messaging.destination.name: <queue>`.
 * Scale workers on `troupe.queue.jobs{troupe.job.state="waiting"}`, or on
 * `troupe.queue.oldest_wait` when jobs differ in length.
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * const executor = bullmqExecutor({ connection: process.env.REDIS_URL! });
 * const reporting = queueMetrics(executor, { meter: metrics.getMeter('planner') });
 * // ... on shutdown
 * reporting.close();
 * await executor.close();
 * ```
 */
export function queueMetrics(executor: BullmqExecutor, options: QueueMetricsOptions): QueueMetrics {
  queueMetricsOptions.check(options);
  if (typeof executor?.stats !== 'function' || typeof executor.events?.on !== 'function') {
    throw new ConfigurationError(`Expected \`executor\` to be a bullmqExecutor, got ${describeValue(executor)}`);
  }
  const meter = options?.meter;
  if (typeof meter?.createObservableGauge !== 'function' || typeof meter.addBatchObservableCallback !== 'function' || typeof meter.createHistogram !== 'function') {
    throw new ConfigurationError(`Expected \`meter\` to be an OpenTelemetry meter (metrics.getMeter(name)), got ${describeValue(meter)}`);
  }
  const queues = options.queueNames ?? (executor.queueName === undefined ? undefined : [executor.queueName]);
  if (!Array.isArray(queues) || queues.length === 0 || !queues.every((q) => typeof q === 'string' && q !== '')) {
    throw new ConfigurationError(`Expected \`queueNames\` to be a non-empty list of queue names (required when the executor routes jobs to several queues), got ${describeValue(options.queueNames)}`);
  }
  const base: MetricAttributes = { ...options.attributes, 'messaging.system': 'bullmq' };
  const at = (queue: string, extra: MetricAttributes = {}): MetricAttributes => ({ ...base, 'messaging.destination.name': queue, ...extra });

  const jobs = meter.createObservableGauge(queueMetricNames.jobs, { description: 'Jobs of the queue by state (waiting: the queue depth)', unit: '{job}' });
  const oldestWait = meter.createObservableGauge(queueMetricNames.oldestWait, { description: 'Age of the oldest waiting job', unit: 's' });
  const workers = meter.createObservableGauge(queueMetricNames.workers, { description: 'Workers connected to the queue', unit: '{worker}' });
  const inFlight = meter.createObservableGauge(queueMetricNames.inFlight, { description: 'Jobs this coordinator waits for', unit: '{job}' });
  const waits = meter.createHistogram(queueMetricNames.waitDuration, { description: 'Time from queued to started', unit: 's', advice: { explicitBucketBoundaries: WAIT_BUCKETS } });
  const observables = [jobs, oldestWait, workers, inFlight];

  const observe = async (result: BatchObservation): Promise<void> => {
    await Promise.all(
      queues.map(async (queueName) => {
        let stats;
        try {
          stats = await executor.stats({ queueName });
        } catch (error) {
          executor.events.emit('queue.warning', { message: `Metrics of queue "${queueName}" could not be read: ${errorMessage(error)}` });
          return;
        }
        for (const state of ['waiting', 'active', 'delayed'] as const) result.observe(jobs, stats[state], at(queueName, { 'troupe.job.state': state }));
        result.observe(oldestWait, stats.oldestWaitingMs / 1000, at(queueName));
        if (stats.workers >= 0) result.observe(workers, stats.workers, at(queueName));
        result.observe(inFlight, stats.inFlight, at(queueName));
      }),
    );
  };
  const onStarted: QueueClientEvents['job.started'] = (event) => {
    if (queues.includes(event.queue)) waits.record(event.waitMs / 1000, at(event.queue));
  };
  meter.addBatchObservableCallback(observe, observables);
  executor.events.on('job.started', onStarted);
  let closed = false;
  return {
    close() {
      if (closed) return;
      closed = true;
      meter.removeBatchObservableCallback(observe, observables);
      executor.events.off('job.started', onStarted);
    },
  };
}

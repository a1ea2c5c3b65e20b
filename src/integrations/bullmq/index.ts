/**
 * `troupe/bullmq`: distributed execution on BullMQ and Redis (`bullmq` and
 * `ioredis`, optional peer dependencies). A coordinator keeps scheduling;
 * {@link bullmqExecutor} sends each chunk attempt to a queue and
 * {@link remote} sends one named runnable's run; {@link startWorker} (or
 * `troupe worker`) runs them on any machine, and their events, usage and
 * results come back into the coordinator's run.
 * @module troupe/bullmq
 * @category Integrations
 */
export { bullmqExecutor, type BullmqExecutor, type BullmqExecutorOptions, type QueueStats, type TraceCarrier } from './executor.js';
export { startWorker, type StartWorkerOptions, type TroupeWorker } from './worker.js';
export { remote, type RemoteOptions, type RemoteRunnable } from './remote.js';
export {
  queueMetrics,
  queueMetricNames,
  type BatchObservation,
  type MetricAttributes,
  type ObservableInstrument,
  type QueueMetrics,
  type QueueMetricsMeter,
  type QueueMetricsOptions,
} from './metrics.js';
export type { QueueConnection, QueueLocation } from './connection.js';
export type { QueueClientOptions } from './options.js';
export type { JobRef, QueueClientEvents, RemoteEvents, WorkerEvents, WorkerJobEvent } from './events.js';
export type { JobKind } from './wire.js';
export type { WorkerJobInfo } from './worker-job.js';
export type { RoleAgents, WorkerAgents } from './registry.js';
export { JobRefusedError, QueueError, RemoteJobError, type JobRefusedReason, type QueueErrorReason } from './errors.js';
export { DEFAULT_MAX_JOB_BYTES, DEFAULT_MAX_PROMPT_BYTES } from './trust.js';

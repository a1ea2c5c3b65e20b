/**
 * Options a coordinator's queue client shares (`bullmqExecutor`, `remote`):
 * time limits, how long finished jobs stay in Redis, the clock.
 * @module
 */
import { realClock, type Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { anything, expectPositiveInteger, expectPositiveNumber, type OptionsShape } from '../../core/options.js';
import type { JobClientSettings } from './client.js';
import type { QueueLocation } from './connection.js';
import { jobTrust } from './trust.js';

/** How a coordinator talks to its queue. */
export interface QueueClientOptions extends QueueLocation {
  /** Longest wait for one Redis call (adding a job, cancelling one, reading counts), in ms. Default: 10000. */
  timeoutMs?: number;
  /**
   * How long jobs in flight wait for a lost Redis connection to come back,
   * in ms; past it they fail with a `QueueError` (`unavailable`), which a
   * plan counts as a failed attempt. Default: 60000.
   */
  unavailableTimeoutMs?: number;
  /**
   * How often jobs in flight are checked against their state in Redis (a
   * result whose event was missed, a job Redis lost), in ms. Default: 5000.
   */
  reconcileIntervalMs?: number;
  /**
   * How long finished jobs stay in Redis, in seconds: a coordinator that
   * resumes a run finds the jobs the earlier one added, and their results,
   * while they are kept. Default: `{ completed: 3600, failed: 86400 }`.
   */
  keepJobs?: { completed?: number; failed?: number };
  /** The clock of every wait above. Default: the real clock. */
  clock?: Clock;
  /**
   * A secret shared with the workers (`startWorker({ signingKey })`), of at
   * least 16 bytes: each job is signed with it (HMAC-SHA256 over the job's
   * id, name and data), and a worker with the same key runs only jobs whose
   * signature verifies. Without it, anyone who can write to the queue's
   * Redis can have the workers run work of their own. Default: none (jobs
   * are not signed).
   */
  signingKey?: string | Uint8Array;
  /**
   * The largest job, in bytes of JSON: a larger one is refused here,
   * before it is added (`JobRefusedError`, reason `too_large`). Default:
   * 2 MiB.
   */
  maxJobBytes?: number;
  /**
   * The largest prompt of a job (a chunk's prompt, a `remote` run's input),
   * in bytes of UTF-8: a larger one is refused before it is added. Default:
   * 1 MiB.
   */
  maxPromptBytes?: number;
}

/** The shape of {@link QueueClientOptions} (the queue's place aside); the values are checked by {@link clientSettings}. */
export const queueClientShape: OptionsShape<Omit<QueueClientOptions, keyof QueueLocation>> = {
  timeoutMs: anything,
  unavailableTimeoutMs: anything,
  reconcileIntervalMs: anything,
  keepJobs: anything,
  clock: anything,
  signingKey: anything,
  maxJobBytes: anything,
  maxPromptBytes: anything,
};

/** The shape of {@link QueueLocation}; the values are checked by `checkPlace`. */
export const queueLocationShape: OptionsShape<QueueLocation> = { connection: anything, queueName: anything, prefix: anything };

/** The validated settings of a queue client. */
export function clientSettings(options: Omit<QueueClientOptions, keyof QueueLocation>, usedBy: string): JobClientSettings {
  const keep = options.keepJobs ?? {};
  if (typeof keep !== 'object' || keep === null) throw new ConfigurationError(`Expected \`keepJobs\` to be { completed?, failed? } in seconds, got ${describeValue(keep)}`);
  if (options.clock !== undefined && (typeof options.clock?.now !== 'function' || typeof options.clock.setTimer !== 'function')) {
    throw new ConfigurationError(`Expected \`clock\` to be a Clock, got ${describeValue(options.clock)}`);
  }
  return {
    clock: options.clock ?? realClock,
    timeoutMs: expectPositiveNumber('timeoutMs', options.timeoutMs) ?? 10_000,
    unavailableTimeoutMs: expectPositiveNumber('unavailableTimeoutMs', options.unavailableTimeoutMs) ?? 60_000,
    reconcileIntervalMs: expectPositiveNumber('reconcileIntervalMs', options.reconcileIntervalMs) ?? 5_000,
    keepCompletedSeconds: expectPositiveInteger('keepJobs.completed', keep.completed) ?? 3_600,
    keepFailedSeconds: expectPositiveInteger('keepJobs.failed', keep.failed) ?? 86_400,
    trust: jobTrust(options),
    usedBy,
  };
}

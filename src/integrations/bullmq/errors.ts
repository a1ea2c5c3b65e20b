/**
 * The errors of distributed execution: the queue could not be reached (or
 * lost a job), and a job that failed on its worker.
 * @module
 */
import { TroupeError, type TroupeErrorOptions } from '../../core/errors.js';
import { defined } from '../../core/defined.js';

/** Why a {@link QueueError} was thrown. */
export type QueueErrorReason =
  /** A call to Redis did not answer within `timeoutMs`. */
  | 'timeout'
  /** Redis was unreachable for longer than `unavailableTimeoutMs` while the job ran. */
  | 'unavailable'
  /** The job is no longer in Redis (Redis restarted without persistence, or someone removed it). */
  | 'lost'
  /** The executor, worker or remote runnable is closed. */
  | 'closed'
  /** Redis refused a command. */
  | 'command_failed';

/**
 * The queue could not do what was asked: Redis did not answer, was away too
 * long, or lost the job. A plan counts it as a failed attempt (and retries).
 */
export class QueueError extends TroupeError {
  /** Why. */
  readonly reason: QueueErrorReason;
  constructor(reason: QueueErrorReason, message: string, options: TroupeErrorOptions = {}) {
    super('queue_error', message, { ...options, details: { reason, ...options.details } });
    this.reason = reason;
  }
}

/**
 * A job failed on its worker. The message is the worker's; `remoteCode` is
 * the troupe error code it had there (`timeout`, `adapter_error`, ...), when
 * it had one.
 */
export class RemoteJobError extends TroupeError {
  /** The code of the error on the worker, when it was a troupe error. */
  readonly remoteCode: string | undefined;
  constructor(message: string, options: TroupeErrorOptions & { remoteCode?: string | undefined } = {}) {
    super('remote_failed', message, { ...options, details: { ...defined({ remoteCode: options.remoteCode }), ...options.details } });
    this.remoteCode = options.remoteCode;
  }
}

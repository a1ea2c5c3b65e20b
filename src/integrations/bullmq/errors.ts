/**
 * The errors of distributed execution: the queue could not be reached (or
 * lost a job), and a job that failed on its worker.
 * @module
 */
import { TroupeError, type TroupeErrorOptions } from '../../core/errors.js';
import { defined } from '../../core/defined.js';
import type { RunContext } from '../../core/context.js';
import { GuardrailTripError } from '../../core/guardrails.js';
import type { GuardrailTripWire } from './wire.js';

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
  /** With `remoteCode: 'guardrail_tripped'`: the guardrail that tripped on the worker, its stage and verdict. */
  readonly trip: GuardrailTripWire | undefined;
  constructor(message: string, options: TroupeErrorOptions & { remoteCode?: string | undefined; trip?: GuardrailTripWire | undefined } = {}) {
    super('remote_failed', message, { ...options, details: { ...defined({ remoteCode: options.remoteCode }), ...options.details } });
    this.remoteCode = options.remoteCode;
    this.trip = options.trip;
  }
}

/** Why a {@link JobRefusedError} was thrown. */
export type JobRefusedReason =
  /** The worker runs only signed jobs (`signingKey`), and the job has no signature. */
  | 'unsigned'
  /** The job's signature does not verify with the worker's `signingKey`: another key signed it, or the job was changed after. */
  | 'bad_signature'
  /** The job's prompt or JSON is over `maxPromptBytes` or `maxJobBytes`. */
  | 'too_large';

/**
 * A job was refused before anything of it ran: by its worker (unsigned, a
 * signature that does not verify, too large) or, for a job too large, by
 * the coordinator before adding it. Code `job_refused`; BullMQ fails the
 * job without retrying it.
 */
export class JobRefusedError extends TroupeError {
  /** Why. */
  readonly reason: JobRefusedReason;
  constructor(reason: JobRefusedReason, message: string, options: TroupeErrorOptions = {}) {
    super('job_refused', message, { ...options, details: { reason, ...options.details } });
    this.reason = reason;
  }
}

/**
 * What a coordinator makes of a remote job's error in `ctx`: a guardrail
 * that tripped on the worker halts the run here as it would have in
 * process (a {@link GuardrailTripError} with the worker's guardrail, stage
 * and verdict, and this run's trace; no retry, nothing more dispatched,
 * jobs in flight cancelled), and the run's halting error is returned.
 * Any other error is returned as it is.
 */
export function coordinatorError(ctx: RunContext, error: unknown): unknown {
  if (!(error instanceof RemoteJobError) || error.remoteCode !== 'guardrail_tripped' || error.trip === undefined) return error;
  const tripped = new GuardrailTripError({ ...error.trip, trace: ctx.trace }, { cause: error });
  ctx.halt(tripped);
  return ctx.halted ?? tripped;
}

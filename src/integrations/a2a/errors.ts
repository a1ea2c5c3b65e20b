/**
 * The error of a remote A2A agent: every way the remote or the network can
 * fail, as one typed error with a reason.
 * @module
 */
import { TroupeError, type TroupeErrorOptions } from '../../core/errors.js';

/** Why a {@link RemoteAgentError} was thrown. */
export type RemoteAgentErrorReason =
  /** The agent card could not be fetched (no answer, an HTTP error, too large). */
  | 'card_unreachable'
  /** What the card URL answered is not an agent card troupe can use (not JSON, fields missing, no interface it speaks). */
  | 'card_invalid'
  /** The card does not hold what was asked of it: a skill it does not list, an endpoint on another origin or not over HTTP. */
  | 'card_mismatch'
  /** The agent's endpoint could not be reached, or stopped answering. */
  | 'unreachable'
  /** The endpoint the card names does not speak A2A (an HTTP error, not JSON-RPC). */
  | 'endpoint'
  /** The agent answered something the protocol does not allow. */
  | 'protocol'
  /** The agent refused the request with a protocol error (its code is in `details.remoteCode`). */
  | 'rejected'
  /** The connection closed before the task ended, and the task could not be read again. */
  | 'connection_lost'
  /** The task ended failed, rejected or cancelled on the agent's side. */
  | 'task_failed'
  /** The agent asks for input, and this run has no way to ask a person. */
  | 'input_required'
  /** The agent asks for authentication. */
  | 'auth_required';

/**
 * A remote A2A agent failed: its card, its endpoint, the network or the
 * task. `reason` says which; `details` carry the agent's URL and, where
 * there is one, the task id and the agent's own error code.
 *
 * @example
 * ```ts
 * try { await run(reviewer, 'Review this') } catch (e) {
 *   if (e instanceof RemoteAgentError && e.reason === 'card_mismatch') console.error(e.message);
 * }
 * ```
 */
export class RemoteAgentError extends TroupeError {
  /** Why. */
  readonly reason: RemoteAgentErrorReason;
  constructor(reason: RemoteAgentErrorReason, message: string, options: TroupeErrorOptions = {}) {
    super('remote_agent', message, { ...options, details: { reason, ...options.details } });
    this.reason = reason;
  }
}

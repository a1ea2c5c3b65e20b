import { defined } from './defined.js';
/**
 * Errors. Every error troupe throws is a {@link TroupeError} with a literal
 * `code`; subclasses say who is at fault (configuration, the model, a
 * time-out, a cancellation, a store, a workspace, a parser).
 * @module
 */

/** Every error code troupe uses. */
export type TroupeErrorCode =
  // configuration: the caller's fault
  | 'invalid_option'
  | 'invalid_argument'
  | 'invalid_agent'
  | 'invalid_graph'
  | 'unknown_agent'
  | 'unknown_adapter'
  | 'missing_dependency'
  | 'wrong_phase'
  | 'not_running'
  | 'depth_exceeded'
  | 'unsafe_path'
  | 'invalid_template'
  | 'invalid_template_values'
  // model behaviour
  | 'model_behavior'
  | 'max_turns_exceeded'
  | 'routing_failed'
  | 'no_assignments'
  | 'plan_invalid'
  // adapters and sessions
  | 'adapter_error'
  | 'session_busy'
  | 'session_closed'
  | 'replay_divergence'
  | 'rate_limited'
  // time and cancellation
  | 'timeout'
  | 'cancelled'
  // infrastructure
  | 'store_error'
  | 'checkpoint_version'
  | 'queue_error'
  | 'remote_failed'
  | 'job_refused'
  | 'remote_agent'
  | 'workspace_error'
  | 'merge_conflict'
  | 'parse_error'
  | 'execution_failed'
  // patterns
  | 'team_failed'
  | 'task_conflict'
  // memory: threads and working memory
  | 'thread_busy'
  | 'invalid_memory'
  | 'memory_conflict'
  // guardrails
  | 'guardrail_tripped'
  // limits
  | 'budget_exhausted'
  // time travel: forks and what-if replays
  | 'unknown_run'
  | 'unknown_checkpoint'
  | 'invalid_edit'
  // plans that change and talk while they run
  | 'invalid_change'
  | 'message_rejected'
  // the team interface: a request to a server failed
  | 'request_failed';

/** Options accepted by every troupe error constructor. */
export interface TroupeErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Structured details for programmatic handling. */
  details?: Record<string, unknown>;
}

/**
 * Base class of every error troupe throws.
 *
 * @example
 * ```ts
 * try { await run(flow, 'hi') } catch (e) {
 *   if (e instanceof TroupeError && e.code === 'timeout') retry();
 * }
 * ```
 */
export class TroupeError extends Error {
  /** A stable, literal code naming what went wrong. */
  readonly code: TroupeErrorCode;
  /** Structured details (agent name, option name, ...). */
  readonly details: Record<string, unknown>;

  constructor(code: TroupeErrorCode, message: string, options: TroupeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** The caller's configuration or input is invalid. */
export class ConfigurationError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions & { code?: TroupeErrorCode } = {}) {
    super(options.code ?? 'invalid_option', message, options);
  }
}

/** The model answered in a way the protocol cannot use. */
export class ModelBehaviorError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions & { code?: TroupeErrorCode } = {}) {
    super(options.code ?? 'model_behavior', message, options);
  }
}

/** The tool loop reached its `maxTurns` limit. */
export class MaxTurnsExceededError extends ModelBehaviorError {
  constructor(maxTurns: number, agent: string) {
    super(`Agent "${agent}" exceeded maxTurns (${maxTurns}) without a final answer`, {
      code: 'max_turns_exceeded',
      details: { maxTurns, agent },
    });
  }
}

/** An adapter or its vendor failed. */
export class AdapterError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions & { code?: TroupeErrorCode } = {}) {
    super(options.code ?? 'adapter_error', message, options);
  }
}

/**
 * The provider refused a call for its rate limit (HTTP 429). `retryAfterMs`
 * is how long it asked to wait (its `Retry-After`), when it said.
 */
export class RateLimitError extends AdapterError {
  /** How long the provider asked to wait before the next call, in ms (undefined: it did not say). */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: TroupeErrorOptions & { retryAfterMs?: number } = {}) {
    super(message, { ...options, code: 'rate_limited', details: { ...options.details, ...defined({ retryAfterMs: options.retryAfterMs }) } });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A second `send` was attempted while a turn was in flight. */
export class SessionBusyError extends TroupeError {
  constructor(sessionId: string) {
    super('session_busy', `Session ${sessionId} is busy: one send at a time`, { details: { sessionId } });
  }
}

/** An operation ran past its time limit. */
export class TimeoutError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions = {}) {
    super('timeout', message, options);
  }
}

/** An operation was cancelled through its AbortSignal. */
export class CancelledError extends TroupeError {
  constructor(message = 'The operation was cancelled', options: TroupeErrorOptions = {}) {
    super('cancelled', message, options);
  }
}

/** A router could not get a valid destination from its agent. */
export class RoutingError extends ModelBehaviorError {
  constructor(message: string, options: TroupeErrorOptions = {}) {
    super(message, { ...options, code: 'routing_failed' });
  }
}

/**
 * A store failed to read or write, or holds a document that cannot be used
 * (code `store_error`; `checkpoint_version` for a checkpoint written in a
 * schema version this troupe does not read).
 */
export class StoreError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions & { code?: 'store_error' | 'checkpoint_version' } = {}) {
    super(options.code ?? 'store_error', message, options);
  }
}

/** A workspace could not be prepared, merged or cleaned up. */
export class WorkspaceError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions = {}) {
    super('workspace_error', message, options);
  }
}

/** A parser refused its input. */
export class ParseError extends TroupeError {
  constructor(message: string, options: TroupeErrorOptions = {}) {
    super('parse_error', message, options);
  }
}

/** True when `error` is a {@link TroupeError}, optionally with the given code. */
export function isTroupeError(error: unknown, code?: TroupeErrorCode): error is TroupeError {
  return error instanceof TroupeError && (code === undefined || error.code === code);
}

/** A readable message for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Describe a value for an error message: `-1 (number)`. */
export function describeValue(value: unknown): string {
  let shown: string;
  try {
    // JSON has no Infinity or NaN (it writes null): show numbers as they are.
    shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : String(JSON.stringify(value) ?? value);
  } catch {
    shown = String(value);
  }
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return `${shown} (${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value})`;
}

/**
 * Retries, one shape wherever something retries (plans, loops, rate limits,
 * adapters): `retry: { maxRetries, delayMs }` (docs/conventions.md,
 * "Options"). Each user documents its defaults and may add knobs of its own
 * (a plan's `reprompt`) by extending {@link retryOptions}.
 * @module
 */
import { defineOptions, nonNegativeInteger, nonNegativeNumber } from './options.js';

/** How often to try again, and how long to wait between tries. */
export interface RetryOptions {
  /** Retries after the first attempt (0: none). */
  maxRetries?: number;
  /** Wait between attempts, in milliseconds, on the run's clock. */
  delayMs?: number;
}

/** The description of {@link RetryOptions}: a `retry` group checks against it (extend its `shape` for more knobs). */
export const retryOptions = defineOptions<RetryOptions>('retry', { maxRetries: nonNegativeInteger, delayMs: nonNegativeNumber });

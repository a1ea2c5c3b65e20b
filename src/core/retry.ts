/**
 * Retries, described once: wherever something retries (loops, plans, rate
 * limits, adapters), its knobs are one group, `retry: { maxRetries, delayMs }`
 * (docs/conventions.md, "Options"). A retrying thing with knobs of its own
 * extends the description: `defineOptions<PlanRetry>('retry', { ...retryOptions.shape, repromptOnRetry: boolean })`.
 * @module
 */
import { defineOptions, nonNegativeInteger, nonNegativeNumber, type OptionsDescription } from './options.js';

/** How something retries a failed attempt. Each default is the retrying thing's own (its docs say which). */
export interface RetryOptions {
  /** Retries after the first failed attempt (0: fail at the first failure). */
  maxRetries?: number;
  /** Milliseconds to wait before each retry, on the run's clock (0: at once). */
  delayMs?: number;
}

/** The description of {@link RetryOptions}: nest it as `retry: retryOptions` in an options description. */
export const retryOptions: OptionsDescription<RetryOptions> = defineOptions<RetryOptions>('retry', {
  maxRetries: nonNegativeInteger,
  delayMs: nonNegativeNumber,
});

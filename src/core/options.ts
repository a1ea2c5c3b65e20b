/**
 * Eager option checks with messages that name the option and the bad value
 * ("Expected `maxParallel` to be a positive integer, got -1 (number)").
 * Each accepts `undefined` (the option was left out) and returns the value.
 * @module
 */
import { ConfigurationError, describeValue } from './errors.js';

/** Throw unless `value` is undefined or a positive integer. */
export function expectPositiveInteger<T>(name: string, value: T): T {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

/** Throw unless `value` is undefined or a non-negative integer. */
export function expectNonNegativeInteger<T>(name: string, value: T): T {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Throw unless `value` is undefined or a positive, finite number. Infinity is
 * refused: leave a time-out out for no limit. Finite values of any size
 * work (the clock chains timers past Node's 2^31 - 1 ms). An option whose
 * name ends in `Ms` is a duration, and the message says so.
 */
export function expectPositiveNumber<T>(name: string, value: T): T {
  if (value === undefined || (typeof value === 'number' && Number.isFinite(value) && value > 0)) return value;
  if (typeof value === 'number' && !Number.isFinite(value)) {
    const unit = name.endsWith('Ms') ? ' of milliseconds' : '';
    const hint = value === Infinity ? '; leave it out for no limit' : '';
    throw new ConfigurationError(`Expected \`${name}\` to be a finite number${unit}, got ${describeValue(value)}${hint}`);
  }
  throw new ConfigurationError(`Expected \`${name}\` to be a positive number, got ${describeValue(value)}`);
}

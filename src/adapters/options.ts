/**
 * Eager checks of adapter options, with messages that name the option and
 * the bad value.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';

/** Throw unless `value` is undefined or a non-negative integer. */
export function expectNonNegativeInteger(name: string, value: unknown): void {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a non-negative integer, got ${describeValue(value)}`);
  }
}

/** Throw unless `value` is undefined or a positive number. */
export function expectPositiveNumber(name: string, value: unknown): void {
  if (value !== undefined && !(typeof value === 'number' && value > 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a positive number, got ${describeValue(value)}`);
  }
}

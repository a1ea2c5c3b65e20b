/**
 * The a2a layer's option helpers: the shape of the connection options that
 * `a2aAgent` and `a2aAdapter` share (their descriptions, made with the
 * kernel's `defineOptions`, refuse unknown keys with the nearest valid
 * name), and a function check.
 * @module
 */
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { anything, type OptionsShape } from '../../core/options.js';
import type { A2AConnectionOptions } from './client.js';

/** The shape of `A2AConnectionOptions` (the values are checked by `checkRemoteOptions`). */
export const connectionShape: OptionsShape<A2AConnectionOptions> = {
  skill: anything,
  headers: anything,
  allowedOrigins: anything,
  cardPath: anything,
  requestTimeoutMs: anything,
  maxCardBytes: anything,
  pollMs: anything,
  reconnects: anything,
  clock: anything,
};

/** Throw unless `value` is undefined or a function. */
export function expectFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new ConfigurationError(`Expected \`${name}\` to be a function, got ${describeValue(value)}`);
}

/**
 * The checks every strategy makes on the chunk it is given.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';

/** Throw a `ConfigurationError` unless `chunk` (a `WorkspaceChunk`) is an object with a non-empty `id` and `baseDir`. */
export function expectChunk(chunk: { readonly id: string; readonly baseDir: string }): void {
  if (!chunk || typeof chunk !== 'object') {
    throw new ConfigurationError(`Expected a workspace chunk object, got ${describeValue(chunk)}`);
  }
  for (const key of ['id', 'baseDir'] as const) {
    if (typeof chunk[key] !== 'string' || chunk[key] === '') {
      throw new ConfigurationError(`Expected chunk \`${key}\` to be a non-empty string, got ${describeValue(chunk[key])}`);
    }
  }
}

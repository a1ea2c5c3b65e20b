/**
 * Ids that come from requests (run ids, request ids, tenants): checked before
 * they reach a store key, so nothing names a document outside its place.
 * @module
 */
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { MAX_ID_LENGTH, isSafeId } from '../../core/safe-id.js';

export { MAX_ID_LENGTH, isSafeId };

/** Throw a `ConfigurationError` (`invalid_argument`) unless `id` is a safe id (see {@link isSafeId}). */
export function checkId(what: string, id: unknown): asserts id is string {
  if (!isSafeId(id)) {
    throw new ConfigurationError(
      `Expected \`${what}\` to be 1-${MAX_ID_LENGTH} characters of A-Z, a-z, 0-9, '-', '_' or '.', starting with a letter or digit, got ${describeValue(id)}`,
      { code: 'invalid_argument', details: { [what]: id } },
    );
  }
}

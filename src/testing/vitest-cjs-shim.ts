/**
 * Stand-in for `vitest` in the CommonJS build of `troupe/testing`: vitest is
 * ESM-only, and test files always run as ESM under vitest, so the
 * conformance suites are only usable from the ESM build. The rest of
 * `troupe/testing` (scripted adapter, clock, replay) works from CommonJS.
 * @internal
 */
import { ConfigurationError } from '../core/errors.js';

const fail = (): never => {
  throw new ConfigurationError('troupe/testing conformance suites need vitest, which is ESM-only: import troupe/testing from an ESM test file', {
    code: 'missing_dependency',
  });
};
export const describe = fail;
export const it = fail;
export const expect = fail;
export const beforeAll = fail;
export const afterAll = fail;
export const beforeEach = fail;
export const afterEach = fail;

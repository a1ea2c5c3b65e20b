/**
 * Eager checks of adapter options: the shared ones of `src/core/options.ts`.
 * @module
 */
export { expectNonNegativeInteger, expectPositiveInteger, expectPositiveNumber } from '../core/options.js';

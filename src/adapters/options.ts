/**
 * Eager checks of adapter options: the shared ones of `src/core/options.ts`.
 * @module
 */
export { expectNonNegativeInteger, expectPositiveNumber } from '../core/options.js';

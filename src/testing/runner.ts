/**
 * What the conformance suites need from a test runner: `describe` and `it`.
 * vitest's and `node:test`'s fit as they are; the suites load no runner
 * themselves, so importing `troupe/testing` loads none either.
 * @module
 */
import { ConfigurationError } from '../core/errors.js';

/** What a test receives from the runner: a way to skip it. vitest's and `node:test`'s contexts have one. */
export interface SuiteTestContext {
  /** Mark the test skipped (the suite returns right after). */
  skip(note?: string): void;
}

/**
 * The part of a test runner the conformance suites use. Pass vitest's or
 * `node:test`'s own functions.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or from 'node:test'
 * adapterSuite('my adapter', factory, { runner: { describe, it } });
 * ```
 */
export interface SuiteRunner {
  /** Group tests under a name. */
  describe(name: string, fn: () => void): unknown;
  /** Register one test; it gets a context with `skip`. */
  it(name: string, fn: (context: SuiteTestContext) => Promise<void>): unknown;
}

/** The runner to register with: the one given, else global `describe` and `it` (vitest with `globals: true`), else a `ConfigurationError`. */
export function resolveRunner(suite: string, runner: SuiteRunner | undefined): SuiteRunner {
  if (runner) {
    if (typeof runner.describe !== 'function' || typeof runner.it !== 'function') {
      throw new ConfigurationError(`${suite}: \`runner\` needs the test runner's \`describe\` and \`it\` functions`);
    }
    return runner;
  }
  const globals = globalThis as { describe?: unknown; it?: unknown };
  if (typeof globals.describe === 'function' && typeof globals.it === 'function') return globals as SuiteRunner;
  throw new ConfigurationError(
    `${suite} registers tests with your test runner: pass \`{ runner: { describe, it } }\` (from 'vitest' or 'node:test')`,
    { code: 'missing_dependency' },
  );
}

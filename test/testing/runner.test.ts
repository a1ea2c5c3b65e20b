import { describe, expect, it } from 'vitest';
import { resolveRunner } from '../../src/testing/runner.js';
import { storeSuite } from '../../src/testing/store-suite.js';
import { memoryStore } from '../../src/core/memory-store.js';

describe('the suites’ test runner', () => {
  it('is the one given, else the global describe and it, else a clear ConfigurationError', () => {
    const runner = { describe: () => undefined, it: () => undefined };
    expect(resolveRunner('storeSuite', runner)).toBe(runner);
    expect(() => storeSuite('memory', () => memoryStore())).toThrow(
      "storeSuite registers tests with your test runner: pass `{ runner: { describe, it } }` (from 'vitest' or 'node:test')",
    );
    expect(() => resolveRunner('storeSuite', { describe } as never)).toThrow(/needs the test runner's `describe` and `it`/);
    const globals = globalThis as { describe?: unknown; it?: unknown };
    globals.describe = runner.describe;
    globals.it = runner.it;
    try {
      expect(resolveRunner('storeSuite', undefined)).toBe(globalThis);
    } finally {
      delete globals.describe;
      delete globals.it;
    }
  });

  it('registers every test through the runner it is given', () => {
    const names: string[] = [];
    storeSuite('memory', () => memoryStore(), {
      runner: { describe: (name, fn) => (names.push(name), fn()), it: (name) => void names.push(name) },
    });
    expect(names[0]).toBe('store conformance: memory');
    expect(names).toContain('honours an aborted signal on every call, and does nothing');
  });
});

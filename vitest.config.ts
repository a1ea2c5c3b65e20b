import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { entryPoints } from './scripts/entry-points.js';
import { external } from './test/external.js';
import LongestFirst from './test/helpers/sequencer.js';

const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

/**
 * The test configuration: the whole suite (`npm test`), or with `fast` the
 * files that start no process and run no compiler (`npm run test:fast`,
 * vitest.fast.config.ts; test/external.ts lists what it leaves out).
 */
export function testConfig(options: { fast: boolean }): ViteUserConfig {
  return {
    resolve: {
      // Examples and tests import the package by name; resolve it to the sources.
      alias: [
        { find: /^troupe\/adapters\/(.*)$/, replacement: src('adapters/$1.ts') },
        ...Object.entries(entryPoints).map(([subpath, source]) => ({
          find: new RegExp(`^troupe${subpath === '.' ? '' : `\\/${subpath}`}$`),
          replacement: fileURLToPath(new URL(`./${source}`, import.meta.url)),
        })),
      ],
    },
    test: {
      include: ['test/**/*.test.ts'],
      exclude: options.fast ? ['**/node_modules/**', ...external.processes, ...external.compiler] : ['**/node_modules/**'],
      // Starts a redis-server for the Redis tests, finds the real CLIs of the CLI tests (or prints why they are skipped).
      globalSetup: options.fast ? [] : ['test/helpers/redis-setup.ts', 'test/helpers/cli-rigs-setup.ts'],
      // test:fast fails a test that starts a process (its file belongs in test/external.ts).
      // TROUPE_TEST_CPU=<file>: each file's CPU and wall time appended to <file> (test/helpers/cpu-per-file.ts).
      setupFiles: [...(options.fast ? ['test/helpers/no-processes.ts'] : []), ...(process.env.TROUPE_TEST_CPU ? ['test/helpers/cpu-per-file.ts'] : [])],
      // Generous, so that a loaded machine (two suites at once, a CPU burner beside) is slow rather than red;
      // a test that hangs still fails. Tests that are heavy by design set their own.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // expect.poll (a page, a process, a file reaching a state) waits up to 30 s, not 1 s.
      expect: { poll: { timeout: 30_000 } },
      pool: 'forks',
      // The longest files start first (test/helpers/sequencer.ts): no long file is left to run alone at the end.
      sequence: { sequencer: LongestFirst },
      // Test files share their worker's module cache: the sources load once per worker, not once per file.
      // Nothing in troupe keeps hidden global state, so files cannot see each other's runs
      // (docs/decisions.md, "Tests share a worker's modules").
      isolate: false,
      // Many tests wait on processes, sockets and timers: one worker more than there are cores keeps the cores busy.
      maxWorkers: availableParallelism() + 1,
    },
  };
}

export default defineConfig(testConfig({ fast: false }));

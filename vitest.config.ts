import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { entryPoints } from './scripts/entry-points.js';

const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

export default defineConfig({
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
    // Starts a redis-server for the Redis tests, finds the real CLIs of the CLI tests (or prints why they are skipped).
    globalSetup: ['test/helpers/redis-setup.ts', 'test/helpers/cli-rigs-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});

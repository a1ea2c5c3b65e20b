import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples and tests import the package by name; resolve it to the sources.
    alias: [
      { find: /^troupe\/adapters\/(.*)$/, replacement: src('adapters/$1.ts') },
      { find: /^troupe\/testing$/, replacement: src('testing/index.ts') },
      { find: /^troupe\/redis$/, replacement: src('integrations/redis/index.ts') },
      { find: /^troupe\/otel$/, replacement: src('integrations/otel/index.ts') },
      { find: /^troupe\/report$/, replacement: src('views/report/index.ts') },
      { find: /^troupe\/mcp$/, replacement: src('integrations/mcp/index.ts') },
      { find: /^troupe\/http$/, replacement: src('integrations/http/index.ts') },
      { find: /^troupe$/, replacement: src('index.ts') },
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

import { defineConfig, type Options } from 'tsup';
import { adapters, entryPoints } from './scripts/entry-points.js';

// Vendor packages are optional peers, loaded lazily by their adapters and integrations: never bundled.
const vendors = ['ai', 'openai', 'ioredis', 'bullmq', '@opentelemetry/api', /^ai\//, /^openai\//, /^@ai-sdk\//, /^@modelcontextprotocol\//, /^@a2a-js\//];

const shared: Options = {
  // One entry per public subpath (scripts/entry-points.ts): `dist/<subpath>/index.*`, the root `dist/index.*`.
  entry: {
    ...Object.fromEntries(Object.entries(entryPoints).map(([subpath, source]) => [subpath === '.' ? 'index' : `${subpath}/index`, source])),
    ...Object.fromEntries(adapters.map((name) => [`adapters/${name}`, `src/adapters/${name}.ts`])),
  },

  dts: false,
  // No source maps: they would map to src/, which the package does not ship (docs/decisions.md).
  sourcemap: false,
  target: 'node20',
  platform: 'node',
  splitting: true,
  treeshake: false,
  // p-limit and its dependency are ESM-only; bundle them so `require('troupe')` works on every Node 20.
  // Bundled, so they are development dependencies, not dependencies (test/package/dependencies.test.ts).
  noExternal: ['p-limit', 'yocto-queue'],
};

// The `troupe` executable: ESM only (package.json `bin` points at dist/cli.js),
// and the only output that gets the shebang banner.
const cli: Options = {
  entry: { cli: 'src/cli/index.ts' },
  format: ['esm'],
  dts: false,
  sourcemap: false,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: false,
  external: ['zod'],
  noExternal: ['p-limit', 'yocto-queue'],
  banner: { js: '#!/usr/bin/env node' },
};

export default defineConfig([
  { ...shared, format: ['esm'], external: ['zod', ...vendors] },
  // CommonJS has no `import.meta`: the one place that reads it (troupe/otel's createRequire) uses `__filename` there.
  { ...shared, format: ['cjs'], external: ['zod', ...vendors], define: { 'import.meta.url': 'undefined' } },
  cli,
]);

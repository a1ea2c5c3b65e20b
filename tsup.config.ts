import { defineConfig, type Options } from 'tsup';

// Vendor packages are optional peers, loaded lazily by their adapters and integrations: never bundled.
const vendors = ['ai', 'openai', 'ioredis', '@opentelemetry/api', /^ai\//, /^openai\//, /^@ai-sdk\//, /^@modelcontextprotocol\//];

const shared: Options = {
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'adapters/scripted': 'src/adapters/scripted.ts',
    'adapters/recording': 'src/adapters/recording.ts',
    'adapters/ai-sdk': 'src/adapters/ai-sdk.ts',
    'adapters/openai': 'src/adapters/openai.ts',
    'adapters/process': 'src/adapters/process.ts',
    'adapters/env': 'src/adapters/env.ts',
    'adapters/rate-limit': 'src/adapters/rate-limit.ts',
    'redis/index': 'src/integrations/redis/index.ts',
    'otel/index': 'src/integrations/otel/index.ts',
    'report/index': 'src/views/report/index.ts',
    'mcp/index': 'src/integrations/mcp/index.ts',
    'http/index': 'src/integrations/http/index.ts',
  },
  dts: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: true,
  treeshake: true,
  // p-limit and its dependency are ESM-only; bundle them so `require('troupe')` works on every Node 20.
  noExternal: ['p-limit', 'yocto-queue'],
};

// The `troupe` executable: ESM only (package.json `bin` points at dist/cli.js),
// and the only output that gets the shebang banner.
const cli: Options = {
  entry: { cli: 'src/cli/index.ts' },
  format: ['esm'],
  dts: false,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: true,
  external: ['zod'],
  noExternal: ['p-limit', 'yocto-queue'],
  banner: { js: '#!/usr/bin/env node' },
};

export default defineConfig([
  { ...shared, format: ['esm'], external: ['zod', ...vendors] },
  { ...shared, format: ['cjs'], external: ['zod', ...vendors] },
  cli,
]);

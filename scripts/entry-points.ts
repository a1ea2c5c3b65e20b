// The package's entry points: each public subpath and the source file it is
// built from. tsup.config.ts and vitest.config.ts read this list;
// test/package/entry-points.compile.ts checks that package.json `exports`,
// tsconfig.json `paths` and typedoc.json `entryPoints` name the same ones.
// `adapters/<name>` subpaths are one wildcard: every file listed in
// `adapters` below.

/** Subpath (as imported: `troupe/<subpath>`, `.` for the root) → source file. */
export const entryPoints: Record<string, string> = {
  '.': 'src/index.ts',
  kernel: 'src/core/index.ts',
  patterns: 'src/patterns/index.ts',
  guardrails: 'src/guardrails/index.ts',
  reflection: 'src/reflection/index.ts',
  text: 'src/text/index.ts',
  workspaces: 'src/workspaces/index.ts',
  plan: 'src/plan/index.ts',
  coordination: 'src/coordination/index.ts',
  agents: 'src/agents/index.ts',
  squad: 'src/squad/index.ts',
  persistence: 'src/persistence/index.ts',
  testing: 'src/testing/index.ts',
  redis: 'src/integrations/redis/index.ts',
  bullmq: 'src/integrations/bullmq/index.ts',
  otel: 'src/integrations/otel/index.ts',
  report: 'src/views/report/index.ts',
  mcp: 'src/integrations/mcp-teams/index.ts',
  http: 'src/integrations/http/index.ts',
  a2a: 'src/integrations/a2a/index.ts',
  travel: 'src/travel/index.ts',
  ui: 'src/ui/index.ts',
};

/** The vendor and built-in adapters behind `troupe/adapters/<name>` (`src/adapters/<name>.ts`). */
export const adapters = ['scripted', 'recording', 'ai-sdk', 'openai', 'process', 'env', 'rate-limit'];

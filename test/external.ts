// The test files that `npm run test:fast` leaves out (`npm test` runs them
// all). test/helpers/no-processes.ts fails any other file that starts a
// process, so this list cannot silently go stale.
//
// - `processes`: they start child processes (examples, the CLI, workers,
//   git, the real coding-agent CLIs, Chromium) or use the test run's
//   redis-server;
// - `compiler`: they run the TypeScript compiler over the sources (the docs'
//   snippets, the declarations without optional peers, the entry points).

/** Globs, relative to the repository. */
export const external = {
  processes: [
    'test/examples.test.ts',
    'test/adapters/env.test.ts',
    'test/adapters/process*.test.ts',
    'test/adapters/rate-limit.test.ts',
    'test/agents/teams.test.ts',
    'test/cli/cli.test.ts',
    'test/cli/usage.test.ts',
    'test/cli/worker.test.ts',
    'test/integrations/bullmq/**/*.test.ts',
    'test/integrations/a2a/interop.test.ts',
    'test/integrations/http/answers.test.ts',
    'test/integrations/http/browser.test.ts',
    'test/integrations/http/create.test.ts',
    'test/integrations/mcp/claude-code.test.ts',
    'test/integrations/mcp/server.test.ts',
    'test/integrations/mcp/teams.test.ts',
    'test/integrations/redis/**/*.test.ts',
    'test/package/side-effects.test.ts',
    'test/patterns/fault-matrix.test.ts',
    'test/persistence/crash.test.ts',
    'test/persistence/threads-processes.test.ts',
    'test/persistence/stores.test.ts',
    'test/plan/engine/conflicts.test.ts',
    'test/plan/learning/outcome-stats.test.ts',
    'test/plan/live/durable-change.test.ts',
    'test/testing/node-test.test.ts',
    'test/views/report-browser.test.ts',
    'test/ui/*.browser.test.ts',
    'test/ui/bundle.test.ts',
    'test/views/report.test.ts',
    'test/workspaces/**/*.test.ts',
  ],
  compiler: ['test/compiler.test.ts'],
};

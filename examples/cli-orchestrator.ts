/**
 * A coding-agent CLI as the orchestrator: troupe serves `delegate_to_worker`
 * to the CLI over MCP, so the CLI dispatches through troupe (not through its
 * own sub-agent tool) and the workers are troupe sessions in the trace.
 *
 * Offline, the CLI is the stand-in in `examples/cli/stand-in-agent.mjs` (it
 * speaks `claude -p` and calls the tools with the MCP SDK's client), run
 * through the Claude Code profile; the workers run on the scripted adapter.
 * The environment can name a real CLI, and a real model for the workers:
 *
 *   npx tsx examples/cli-orchestrator.ts
 *   TROUPE_CLI=claude TROUPE_PASS_ENV=ANTHROPIC_API_KEY npx tsx examples/cli-orchestrator.ts
 *   TROUPE_CLI=codex TROUPE_ADAPTER=openai TROUPE_MODEL=gpt-4.1-mini npx tsx examples/cli-orchestrator.ts
 *
 * Needs `@modelcontextprotocol/sdk` (`npm install @modelcontextprotocol/sdk`).
 */
import { join } from 'node:path';
import { agent, formatOpTree, orchestrate, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { DEFAULT_PASS_ENV, claudeCodeProfile, codexProfile, copilotProfile, processAdapter, type ProcessAdapterOptions } from 'troupe/adapters/process';
import { scriptedAdapter } from 'troupe/testing';

const standIn = join(import.meta.dirname, 'cli', 'stand-in-agent.mjs');
const profiles: Record<string, () => ProcessAdapterOptions> = {
  claude: () => claudeCodeProfile(),
  codex: () => codexProfile(),
  copilot: () => copilotProfile(),
};
const chosen = process.env['TROUPE_CLI'];
const profile = chosen ? profiles[chosen]?.() : claudeCodeProfile({ command: [process.execPath, standIn] });
if (!profile) throw new Error(`TROUPE_CLI must be one of ${Object.keys(profiles).join(', ')}, got "${chosen}"`);
const extraEnv = (process.env['TROUPE_PASS_ENV'] ?? '').split(',').filter(Boolean);

// The orchestrator's adapter: the CLI, with the session's tools served to it over MCP.
export const cli = processAdapter({ ...profile, passEnv: [...DEFAULT_PASS_ENV, ...extraEnv], timeoutMs: 15 * 60_000 });

// The workers' model: the environment's (TROUPE_ADAPTER), else scripted replies.
export const workers = adapterFromEnv() ?? scriptedAdapter({
  rules: [
    { agent: 'coder', reply: 'parseDuration("1h30m") returns 5400 seconds; units h, m and s, anything else throws.' },
    { agent: 'tester', reply: '6 cases: 1h30m, 45s, 2h, 0s, "" (throws), "5x" (throws).' },
  ],
});

const flow = orchestrate({
  name: 'feature',
  mode: 'orchestrator',
  dispatch: 'tool',
  lead: agent({ name: 'lead', adapter: cli, system: 'You lead a small team. Delegate; do not write the code yourself.' }),
  workers: [
    agent({ name: 'coder', description: 'implements functions' }),
    agent({ name: 'tester', description: 'writes unit tests' }),
  ],
});

const result = await run(flow, 'Add parseDuration("1h30m") -> seconds, with tests', {
  adapter: workers,
  onEvent: (e) => {
    if (e.type === 'tool.called') console.log(`  the CLI called ${e.call.name} ${JSON.stringify(e.call.arguments)}`);
  },
});
console.log(`\n${result.output}\n`);
console.log(formatOpTree(result.trace));

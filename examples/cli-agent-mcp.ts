/**
 * An agent file that brings its own MCP server, run on a coding-agent CLI:
 * the CLI starts the file's `tickets` server beside troupe's own (which
 * serves the app's `escalate` tool), and the tools the file names are the
 * CLI's allow-list (`Read`, the server's `lookup_ticket`, `escalate`).
 * troupe sees the calls of its own tools; the CLI calls the agent's server
 * itself.
 *
 * Offline, the CLI is the stand-in in `examples/cli/stand-in-agent.mjs` (it
 * speaks `claude -p`, starts every server of its MCP config and calls the
 * tools with the MCP SDK's client), run through the Claude Code profile.
 * The environment can name the real Claude Code (or Codex, or Copilot):
 *
 *   npx tsx examples/cli-agent-mcp.ts
 *   TROUPE_CLI=claude TROUPE_PASS_ENV=ANTHROPIC_API_KEY npx tsx examples/cli-agent-mcp.ts
 *
 * Needs `@modelcontextprotocol/sdk` (`npm install @modelcontextprotocol/sdk`).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, run, type ModelAdapter } from 'troupe';
import { compileAgents, loadAgentFolder } from 'troupe/agents';
import { DEFAULT_PASS_ENV, claudeCodeProfile, codexProfile, copilotProfile, processAdapter, type ProcessAdapterOptions } from 'troupe/adapters/process';

const here = import.meta.dirname;
const standIn = join(here, 'cli', 'stand-in-agent.mjs');
// What the stand-in does in place of a model: look the ticket up, escalate it, answer.
const steps = [
  { call: 'lookup_ticket', args: { id: '4711' } },
  { call: 'escalate', args: { ticket: '4711', reason: 'needs a new toner cartridge fitted' } },
];
const profiles: Record<string, () => ProcessAdapterOptions> = {
  claude: () => claudeCodeProfile(),
  codex: () => codexProfile({ args: ['--skip-git-repo-check'] }),
  copilot: () => copilotProfile(),
};
const chosen = process.env['TROUPE_CLI'];
const profile = chosen ? profiles[chosen]?.() : claudeCodeProfile({ command: [process.execPath, standIn], args: ['--steps', JSON.stringify(steps)] });
if (!profile) throw new Error(`TROUPE_CLI must be one of ${Object.keys(profiles).join(', ')}, got "${chosen}"`);
const extraEnv = (process.env['TROUPE_PASS_ENV'] ?? '').split(',').filter(Boolean);

// The CLI runs in this folder, where the file's server (`node cli/ticket-server.mjs`) is found.
const cli: ModelAdapter = processAdapter({ ...profile, cwd: here, passEnv: [...DEFAULT_PASS_ENV, ...extraEnv], timeoutMs: 15 * 60_000 });

const escalate = defineTool({
  name: 'escalate',
  description: 'Hand a ticket to the on-site team',
  parameters: z.object({ ticket: z.string(), reason: z.string() }),
  execute: ({ ticket, reason }) => `Ticket ${ticket} escalated to the on-site team (${reason}).`,
});

const { agents } = await loadAgentFolder(join(here, 'cli-agent-mcp', '.claude', 'agents'));
// A Claude Code agent runs on Claude Code (its tool names are the CLI's allow-list); on another CLI, as the default adapter.
const flows = compileAgents(agents, {
  tools: { escalate },
  ...(chosen === undefined || chosen === 'claude' ? { cli: { 'claude-code': cli } } : { defaultAdapter: cli, unknownTools: 'warn' as const }),
  onWarning: (w) => console.log(`warning: ${w.message}`),
});

const result = await run(flows['support']!, 'What is going on with ticket 4711?', {
  onEvent: (e) => {
    if (e.type === 'tool.called') console.log(`troupe ran ${e.call.name} ${JSON.stringify(e.call.arguments)}`);
  },
});
console.log(`\n${result.output}`);

/**
 * A Claude Code session that calls a troupe review panel as an MCP tool.
 * The panel is a folder of agent files (`claude-code-mcp/panel/`: a lead
 * with a security and a style reviewer as advisors), served by
 * `troupe mcp serve`; Claude Code's agent file names that server
 * (`mcpServers: [panel]`), and the only tool it may call is the panel's.
 * Claude Code starts the server, calls `review-panel`, gets the panel's
 * verdict (with progress notifications while it works) and reports it.
 *
 * Offline, Claude Code is the stand-in in `examples/cli/stand-in-agent.mjs`
 * (it speaks `claude -p`, starts the MCP servers of its config and calls
 * tools with the MCP SDK's client), and the panel runs on the scripted
 * adapter. The environment can name the real Claude Code, and the model of
 * the panel (`TROUPE_ADAPTER`, see troupe/adapters/env):
 *
 *   npx tsx examples/claude-code-mcp.ts
 *   TROUPE_CLI=claude TROUPE_PASS_ENV=ANTHROPIC_API_KEY,OPENAI_API_KEY TROUPE_ADAPTER=openai npx tsx examples/claude-code-mcp.ts
 *
 * In a project of your own, the server is `npx troupe mcp serve <folder>`;
 * Claude Code's `.mcp.json` (or `claude mcp add panel -- npx troupe mcp
 * serve ./panel`) makes it available to every session.
 *
 * Needs `@modelcontextprotocol/sdk` (`npm install @modelcontextprotocol/sdk`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type ModelAdapter } from 'troupe';
import { compileAgents, loadAgentFolder } from 'troupe/agents';
import { adapterFromEnv } from 'troupe/adapters/env';
import { DEFAULT_PASS_ENV, claudeCodeProfile, processAdapter } from 'troupe/adapters/process';
import { fileStore, readRun } from 'troupe/persistence';

const here = import.meta.dirname;
const panel = join(here, 'claude-code-mcp', 'panel');
const logs = mkdtempSync(join(tmpdir(), 'troupe-claude-mcp-'));

// troupe's MCP server for the panel: `troupe mcp serve <folder>` (here from the sources, in this Node with its loader).
// Offline it plays the panel's script; with TROUPE_ADAPTER set it runs the panel on that model.
const serveArgs = ['mcp', 'serve', panel, '--store', logs, ...(adapterFromEnv() ? [] : ['--script', join(here, 'claude-code-mcp', 'panel-script.json')])];
const mcpServers = { panel: { type: 'stdio' as const, command: process.execPath, args: [...process.execArgv, join(here, '..', 'src', 'cli', 'index.ts'), ...serveArgs] } };

// Claude Code, or offline its stand-in: one call of the panel's tool, then the answer with its result.
const standIn = join(here, 'cli', 'stand-in-agent.mjs');
const steps = [{ call: 'review-panel', args: { input: 'PR 42: add `GET /export?file=<name>` that streams a CSV report from ./reports.' } }];
const profile = process.env['TROUPE_CLI'] === 'claude' ? claudeCodeProfile() : claudeCodeProfile({ command: [process.execPath, standIn], args: ['--steps', JSON.stringify(steps)] });
const extraEnv = (process.env['TROUPE_PASS_ENV'] ?? '').split(',').filter(Boolean);
const claude: ModelAdapter = processAdapter({ ...profile, cwd: here, passEnv: [...DEFAULT_PASS_ENV, 'TROUPE_ADAPTER', 'TROUPE_MODEL', ...extraEnv], timeoutMs: 15 * 60_000 });

try {
  const { agents } = await loadAgentFolder(join(here, 'claude-code-mcp', '.claude', 'agents'));
  const flows = compileAgents(agents, { cli: { 'claude-code': claude }, mcpServers });
  const result = await run(flows['reviewer']!, 'Please review PR 42 before I merge it.');
  console.log(`Claude Code answered:\n${result.output}\n`);

  // What happened on troupe's side: the panel's run, logged by the server.
  const store = fileStore(logs);
  const [runKey] = (await store.list('runs/')).filter((key) => key.endsWith('/meta'));
  const log = await readRun(runKey!.slice('runs/'.length, -'/meta'.length), { store });
  for (const event of log.events) {
    if (event.type === 'run.started') console.log(`troupe ran ${event.runnable} on: ${event.input}`);
    if (event.type === 'agent.completed') console.log(`  ${event.agent}: ${event.output}`);
  }
} finally {
  rmSync(logs, { recursive: true, force: true });
}

// What each built-in profile declares to its CLI for a session: troupe's
// MCP server, the agent's own servers and the CLI's own tools, as
// arguments and config files. The real CLIs read them in
// process-clis.test.ts; here, every combination, without a CLI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeProfile, codexProfile, copilotProfile, type McpLaunch } from '../../src/adapters/process.js';
import { copilotToolArgs } from '../../src/adapters/process-copilot-tools.js';
import type { McpServerSpec } from '../../src/core/adapter.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('troupe-profiles-test-');
const troupe = { name: 'troupe', command: '/usr/bin/node', args: ['/tmp/x/bridge.cjs'], tools: ['add', 'delegate_to_worker'] };
const tickets: McpServerSpec = { name: 'tickets', type: 'stdio', command: 'node', args: ['tickets.mjs'], env: { TICKET_STATUS: 'open "now"' } };
const docs: McpServerSpec = { name: 'docs', type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer x' }, tools: ['search'] };
const launch = (parts: Partial<McpLaunch>): McpLaunch => ({ servers: [], dir: tempDir(), ...parts });
const configure = async (profile: ReturnType<typeof claudeCodeProfile>, parts: Partial<McpLaunch>) => {
  const l = launch(parts);
  const { args, env } = await profile.mcp!.configure(l);
  return { args: [...args], env, dir: l.dir };
};
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as unknown;

describe('claudeCodeProfile', () => {
  it('troupe\'s server alone: its tools allowed, the sub-agent tool refused', async () => {
    const { args, dir } = await configure(claudeCodeProfile(), { troupe });
    expect(args).toEqual([
      '--mcp-config', join(dir, 'claude-mcp.json'), '--strict-mcp-config',
      '--allowedTools', 'mcp__troupe__add,mcp__troupe__delegate_to_worker',
      '--disallowedTools', 'Task,Agent',
    ]);
    expect(json(join(dir, 'claude-mcp.json'))).toEqual({ mcpServers: { troupe: { type: 'stdio', command: '/usr/bin/node', args: ['/tmp/x/bridge.cjs'] } } });
  });

  it('the agent\'s servers beside troupe\'s, every tool of each allowed (or those it names); the CLI tools offered with --tools and allowed in the same list', async () => {
    const { args, dir } = await configure(claudeCodeProfile(), {
      troupe,
      servers: [tickets, docs],
      cliTools: { allowed: ['Read', 'Bash(git *)', 'mcp__github__get_issue', 'Bash(npm test)'], disallowed: ['WebFetch'] },
    });
    expect(args).toEqual([
      '--mcp-config', join(dir, 'claude-mcp.json'), '--strict-mcp-config',
      '--tools', 'Read,Bash',
      '--allowedTools', 'mcp__troupe__add,mcp__troupe__delegate_to_worker,mcp__tickets,mcp__docs__search,Read,Bash(git *),mcp__github__get_issue,Bash(npm test)',
      '--disallowedTools', 'Task,Agent,WebFetch',
    ]);
    expect(json(join(dir, 'claude-mcp.json'))).toEqual({
      mcpServers: {
        troupe: { type: 'stdio', command: '/usr/bin/node', args: ['/tmp/x/bridge.cjs'] },
        tickets: { type: 'stdio', command: 'node', args: ['tickets.mjs'], env: { TICKET_STATUS: 'open "now"' } },
        docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer x' } },
      },
    });
  });

  it('gives every MCP server mcpStartupTimeoutMs to start (MCP_TIMEOUT), 60 s unless told', async () => {
    expect((await configure(claudeCodeProfile(), { troupe })).env).toEqual({ MCP_TIMEOUT: '60000' });
    expect((await configure(claudeCodeProfile({ mcpStartupTimeoutMs: 5000 }), { troupe })).env).toEqual({ MCP_TIMEOUT: '5000' });
    expect(() => claudeCodeProfile({ mcpStartupTimeoutMs: Number.NaN })).toThrow(ConfigurationError);
  });

  it('CLI tools alone: no MCP config; an empty allow-list offers no built-in tool; every tool (no list) leaves --tools out', async () => {
    expect((await configure(claudeCodeProfile(), { cliTools: { allowed: ['Read', 'Grep'], disallowed: [] } })).args).toEqual([
      '--tools', 'Read,Grep', '--allowedTools', 'Read,Grep', '--disallowedTools', 'Task,Agent',
    ]);
    expect((await configure(claudeCodeProfile(), { cliTools: { allowed: [], disallowed: [] } })).args).toEqual(['--tools', '', '--disallowedTools', 'Task,Agent']);
    expect((await configure(claudeCodeProfile(), { cliTools: { disallowed: ['Bash'] } })).args).toEqual(['--disallowedTools', 'Task,Agent,Bash']);
  });
});

describe('codexProfile', () => {
  it('every server as -c overrides, each approved; troupe\'s with a day\'s time-out and parallel calls; the agent\'s with env, headers and its tools', async () => {
    const { args } = await configure(codexProfile(), { troupe, servers: [tickets, docs], cliTools: { allowed: ['Read'], disallowed: [] } });
    const overrides = args.filter((_, i) => i % 2 === 1);
    expect(args.filter((_, i) => i % 2 === 0).every((a) => a === '-c')).toBe(true);
    expect(overrides).toEqual([
      'mcp_servers.troupe.command="/usr/bin/node"',
      'mcp_servers.troupe.args=["/tmp/x/bridge.cjs"]',
      'mcp_servers.troupe.default_tools_approval_mode="approve"',
      'mcp_servers.troupe.tool_timeout_sec=86400',
      'mcp_servers.troupe.supports_parallel_tool_calls=true',
      'mcp_servers.troupe.startup_timeout_sec=60',
      'mcp_servers.tickets.command="node"',
      'mcp_servers.tickets.args=["tickets.mjs"]',
      'mcp_servers.tickets.env={"TICKET_STATUS"="open \\"now\\""}',
      'mcp_servers.tickets.default_tools_approval_mode="approve"',
      'mcp_servers.tickets.startup_timeout_sec=60',
      'mcp_servers.docs.url="https://docs.example/mcp"',
      'mcp_servers.docs.http_headers={"Authorization"="Bearer x"}',
      'mcp_servers.docs.enabled_tools=["search"]',
      'mcp_servers.docs.default_tools_approval_mode="approve"',
      'mcp_servers.docs.startup_timeout_sec=60',
      // Codex has no allow-list of its own tools: `cliTools` changes nothing.
      'agents.enabled=false',
    ]);
  });

  it('waits mcpStartupTimeoutMs (in whole seconds) for each server to start, and refuses a time-out that is not positive', async () => {
    const { args } = await configure(codexProfile({ mcpStartupTimeoutMs: 1500 }), { troupe, servers: [tickets] });
    expect(args.filter((a) => a.includes('startup_timeout_sec'))).toEqual(['mcp_servers.troupe.startup_timeout_sec=2', 'mcp_servers.tickets.startup_timeout_sec=2']);
    expect(() => codexProfile({ mcpStartupTimeoutMs: 0 })).toThrow(/Expected `mcpStartupTimeoutMs` to be a positive number of ms, got 0/);
  });

  it('refuses an SSE server, which Codex cannot reach', async () => {
    const sse: McpServerSpec = { name: 'events', type: 'sse', url: 'https://events.example/sse' };
    const failed = await configure(codexProfile(), { servers: [sse] }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConfigurationError);
    expect(failed).toMatchObject({ code: 'invalid_agent', message: 'MCP server "events" is reached over SSE, which Codex does not speak (it reaches MCP servers over stdio or streamable HTTP)' });
  });
});

describe('copilotProfile', () => {
  it('every server in one --additional-mcp-config, each allowed; the CLI tools by their Copilot names, offered with the servers', async () => {
    const { args, dir } = await configure(copilotProfile(), { troupe, servers: [tickets, docs], cliTools: { allowed: ['read/readFile', 'search', 'execute', 'tickets/*'], disallowed: [] } });
    const bash = ['bash', 'read_bash', 'write_bash', 'stop_bash', 'list_bash', 'powershell', 'read_powershell', 'write_powershell', 'stop_powershell', 'list_powershell'];
    expect(args).toEqual([
      '--additional-mcp-config', `@${join(dir, 'copilot-mcp.json')}`,
      '--available-tools', 'view', 'grep', 'glob', ...bash, 'tickets', 'troupe', 'docs',
      '--allow-tool', 'troupe', 'tickets', 'docs', 'shell',
      '--excluded-tools', 'task', 'read_agent', 'list_agents', 'write_agent',
    ]);
    expect(json(join(dir, 'copilot-mcp.json'))).toEqual({
      mcpServers: {
        troupe: { type: 'local', command: '/usr/bin/node', args: ['/tmp/x/bridge.cjs'], tools: ['*'], timeout: 86_400_000 },
        tickets: { type: 'local', command: 'node', args: ['tickets.mjs'], env: { TICKET_STATUS: 'open "now"' }, tools: ['*'] },
        docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer x' }, tools: ['search'] },
      },
    });
  });

  it('without an allow-list, only the servers are allowed and nothing limits the tools offered', async () => {
    const { args, dir } = await configure(copilotProfile(), { troupe });
    expect(args).toEqual(['--additional-mcp-config', `@${join(dir, 'copilot-mcp.json')}`, '--allow-tool', 'troupe', '--excluded-tools', 'task', 'read_agent', 'list_agents', 'write_agent']);
  });
});

describe('copilotToolArgs', () => {
  it('reads aliases in any case, VS Code tool sets, MCP server tools, and names the CLI knows', () => {
    expect(copilotToolArgs({ allowed: ['Read', 'GREP', 'Edit', 'edit/editFiles', 'github/issue_read', 'jira/*', 'view', 'agent', 'todo', 'web/fetch'], disallowed: ['Bash', 'tickets/close'] })).toEqual({
      available: ['view', 'grep', 'glob', 'edit', 'create', 'github-issue_read', 'jira', 'web_fetch'],
      allow: ['write', 'github(issue_read)', 'jira'],
      excluded: ['bash', 'read_bash', 'write_bash', 'stop_bash', 'list_bash', 'powershell', 'read_powershell', 'write_powershell', 'stop_powershell', 'list_powershell', 'tickets-close'],
    });
    expect(copilotToolArgs({ disallowed: [] })).toEqual({ allow: [], excluded: [] });
    // Names that are keys of Object.prototype are plain names.
    expect(copilotToolArgs({ allowed: ['constructor', 'toString/x'], disallowed: [] })).toEqual({ available: ['constructor', 'toString-x'], allow: ['toString(x)'], excluded: [] });
  });
});

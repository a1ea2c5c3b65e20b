// What each built-in profile declares to its CLI for a session: troupe's
// MCP server, the agent's own servers, the CLI's own tools (none unless
// the agent names them) and the system prompt, as arguments and config
// files. The real CLIs read them in
// process-clis.test.ts; here, every combination, without a CLI.
import { existsSync, readFileSync } from 'node:fs';
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
  const l = launch({ agent: 'helper', ...parts });
  const { args, env, system, warnings } = await profile.mcp!.configure(l);
  return { args: [...args], env, dir: l.dir, system, warnings: warnings ?? [] };
};
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as unknown;

describe('claudeCodeProfile', () => {
  it('troupe\'s server alone: its tools allowed, no built-in tool offered, the sub-agent tool refused', async () => {
    const { args, dir, system } = await configure(claudeCodeProfile(), { troupe });
    expect(args).toEqual([
      '--mcp-config', join(dir, 'claude-mcp.json'), '--strict-mcp-config',
      '--tools', '',
      '--allowedTools', 'mcp__troupe__add,mcp__troupe__delegate_to_worker',
      '--disallowedTools', 'Task,Agent',
    ]);
    expect(system).toBe(true);
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

  it('waits for every MCP server before the first turn (MCP_CONNECTION_NONBLOCKING=0), each given mcpStartupTimeoutMs to start (MCP_TIMEOUT), 60 s unless told', async () => {
    expect((await configure(claudeCodeProfile(), { troupe })).env).toEqual({ MCP_CONNECTION_NONBLOCKING: '0', MCP_TIMEOUT: '60000' });
    expect((await configure(claudeCodeProfile({ mcpStartupTimeoutMs: 5000 }), { troupe })).env).toEqual({ MCP_CONNECTION_NONBLOCKING: '0', MCP_TIMEOUT: '5000' });
    expect(() => claudeCodeProfile({ mcpStartupTimeoutMs: Number.NaN })).toThrow(ConfigurationError);
  });

  it('CLI tools alone: no MCP config; an empty allow-list or none offers no built-in tool; `*` or `defaultCliTools: all` leaves --tools out', async () => {
    expect((await configure(claudeCodeProfile(), { cliTools: { allowed: ['Read', 'Grep'], disallowed: [] } })).args).toEqual([
      '--tools', 'Read,Grep', '--allowedTools', 'Read,Grep', '--disallowedTools', 'Task,Agent',
    ]);
    expect((await configure(claudeCodeProfile(), { cliTools: { allowed: [], disallowed: [] } })).args).toEqual(['--tools', '', '--disallowedTools', 'Task,Agent']);
    expect((await configure(claudeCodeProfile(), {})).args).toEqual(['--tools', '', '--disallowedTools', 'Task,Agent']);
    expect((await configure(claudeCodeProfile(), { cliTools: { disallowed: ['Bash'] } })).args).toEqual(['--tools', '', '--disallowedTools', 'Task,Agent,Bash']);
    expect((await configure(claudeCodeProfile(), { cliTools: { allowed: ['*'], disallowed: ['Bash'] } })).args).toEqual(['--disallowedTools', 'Task,Agent,Bash']);
    expect((await configure(claudeCodeProfile({ defaultCliTools: 'all' }), {})).args).toEqual(['--disallowedTools', 'Task,Agent']);
    // A list of its own still counts with `defaultCliTools: all`.
    expect((await configure(claudeCodeProfile({ defaultCliTools: 'all' }), { cliTools: { allowed: ['Read'], disallowed: [] } })).args).toEqual(['--tools', 'Read', '--allowedTools', 'Read', '--disallowedTools', 'Task,Agent']);
  });

  it('reads the common aliases (read, edit, search, execute, web) as Claude Code\'s tools; warns of a name it does not have and passes it on', async () => {
    const { args, warnings } = await configure(claudeCodeProfile(), { cliTools: { allowed: ['read', 'edit', 'execute', 'Search', 'Frobnicate'], disallowed: ['web'] } });
    expect(args).toEqual([
      '--tools', 'Read,Edit,Write,Bash,Grep,Glob,Frobnicate',
      '--allowedTools', 'Read,Edit,Write,Bash,Grep,Glob,Frobnicate',
      '--disallowedTools', 'Task,Agent,WebFetch,WebSearch',
    ]);
    expect(warnings).toEqual([{ code: 'unknown_cli_tool', message: expect.stringContaining('Agent "helper" names a tool "Frobnicate" that Claude Code 2.1.197 does not have'), data: { tools: ['Frobnicate'], cli: 'Claude Code' } }]);
  });

  it('gives the system prompt in a file: appended by default, replacing with `systemPrompt: replace` (the agent\'s choice first)', async () => {
    const appended = await configure(claudeCodeProfile(), { system: 'You plan.' });
    expect(appended.args.slice(-2)).toEqual(['--append-system-prompt-file', join(appended.dir, 'system-prompt.md')]);
    expect(readFileSync(join(appended.dir, 'system-prompt.md'), 'utf8')).toBe('You plan.');
    const replaced = await configure(claudeCodeProfile({ systemPrompt: 'replace' }), { system: 'You plan.' });
    expect(replaced.args.slice(-2)).toEqual(['--system-prompt-file', join(replaced.dir, 'system-prompt.md')]);
    expect((await configure(claudeCodeProfile({ systemPrompt: 'replace' }), { system: 'You plan.', systemPrompt: 'append' })).args).toContain('--append-system-prompt-file');
    expect((await configure(claudeCodeProfile(), { system: 'You plan.', systemPrompt: 'replace' })).args).toContain('--system-prompt-file');
    // Replacing with nothing: an empty prompt; appending nothing: no flag.
    const empty = await configure(claudeCodeProfile(), { systemPrompt: 'replace' });
    expect(empty.args.slice(-2)).toEqual(['--system-prompt-file', join(empty.dir, 'system-prompt.md')]);
    expect(readFileSync(join(empty.dir, 'system-prompt.md'), 'utf8')).toBe('');
    const none = await configure(claudeCodeProfile(), {});
    expect(none.args.join(' ')).not.toContain('system-prompt');
    expect(existsSync(join(none.dir, 'system-prompt.md'))).toBe(false);
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
      'mcp_servers.troupe.required=true',
      'mcp_servers.tickets.command="node"',
      'mcp_servers.tickets.args=["tickets.mjs"]',
      'mcp_servers.tickets.env={"TICKET_STATUS"="open \\"now\\""}',
      'mcp_servers.tickets.default_tools_approval_mode="approve"',
      'mcp_servers.tickets.startup_timeout_sec=60',
      'mcp_servers.tickets.required=true',
      'mcp_servers.docs.url="https://docs.example/mcp"',
      'mcp_servers.docs.http_headers={"Authorization"="Bearer x"}',
      'mcp_servers.docs.enabled_tools=["search"]',
      'mcp_servers.docs.default_tools_approval_mode="approve"',
      'mcp_servers.docs.startup_timeout_sec=60',
      'mcp_servers.docs.required=true',
      'agents.enabled=false',
      // `Read`: Codex reads through its shell, which stays on; every other tool switch is off.
      'web_search="disabled"',
      'features.view_image=false',
      'features.goals=false',
      'tools.experimental_request_user_input.enabled=false',
    ]);
  });

  it('waits mcpStartupTimeoutMs (in whole seconds) for each server to start, and refuses a time-out that is not positive', async () => {
    const { args } = await configure(codexProfile({ mcpStartupTimeoutMs: 1500 }), { troupe, servers: [tickets] });
    expect(args.filter((a) => a.includes('startup_timeout_sec'))).toEqual(['mcp_servers.troupe.startup_timeout_sec=2', 'mcp_servers.tickets.startup_timeout_sec=2']);
    expect(() => codexProfile({ mcpStartupTimeoutMs: 0 })).toThrow(/mcpStartupTimeoutMs/);
  });

  const overrides = (args: string[]) => args.filter((_, i) => i % 2 === 1);
  const OFF = ['features.shell_tool=false', 'web_search="disabled"', 'features.view_image=false', 'features.goals=false', 'tools.experimental_request_user_input.enabled=false'];

  it('turns off every tool switch the agent does not name (all of them when it names none), with the skills and permissions a shell would use; `*` or `defaultCliTools: all` keeps them', async () => {
    expect(overrides((await configure(codexProfile(), {})).args)).toEqual(['agents.enabled=false', ...OFF, 'skills.bundled.enabled=false', 'include_permissions_instructions=false']);
    expect(overrides((await configure(codexProfile(), { cliTools: { allowed: ['execute', 'web', 'view_image'], disallowed: [] } })).args)).toEqual([
      'agents.enabled=false', 'features.goals=false', 'tools.experimental_request_user_input.enabled=false',
    ]);
    expect(overrides((await configure(codexProfile(), { cliTools: { allowed: ['*'], disallowed: ['WebSearch'] } })).args)).toEqual(['agents.enabled=false', 'web_search="disabled"']);
    expect(overrides((await configure(codexProfile({ defaultCliTools: 'all' }), {})).args)).toEqual(['agents.enabled=false']);
    const { warnings } = await configure(codexProfile(), { cliTools: { allowed: ['Read', 'update_plan'], disallowed: [] } });
    expect(warnings).toMatchObject([{ code: 'unknown_cli_tool', data: { tools: ['update_plan'], cli: 'Codex' } }]);
  });

  it('appends the system prompt as developer instructions; replaces Codex\'s instructions, skills, permissions and environment context with it', async () => {
    const appended = await configure(codexProfile({ defaultCliTools: 'all' }), { system: 'You plan "well".' });
    expect(overrides(appended.args)).toEqual(['agents.enabled=false', 'developer_instructions="You plan \\"well\\"."']);
    const replaced = await configure(codexProfile({ defaultCliTools: 'all', systemPrompt: 'replace' }), { system: 'You plan.' });
    const file = join(replaced.dir, 'codex-instructions.md');
    expect(overrides(replaced.args)).toEqual([
      'agents.enabled=false', 'skills.bundled.enabled=false', 'include_permissions_instructions=false', 'include_environment_context=false', `model_instructions_file=${JSON.stringify(file)}`,
    ]);
    expect(readFileSync(file, 'utf8')).toBe('You plan.');
    // Codex refuses an empty instructions file: an empty prompt is given inline.
    expect(overrides((await configure(codexProfile({ defaultCliTools: 'all' }), { systemPrompt: 'replace' })).args).at(-1)).toBe('instructions=""');
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

  it('an agent that names no tool is offered only the servers (troupe\'s name when there is none); `*` or `defaultCliTools: all` leaves the tools unlimited', async () => {
    const { args, dir } = await configure(copilotProfile(), { troupe });
    const excluded = ['--excluded-tools', 'task', 'read_agent', 'list_agents', 'write_agent'];
    expect(args).toEqual(['--additional-mcp-config', `@${join(dir, 'copilot-mcp.json')}`, '--available-tools', 'troupe', '--allow-tool', 'troupe', ...excluded]);
    expect((await configure(copilotProfile(), {})).args).toEqual(['--available-tools', 'troupe', ...excluded]);
    expect((await configure(copilotProfile({ serverName: 'team' }), {})).args).toEqual(['--available-tools', 'team', ...excluded]);
    expect((await configure(copilotProfile({ defaultCliTools: 'all' }), {})).args).toEqual(excluded);
    expect((await configure(copilotProfile(), { cliTools: { allowed: ['*'], disallowed: [] } })).args).toEqual(excluded);
  });

  it('appends the system prompt as a custom agent of a private folder; warns of `replace`, which Copilot cannot do, and refuses it on the profile', async () => {
    const { args, dir, warnings } = await configure(copilotProfile(), { system: 'You plan.', systemPrompt: 'replace' });
    const folder = join(dir, 'copilot-agent');
    expect(args.slice(-4)).toEqual(['--add-dir', folder, '--agent', 'troupe-session']);
    expect(readFileSync(join(folder, '.github', 'agents', 'troupe-session.agent.md'), 'utf8')).toBe('---\nname: troupe-session\ndescription: The agent troupe runs\n---\nYou plan.\n');
    expect(warnings).toMatchObject([{ code: 'system_prompt_not_replaced' }]);
    expect(() => copilotProfile({ systemPrompt: 'replace' })).toThrow(/no switch that replaces its system prompt/);
  });
});

describe('profile options', () => {
  it('are checked eagerly: an unknown key with the nearest one, a bad value named', () => {
    expect(() => claudeCodeProfile({ sytemPrompt: 'replace' } as never)).toThrow('Unknown option `sytemPrompt` of claudeCodeProfile; did you mean `systemPrompt`?');
    expect(() => codexProfile({ defaultCliTools: 'some' as never })).toThrow('Expected `defaultCliTools` to be one of "none", "all", got "some" (string)');
    expect(() => copilotProfile({ command: [] })).toThrow(ConfigurationError);
  });
});

describe('copilotToolArgs', () => {
  it('reads aliases in any case, VS Code tool sets, MCP server tools, and names the CLI knows', () => {
    expect(copilotToolArgs({ allowed: ['Read', 'GREP', 'Edit', 'edit/editFiles', 'github/issue_read', 'jira/*', 'view', 'agent', 'todo', 'web/fetch'], disallowed: ['Bash', 'tickets/close'] })).toEqual({
      available: ['view', 'grep', 'glob', 'edit', 'create', 'github-issue_read', 'jira', 'web_fetch'],
      allow: ['write', 'github(issue_read)', 'jira'],
      excluded: ['bash', 'read_bash', 'write_bash', 'stop_bash', 'list_bash', 'powershell', 'read_powershell', 'write_powershell', 'stop_powershell', 'list_powershell', 'tickets-close'],
      unknown: [],
    });
    // No list: nothing (or, by default for all, every tool).
    expect(copilotToolArgs({ disallowed: [] })).toEqual({ available: [], allow: [], excluded: [], unknown: [] });
    expect(copilotToolArgs({ disallowed: [] }, true)).toEqual({ allow: [], excluded: [], unknown: [] });
    // Names that are keys of Object.prototype are plain names (and not Copilot's).
    expect(copilotToolArgs({ allowed: ['constructor', 'toString/x'], disallowed: [] })).toEqual({ available: ['constructor', 'toString-x'], allow: ['toString(x)'], excluded: [], unknown: ['constructor'] });
  });
});

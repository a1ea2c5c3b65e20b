// An agent file's own MCP servers: read into one shape from every format's
// spelling, resolved by name through the app, checked, and handed to the
// adapter (or, on an adapter that does not start them, reported).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileAgents } from '../../src/agents/compile.js';
import type { AgentDefinition, AgentIssue } from '../../src/agents/definition.js';
import { resolveAgentMcpServers } from '../../src/agents/mcp-servers.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { validateAgents } from '../../src/agents/validate.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { MCP_SERVERS_KEY } from '../../src/core/adapter.js';
import { ConfigurationError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';

const claudeFile = (servers: string) => parseAgentFile(`---\nname: support\ntools: lookup\nmcpServers:\n${servers}\n---\nHelp.`, { format: 'claude-code' });
const lookup = defineTool({ name: 'lookup', description: 'Look up', parameters: z.object({}), execute: () => 'found' });
/** A scripted adapter that starts MCP servers, as a CLI profile does: it records the sessions' metadata. */
const mcpCapable = () => scriptedAdapter({ id: 'cli', capabilities: { mcpServers: true }, fallback: 'done' });

describe('resolveAgentMcpServers', () => {
  it('reads every format\'s spelling into one shape', () => {
    const claude = claudeFile(
      [
        '  - tickets: { command: node, args: [server.mjs, 8080, true], env: { PORT: 8080, DEBUG: false } }',
        '  - docs: { type: http, url: "https://docs.example/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } }',
        '  - events: { type: sse, url: "https://events.example/sse" }',
        '  - search: { url: "https://search.example/mcp" }',
      ].join('\n'),
    );
    expect(resolveAgentMcpServers(claude)).toEqual({
      servers: [
        { name: 'tickets', type: 'stdio', command: 'node', args: ['server.mjs', '8080', 'true'], env: { PORT: '8080', DEBUG: 'false' } },
        { name: 'docs', type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
        { name: 'events', type: 'sse', url: 'https://events.example/sse' },
        { name: 'search', type: 'http', url: 'https://search.example/mcp' },
      ],
      unresolved: [],
      errors: [],
      warnings: [],
    });
    const copilot = parseAgentFile(
      "---\nname: beast\nmcp-servers:\n  gh: { type: local, command: gh-mcp, tools: ['*'] }\n  jira: { type: 'stdio', command: jira-mcp, tools: [get_issue, search] }\n---\nGo.",
      { file: 'beast.agent.md' },
    );
    expect(resolveAgentMcpServers(copilot).servers).toEqual([
      { name: 'gh', type: 'stdio', command: 'gh-mcp' },
      { name: 'jira', type: 'stdio', command: 'jira-mcp', tools: ['get_issue', 'search'] },
    ]);
  });

  it('resolves a server named without a configuration through the app\'s `mcpServers`, or reports it', () => {
    const def = claudeFile('  - github\n  - slack');
    const github = { type: 'http' as const, url: 'https://api.githubcopilot.com/mcp/' };
    expect(resolveAgentMcpServers(def, { mcpServers: { github } })).toMatchObject({ servers: [{ name: 'github', ...github }], unresolved: ['slack'] });
    // Not inherited from Object.prototype.
    expect(resolveAgentMcpServers(claudeFile('  - constructor'), { mcpServers: {} }).unresolved).toEqual(['constructor']);
  });

  it('says what is wrong with a server that cannot be used, and which keys are not used', () => {
    const def: AgentDefinition = {
      name: 'a',
      system: '',
      file: 'a.md',
      mcpServers: [
        { name: 'no command', config: { command: 'x' } },
        { name: 'nothing', config: { args: ['x'] } },
        { name: 'ws', config: { type: 'websocket', url: 'ws://x' } },
        { name: 'args', config: { command: 'x', args: 'not a list' } },
        { name: 'env', config: { command: 'x', env: { A: { nested: true } } } },
        { name: 'url', config: { type: 'http', url: 7 } },
        { name: 'tools', config: { command: 'x', tools: 'all' } },
        { name: 'ok', config: { command: 'x', timeout: 5, url: 'http://x' } },
        { name: 'OK', config: { command: 'y' } },
      ],
    };
    const { servers, errors, warnings } = resolveAgentMcpServers(def);
    expect(servers).toEqual([{ name: 'ok', type: 'stdio', command: 'x' }]);
    expect(errors.map((e) => e.message)).toEqual([
      'Agent "a": MCP server "no command": a name may hold only letters, digits, `_` and `-` (1-64 of them)',
      'Agent "a": MCP server "nothing": give a `command` (a program spoken to over stdio) or a `url`',
      'Agent "a": MCP server "ws": expected `type` to be "stdio" (or "local"), "http" or "sse", got "websocket" (string)',
      'Agent "a": MCP server "args": expected `args` to be a list of arguments, got "not a list" (string)',
      'Agent "a": MCP server "env": expected `env` to be a mapping of variable names to values, got {"A":{"nested":true}} (object)',
      'Agent "a": MCP server "url": expected `url` to be a URL, got 7 (number)',
      'Agent "a": MCP server "tools": expected `tools` to be a list of tool names, got "all" (string)',
      'Agent "a": MCP server "OK": the name is given twice (ignoring case)',
    ]);
    expect(errors.every((e) => e.code === 'invalid_value' && e.agent === 'a' && e.file === 'a.md')).toBe(true);
    expect(errors[3]!.path).toEqual(['mcpServers', 'args', 'args']);
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      ['unused_key', 'Agent "a": MCP server "ok": `timeout` is not used'],
      ['unused_key', 'Agent "a": MCP server "ok": `url` is not used'],
    ]);
  });
});

describe('compileAgents with an agent\'s MCP servers', () => {
  it('hands them to an adapter that starts them, in `metadata[MCP_SERVERS_KEY]`; the file gives no warning for them', async () => {
    const def = claudeFile('  - tickets: { command: node, args: [tickets.mjs] }\n  - github');
    expect(def.warnings ?? []).toEqual([]);
    const cli = mcpCapable();
    const warnings: AgentIssue[] = [];
    const flows = compileAgents([def], {
      defaultAdapter: cli,
      tools: { lookup },
      mcpServers: { github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/' } },
      onWarning: (w) => warnings.push(w),
    });
    const events: TroupeEvent[] = [];
    await run(flows.support!, 'help', { onEvent: (e) => events.push(e) });
    expect(cli.sessions[0]!.metadata).toEqual({
      [MCP_SERVERS_KEY]: [
        { name: 'tickets', type: 'stdio', command: 'node', args: ['tickets.mjs'] },
        { name: 'github', type: 'http', url: 'https://api.githubcopilot.com/mcp/' },
      ],
    });
    expect(warnings).toEqual([]);
    expect(events.filter((e) => e.type === 'warning')).toEqual([]);
  });

  it('says so, and hands nothing, when the agent runs on an adapter that does not start them', async () => {
    const def = claudeFile('  - tickets: { command: node }');
    const api = scriptedAdapter({ id: 'api', fallback: 'done' });
    const warnings: AgentIssue[] = [];
    const flows = compileAgents([def], { defaultAdapter: api, tools: { lookup }, onWarning: (w) => warnings.push(w) });
    expect(warnings).toEqual([
      {
        code: 'mcp_servers_unused',
        message: 'Agent "support": its MCP servers (tickets) are not started: adapter "api" does not start an agent\'s own MCP servers (a coding-agent CLI run by the process adapter with an MCP profile does)',
        agent: 'support',
        path: ['mcpServers'],
      },
    ]);
    await run(flows.support!, 'help');
    expect(api.sessions[0]!.metadata).toBeUndefined();
    // A server that could not be used does not matter there either.
    expect(() => compileAgents([claudeFile('  - broken: { args: [x] }')], { defaultAdapter: api, tools: { lookup } })).not.toThrow();
  });

  it('when the adapter is only known at run time, a session on one that does not start them gives a warning event', async () => {
    const flows = compileAgents([claudeFile('  - tickets: { command: node }')], { tools: { lookup } });
    const events: TroupeEvent[] = [];
    const api = scriptedAdapter({ id: 'api', fallback: 'done' });
    await run(flows.support!, 'help', { adapter: api, onEvent: (e) => events.push(e) });
    expect(events.filter((e) => e.type === 'warning')).toMatchObject([
      { code: 'mcp_servers_unused', message: 'Agent "support": its MCP servers (tickets) are not started: adapter "api" does not start an agent\'s own MCP servers' },
    ]);
    // The same for an agent made in code.
    events.length = 0;
    await run(agent({ name: 'coded', metadata: { [MCP_SERVERS_KEY]: [{ name: 'x', type: 'stdio', command: 'x' }] } }), 'hi', { adapter: api, onEvent: (e) => events.push(e) });
    expect(events.filter((e) => e.type === 'warning').map((e) => (e as TroupeEvent<'warning'>).code)).toEqual(['mcp_servers_unused']);
  });

  it('refuses a server that cannot be used, and one named without a configuration unless `unknownTools` is `warn`', () => {
    const cli = mcpCapable();
    const broken = () => compileAgents([claudeFile('  - broken: { args: [x] }')], { defaultAdapter: cli, tools: { lookup } });
    expect(broken).toThrow(ConfigurationError);
    expect(broken).toThrow('Agent "support": MCP server "broken": give a `command` (a program spoken to over stdio) or a `url`');
    const named = [claudeFile('  - github')];
    expect(() => compileAgents(named, { defaultAdapter: cli, tools: { lookup } })).toThrow(
      'Agent "support" names MCP server "github" without a configuration, and `mcpServers` does not hold it; pass `unknownTools: "warn"` to leave it out',
    );
    const warnings: AgentIssue[] = [];
    compileAgents(named, { defaultAdapter: cli, tools: { lookup }, unknownTools: 'warn', onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => w.code)).toEqual(['unresolved_mcp_server']);
  });
});

describe('validateAgents with the app\'s options', () => {
  it('reports servers that cannot be used and names without a configuration', () => {
    const defs = [claudeFile('  - broken: { args: [x] }\n  - github\n  - ok: { command: x, oauth: {} }')];
    const strict = validateAgents(defs, { tools: { lookup } });
    expect(strict.errors.map((e) => e.code)).toEqual(['invalid_value', 'unresolved_mcp_server']);
    expect(strict.warnings.map((w) => w.code)).toEqual(['unused_key']);
    const lenient = validateAgents(defs, { tools: { lookup }, unknownTools: 'warn' });
    expect(lenient.errors.map((e) => e.code)).toEqual(['invalid_value']);
    expect(lenient.warnings.map((w) => w.code)).toEqual(['unused_key', 'unresolved_mcp_server']);
    // Without options, names are not resolved (as for tools and models).
    expect(validateAgents(defs).errors).toEqual([]);
  });
});

// The process adapter serving a session's tools over MCP, end to end: the
// stand-in CLI (written with the MCP SDK's client) is run by the adapter
// through the Claude Code profile, reaches troupe's tool bridge, and calls
// the tools; no part is mocked.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claudeCodeProfile, processAdapter, type McpLaunch, type ProcessAdapterOptions } from '../../src/adapters/process.js';
import { compileAgents } from '../../src/agents/compile.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { CLI_SYSTEM_PROMPT_KEY, CLI_TOOLS_KEY, MCP_SERVERS_KEY } from '../../src/core/adapter.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { AdapterError, ConfigurationError, TimeoutError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { walk, type OpNode } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { defineTool, toToolSchema, type ToolDefinition } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { standInBundle, ticketServerBundle } from '../helpers/bundle.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { eventually } from '../helpers/eventually.js';

// The examples' stand-in CLI and ticket server, each bundled with the MCP SDK: half the CPU a start.
const standIn = standInBundle();
const ticketServer = ticketServerBundle();
const tempDir = tempDirs('troupe-mcp-test-');

/** The stand-in CLI through the Claude Code profile; `pids` collects the processes it started. */
function standInAdapter(options: { steps?: unknown[]; timeoutMs?: number; clock?: SimulatedClock } = {}) {
  const pids = join(tempDir(), 'pids.jsonl');
  const args = ['--pids', pids, ...(options.steps ? ['--steps', JSON.stringify(options.steps)] : [])];
  const profile: ProcessAdapterOptions = claudeCodeProfile({ command: [process.execPath, standIn], args });
  const adapter = processAdapter({
    ...profile,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const started = () =>
    existsSync(pids)
      ? readFileSync(pids, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cli: number; servers: number[]; config: string })
      : [];
  return { adapter, started };
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
}) as ToolDefinition;

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
/** Every process a session started has ended, and its bridge folder is gone. */
async function nothingLeft(started: () => Array<{ cli: number; servers: number[]; config: string }>): Promise<void> {
  const runs = started();
  expect(runs.length).toBeGreaterThan(0);
  for (const r of runs) {
    await eventually(() => !alive(r.cli) && r.servers.every((pid) => !alive(pid)), `CLI ${r.cli} and its MCP servers ${r.servers.join(', ')} have ended`);
    if (r.config) expect(existsSync(dirname(r.config))).toBe(false);
  }
}

const workers = () => [
  agent({ name: 'coder', description: 'writes code' }),
  agent({ name: 'tester', description: 'writes tests' }),
];
const workerReplies = scriptedAdapter({
  rules: [
    { agent: 'coder', reply: 'coder: wrote parse()' },
    { agent: 'tester', reply: 'tester: wrote 3 tests' },
  ],
});

describe('the process adapter over MCP', () => {
  it('has tools, and starts agents\' MCP servers, only with `mcp`, and checks its MCP options', () => {
    expect(processAdapter(claudeCodeProfile()).capabilities).toEqual({ tools: true, streaming: false, mcpServers: true });
    expect(processAdapter({ command: ['claude', '-p'] }).capabilities).toEqual({ tools: false, streaming: false, mcpServers: false });
    const configure = () => ({ args: [] });
    expect(() => processAdapter({ command: ['cli'], mcp: { configure } })).toThrow(ConfigurationError);
    expect(() => processAdapter({ command: ['cli', '{mcp}'], mcp: { configure, serverName: 'no spaces' } })).toThrow(/serverName/);
    expect(() => processAdapter({ command: ['cli', '{mcp}'], resume: { command: ['cli', '--resume', '{sessionId}'] }, mcp: { configure } })).toThrow(
      /`resume.command` needs the argument "\{mcp\}"/,
    );
  });

  it('runs an orchestrator CLI in an orchestrate loop: it delegates to two workers over MCP, in parallel, and nothing outlives the run', async () => {
    const { adapter, started } = standInAdapter();
    const events: TroupeEvent[] = [];
    const flow = orchestrate({
      name: 'build',
      mode: 'orchestrator',
      dispatch: 'tool',
      lead: agent({ name: 'lead', adapter }),
      workers: workers(),
    });
    const result = await run(flow, 'Add a parser', { adapter: workerReplies, onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Synthesis\ncoder: coder: wrote parse()\ntester: tester: wrote 3 tests');
    // Both calls arrived in one turn, so troupe ran the workers in parallel.
    const leadTurns = events.filter((e): e is TroupeEvent<'agent.turn'> => e.type === 'agent.turn' && e.agent === 'lead');
    expect(leadTurns.map((t) => t.toolCalls)).toEqual([2, 0]);
    const called = events.filter((e): e is TroupeEvent<'tool.called'> => e.type === 'tool.called').map((e) => e.call);
    expect(called.map((c) => [c.name, (c.arguments as { worker: string }).worker]).sort()).toEqual([
      ['delegate_to_worker', 'coder'],
      ['delegate_to_worker', 'tester'],
    ]);
    // The workers are troupe sessions: op nodes nested in the loop, each with its own agent and model turn.
    const nested: string[] = [];
    walk(result.trace, (node: OpNode) => {
      for (const child of node.children) {
        if (child.kind === 'worker') nested.push(`${node.kind}:${node.name} > ${child.name} (agent ${child.agent}, ${child.usage.turns} turn)`);
      }
    });
    expect(nested.sort()).toEqual(['orchestrate:build > coder (agent coder, 1 turn)', 'orchestrate:build > tester (agent tester, 1 turn)']);
    // The CLI's usage (from its result line) is the orchestrator's own usage: the loop's op node, below which the workers are.
    expect(result.trace.children[0]!.usage.inputTokens).toBeGreaterThan(0);
    await nothingLeft(started);
  });

  it('ends the CLI and its MCP server when the run is aborted in the middle of a tool call', async () => {
    const { adapter, started } = standInAdapter();
    const slowWorkers = scriptedAdapter({ fallback: { fault: 'hang' } });
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
    const handle = startRun(flow, 'Add a parser', { adapter: slowWorkers });
    const called = new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    await called;
    expect(started()).toHaveLength(1);
    const { cli, servers } = started()[0]!;
    expect([cli, ...servers].every(alive)).toBe(true);
    handle.cancel();
    // A cancelled loop ends with status `cancelled`; the orchestrator's session was closed on the way out.
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await nothingLeft(started);
  });

  it('answers a call of an unknown tool with an error result; the agent goes on', async () => {
    const { adapter, started } = standInAdapter({ steps: [{ call: 'format_disk', args: {} }, { call: 'add', args: { a: 1, b: 2 } }] });
    const result = await run(agent({ name: 'a', adapter, tools: [add] }), 'go');
    expect(result.output).toBe('Synthesis\nformat_disk: ERROR Error: unknown tool "format_disk". Available tools: add\nadd: 3');
    await nothingLeft(started);
  });

  it('answers a call with invalid arguments with the schema errors', async () => {
    const { adapter } = standInAdapter({ steps: [{ call: 'add', args: { a: 'one', b: 2 } }] });
    const result = await run(agent({ name: 'a', adapter, tools: [add] }), 'go');
    expect(result.output).toMatch(/^Synthesis\nadd: ERROR Error: invalid arguments for "add": a: /);
  });

  it('fails with a TimeoutError, and ends the CLI, when the CLI never answers after a tool call', async () => {
    const clock = new SimulatedClock();
    const { adapter, started } = standInAdapter({ steps: [{ call: 'add', args: { a: 1, b: 2 } }, { hang: true }], timeoutMs: 60_000, clock });
    const handle = startRun(agent({ name: 'a', adapter, tools: [add] }), 'go', { clock });
    handle.emitter.on('tool.completed', () => {
      // The results are sent and the CLI never answers: let the turn's time-out pass.
      setTimeout(() => void clock.advance(60_000), 50);
    });
    await expect(handle.result).rejects.toBeInstanceOf(TimeoutError);
    await nothingLeft(started);
  });

  it('fails with an AdapterError when the CLI exits in the middle of a call', async () => {
    const { adapter, started } = standInAdapter({ steps: [{ callAndExit: 'add', args: { a: 1, b: 2 }, code: 3 }] });
    const error = await run(agent({ name: 'a', adapter, tools: [add] }), 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as AdapterError).details).toMatchObject({ exitCode: 3 });
    await nothingLeft(started);
  });

  it('carries the exit code when the CLI withdraws its call long before it exits', async () => {
    // The call arrives, the CLI closes its MCP connection (withdrawing the call), then exits 500 ms later:
    // the turn waits for the exit instead of failing without its code.
    const { adapter, started } = standInAdapter({ steps: [{ callAndExit: 'add', args: { a: 1, b: 2 }, code: 3, withdrawFirst: 500 }] });
    const error = await run(agent({ name: 'a', adapter, tools: [add] }), 'go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as AdapterError).details).toMatchObject({ exitCode: 3 });
    await nothingLeft(started);
  });

  it('at the adapter level: results answer the waiting calls, a new message stops a waiting command, stray results are refused', async () => {
    const { adapter, started } = standInAdapter({ steps: [{ call: 'add', args: { a: 2, b: 2 } }] });
    const session = await adapter.openSession({ agent: 'a', tools: [toToolSchema(add)] });
    try {
      const first = await session.send('go');
      expect(first).toEqual({ text: '', toolCalls: [{ id: 'mcp-1', name: 'add', arguments: { a: 2, b: 2 } }] });
      // A new message while the command waits for the result: that command is stopped, a new one runs.
      const again = await session.send('again');
      expect(again.toolCalls).toEqual([{ id: 'mcp-2', name: 'add', arguments: { a: 2, b: 2 } }]);
      const final = await session.send([{ callId: 'mcp-2', name: 'add', content: '4' }]);
      expect(final.text).toBe('Synthesis\nadd: 4');
      expect(final.usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
      const stray = await session.send([{ callId: 'mcp-2', name: 'add', content: '4' }]).catch((e: unknown) => e);
      expect(stray).toBeInstanceOf(AdapterError);
      expect((stray as Error).message).toMatch(/no command of it waits/);
    } finally {
      await session.close();
    }
    expect(started()).toHaveLength(2);
    await nothingLeft(started);
  });

  it('takes a custom profile: `{mcp}` and `configure`; a `configure` that returns no arguments fails the session and removes its folder', async () => {
    let dir = '';
    const custom = processAdapter({
      command: [process.execPath, standIn, '{mcp}'],
      output: 'jsonl',
      prompt: 'stdin',
      mcp: {
        serverName: 'tools',
        async configure({ troupe, dir: folder }) {
          dir = folder;
          const file = join(folder, 'servers.json');
          writeFileSync(file, JSON.stringify({ mcpServers: { [troupe!.name]: { command: troupe!.command, args: troupe!.args } } }));
          return { args: ['--mcp-config', file, '--steps', JSON.stringify([{ call: 'add', args: { a: 20, b: 22 } }])] };
        },
      },
    });
    expect((await run(agent({ name: 'a', adapter: custom, tools: [add] }), 'go')).output).toBe('Synthesis\nadd: 42');
    expect(existsSync(dir)).toBe(false);
    const broken = processAdapter({ command: ['cli', '{mcp}'], mcp: { configure: (launch) => ((dir = launch.dir), { args: 'no' as unknown as string[] }) } });
    await expect(run(agent({ name: 'a', adapter: broken, tools: [add] }), 'go')).rejects.toThrow(/Expected `mcp.configure` to return \{ args: string\[\] \}/);
    expect(existsSync(dir)).toBe(false);
  });

  it('starts an agent file\'s own MCP server beside troupe\'s: the CLI calls both, and nothing outlives the session', async () => {
    const log = join(tempDir(), 'calls.jsonl');
    const steps = [{ call: 'lookup_ticket', args: { id: '7' } }, { call: 'add', args: { a: 1, b: 2 } }];
    const { adapter, started } = standInAdapter({ steps });
    const server = JSON.stringify({ command: process.execPath, args: [ticketServer, log], env: { TICKET_STATUS: 'waiting on parts' } });
    const def = parseAgentFile(`---\nname: support\ntools: add\nmcpServers:\n  - tickets: ${server}\n---\nHelp.`, { format: 'claude-code' });
    const result = await run(compileAgents([def], { defaultAdapter: adapter, tools: { add } }).support!, 'ticket 7?');
    expect(result.output).toBe('Synthesis\nlookup_ticket: Ticket 7: waiting on parts\nadd: 3');
    expect(readFileSync(log, 'utf8')).toBe('{"tool":"lookup_ticket","arguments":{"id":"7"}}\n');
    // The CLI started two MCP servers: troupe's bridge and the agent's own.
    expect(started()[0]!.servers).toHaveLength(2);
    await nothingLeft(started);
  });

  it('declares an agent\'s own MCP servers (and its CLI tools) without troupe\'s when the session has no tools; the folder goes with the session', async () => {
    const launches: McpLaunch[] = [];
    const log = join(tempDir(), 'calls.jsonl');
    const { mcp, ...profile } = claudeCodeProfile({ command: [process.execPath, standIn], args: ['--steps', JSON.stringify([{ call: 'lookup_ticket', args: { id: '9' } }])] });
    const adapter = processAdapter({ ...profile, mcp: { ...mcp!, configure: (launch) => (launches.push(launch), mcp!.configure(launch)) } });
    const servers = [{ name: 'tickets', type: 'stdio', command: process.execPath, args: [ticketServer, log] }];
    const session = await adapter.openSession({ agent: 'a', metadata: { [MCP_SERVERS_KEY]: servers, [CLI_TOOLS_KEY]: { allowed: ['Read'], disallowed: [] } } });
    try {
      expect((await session.send('go')).text).toBe('Synthesis\nlookup_ticket: Ticket 9: status unknown');
    } finally {
      await session.close();
    }
    expect(launches).toHaveLength(1);
    expect(launches[0]).toEqual({ agent: 'a', servers, cliTools: { allowed: ['Read'], disallowed: [] }, dir: expect.any(String) });
    expect(existsSync(launches[0]!.dir)).toBe(false);
    // Nothing of its own to declare: the CLI is still told (no tool of its own), and the folder goes with the session.
    const plain = await adapter.openSession({ agent: 'b', system: 'Be brief.', metadata: { [CLI_SYSTEM_PROMPT_KEY]: 'replace' } });
    await plain.close();
    expect(launches).toHaveLength(2);
    expect(launches[1]).toEqual({ agent: 'b', servers: [], system: 'Be brief.', systemPrompt: 'replace', dir: expect.any(String) });
    expect(existsSync(launches[1]!.dir)).toBe(false);
    await expect(adapter.openSession({ agent: 'c', metadata: { [CLI_SYSTEM_PROMPT_KEY]: 'prepend' } })).rejects.toThrow('Agent "c": expected `metadata.cliSystemPrompt` to be "append" or "replace", got "prepend" (string)');
    await expect(adapter.openSession({ agent: 'c', metadata: { [CLI_TOOLS_KEY]: ['Read'] } })).rejects.toThrow(/expected `metadata.cliTools` to be \{ allowed\?: string\[\], disallowed: string\[\] \}/);
  });

  it('refuses an agent\'s MCP server named like troupe\'s own (in any case), or two of the same name, before anything starts', async () => {
    const { adapter, started } = standInAdapter();
    const server = (name: string) => ({ name, type: 'stdio', command: 'x' });
    const open = (servers: unknown, a: typeof adapter = adapter) => a.openSession({ agent: 'a', tools: [toToolSchema(add)], metadata: { [MCP_SERVERS_KEY]: servers } });
    const clash = await open([server('Troupe')]).catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(ConfigurationError);
    expect(clash).toMatchObject({ code: 'invalid_agent', details: { agent: 'a', server: 'Troupe' } });
    expect((clash as Error).message).toBe(
      'Agent "a": its MCP server "Troupe" has the name of troupe\'s own server for the session\'s tools; rename the agent\'s server, or give troupe\'s another name (the profile\'s `serverName`)',
    );
    await expect(open([server('t'), server('T')])).rejects.toThrow('Agent "a": two of its MCP servers are named "T"');
    await expect(open({ tickets: {} })).rejects.toThrow(/expected `metadata.mcpServers` to be a list of MCP servers/);
    await expect(open([{ name: 'x', type: 'stdio' }])).rejects.toThrow(/`command` must be a program/);
    await expect(open([{ name: 'x', type: 'ws', url: 'ws://x' }])).rejects.toThrow(/`type` must be "stdio", "http" or "sse"/);
    await expect(open([{ name: 'a b', type: 'http', url: 'http://x' }])).rejects.toThrow(/`name` must be 1-64 letters/);
    expect(started()).toEqual([]);
    // With troupe's server named otherwise, the name is free.
    const renamed = processAdapter(claudeCodeProfile({ command: [process.execPath, standIn], serverName: 'tools', args: ['--steps', '[]'] }));
    const session = await open([{ name: 'troupe', type: 'stdio', command: process.execPath, args: [ticketServer] }], renamed);
    await session.close();
  });

  it('runs a session without tools as a plain CLI turn (no MCP server), its system prompt given to the CLI as its own, not in the prompt', async () => {
    const { adapter } = standInAdapter();
    const result = await run(agent({ name: 'a', adapter, system: 'Be brief.' }), 'hello');
    expect(result.output).toBe('Synthesis\nnothing to delegate in: hello\nsystem prompt (appended): Be brief.');
    const replaced = await run(agent({ name: 'a', adapter, system: 'Be brief.', cli: { systemPrompt: 'replace' } }), 'hello');
    expect(replaced.output).toBe('Synthesis\nnothing to delegate in: hello\nsystem prompt (replacing): Be brief.');
  });

  it('tells a warning of the profile (a CLI tool it does not know) as a `warning` event of the agent, once', async () => {
    const { adapter } = standInAdapter();
    const events: TroupeEvent[] = [];
    const a = agent({ name: 'a', adapter, cli: { tools: ['Read', 'Frobnicate'] } });
    await run(a, 'hello', { onEvent: (e) => events.push(e) });
    const warnings = events.filter((e): e is TroupeEvent<'warning'> => e.type === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'unknown_cli_tool', data: { agent: 'a', adapter: 'claude', tools: ['Frobnicate'], cli: 'Claude Code' } });
    expect(warnings[0]!.message).toContain('Agent "a" names a tool "Frobnicate" that Claude Code 2.1.197 does not have');
  });
});

// The real Claude Code, Codex and GitHub Copilot CLIs (from npm, installed
// in test/cli-rigs) run by the process adapter's built-in profiles,
// offline: each talks to a local mock of its model API (Copilot to the
// Anthropic mock, as a custom provider) and calls troupe's tools through
// the MCP bridge; an agent file's own MCP server (examples/cli/ticket-server.mjs) is
// started by the CLI beside troupe's, and the tools the file names are the
// CLI's allow-list. An agent that names none of the CLI's own tools is
// offered none (the request the mock receives carries no built-in tool),
// one that names `Read` exactly that; the agent's system prompt is
// appended to the CLI's own or replaces it. Skipped, with one line at the
// start of the run, when the CLIs are not installed (`npm run
// install:cli-rigs`); CI requires them.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { claudeCodeProfile, codexProfile, copilotProfile, processAdapter } from '../../src/adapters/process.js';
import { compileAgents } from '../../src/agents/compile.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { walk } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { defineTool, type ToolDefinition } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { reflect } from '../../src/patterns/reflect.js';
import { startMockAnthropic, type AnthropicRequest, type MockAnthropic, type MockAnthropicOptions } from '../helpers/mock-anthropic.js';
import { startMockResponses, type MockResponses } from '../helpers/mock-responses.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { eventually } from '../helpers/eventually.js';

const clis = inject('clis');
const tempDir = tempDirs('troupe-cli-test-');
const ticketServer = join(import.meta.dirname, '..', '..', 'examples', 'cli', 'ticket-server.mjs');

/** An agent's own MCP server: the ticket server, logging its calls into a fresh file; `calls()` reads them. */
function ticketServerFor() {
  const log = join(tempDir(), 'calls.jsonl');
  const config = { command: process.execPath, args: [ticketServer, log], env: { TICKET_STATUS: 'printer on fire' } };
  const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown) : []);
  return { config, calls };
}
// A real CLI starts in about a second; a loaded machine may take longer.
const SLOW = { timeout: 60_000 };
/** Two runs of a real CLI (Copilot takes 15 s a run on a loaded machine). */
const TWICE = { timeout: 120_000 };

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
}) as ToolDefinition;

const workers = () => [agent({ name: 'coder', description: 'writes code' }), agent({ name: 'tester', description: 'writes tests' })];
const workerReplies = () =>
  scriptedAdapter({
    rules: [
      { agent: 'coder', reply: 'wrote parse()' },
      { agent: 'tester', reply: 'wrote 3 tests' },
    ],
  });

let mocks: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
});

/** The processes this test process started, and theirs: the CLI and its MCP bridge (zombies left out). */
function descendants(): number[] {
  const parentOf = new Map<number, number>();
  if (existsSync('/proc')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (fields[0] !== 'Z') parentOf.set(Number(entry), Number(fields[1]));
      } catch {
        // gone meanwhile
      }
    }
  } else {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat='], { encoding: 'utf8' }).split('\n')) {
      const [pid, ppid, stat] = line.trim().split(/\s+/);
      if (pid && ppid && !stat?.startsWith('Z')) parentOf.set(Number(pid), Number(ppid));
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const [child, parent] of parentOf) if (parent === pid) (found.push(child), visit(child));
  };
  visit(process.pid);
  return found;
}

const warningsOf = (events: TroupeEvent[]) => events.filter((e): e is TroupeEvent<'warning'> => e.type === 'warning');
/** The text of an Anthropic request's system prompt (a string or text blocks). */
const systemText = (request: AnthropicRequest | undefined) => {
  const system = request?.body['system'];
  return typeof system === 'string' ? system : Array.isArray(system) ? system.map((b: { text?: string }) => b.text ?? '').join('\n') : '';
};
const toolCallTurns = (events: TroupeEvent[], name: string) =>
  events.filter((e): e is TroupeEvent<'agent.turn'> => e.type === 'agent.turn' && e.agent === name).map((e) => e.toolCalls);
const nestedWorkers = (trace: Parameters<typeof walk>[0]) => {
  const found: string[] = [];
  walk(trace, (node) => {
    for (const child of node.children) if (child.kind === 'worker') found.push(`${node.kind} > ${child.name}`);
  });
  return found.sort();
};

describe.skipIf(!clis.claude)(`Claude Code (${clis.claude?.version ?? 'not installed'}) through claudeCodeProfile`, () => {
  async function claude(script: Parameters<typeof startMockAnthropic>[0], args: string[] = [], mockOptions: MockAnthropicOptions = {}) {
    const mock = await startMockAnthropic(script, mockOptions);
    mocks.push(mock);
    const home = tempDir();
    const cwd = tempDir();
    const adapter = processAdapter({
      ...claudeCodeProfile({ command: clis.claude!.path, args }),
      cwd,
      passEnv: ['PATH'],
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: mock.url,
        ANTHROPIC_API_KEY: 'test-key',
        // Offline: no update checks, telemetry or other traffic besides the API.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
      },
    });
    return { mock, adapter, home, cwd };
  }
  const toolNames = (mock: MockAnthropic, turn: number) => (mock.turns[turn]?.body.tools ?? []).map((t) => t.name);
  const toolResults = (mock: MockAnthropic, turn: number) => JSON.stringify(mock.turns[turn]?.body.messages ?? []);

  it('calls an agent\'s tool over MCP, gets the result, and answers; its own sub-agent tool is gone', SLOW, async () => {
    const { mock, adapter, home } = await claude([{ toolUses: [{ suffix: '__add', input: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }]);
    // An MCP server of the user's own config is not loaded (--strict-mcp-config).
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { other: { type: 'stdio', command: 'false' } } }));
    const events: TroupeEvent[] = [];
    const result = await run(agent({ name: 'calc', adapter, tools: [add] }), 'What is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('The sum is 5.');
    expect(toolNames(mock, 0)).toContain('mcp__troupe__add');
    expect(toolNames(mock, 0).filter((n) => n.startsWith('mcp__'))).toEqual(['mcp__troupe__add']);
    expect(toolNames(mock, 0)).not.toContain('Agent');
    expect(toolNames(mock, 0)).not.toContain('Task');
    expect(toolResults(mock, 0)).toContain('What is 2 + 3?');
    expect(toolResults(mock, 1)).toMatch(/"type":"tool_result".*"text":"5"/);
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.costUsd).toBeGreaterThan(0);
  });

  it('starts an agent file\'s own MCP server beside troupe\'s: the model calls its tool, and the server gets the call', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter } = await claude([{ toolUses: [{ suffix: '__lookup_ticket', input: { id: '42' } }] }, { text: 'Ticket 42: the printer is on fire.' }]);
    const file = [
      '---',
      'name: support',
      'description: Answers questions about support tickets',
      'tools: Read, add, mcp__tickets__lookup_ticket',
      'mcpServers:',
      `  - tickets: ${JSON.stringify({ type: 'stdio', ...tickets.config })}`,
      '---',
      'You answer questions about support tickets.',
    ].join('\n');
    const def = parseAgentFile(file, { format: 'claude-code' });
    expect(def.warnings ?? []).toEqual([]);
    const flows = compileAgents([def], { cli: { 'claude-code': adapter }, tools: { add } });
    const result = await run(flows.support!, 'What is the state of ticket 42?');
    expect(result.output).toBe('Ticket 42: the printer is on fire.');
    // Offered: the built-in tool the file names, troupe's tool and the agent's server's tool; nothing else.
    expect(toolNames(mock, 0).sort()).toEqual(['Read', 'mcp__tickets__lookup_ticket', 'mcp__troupe__add']);
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    // The server's environment came from its configuration.
    expect(toolResults(mock, 1)).toMatch(/"type":"tool_result".*Ticket 42: printer on fire/);
  });

  it('offers exactly the built-in tools an agent file names plus troupe\'s MCP tools, and merges their permissions with the user\'s own --allowedTools', SLOW, async () => {
    const { mock, adapter, cwd } = await claude(
      [
        {
          toolUses: [
            { suffix: '__add', input: { a: 2, b: 3 } },
            { suffix: 'Bash', input: { command: 'touch by-agent-file', description: 'touch' } },
            { suffix: 'Bash', input: { command: 'mkdir by-user-args', description: 'mkdir' } },
            { suffix: 'Bash', input: { command: 'ln -s by-agent-file denied-link', description: 'link' } },
          ],
        },
        { text: 'Done.' },
      ],
      // The user's own permission, in a second --allowedTools.
      ['--allowedTools', 'Bash(mkdir *)'],
    );
    const def = parseAgentFile('---\nname: builder\ntools: Read, Grep, Bash(touch *), add\ndisallowedTools: WebFetch\n---\nBuild.', { format: 'claude-code' });
    const result = await run(compileAgents([def], { cli: { 'claude-code': adapter }, tools: { add } }).builder!, 'Build it');
    expect(result.output).toBe('Done.');
    expect(toolNames(mock, 0).sort()).toEqual(['Bash', 'Grep', 'Read', 'mcp__troupe__add']);
    expect(toolResults(mock, 1)).toMatch(/"type":"tool_result".*"text":"5"/);
    // Claude Code merges every --allowedTools: the file's `Bash(touch *)` and the user's `Bash(mkdir *)` both ran; `ln` was allowed by neither.
    expect(existsSync(join(cwd, 'by-agent-file'))).toBe(true);
    expect(existsSync(join(cwd, 'by-user-args'))).toBe(true);
    expect(existsSync(join(cwd, 'denied-link'))).toBe(false);
    expect(toolResults(mock, 1).match(/This command requires approval/g)).toHaveLength(1);
  });

  it('orchestrates two troupe workers with delegate_to_worker; the workers are nested sessions of the trace', SLOW, async () => {
    const { mock, adapter } = await claude([
      {
        toolUses: [
          { suffix: '__delegate_to_worker', input: { worker: 'coder', task: 'write parse()' } },
          { suffix: '__delegate_to_worker', input: { worker: 'tester', task: 'write tests for parse()' } },
        ],
      },
      { text: 'Done: parse() is written and tested.' },
    ]);
    const events: TroupeEvent[] = [];
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const result = await run(flow, 'Add a parser', { adapter: workerReplies(), onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Done: parse() is written and tested.');
    // The lead names none of Claude Code's tools: it is offered troupe's tool alone.
    expect(toolNames(mock, 0)).toEqual(['mcp__troupe__delegate_to_worker']);
    expect(toolResults(mock, 1)).toContain('wrote parse()');
    expect(toolResults(mock, 1)).toContain('wrote 3 tests');
    // Claude Code 2.1.197 runs an MCP tool alone unless the tool says it is read-only: one call a turn, one worker after the other.
    expect(toolCallTurns(events, 'lead')).toEqual([1, 1, 0]);
    expect(nestedWorkers(result.trace)).toEqual(['orchestrate > coder', 'orchestrate > tester']);
    // The orchestrator's own usage (its op node, below the workers' nodes) is what Claude Code reported.
    expect(result.trace.children[0]?.usage).toMatchObject({ inputTokens: expect.any(Number), costUsd: expect.any(Number) });
    expect(result.trace.children[0]!.usage.costUsd).toBeGreaterThan(0);
  });

  it('resumes its own session for the next message of a conversation, with the MCP server again', SLOW, async () => {
    const { mock, adapter } = await claude([{ text: 'First answer.' }, { toolUses: [{ suffix: '__add', input: { a: 1, b: 1 } }] }, { text: 'Two.' }]);
    const host = agent({ name: 'calc', adapter, tools: [add] });
    const result = await run(
      { name: 'talk', kind: 'custom', run: async (_input, ctx) => {
        const conversation = await host.converse(ctx);
        try {
          const first = await conversation.send('Hello');
          const second = await conversation.send('And 1 + 1?');
          return { output: `${first.text} | ${second.text}`, agent: 'calc', status: 'completed', usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, turns: 0 } };
        } finally {
          await conversation.close();
        }
      } },
      'go',
    );
    expect(result.output).toBe('First answer. | Two.');
    // The second message went to the same Claude Code session: the first exchange is in its history.
    expect(toolResults(mock, 1)).toContain('First answer.');
    expect(toolResults(mock, 2)).toMatch(/"type":"tool_result".*"text":"2"/);
  });

  it('offers no built-in tool to an agent that names none, exactly Read to one that names it, and warns of a name Claude Code does not have', TWICE, async () => {
    const { mock, adapter } = await claude([{ text: 'Hello.' }, { text: 'Read it.' }], [], { turns: 'all' });
    expect((await run(agent({ name: 'plain', adapter }), 'Say hello')).output).toBe('Hello.');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, cli: { tools: ['Read', 'Frobnicate'] } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.messages).toHaveLength(2);
    expect(mock.messages[0]!.body.tools ?? []).toEqual([]);
    expect((mock.messages[1]!.body.tools ?? []).map((t) => t.name)).toEqual(['Read']);
    expect(warningsOf(events)).toMatchObject([{ code: 'unknown_cli_tool', data: { agent: 'reader', tools: ['Frobnicate'] } }]);
  });

  it('appends the agent\'s system prompt to Claude Code\'s own, or replaces it', TWICE, async () => {
    const { mock, adapter } = await claude([{ text: 'One.' }, { text: 'Two.' }], [], { turns: 'all' });
    const system = 'You are the release planner of project Troupe-7781.';
    await run(agent({ name: 'appended', adapter, system }), 'Plan the release');
    await run(agent({ name: 'replaced', adapter, system, cli: { systemPrompt: 'replace' } }), 'Plan the release');
    const [appended, replaced] = [systemText(mock.messages[0]), systemText(mock.messages[1])];
    expect(appended).toContain(system);
    expect(appended).toContain('You are an interactive agent that helps users with software engineering tasks');
    expect(replaced).toContain(system);
    expect(replaced).not.toContain('You are an interactive agent');
    expect(replaced.length).toBeLessThan(system.length + 200);
    // The system prompt is not sent again in the user's message.
    for (const request of mock.messages) expect(JSON.stringify(request.body.messages)).not.toContain('Troupe-7781');
  });

  it('ends Claude Code and the MCP bridge when the run is aborted in the middle of a tool call', SLOW, async () => {
    const { adapter } = await claude([{ toolUses: [{ suffix: '__delegate_to_worker', input: { worker: 'coder', task: 'write parse()' } }] }]);
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants();
    expect(running.length).toBeGreaterThanOrEqual(2); // Claude Code and the bridge it started
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => descendants().length === 0, `Claude Code and the bridge (${running.join(', ')}) have ended`);
  });
});

describe.skipIf(!clis.codex)(`Codex (${clis.codex?.version ?? 'not installed'}) through codexProfile`, () => {
  async function codex(script: Parameters<typeof startMockResponses>[0]) {
    const mock = await startMockResponses(script);
    mocks.push(mock);
    // A fresh CODEX_HOME whose config points the model provider at the mock.
    const home = tempDir();
    writeFileSync(
      join(home, 'config.toml'),
      [
        'model = "mock-model"',
        'model_provider = "mock"',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = "${mock.url}"`,
        'wire_api = "responses"',
        'env_key = "TROUPE_MOCK_KEY"',
        '',
      ].join('\n'),
    );
    const adapter = processAdapter({
      ...codexProfile({ command: clis.codex!.path, args: ['--skip-git-repo-check'] }),
      cwd: tempDir(),
      passEnv: ['PATH'],
      env: { HOME: home, CODEX_HOME: home, TROUPE_MOCK_KEY: 'test-key' },
    });
    return { mock, adapter };
  }
  const namespace = (mock: MockResponses, turn: number, name: string) => mock.turns[turn]?.tools?.find((t) => t.name === name);
  const outputs = (mock: MockResponses, turn: number) => JSON.stringify((mock.turns[turn]?.input ?? []).filter((i) => i.type === 'function_call_output'));

  it('calls an agent\'s tool over MCP, gets the result, and answers; its sub-agents are off', SLOW, async () => {
    const { mock, adapter } = await codex([{ calls: [{ namespace: 'mcp__troupe', name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }]);
    const events: TroupeEvent[] = [];
    const result = await run(agent({ name: 'calc', adapter, tools: [add] }), 'What is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('The sum is 5.');
    expect(namespace(mock, 0, 'mcp__troupe')?.tools?.map((t) => t.name)).toEqual(['add']);
    expect(mock.turns[0]?.tools?.some((t) => t.name?.startsWith('multi_agent'))).toBe(false);
    expect(JSON.stringify(mock.turns[0]?.input)).toContain('What is 2 + 3?');
    expect(outputs(mock, 1)).toContain('"text":"5"');
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it('starts an agent file\'s own MCP server beside troupe\'s: the model calls its tool, and the server gets the call', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter } = await codex([
      { calls: [{ namespace: 'mcp__tickets', name: 'lookup_ticket', arguments: { id: '42' } }] },
      { text: 'Ticket 42: the printer is on fire.' },
    ]);
    // A GitHub Copilot agent file (its `mcp-servers` mapping, `type: local`) run on Codex.
    const file = ['---', 'name: support', 'tools: [add]', 'mcp-servers:', `  tickets: ${JSON.stringify({ type: 'local', ...tickets.config, tools: ['*'] })}`, '---', 'You answer questions about support tickets.'].join('\n');
    const def = parseAgentFile(file, { file: 'support.agent.md' });
    expect(def.format).toBe('copilot');
    const result = await run(compileAgents([def], { defaultAdapter: adapter, tools: { add } }).support!, 'What is the state of ticket 42?');
    expect(result.output).toBe('Ticket 42: the printer is on fire.');
    expect(namespace(mock, 0, 'mcp__tickets')?.tools?.map((t) => t.name)).toEqual(['lookup_ticket']);
    expect(namespace(mock, 0, 'mcp__troupe')?.tools?.map((t) => t.name)).toEqual(['add']);
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    expect(outputs(mock, 1)).toContain('Ticket 42: printer on fire');
  });

  it('orchestrates two troupe workers with delegate_to_worker; the workers are nested sessions of the trace', SLOW, async () => {
    const { mock, adapter } = await codex([
      {
        calls: [
          { namespace: 'mcp__troupe', name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'write parse()' } },
          { namespace: 'mcp__troupe', name: 'delegate_to_worker', arguments: { worker: 'tester', task: 'write tests for parse()' } },
        ],
      },
      { text: 'Done: parse() is written and tested.' },
    ]);
    const events: TroupeEvent[] = [];
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const result = await run(flow, 'Add a parser', { adapter: workerReplies(), onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Done: parse() is written and tested.');
    expect(outputs(mock, 1)).toContain('wrote parse()');
    expect(outputs(mock, 1)).toContain('wrote 3 tests');
    // Codex runs the two calls at once (some 40 ms apart): one troupe turn with both, the workers in parallel.
    expect(toolCallTurns(events, 'lead')).toEqual([2, 0]);
    expect(nestedWorkers(result.trace)).toEqual(['orchestrate > coder', 'orchestrate > tester']);
  });

  it('counts the usage of each turn of a resumed thread once: a two-turn loop is 84/14', SLOW, async () => {
    // Codex reports the thread's total so far: 42/7 after the first request, 84/14 after the second.
    const { mock, adapter } = await codex([
      { text: 'Draft: refresh only before expiresAt.', usage: { input: 42, output: 7 } },
      { text: 'Final: refresh only before expiresAt.\n[[REFLECTION_COMPLETE]]', usage: { input: 42, output: 7 } },
    ]);
    const events: TroupeEvent[] = [];
    const result = await run(reflect(agent({ name: 'writer', adapter }), { maxIterations: 3 }), 'Fix the token refresh', { onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
    expect(mock.turns).toHaveLength(2);
    expect(JSON.stringify(mock.turns[1]?.input)).toContain('Draft: refresh only before expiresAt.'); // the second turn resumed the thread
    const turns = events.filter((e): e is TroupeEvent<'agent.turn'> => e.type === 'agent.turn').map((e) => [e.usage.inputTokens, e.usage.outputTokens]);
    expect(turns).toEqual([[42, 7], [42, 7]]);
    expect(result.usage).toMatchObject({ inputTokens: 84, outputTokens: 14 });
  });

  it('offers no tool of its own to an agent that names none; `Read` turns on its shell (Codex reads through it), and a name Codex does not have is a warning', TWICE, async () => {
    const { mock, adapter } = await codex([{ text: 'Hello.' }, { text: 'Read it.' }]);
    await run(agent({ name: 'plain', adapter }), 'Say hello');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, cli: { tools: ['Read', 'update_plan'] } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.turns[0]?.tools ?? []).toEqual([]);
    expect((mock.turns[1]?.tools ?? []).map((t) => t.name).sort()).toEqual(['exec_command', 'write_stdin']);
    expect(warningsOf(events)).toMatchObject([{ code: 'unknown_cli_tool', data: { agent: 'reader', tools: ['update_plan'] } }]);
  });

  it('appends the agent\'s system prompt to Codex\'s instructions, or replaces them', TWICE, async () => {
    const { mock, adapter } = await codex([{ text: 'One.' }, { text: 'Two.' }]);
    const system = 'You are the release planner of project Troupe-7781.';
    await run(agent({ name: 'appended', adapter, system }), 'Plan the release');
    await run(agent({ name: 'replaced', adapter, system, cli: { systemPrompt: 'replace' } }), 'Plan the release');
    const developer = (turn: number) => (mock.turns[turn]?.input ?? []).filter((i) => i.role === 'developer').map((i) => JSON.stringify(i['content']));
    expect(developer(0).join('\n')).toContain('You are a coding agent running in the Codex CLI');
    expect(developer(0).join('\n')).toContain(system);
    expect(developer(1)).toEqual([JSON.stringify([{ type: 'input_text', text: system }])]);
    // The system prompt is not sent again in the user's message.
    for (const turn of mock.turns) expect(JSON.stringify(turn.input?.filter((i) => i.role === 'user'))).not.toContain('Troupe-7781');
  });

  it('ends Codex and the MCP bridge when the run is aborted in the middle of a tool call', SLOW, async () => {
    const { adapter } = await codex([{ calls: [{ namespace: 'mcp__troupe', name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'write parse()' } }] }]);
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants();
    expect(running.length).toBeGreaterThanOrEqual(2);
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => descendants().length === 0, `Codex and the bridge (${running.join(', ')}) have ended`);
  });
});

describe.skipIf(!clis.copilot)(`GitHub Copilot CLI (${clis.copilot?.version ?? 'not installed'}) through copilotProfile`, () => {
  async function copilot(script: Parameters<typeof startMockAnthropic>[0], mockOptions: MockAnthropicOptions = {}) {
    const mock = await startMockAnthropic(script, mockOptions);
    mocks.push(mock);
    const home = tempDir();
    const adapter = processAdapter({
      ...copilotProfile({ command: clis.copilot!.path }),
      cwd: tempDir(),
      passEnv: ['PATH'],
      env: {
        HOME: home,
        COPILOT_HOME: home,
        // Offline mode with a custom provider (BYOK): no GitHub sign-in, no network besides the provider.
        COPILOT_OFFLINE: 'true',
        COPILOT_PROVIDER_TYPE: 'anthropic',
        COPILOT_PROVIDER_BASE_URL: mock.url,
        COPILOT_PROVIDER_API_KEY: 'test-key',
        COPILOT_MODEL: 'claude-sonnet-4',
      },
    });
    return { mock, adapter };
  }
  const toolNames = (mock: MockAnthropic, turn: number) => (mock.turns[turn]?.body.tools ?? []).map((t) => t.name);

  it('calls an agent\'s tool over MCP, gets the result, and answers; its sub-agent tools are excluded', SLOW, async () => {
    const { mock, adapter } = await copilot([{ toolUses: [{ suffix: '-add', input: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }]);
    const events: TroupeEvent[] = [];
    const result = await run(agent({ name: 'calc', adapter, tools: [add] }), 'What is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('The sum is 5.');
    expect(toolNames(mock, 0)).toContain('troupe-add');
    for (const name of ['task', 'read_agent', 'list_agents', 'write_agent']) expect(toolNames(mock, 0)).not.toContain(name);
    expect(JSON.stringify(mock.turns[1]?.body.messages)).toMatch(/"type":"tool_result".*5/);
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
  });

  it('offers exactly the tools a Copilot agent file names (by alias), troupe\'s and its own MCP server\'s, and the server gets the call', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter } = await copilot([{ toolUses: [{ suffix: '-lookup_ticket', input: { id: '42' } }] }, { text: 'Ticket 42: the printer is on fire.' }]);
    const file = [
      '---',
      'name: support',
      'description: Answers questions about support tickets',
      "tools: ['read', 'search', 'add', 'tickets/*']",
      'mcp-servers:',
      `  tickets: ${JSON.stringify({ type: 'local', ...tickets.config, tools: ['*'] })}`,
      '---',
      'You answer questions about support tickets.',
    ].join('\n');
    const def = parseAgentFile(file, { file: 'support.agent.md' });
    const result = await run(compileAgents([def], { cli: { copilot: adapter }, tools: { add } }).support!, 'What is the state of ticket 42?');
    expect(result.output).toBe('Ticket 42: the printer is on fire.');
    // `read` is Copilot's `view`, `search` its `grep` and `glob`; `--available-tools` holds them and both MCP servers.
    expect(toolNames(mock, 0).sort()).toEqual(['glob', 'grep', 'tickets-lookup_ticket', 'troupe-add', 'view']);
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    expect(JSON.stringify(mock.turns[1]?.body.messages)).toMatch(/"type":"tool_result".*Ticket 42: printer on fire/);
  });

  it('orchestrates two troupe workers with delegate_to_worker; the workers are nested sessions of the trace', SLOW, async () => {
    const { mock, adapter } = await copilot([
      {
        toolUses: [
          { suffix: '-delegate_to_worker', input: { worker: 'coder', task: 'write parse()' } },
          { suffix: '-delegate_to_worker', input: { worker: 'tester', task: 'write tests for parse()' } },
        ],
      },
      { text: 'Done: parse() is written and tested.' },
    ]);
    const events: TroupeEvent[] = [];
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const result = await run(flow, 'Add a parser', { adapter: workerReplies(), onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Done: parse() is written and tested.');
    const second = JSON.stringify(mock.turns[1]?.body.messages);
    expect(second).toContain('wrote parse()');
    expect(second).toContain('wrote 3 tests');
    // Copilot runs the two calls at once: one troupe turn with both, the workers in parallel.
    expect(toolCallTurns(events, 'lead')).toEqual([2, 0]);
    expect(nestedWorkers(result.trace)).toEqual(['orchestrate > coder', 'orchestrate > tester']);
  });

  it('offers no tool of its own to an agent that names none, exactly `view` to one that names Read, and warns of a name Copilot does not have', TWICE, async () => {
    const { mock, adapter } = await copilot([{ text: 'Hello.' }, { text: 'Read it.' }], { turns: 'all' });
    await run(agent({ name: 'plain', adapter }), 'Say hello');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, cli: { tools: ['Read', 'frobnicate'] } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.messages).toHaveLength(2);
    expect(mock.messages[0]!.body.tools ?? []).toEqual([]);
    expect((mock.messages[1]!.body.tools ?? []).map((t) => t.name)).toEqual(['view']);
    expect(warningsOf(events)).toMatchObject([{ code: 'unknown_cli_tool', data: { agent: 'reader', tools: ['frobnicate'] } }]);
  });

  it('appends the agent\'s system prompt to Copilot\'s own; asked to replace it, appends and warns (Copilot has no switch for it)', TWICE, async () => {
    const { mock, adapter } = await copilot([{ text: 'One.' }, { text: 'Two.' }], { turns: 'all' });
    const system = 'You are the release planner of project Troupe-7781.';
    await run(agent({ name: 'appended', adapter, system }), 'Plan the release');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'replaced', adapter, system, cli: { systemPrompt: 'replace' } }), 'Plan the release', { onEvent: (e) => events.push(e) });
    for (const request of mock.messages) {
      expect(systemText(request)).toContain('You are the GitHub Copilot CLI');
      expect(systemText(request)).toMatch(/<agent_instructions>[^]*You are the release planner of project Troupe-7781\./);
      expect(JSON.stringify(request.body.messages)).not.toContain('Troupe-7781');
    }
    expect(warningsOf(events)).toMatchObject([{ code: 'system_prompt_not_replaced', data: { agent: 'replaced' } }]);
  });

  it('ends Copilot and the MCP bridge when the run is aborted in the middle of a tool call', SLOW, async () => {
    const { adapter } = await copilot([{ toolUses: [{ suffix: '-delegate_to_worker', input: { worker: 'coder', task: 'write parse()' } }] }]);
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', orchestrator: agent({ name: 'lead', adapter }), workers: workers() });
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants();
    expect(running.length).toBeGreaterThanOrEqual(2);
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => descendants().length === 0, `Copilot and the bridge (${running.join(', ')}) have ended`);
  });
});

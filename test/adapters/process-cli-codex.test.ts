// The real Codex CLI (from npm, installed in test/cli-rigs) run by the
// process adapter's built-in profile, offline: it talks to a local mock of
// its model API and calls troupe's tools through the MCP bridge; an agent
// file's own MCP server (examples/cli/ticket-server.mjs) is started beside
// troupe's; an agent is offered exactly the CLI tools it names, and its
// system prompt is appended to the CLI's own or replaces it. One file per
// CLI, so the three run in parallel (what they share:
// test/helpers/cli-rig.ts). Skipped, with one line at the start of the
// run, when the CLI is not installed (`npm run install:cli-rigs`); CI
// requires it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexProfile, processAdapter } from '../../src/adapters/process.js';
import { MCP_SERVERS_KEY } from '../../src/core/adapter.js';
import { compileAgents } from '../../src/agents/compile.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { reflect } from '../../src/patterns/reflect.js';
import { startMockResponses, type MockResponses } from '../helpers/mock-responses.js';
import { eventually } from '../helpers/eventually.js';
import { SLOW, TWICE, add, clis, closeMocks, descendants, mocks, nestedWorkers, tempDir, ticketServerFor, toolCallTurns, warningsOf, workerReplies, workers } from '../helpers/cli-rig.js';

afterEach(closeMocks);

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

  it('starts an agent file\'s own MCP server beside troupe\'s: the model calls troupe\'s tool and the server\'s in one turn, and answers; its sub-agents are off', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter } = await codex([
      {
        calls: [
          { namespace: 'mcp__troupe', name: 'add', arguments: { a: 2, b: 3 } },
          { namespace: 'mcp__tickets', name: 'lookup_ticket', arguments: { id: '42' } },
        ],
      },
      { text: 'Ticket 42: the printer is on fire. The sum is 5.' },
    ]);
    // A GitHub Copilot agent file (its `mcp-servers` mapping, `type: local`) run on Codex.
    const file = ['---', 'name: support', 'tools: [add]', 'mcp-servers:', `  tickets: ${JSON.stringify({ type: 'local', ...tickets.config, tools: ['*'] })}`, '---', 'You answer questions about support tickets.'].join('\n');
    const def = parseAgentFile(file, { file: 'support.agent.md' });
    expect(def.format).toBe('copilot');
    const events: TroupeEvent[] = [];
    const result = await run(compileAgents([def], { defaultAdapter: adapter, tools: { add } }).support!, 'What is the state of ticket 42, and what is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Ticket 42: the printer is on fire. The sum is 5.');
    expect(namespace(mock, 0, 'mcp__tickets')?.tools?.map((t) => t.name)).toEqual(['lookup_ticket']);
    expect(namespace(mock, 0, 'mcp__troupe')?.tools?.map((t) => t.name)).toEqual(['add']);
    expect(mock.turns[0]?.tools?.some((t) => t.name?.startsWith('multi_agent'))).toBe(false);
    expect(JSON.stringify(mock.turns[0]?.input)).toContain('What is the state of ticket 42, and what is 2 + 3?');
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    expect(outputs(mock, 1)).toContain('Ticket 42: printer on fire');
    expect(outputs(mock, 1)).toContain('"text":"5"');
    // troupe's own tool ran in troupe (its events); the agent's server ran its tool itself.
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it('waits for an agent\'s MCP server that starts after Codex does; one that cannot start fails the call, naming it', SLOW, async () => {
    const slow = ticketServerFor({ startDelayMs: 3000 });
    const { mock, adapter } = await codex([
      { calls: [{ namespace: 'mcp__tickets', name: 'lookup_ticket', arguments: { id: '7' } }] },
      { text: 'Ticket 7 is on fire.' },
    ]);
    const support = (config: object) => agent({ name: 'support', adapter, metadata: { [MCP_SERVERS_KEY]: [{ name: 'tickets', type: 'stdio', ...config }] } });
    const result = await run(support(slow.config), 'What about ticket 7?');
    expect(result.output).toBe('Ticket 7 is on fire.');
    expect(namespace(mock, 0, 'mcp__tickets')?.tools?.map((t) => t.name)).toEqual(['lookup_ticket']);
    expect(slow.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '7' } }]);
    const broken = run(support({ command: process.execPath, args: ['-e', 'process.exit(3)'] }), 'What about ticket 8?');
    await expect(broken).rejects.toMatchObject({ name: 'AdapterError', message: expect.stringContaining('tickets') });
    expect(mock.turns).toHaveLength(2);
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
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
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

  it('gives an agent that names no tool none of Codex\'s and appends its system prompt to Codex\'s instructions; `Read` turns on its shell (Codex reads through it) and `replace` sends the prompt alone; a name Codex does not have is a warning', TWICE, async () => {
    const { mock, adapter } = await codex([{ text: 'Hello.' }, { text: 'Read it.' }]);
    const system = 'You are the release planner of project Troupe-7781.';
    await run(agent({ name: 'plain', adapter, system }), 'Say hello');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, system, cli: { tools: ['Read', 'update_plan'], systemPrompt: 'replace' } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.turns[0]?.tools ?? []).toEqual([]);
    expect((mock.turns[1]?.tools ?? []).map((t) => t.name).sort()).toEqual(['exec_command', 'write_stdin']);
    expect(warningsOf(events)).toMatchObject([{ code: 'unknown_cli_tool', data: { agent: 'reader', tools: ['update_plan'] } }]);
    const developer = (turn: number) => (mock.turns[turn]?.input ?? []).filter((i) => i.role === 'developer').map((i) => JSON.stringify(i['content']));
    expect(developer(0).join('\n')).toContain('You are a coding agent running in the Codex CLI');
    expect(developer(0).join('\n')).toContain(system);
    expect(developer(1)).toEqual([JSON.stringify([{ type: 'input_text', text: system }])]);
    // The system prompt is not sent again in the user's message.
    for (const turn of mock.turns) expect(JSON.stringify(turn.input?.filter((i) => i.role === 'user'))).not.toContain('Troupe-7781');
  });

  it('ends Codex and the MCP bridge when the run is aborted in the middle of a tool call', SLOW, async () => {
    const { adapter } = await codex([{ calls: [{ namespace: 'mcp__troupe', name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'write parse()' } }] }]);
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
    // Processes of other test files of this worker (a browser, a server) are not this run's.
    const before = new Set(descendants());
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants().filter((pid) => !before.has(pid));
    expect(running.length).toBeGreaterThanOrEqual(2);
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => !descendants().some((pid) => running.includes(pid)), `Codex and the bridge (${running.join(', ')}) have ended`);
  });
});

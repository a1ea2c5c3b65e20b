// The real Claude Code CLI (from npm, installed in test/cli-rigs) run by the
// process adapter's built-in profile, offline: it talks to a local mock of
// its model API and calls troupe's tools through the MCP bridge; an agent
// file's own MCP server (examples/cli/ticket-server.mjs) is started beside
// troupe's; an agent is offered exactly the CLI tools it names, and its
// system prompt is appended to the CLI's own or replaces it. One file per
// CLI, so the three run in parallel (what they share:
// test/helpers/cli-rig.ts). Skipped, with one line at the start of the
// run, when the CLI is not installed (`npm run install:cli-rigs`); CI
// requires it.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeProfile, processAdapter } from '../../src/adapters/process.js';
import { compileAgents } from '../../src/agents/compile.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { startMockAnthropic, type MockAnthropic, type MockAnthropicOptions } from '../helpers/mock-anthropic.js';
import { eventually } from '../helpers/eventually.js';
import { SLOW, TWICE, add, clis, closeMocks, descendants, mocks, nestedWorkers, systemText, tempDir, ticketServerFor, toolCallTurns, warningsOf, workerReplies, workers } from '../helpers/cli-rig.js';

afterEach(closeMocks);

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

  it('calls troupe\'s tool and the agent file\'s own MCP server\'s tool, started beside troupe\'s, in one turn, and answers; the user\'s MCP servers and its sub-agent tool are gone', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter, home } = await claude([
      { toolUses: [{ suffix: '__add', input: { a: 2, b: 3 } }, { suffix: '__lookup_ticket', input: { id: '42' } }] },
      { text: 'Ticket 42: the printer is on fire. The sum is 5.' },
    ]);
    // An MCP server of the user's own config is not loaded (--strict-mcp-config).
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { other: { type: 'stdio', command: 'false' } } }));
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
    const events: TroupeEvent[] = [];
    const result = await run(flows.support!, 'What is the state of ticket 42, and what is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Ticket 42: the printer is on fire. The sum is 5.');
    // Offered: the built-in tool the file names, troupe's tool and the agent's server's tool; nothing else
    // (no server of the user's own config, no Agent or Task).
    expect(toolNames(mock, 0).sort()).toEqual(['Read', 'mcp__tickets__lookup_ticket', 'mcp__troupe__add']);
    expect(toolResults(mock, 0)).toContain('What is the state of ticket 42, and what is 2 + 3?');
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    // Both results went back to the model; the server's environment came from its configuration.
    expect(toolResults(mock, 1)).toMatch(/"type":"tool_result".*"text":"5"/);
    expect(toolResults(mock, 1)).toMatch(/"type":"tool_result".*Ticket 42: printer on fire/);
    // troupe's own tool ran in troupe (its events); the agent's server ran its tool itself.
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.costUsd).toBeGreaterThan(0);
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
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
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

  it('gives an agent that names no tool no built-in tool and appends its system prompt to Claude Code\'s; exactly Read, and its prompt alone, to one that names Read and asks to replace; warns of a name Claude Code does not have', TWICE, async () => {
    const { mock, adapter } = await claude([{ text: 'Hello.' }, { text: 'Read it.' }], [], { turns: 'all' });
    const system = 'You are the release planner of project Troupe-7781.';
    expect((await run(agent({ name: 'plain', adapter, system }), 'Say hello')).output).toBe('Hello.');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, system, cli: { tools: ['Read', 'Frobnicate'], systemPrompt: 'replace' } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.messages).toHaveLength(2);
    expect(mock.messages[0]!.body.tools ?? []).toEqual([]);
    expect((mock.messages[1]!.body.tools ?? []).map((t) => t.name)).toEqual(['Read']);
    expect(warningsOf(events)).toMatchObject([{ code: 'unknown_cli_tool', data: { agent: 'reader', tools: ['Frobnicate'] } }]);
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
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
    // Processes of other test files of this worker (a browser, a server) are not this run's.
    const before = new Set(descendants());
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants().filter((pid) => !before.has(pid));
    expect(running.length).toBeGreaterThanOrEqual(2); // Claude Code and the bridge it started
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => !descendants().some((pid) => running.includes(pid)), `Claude Code and the bridge (${running.join(', ')}) have ended`);
  });
});

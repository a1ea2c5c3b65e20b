// The real GitHub Copilot CLI (from npm, installed in test/cli-rigs) run by the
// process adapter's built-in profile, offline: it talks to a local mock of
// its model API and calls troupe's tools through the MCP bridge; an agent
// file's own MCP server (examples/cli/ticket-server.mjs) is started beside
// troupe's; an agent is offered exactly the CLI tools it names, and its
// system prompt is appended to the CLI's own or replaces it. One file per
// CLI, so the three run in parallel (what they share:
// test/helpers/cli-rig.ts). Skipped, with one line at the start of the
// run, when the CLI is not installed (`npm run install:cli-rigs`); CI
// requires it.
import { afterEach, describe, expect, it } from 'vitest';
import { copilotProfile, processAdapter } from '../../src/adapters/process.js';
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
import { COPILOT_CACHE_HOME } from '../helpers/cli-rigs.js';

afterEach(closeMocks);

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
        COPILOT_CACHE_HOME,
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

  it('offers exactly the tools a Copilot agent file names (by alias), troupe\'s and its own MCP server\'s; calls troupe\'s and the server\'s in one turn, and answers', SLOW, async () => {
    const tickets = ticketServerFor();
    const { mock, adapter } = await copilot([
      { toolUses: [{ suffix: '-add', input: { a: 2, b: 3 } }, { suffix: '-lookup_ticket', input: { id: '42' } }] },
      { text: 'Ticket 42: the printer is on fire. The sum is 5.' },
    ]);
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
    const events: TroupeEvent[] = [];
    const result = await run(compileAgents([def], { cli: { copilot: adapter }, tools: { add } }).support!, 'What is the state of ticket 42, and what is 2 + 3?', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Ticket 42: the printer is on fire. The sum is 5.');
    // `read` is Copilot's `view`, `search` its `grep` and `glob`; `--available-tools` holds them and both MCP servers
    // (no sub-agent tool: task, read_agent, list_agents, write_agent).
    expect(toolNames(mock, 0).sort()).toEqual(['glob', 'grep', 'tickets-lookup_ticket', 'troupe-add', 'view']);
    expect(tickets.calls()).toEqual([{ tool: 'lookup_ticket', arguments: { id: '42' } }]);
    const results = JSON.stringify(mock.turns[1]?.body.messages);
    expect(results).toMatch(/"type":"tool_result".*Ticket 42: printer on fire/);
    expect(results).toMatch(/"type":"tool_result".*"5"/);
    // troupe's own tool ran in troupe (its events); the agent's server ran its tool itself.
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.name, e.content, e.isError])).toEqual([['add', '5', false]]);
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
    const flow = orchestrate({ name: 'build', mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
    const result = await run(flow, 'Add a parser', { adapter: workerReplies(), onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Done: parse() is written and tested.');
    const second = JSON.stringify(mock.turns[1]?.body.messages);
    expect(second).toContain('wrote parse()');
    expect(second).toContain('wrote 3 tests');
    // Copilot runs the two calls at once: one troupe turn with both, the workers in parallel.
    expect(toolCallTurns(events, 'lead')).toEqual([2, 0]);
    expect(nestedWorkers(result.trace)).toEqual(['orchestrate > coder', 'orchestrate > tester']);
  });

  it('gives an agent that names no tool none of Copilot\'s and exactly `view` to one that names Read; appends the system prompt to Copilot\'s own (asked to replace it, appends and warns: Copilot has no switch for it); warns of a name Copilot does not have', TWICE, async () => {
    const { mock, adapter } = await copilot([{ text: 'Hello.' }, { text: 'Read it.' }], { turns: 'all' });
    const system = 'You are the release planner of project Troupe-7781.';
    await run(agent({ name: 'plain', adapter, system }), 'Say hello');
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'reader', adapter, system, cli: { tools: ['Read', 'frobnicate'], systemPrompt: 'replace' } }), 'Read README.md', { onEvent: (e) => events.push(e) });
    expect(mock.messages).toHaveLength(2);
    expect(mock.messages[0]!.body.tools ?? []).toEqual([]);
    expect((mock.messages[1]!.body.tools ?? []).map((t) => t.name)).toEqual(['view']);
    expect(warningsOf(events)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'unknown_cli_tool', data: expect.objectContaining({ agent: 'reader', tools: ['frobnicate'] }) }),
        expect.objectContaining({ code: 'system_prompt_not_replaced', data: expect.objectContaining({ agent: 'reader' }) }),
      ]),
    );
    expect(warningsOf(events)).toHaveLength(2);
    for (const request of mock.messages) {
      expect(systemText(request)).toContain('You are the GitHub Copilot CLI');
      expect(systemText(request)).toMatch(/<agent_instructions>[^]*You are the release planner of project Troupe-7781\./);
      expect(JSON.stringify(request.body.messages)).not.toContain('Troupe-7781');
    }
  });

  it('ends Copilot and the MCP bridge when the run is aborted in the middle of a tool call', SLOW, async () => {
    const { adapter } = await copilot([{ toolUses: [{ suffix: '-delegate_to_worker', input: { worker: 'coder', task: 'write parse()' } }] }]);
    const flow = orchestrate({ mode: 'orchestrator', dispatch: 'tool', lead: agent({ name: 'lead', adapter }), workers: workers() });
    // Processes of other test files of this worker (a browser, a server) are not this run's.
    const before = new Set(descendants());
    const handle = startRun(flow, 'Add a parser', { adapter: scriptedAdapter({ fallback: { fault: 'hang' } }) });
    await new Promise<void>((resolve) => handle.emitter.on('tool.called', () => resolve()));
    const running = descendants().filter((pid) => !before.has(pid));
    expect(running.length).toBeGreaterThanOrEqual(2);
    handle.cancel();
    expect(await handle.result).toMatchObject({ status: 'cancelled' });
    await eventually(() => !descendants().some((pid) => running.includes(pid)), `Copilot and the bridge (${running.join(', ')}) have ended`);
  });
});

// The real Claude Code CLI (from npm, installed in test/cli-rigs), offline
// against a local mock of its model API, calling a troupe review panel as
// an MCP tool: the agent file gives Claude Code `troupe mcp serve <folder>`
// as an MCP server, Claude Code starts it, the mocked model calls the
// panel's tool, the panel runs (on the scripted adapter) and Claude Code
// answers with its verdict. Skipped, with one line at the start of the run,
// when the CLIs are not installed (`npm run install:cli-rigs`).

import { afterEach, describe, expect, inject, it } from 'vitest';
import { claudeCodeProfile, processAdapter } from '../../../src/adapters/process.js';
import { compileAgents } from '../../../src/agents/compile.js';
import { parseAgentFile } from '../../../src/agents/parse.js';
import { run } from '../../../src/core/run.js';
import { startMockAnthropic, type MockAnthropic } from '../../helpers/mock-anthropic.js';
import { tempDirs } from '../../helpers/temp-dirs.js';
import { panelDir, panelScript, troupeCli } from '../../helpers/a2a.js';

const clis = inject('clis');
const tempDir = tempDirs('troupe-claude-mcp-');
let mocks: MockAnthropic[] = [];
afterEach(async () => {
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
});

describe.skipIf(!clis.claude)(`Claude Code (${clis.claude?.version ?? 'not installed'}) calling a troupe team through troupe mcp serve`, () => {
  it('calls the review panel as an MCP tool and answers with its verdict', { timeout: 120_000 }, async () => {
    // Claude Code does not wait for MCP servers in -p mode: it offers `WaitForMcpServers` until they are up. The
    // mocked model waits for the panel's tool, calls it once, and answers once its result is in.
    const mock = await startMockAnthropic((request) => {
      const offered = (request.body.tools ?? []).map((t) => t.name);
      if (JSON.stringify(request.body.messages ?? []).includes('review-panel handled')) return { text: 'The panel has reviewed PR 42.' };
      if (offered.includes('mcp__panel__review-panel')) return { toolUses: [{ suffix: '__review-panel', input: { input: 'Review PR 42: add GET /export' } }] };
      return { toolUses: [{ suffix: 'WaitForMcpServers', input: {} }] };
    });
    mocks.push(mock);
    const adapter = processAdapter({
      ...claudeCodeProfile({ command: clis.claude!.path }),
      cwd: tempDir(),
      passEnv: ['PATH'],
      env: {
        HOME: tempDir(),
        ANTHROPIC_BASE_URL: mock.url,
        ANTHROPIC_API_KEY: 'test-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
      },
    });
    const server = { type: 'stdio', command: process.execPath, args: [...(await troupeCli()), 'mcp', 'serve', panelDir, '--script', panelScript, '--agent', 'review-panel'], env: { TROUPE_ADAPTER: 'scripted' } };
    const file = [
      '---',
      'name: reviewer',
      'description: Gets changes reviewed by the troupe review panel',
      'tools: WaitForMcpServers, mcp__panel__review-panel',
      'mcpServers:',
      `  - panel: ${JSON.stringify(server)}`,
      '---',
      'You get every change reviewed by the review panel, and report its verdict.',
    ].join('\n');
    const def = parseAgentFile(file, { format: 'claude-code' });
    expect(def.warnings ?? []).toEqual([]);
    const result = await run(compileAgents([def], { cli: { 'claude-code': adapter } }).reviewer!, 'Please review PR 42');
    expect(result.output).toBe('The panel has reviewed PR 42.');
    // The panel's tool was offered (and nothing else of troupe's server), called once, and its answer went back to the model.
    const last = mock.turns.at(-1)!.body;
    expect((last.tools ?? []).map((t) => t.name).filter((n) => n.startsWith('mcp__'))).toEqual(['mcp__panel__review-panel']);
    expect(JSON.stringify(last.messages ?? [])).toMatch(/"type":"tool_result".*review-panel handled: Review PR 42: add GET \/export/);
    expect(mock.turns.filter((t) => JSON.stringify(t.body.messages ?? []).includes('review-panel handled')).length).toBe(1);
  });
});

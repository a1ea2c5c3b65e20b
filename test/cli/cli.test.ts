import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FakeChatServer } from '../helpers/chat-server.js';
import { cliBundle } from '../helpers/bundle.js';

const root = join(import.meta.dirname, '..', '..');
const fixtures = join(root, 'test', 'fixtures');

/** Run the CLI as its own process (its sources bundled: test/helpers/bundle.ts); returns the exit code and both streams. */
function troupe(...args: string[]): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [cliBundle(), ...args], { encoding: 'utf8', env: { ...process.env, TROUPE_ADAPTER: '' }, stdio: 'pipe', timeout: 30_000 });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Run the CLI in-process (fast); the same code the executable runs. */
async function inProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('troupe CLI', () => {
  it('validate: real agent files of every format pass with warnings; a cycle or a missing sub-agent fails with exit 1', async () => {
    const copilot = await inProcess('validate', join(fixtures, 'agents', 'copilot'));
    expect(copilot.code).toBe(0);
    expect(copilot.stdout).toContain('28 agents (2 entry), 0 errors, 1 warning');
    expect(copilot.stdout).toContain('warning  Copilot tools with no troupe tool, left out: read/readFile, search/listDirectory, search/textSearch and 71 more (74 names in 28 agents)');
    const team = await inProcess('validate', join(fixtures, 'agents', 'ai-agent-team'));
    expect(team.code).toBe(0);
    expect(team.stdout.split('\n')).toEqual([
      'team: 1 entry agent; under each, what it calls (indented); → its hand-offs',
      '  lead  (entry)  → publish',
      '    [advisor] style',
      '    researcher',
      '    writer',
      '  publish  (a hand-off of lead)',
      '    [route] blog',
      '    [route] newsletter',
      '',
      'warning  lead.ai: The front matter opens with `---` twice; read as one block, as ai-agent reads it',
      'warning  lead.ai: `usage` (ai-agent) is kept but not used',
      'warning  researcher.ai: `tools` is empty: read as absent',
      'warning  researcher.ai: `maxToolTurns` (ai-agent) is kept but not used',
      '7 agents (1 entry), 0 errors, 4 warnings',
    ]);
    const claude = await inProcess('validate', join(fixtures, 'agents', 'claude-code'), '--models', join(fixtures, 'cli', 'models.json'));
    expect(claude.code).toBe(0);
    expect(claude.stdout).toContain('warning  architect.md: Line 3: the value of `description` holds an unquoted ": "; read as one string, as Claude Code reads it');
    const partial = await inProcess('validate', join(fixtures, 'agents', 'code-review'));
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain('error    code-review.ai: Agent "code-review" names the agent file "code-review-tests.ai" (subagent), which is not in the folder');
    const bad = troupe('validate', join(fixtures, 'cli', 'cycle'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Cycle: a -> b -> a');
  });

  it('run --agent: the Copilot planner delegates to two sub-agents, hands off once, and a hand-off that asks first is refused without --approve', async () => {
    const args = ['run', join(fixtures, 'agents', 'copilot'), '--agent', 'devsquad.plan', 'Plan feature 042', '--script', join(fixtures, 'cli', 'devsquad-script.json'), '--trace'];
    const refused = await inProcess(...args);
    expect(refused.code).toBe(0);
    expect(refused.stderr).toContain('approval devsquad.decompose hands off to devsquad.implement ("Implement"): refused (pass --approve to allow)');
    expect(refused.stdout).toContain('Tasks: T1 search endpoint, T2 index refresh, T3 tests.');
    expect(refused.stdout).toContain('agent: devsquad.decompose   status: completed');
    expect(refused.stdout).toMatch(/└ subagent devsquad_plan_context \[completed\].*\n\s+└ agent devsquad\.plan\.context/);
    const approved = await inProcess(...args, '--approve');
    expect(approved.stderr).toContain('approval devsquad.decompose hands off to devsquad.implement ("Implement"): approved (--approve)');
    expect(approved.stdout).toContain('Implemented T1 to T3; all tests pass.');
    expect(approved.stdout).toContain('agent: devsquad.implement   status: completed');
    expect((await inProcess('run', join(fixtures, 'agents', 'copilot'), '--agent', 'nobody', 'x')).stderr).toContain('Unknown agent "nobody"');
    const worker = await inProcess('run', join(fixtures, 'agents', 'copilot'), '--agent', 'devsquad.plan.context', 'Summarise 042');
    expect(worker.stderr).toContain('warning  "devsquad.plan.context" is a sub-agent: its file says only other agents call it; running it anyway');
    expect(worker.stdout).toContain('devsquad.plan.context handled: Summarise 042');
  });

  it('agents inspect: one row per file with format, name, tools, model, sub-agents, hand-offs and warnings', async () => {
    const { code, stdout } = await inProcess('agents', 'inspect', join(fixtures, 'agents', 'copilot'));
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^file\s+format\s+name\s+tools\s+model\s+sub-agents\s+hand-offs\s+warnings$/);
    expect(lines.find((l) => l.startsWith('devsquad.plan.agent.md '))).toMatch(
      /^devsquad\.plan\.agent\.md\s+copilot\s+devsquad\.plan\s+21: 21 not\s+-\s+4: devsquad\.security, devsquad\.plan\.context, de…\s+Create Tasks → devsquad\.decompose\s+1$/,
    );
    expect(lines.find((l) => l.startsWith('devsquad.plan.context.agent.md '))).toMatch(/devsquad\.plan\.context \(sub-agent\)/);
    expect(lines.find((l) => l.startsWith('devsquad.specify.agent.md '))).toContain('Create Technical Plan → devsquad.plan (asks)');
    const claude = await inProcess('agents', 'inspect', join(fixtures, 'agents', 'claude-code'), '--models', join(fixtures, 'cli', 'models.json'), '--json');
    const rows = JSON.parse(claude.stdout) as { agents: Array<{ name: string; format: string; tools: { unresolved: string[] } }> };
    expect(rows.agents.map((r) => [r.name, r.format, r.tools.unresolved.length])).toEqual([
      ['architect', 'claude-code', 10],
      ['code-documenter', 'claude-code', 9],
      ['graphql-expert', 'claude-code', 9],
      ['prd-writer', 'claude-code', 5],
      ['ruby-expert', 'claude-code', 8],
    ]);
    const opencode = await inProcess('agents', 'inspect', join(fixtures, 'agents', 'opencode'));
    expect(opencode.stdout.split('\n').find((l) => l.startsWith('yolo.md'))).toMatch(/^yolo\.md\s+opencode\s+yolo \(primary\)\s+all\s+-\s+-\s+-\s+0$/);
    expect(opencode.stdout.split('\n').find((l) => l.startsWith('explorer.md'))).toMatch(/^explorer\.md\s+opencode\s+explorer \(sub-agent\)\s+all, 3: 3 not\s+anthropic\/claude-sonnet-4-5\s/);
    expect((await inProcess('agents', 'inspect')).code).toBe(2);
    expect((await inProcess('agents', 'inspect', join(fixtures, 'agents', 'copilot'), '--as', 'nope')).stderr).toContain('Expected --as to be one of troupe, ai-agent, claude-code, copilot, opencode');
  });

  it('graph: mermaid by default, dot on request, edges labelled by kind', async () => {
    const mermaid = await inProcess('graph', join(fixtures, 'cli', 'desk'));
    expect(mermaid.stdout).toMatch(/^flowchart LR/);
    expect(mermaid.stdout).toContain('-->|router|');
    const dot = await inProcess('graph', join(fixtures, 'cli', 'desk'), '--format', 'dot');
    expect(dot.stdout).toContain('"billing" -> "approval" [label="handoff"];');
    expect(dot.stdout).toContain('"desk" -> "risk" [label="advisor"];');
  });

  it('run: offline on the scripted adapter, printing the answer, the terminal agent and usage', async () => {
    const echo = troupe('run', join(fixtures, 'cli', 'desk'), 'desk', 'I was charged twice', '--adapter', 'scripted');
    expect(echo.code).toBe(0);
    expect(echo.stdout).toContain('approval handled: I was charged twice');
    expect(echo.stdout).toContain('agent: approval   status: completed');
    expect(echo.stdout).toMatch(/usage: in=\d+ out=\d+ turns=4/);
    const scripted = await inProcess('run', join(fixtures, 'cli', 'desk'), 'desk', 'Can I cancel?', '--script', join(fixtures, 'cli', 'desk-script.json'));
    expect(scripted.stdout).toContain('Clause 4 lets you cancel.');
    expect(scripted.stdout).toContain('agent: legal');
    const unknown = await inProcess('run', join(fixtures, 'cli', 'desk'), 'desk', 'x', '--adapter', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Unknown adapter "nope" (available: scripted, openai, ai-sdk, process)');
  });

  it('--help on each command', async () => {
    expect((await inProcess('--help')).stdout).toContain('troupe validate <dir>');
    expect((await inProcess('run', '--help')).stdout).toContain('--script <file>');
    expect((await inProcess('graph', '--help')).stdout).toContain('--format mermaid|dot');
    expect((await inProcess('validate', '--help')).stdout).toContain('Exits 1 on any error');
    expect((await inProcess('bogus')).code).toBe(2);
    expect((await inProcess('run', 'dir')).stderr).toContain('troupe run: expected 3 arguments, got 1');
    expect((await inProcess('run', 'dir', '--agent', 'a')).stderr).toContain('troupe run: expected 2 arguments, got 1');
    expect((await inProcess('agents', '--help')).stdout).toContain('troupe agents inspect <dir>');
    expect((await inProcess('run', '--help')).stdout).toContain('--approve');
  });

  it('run: on an OpenAI-compatible server chosen from the environment', async () => {
    const server = new FakeChatServer();
    const url = await server.start();
    server.handler = (request) => {
      const tools = (request.body['tools'] ?? []) as Array<{ function: { name: string } }>;
      if (tools.some((t) => t.function.name === 'route_to')) {
        return { toolCalls: [{ id: 'c1', name: 'route_to', arguments: '{"agent":"billing","reason":"a charge"}' }] };
      }
      const system = String(request.body.messages[0]?.['content'] ?? '');
      return { text: `${system.split(' ')[0]} says ok`, usage: { prompt_tokens: 5, completion_tokens: 2 } };
    };
    try {
      const out: string[] = [];
      const err: string[] = [];
      const env = { TROUPE_ADAPTER: 'openai', OPENAI_BASE_URL: url, OPENAI_API_KEY: 'test-key', TROUPE_MODEL: 'llama3.2' };
      const code = await main(['run', join(fixtures, 'cli', 'desk'), 'desk', 'I was charged twice', '--quiet'], { out: (t) => out.push(t), err: (t) => err.push(t), env });
      expect(err.join('\n')).toBe('');
      expect(code).toBe(0);
      expect(out.join('\n')).toContain('Approve. says ok');
      expect(out.join('\n')).toContain('agent: approval');
      expect(server.requests.every((r) => r.body['model'] === 'llama3.2')).toBe(true);
      expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key');
    } finally {
      await server.stop();
    }
  });
});

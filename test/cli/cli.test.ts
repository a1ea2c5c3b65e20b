import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FakeChatServer } from '../helpers/chat-server.js';

const root = join(import.meta.dirname, '..', '..');
const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const cli = join(root, 'src', 'cli', 'index.ts');
const fixtures = join(root, 'test', 'fixtures');

/** Run the CLI from its sources with tsx; returns the exit code and both streams. */
function troupe(...args: string[]): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [tsx, cli, ...args], { encoding: 'utf8', env: { ...process.env, TROUPE_ADAPTER: '' }, stdio: 'pipe', timeout: 30_000 });
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
  it('validate: the real agent files pass with warnings; a cycle fails with exit 1', async () => {
    const ok = await inProcess('validate', join(fixtures, 'agents'));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('3 agents, 0 errors');
    expect(ok.stdout).toContain('warning  code-review/code-review.ai: Unknown key `maxToolTurns`');
    const bad = troupe('validate', join(fixtures, 'cli', 'cycle'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Cycle: a -> b -> a');
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
    expect((await inProcess('run', 'dir')).stderr).toContain('Expected 3 arguments, got 1');
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

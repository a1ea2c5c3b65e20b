import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  defaultExtractSessionId,
  defaultExtractText,
  defaultExtractUsage,
  processAdapter,
  type ProcessAdapterOptions,
  type ProcessOutput,
} from '../../src/adapters/process.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { AdapterError, ConfigurationError, TimeoutError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'cli');
const node = process.execPath;
const fake = join(fixtures, 'fake-agent.mjs');
const dir = mkdtempSync(join(tmpdir(), 'troupe-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let pidFiles = 0;

adapterSuite('process', (scenario) => {
  switch (scenario.kind) {
    case 'text':
      return processAdapter({
        command: [node, fake, `--reply=${scenario.text}`, `--usage=${scenario.usage.inputTokens},${scenario.usage.outputTokens}`, '{prompt}'],
        output: 'jsonl',
      });
    case 'hang':
      return processAdapter({ command: [node, join(fixtures, 'hang.mjs'), join(dir, `suite-${pidFiles++}.pid`)] });
    case 'tool-call':
    case 'stream-hang':
      return undefined;
  }
}, { runner: { describe, it } });

interface Seen {
  prompt: string;
  argv: string[];
  resume: string | null;
  cwd: string;
  env: Record<string, string | null>;
}
/** A session on the fake CLI whose turn text is what the CLI saw. */
function seeing(options: Partial<ProcessAdapterOptions> = {}) {
  return processAdapter({
    command: [node, fake, '{prompt}'],
    output: 'jsonl',
    extractText: (o) => JSON.stringify((o.events.at(-1) as { seen: Seen }).seen),
    ...options,
  });
}
const seen = (text: string) => JSON.parse(text) as Seen;

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
/** Poll a condition on real time: a process is watched from outside, there is no clock to drive. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`Timed out waiting until ${what}`);
}

describe('processAdapter', () => {
  const secret = process.env['TROUPE_SECRET'];
  afterEach(() => {
    if (secret === undefined) delete process.env['TROUPE_SECRET'];
    else process.env['TROUPE_SECRET'] = secret;
  });

  it('reads plain text output, with the prompt on stdin', async () => {
    const adapter = processAdapter({ command: [node, fake, '--stdin', '--text'] });
    const session = await adapter.openSession({ agent: 'a' });
    expect(await session.send('hello there')).toEqual({ text: 'echo: hello there', toolCalls: [] });
  });

  it('reads JSON lines: text, usage with cached tokens and cost, log lines ignored', async () => {
    const adapter = processAdapter({ command: [node, fake, '--reply=done', '--usage=11,4', '{prompt}'], output: 'jsonl' });
    const turn = await (await adapter.openSession({ agent: 'a' })).send('go');
    expect(turn).toEqual({ text: 'done', toolCalls: [], usage: { inputTokens: 11, outputTokens: 4, cachedTokens: 2, costUsd: 0.25 } });
  });

  it("runs in the session's workspace directory", async () => {
    const result = await run(agent({ name: 'coder', workspace: dir }), 'list files', { adapter: seeing() });
    expect(realpathSync(seen(result.output).cwd)).toBe(realpathSync(dir));
  });

  it('passes only the allow-listed environment plus `env`', async () => {
    process.env['TROUPE_SECRET'] = 'do-not-leak';
    const closed = seen((await (await seeing({ env: { EXTRA: 'x' } }).openSession({ agent: 'a' })).send('hi')).text);
    expect(closed.env).toEqual({ HOME: process.env['HOME'] ?? null, TROUPE_SECRET: null, EXTRA: 'x' });
    const open = seen((await (await seeing({ passEnv: ['TROUPE_SECRET'] }).openSession({ agent: 'a' })).send('hi')).text);
    expect(open.env).toEqual({ HOME: null, TROUPE_SECRET: 'do-not-leak', EXTRA: null });
  });

  it('sends the system prompt and the earlier turns in the prompt (transcript continuity)', async () => {
    const session = await processAdapter({ command: [node, fake, '--text', '{prompt}'] }).openSession({ agent: 'a', system: 'Be terse.' });
    const first = await session.send('one');
    expect(first.text).toBe('echo: Be terse.\n\none');
    const second = await session.send('two');
    expect(second.text).toBe(
      'echo: Be terse.\n\nThe conversation so far:\n\nUser: one\n\nAssistant: echo: Be terse.\n\none\n\nUser: two',
    );
  });

  it("resumes the tool's own session with the id it printed (resume continuity)", async () => {
    const adapter = seeing({
      resume: { command: [node, fake, '--resume={sessionId}', '{prompt}'] },
    });
    const session = await adapter.openSession({ agent: 'a', system: 'Be terse.' });
    const first = seen((await session.send('one')).text);
    expect(first).toMatchObject({ resume: null, prompt: 'Be terse.\n\none' });
    const second = seen((await session.send('two')).text);
    expect(second).toMatchObject({ resume: 'sess-1', prompt: 'two' });
  });

  it('never uses a shell: metacharacters reach the command as they are', async () => {
    const prompt = '$(touch pwned) `id` ; rm -rf / && echo "hi" > out.txt';
    const session = await seeing({ cwd: dir }).openSession({ agent: 'a' });
    expect(seen((await session.send(prompt)).text).prompt).toBe(prompt);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(existsSync(join(dir, 'out.txt'))).toBe(false);
  });

  it('turns a non-zero exit into an AdapterError carrying the tail of stderr', async () => {
    const session = await processAdapter({ command: [node, join(fixtures, 'fail.mjs')], stderrTailChars: 100 }).openSession({ agent: 'a' });
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as AdapterError).details).toMatchObject({ exitCode: 1 });
    const stderr = (error as AdapterError).details['stderr'] as string;
    expect(stderr.length).toBeLessThanOrEqual(100);
    expect(stderr).toMatch(/fatal: not logged in\n$/);
    expect(stderr).not.toContain('progress line 1\n');
    expect((error as Error).message).toMatch(/exited with code 1: .*fatal: not logged in$/s);
  });

  it('kills the whole process group on abort', async () => {
    const pidFile = join(dir, 'abort.pid');
    const session = await processAdapter({ command: [node, join(fixtures, 'hang.mjs'), pidFile] }).openSession({ agent: 'a' });
    const controller = new AbortController();
    const pending = session.send('x', { signal: controller.signal });
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 'the hanging CLI started its child');
    const child = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(child)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await eventually(() => !alive(child), 'the child is gone');
  });

  it('kills the process group when the time-out passes on the clock', async () => {
    const clock = new SimulatedClock();
    const pidFile = join(dir, 'timeout.pid');
    const adapter = processAdapter({ command: [node, join(fixtures, 'hang.mjs'), pidFile], timeoutMs: 5_000, clock });
    const pending = (await adapter.openSession({ agent: 'a' })).send('x');
    pending.catch(() => undefined);
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 'the hanging CLI started its child');
    const child = Number(readFileSync(pidFile, 'utf8'));
    await clock.advance(5_000);
    await expect(pending).rejects.toBeInstanceOf(TimeoutError);
    await eventually(() => !alive(child), 'the child is gone');
  });

  it('reports a missing command as a missing dependency', async () => {
    const session = await processAdapter({ command: ['troupe-no-such-cli'] }).openSession({ agent: 'a' });
    await expect(session.send('x')).rejects.toMatchObject({ code: 'missing_dependency', message: expect.stringContaining('"troupe-no-such-cli" was not found') });
  });

  it('fills `{model}` with the agent\'s model and, with `continuity: none`, sends only the new input', async () => {
    const adapter = seeing({ command: [node, fake, '--model={model}', '{prompt}'], continuity: 'none' });
    const session = await adapter.openSession({ agent: 'a', model: 'opus', system: 'Be terse.' });
    const first = seen((await session.send('one')).text);
    expect(first.argv).toEqual(['--model=opus', 'Be terse.\n\none']);
    const second = seen((await session.send('two')).text);
    expect(second.prompt).toBe('Be terse.\n\ntwo');
    const noModel = seen((await (await adapter.openSession({ agent: 'a' })).send('x')).text);
    expect(noModel.argv[0]).toBe('--model=');
  });

  it('validates its options', () => {
    expect(() => processAdapter({ command: [] })).toThrow(ConfigurationError);
    expect(() => processAdapter({ command: ['x'], continuity: 'resume' })).toThrow(/needs a `resume.command`/);
    expect(() => processAdapter({ command: ['x'], timeoutMs: 0 })).toThrow('Expected `timeoutMs` to be a positive number, got 0 (number)');
  });
});

describe('default JSON-lines readers', () => {
  const output = (events: unknown[]): ProcessOutput => ({ stdout: events.map((e) => JSON.stringify(e)).join('\n'), stderr: '', events });

  it('read Codex-style items: agent messages, the thread id and cached input tokens', () => {
    const codex = output([
      { type: 'thread.started', thread_id: 'thread-7' },
      { type: 'item.completed', item: { type: 'reasoning', text: 'thinking' } },
      { type: 'item.completed', item: { type: 'agent_message', text: 'First part.' } },
      { type: 'item.completed', item: { type: 'agent_message', text: 'Second part.' } },
      { type: 'turn.completed', usage: { input_tokens: 30, cached_input_tokens: 10, output_tokens: 5 } },
    ]);
    expect(defaultExtractText(codex)).toBe('First part.\n\nSecond part.');
    expect(defaultExtractSessionId(codex)).toBe('thread-7');
    expect(defaultExtractUsage(codex)).toMatchObject({ inputTokens: 30, outputTokens: 5, cachedTokens: 10 });
  });

  it('prefer a `result` line, then fall back to text fields, then to the lines that are not JSON', () => {
    expect(defaultExtractText(output([{ text: 'draft' }, { result: ' final ' }]))).toBe('final');
    expect(defaultExtractText(output([{ content: 'Hel' }, { content: 'lo' }]))).toBe('Hello');
    expect(defaultExtractText({ stdout: 'plain answer\n{"type":"noise"}', stderr: '', events: [{ type: 'noise' }] })).toBe('plain answer');
  });
});

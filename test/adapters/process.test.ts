import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  claudeCodeProfile,
  defaultExtractSessionId,
  defaultExtractText,
  defaultExtractUsage,
  processAdapter,
  type ProcessAdapterOptions,
  type ProcessOutput,
} from '../../src/adapters/process.js';
import { CLI_TOOLS_KEY, type CliToolList } from '../../src/core/adapter.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { AdapterError, ConfigurationError, TimeoutError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';
import { bundled, standInBundle } from '../helpers/bundle.js';
import { eventually } from '../helpers/eventually.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'cli');
// The examples' stand-in CLI, bundled with the MCP SDK: half the CPU a start.
const standIn = standInBundle();
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
    case 'tool-call': {
      // The stand-in CLI calls the tool over MCP, then answers.
      const steps = [{ call: scenario.tool, args: scenario.arguments }, { answer: scenario.finalText }];
      return processAdapter(claudeCodeProfile({ command: [node, standIn], args: ['--steps', JSON.stringify(steps)] }));
    }
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

  it('starts the transcript with a continued conversation\'s history (spec.history), in the first prompt whatever the continuity', async () => {
    const history = [{ role: 'user' as const, text: 'My name is Ada.' }, { role: 'assistant' as const, text: 'Hello Ada.' }];
    const session = await processAdapter({ command: [node, fake, '--text', '{prompt}'] }).openSession({ agent: 'a', system: 'Be terse.', history });
    expect((await session.send('Who am I?')).text).toBe('echo: Be terse.\n\nThe conversation so far:\n\nUser: My name is Ada.\n\nAssistant: Hello Ada.\n\nUser: Who am I?');
    const resuming = seeing({ resume: { command: [node, fake, '--resume={sessionId}', '{prompt}'] } });
    const resumed = await resuming.openSession({ agent: 'a', history });
    expect(seen((await resumed.send('Who am I?')).text)).toMatchObject({ resume: null, prompt: 'The conversation so far:\n\nUser: My name is Ada.\n\nAssistant: Hello Ada.\n\nUser: Who am I?' });
    expect(seen((await resumed.send('And now?')).text)).toMatchObject({ resume: 'sess-1', prompt: 'And now?' });
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
    // The message keeps the last five lines; the rest of the tail is in details.stderr.
    expect((error as Error).message).toBe(
      `Command "${node}" exited with code 1; the last 5 lines of its stderr:\n  progress line 197\n  progress line 198\n  progress line 199\n  progress line 200\n  fatal: not logged in`,
    );
  });

  it('shows a one-line stderr on the line of the failure', async () => {
    const session = await processAdapter({ command: [node, '-e', 'process.stderr.write("bad flag\\n"); process.exit(2)'] }).openSession({ agent: 'a' });
    const error = await session.send('x').catch((e: unknown) => e);
    expect((error as Error).message).toBe(`Command "${node}" exited with code 2: bad flag`);
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

  it('passes an agent\'s CLI tools as the CLI\'s own allow-list arguments in place of `{tools}`', async () => {
    const toolArgs = ({ allowed, disallowed }: CliToolList) => [
      ...(allowed ? ['--allowedTools', allowed.join(',')] : []),
      ...(disallowed.length > 0 ? ['--disallowedTools', disallowed.join(',')] : []),
    ];
    const adapter = seeing({ command: [node, fake, '-p', '{tools}', '--', '{prompt}'], toolArgs });
    const listed = { agent: 'reviewer', metadata: { [CLI_TOOLS_KEY]: { allowed: ['Read', 'Grep'], disallowed: ['Bash'] } } };
    expect(seen((await (await adapter.openSession(listed)).send('review')).text).argv).toEqual(['-p', '--allowedTools', 'Read,Grep', '--disallowedTools', 'Bash', '--', 'review']);
    expect(seen((await (await adapter.openSession({ agent: 'all', metadata: { [CLI_TOOLS_KEY]: { disallowed: [] } } })).send('x')).text).argv).toEqual(['-p', '--', 'x']);
    expect(seen((await (await adapter.openSession({ agent: 'none' })).send('x')).text).argv).toEqual(['-p', '--', 'x']);
    // Without `toolArgs`, `{tools}` is left out.
    expect(seen((await (await seeing({ command: [node, fake, '{tools}', '{prompt}'] }).openSession(listed)).send('x')).text).argv).toEqual(['x']);
    expect(() => processAdapter({ command: ['x', '{prompt}'], toolArgs })).toThrow('`command` needs the argument "{tools}" where the CLI\'s tool arguments go, since `toolArgs` is set');
    const broken = seeing({ command: [node, fake, '{tools}', '{prompt}'], toolArgs: () => 'nope' as never });
    await expect(broken.openSession(listed)).rejects.toThrow(/Expected `toolArgs` to return an array of strings/);
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

describe('processAdapter limits and edges', () => {
  it('fails a turn that writes more than maxOutputBytes to stdout or stderr, and kills the command', async () => {
    for (const stream of ['stdout', 'stderr'] as const) {
      const pidFile = join(dir, `flood-${stream}.pid`);
      const adapter = processAdapter({ command: [node, join(fixtures, 'flood.mjs'), pidFile, `--${stream}`], maxOutputBytes: 1024 * 1024 });
      const error = await (await adapter.openSession({ agent: 'a' })).send('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AdapterError);
      expect(error).toMatchObject({ message: `Command "${node}" wrote more than 1048576 bytes to ${stream}`, details: { stream, limit: 1048576 } });
      const pid = Number(readFileSync(pidFile, 'utf8'));
      await eventually(() => !alive(pid), 'the flooding CLI is gone');
    }
    expect(() => processAdapter({ command: ['x'], maxOutputBytes: 0 })).toThrow('Expected `maxOutputBytes` to be a positive integer, got 0 (number)');
  });

  it('settles when the CLI exits although a helper it started keeps its output open, and ends the helper', async () => {
    const pidFile = join(dir, 'helper.pid');
    const session = await processAdapter({ command: [node, join(fixtures, 'leaves-helper.mjs'), pidFile] }).openSession({ agent: 'a' });
    expect(await session.send('x')).toEqual({ text: 'done, the helper keeps running', toolCalls: [] });
    const helper = Number(readFileSync(pidFile, 'utf8'));
    await eventually(() => !alive(helper), 'the helper is gone');
  });

  it('never lets a prompt that starts with "-" be read as an option', async () => {
    const prompt = '--dangerously-skip-permissions and then some';
    // A positional prompt (as in `codex exec {prompt}`) gets `--` before it.
    const positional = seen((await (await seeing({ command: [node, fake, 'exec', '{prompt}'] }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(positional).toMatchObject({ prompt, argv: ['exec', '--', prompt], flags: [] });
    const chosen = seen((await (await seeing({ command: [node, fake, '--verbose', '{prompt}'], dashPrompt: 'separator' }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(chosen).toMatchObject({ prompt, argv: ['--verbose', '--', prompt], flags: ['verbose'] });
    // After an option (`-p {prompt}`) it goes on stdin instead: `--` could be taken as that option's value.
    const afterOption = seen((await (await seeing({ command: [node, fake, '-p', '{prompt}'] }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(afterOption).toMatchObject({ prompt, argv: ['-p'], flags: ['p'] });
    // Chosen per CLI, and left alone inside an argument or after a `--` of the template.
    const stdin = seen((await (await seeing({ command: [node, fake, '{prompt}'], dashPrompt: 'stdin' }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(stdin).toMatchObject({ prompt, argv: [] });
    const inside = seen((await (await seeing({ command: [node, fake, '--prompt={prompt}'] }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(inside.argv).toEqual([`--prompt=${prompt}`]);
    const ended = seen((await (await seeing({ command: [node, fake, '--', '{prompt}'] }).openSession({ agent: 'a' })).send(prompt)).text);
    expect(ended.argv).toEqual(['--', prompt]);
    const plain = seen((await (await seeing().openSession({ agent: 'a' })).send('a prompt')).text);
    expect(plain.argv).toEqual(['a prompt']);
    expect(() => processAdapter({ command: ['x'], dashPrompt: 'quote' as never })).toThrow(/`dashPrompt` to be "auto", "separator" or "stdin"/);
  });

  it('listens for the host exit only while a turn runs', async () => {
    const counts = () => ['SIGTERM', 'SIGINT', 'SIGHUP'].map((s) => process.listenerCount(s));
    const before = counts();
    const pidFile = join(dir, 'listeners.pid');
    const session = await processAdapter({ command: [node, join(fixtures, 'hang.mjs'), pidFile] }).openSession({ agent: 'a' });
    const controller = new AbortController();
    const pending = session.send('x', { signal: controller.signal });
    pending.catch(() => undefined);
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 'the hanging CLI started its child');
    expect(counts().map((n, i) => n - before[i]!)).toEqual([1, 1, 1]);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    expect(counts()).toEqual(before);
  });
});

describe('the host process exits', () => {
  const host = (pidFile: string, handler: 'none' | 'own') =>
    spawn(node, [bundled(join(fixtures, 'host.ts')), pidFile, handler, join(fixtures, 'hang.mjs')], { cwd: join(fixtures, '..', '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  const started = async (pidFile: string) => {
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 'the host started the CLI and its child');
    return Number(readFileSync(pidFile, 'utf8'));
  };
  const ended = (child: ReturnType<typeof spawn>) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: unknown[] }>((resolve) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', (code, signal) => resolve({ code, signal, lines: out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown) }));
    });

  it.each(['SIGTERM', 'SIGINT'] as const)('on %s without a handler of its own: it dies of the signal, and the CLI goes with it', async (signal) => {
    const pidFile = join(dir, `host-${signal}.pid`);
    const child = host(pidFile, 'none');
    const done = ended(child);
    const cliChild = await started(pidFile);
    expect(alive(cliChild)).toBe(true);
    child.kill(signal);
    const result = await done;
    expect(result).toMatchObject({ code: null, signal });
    expect(result.lines[0]).toEqual({ before: [0, 0, 0], during: [1, 1, 1] });
    await eventually(() => !alive(cliChild), 'the CLI and its child are gone');
  });

  it('on SIGTERM with a handler of its own: its handler decides (the CLI runs on), and when it exits the CLI goes', async () => {
    const pidFile = join(dir, 'host-own.pid');
    const child = host(pidFile, 'own');
    const done = ended(child);
    const cliChild = await started(pidFile);
    child.kill('SIGTERM');
    const result = await done;
    expect(result).toMatchObject({ code: 7, signal: null });
    expect(result.lines).toEqual([{ before: [1, 0, 0], during: [2, 1, 1] }, { handled: 'SIGTERM', childAlive: true }]);
    await eventually(() => !alive(cliChild), 'the CLI and its child are gone');
  });
});

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const root = join(import.meta.dirname, '..', '..');
const fixtures = join(root, 'test', 'fixtures');
const tempRoot = tempDirs('troupe-cli-usage-');

/** Run the CLI in-process; returns the exit code and both streams. */
async function troupe(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('troupe command line: usage and argument errors', () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(await troupe(['--version'])).toEqual({ code: 0, stdout: version, stderr: '' });
  });

  it('an unknown option prints one line naming it, then the usage of the command it was given to; exit 2', async () => {
    const desk = join(fixtures, 'cli', 'desk');
    const run = await troupe(['run', desk, 'desk', 'hi', '--bogus']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.split('\n');
    expect(lines[0]).toBe('troupe run: unknown option --bogus');
    expect(lines[2]).toMatch(/^Usage: troupe run <dir> --agent <name> "<input>" /);
    expect(lines.at(-1)).toBe('Run `troupe run --help` for details.');
    // Not the whole help: the usage paragraph only.
    expect(run.stderr).not.toContain('--approve          approve every request');
    // An option that another command takes is unknown to this one.
    expect((await troupe(['validate', desk, '--preset', 'x'])).stderr).toMatch(/^troupe validate: unknown option --preset\n\nUsage: troupe validate <dir>/);
    expect((await troupe(['squad', 'show', desk, '-x'])).stderr).toMatch(/^troupe squad show: unknown option -x\n\nUsage: troupe squad show <repo>/);
    expect((await troupe(['--bogus'])).stderr).toMatch(/^troupe: unknown option --bogus\n\nUsage:\n  troupe --version/);
    expect((await troupe(['frobnicate'])).stderr).toBe('troupe: unknown command "frobnicate"; `troupe --help` lists the commands');
    // A typo gets the nearest command, in one line.
    expect(await troupe(['valdate'])).toMatchObject({ code: 2, stderr: 'troupe: unknown command "valdate" (did you mean "validate"?); `troupe --help` lists the commands' });
    expect((await troupe(['agents', 'inspct'])).stderr).toBe('troupe agents: unknown command "inspct" (did you mean "inspect"?); `troupe agents --help` lists the commands');
    // A missing folder or file is named, not an ENOENT.
    expect(await troupe(['graph', 'missing.json'])).toMatchObject({ code: 1, stderr: 'missing.json: no such plan file or agent folder' });
    expect(await troupe(['validate', 'no-such-folder'])).toMatchObject({ code: 1, stderr: 'no-such-folder: no such agent folder or template file' });
    expect((await troupe(['agents', 'inspect', 'no-such-folder'])).stderr).toBe('invalid_argument: Cannot read the agent folder no-such-folder: there is no such file or folder');
  });

  it('an option without its value, a switch with one, and a wrong count of arguments are one line each, then the usage', async () => {
    const desk = join(fixtures, 'cli', 'desk');
    const missing = await troupe(['run', desk, 'hi', '--agent']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe('troupe run: option --agent needs a value');
    const swallowed = await troupe(['run', desk, 'hi', '--agent', '--json']);
    expect(swallowed.stderr.split('\n')[0]).toBe('troupe run: option --agent needs a value (for a value that starts with "-", write --agent=--json)');
    expect((await troupe(['run', desk, 'desk', 'hi', '--json=yes'])).stderr.split('\n')[0]).toBe('troupe run: option --json takes no value');
    expect((await troupe(['graph', desk, '--format', 'png'])).stderr.split('\n')[0]).toBe('troupe graph: expected --format to be mermaid or dot, got "png"');
    expect((await troupe(['report'])).stderr.split('\n')[0]).toBe('troupe report: expected 1 argument, got 0');
  });

  it('validate, graph and run on a folder without agent files fail with exit 1 and say so', async () => {
    const empty = tempRoot();
    for (const command of [['validate', empty], ['graph', empty], ['run', empty, 'a', 'hi']]) {
      const result = await troupe(command);
      expect(result.code, command[0]).toBe(1);
      expect(result.stderr).toBe(`No agent files in ${empty} (\`troupe validate --help\` lists the formats troupe reads)`);
    }
    const notes = tempRoot();
    writeFileSync(join(notes, 'notes.txt'), 'not an agent');
    expect((await troupe(['validate', notes])).code).toBe(1);
  });

  it('run says which tools an agent file names that resolve to nothing, and --strict fails on them', async () => {
    const folder = join(fixtures, 'cli', 'unknown-tool');
    const lenient = await troupe(['run', folder, 'writer', 'hi']);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toContain('warning  Tools with no troupe tool, left out: search_the_web (1 name in writer.md)\n         map them with --tool-map <file.json> ({ "<name>": "<troupe tool>" or null }), or fail on them with --strict;');
    expect(lenient.stdout).toContain('writer handled: hi');
    const strict = await troupe(['run', folder, 'writer', 'hi', '--strict']);
    expect(strict).toMatchObject({ code: 1, stdout: '' });
    expect(strict.stderr).toBe('error    writer.md: Agent "writer": 1 tool resolves to nothing: search_the_web');
    // With no model chosen the answer comes from an offline stand-in, and standard error says so first.
    const offline = await troupe(['run', join(fixtures, 'cli', 'desk'), 'desk', 'My screen is black']);
    expect(offline.code).toBe(0);
    expect(offline.stderr.split('\n')[0]).toBe("troupe: adapter scripted (the default): offline replies, not a model's (routers pick their first destination, agents echo); --adapter or TROUPE_ADAPTER picks a model");
    // --quiet keeps the warning to itself, and a run whose tools all resolve says nothing of them.
    expect((await troupe(['run', folder, 'writer', 'hi', '--quiet'])).stderr).toBe('');
    expect((await troupe(['run', join(fixtures, 'cli', 'desk'), 'desk', 'hi', '--quiet'])).stderr).toBe('');
  });

  it('a badly shaped --script file prints one line per problem, each with its place in the file', async () => {
    const dir = tempRoot();
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify({ replies: { desk: [42, 'ok'], legal: 'no' }, latencyMs: -1, extra: true }));
    const result = await troupe(['run', join(fixtures, 'cli', 'desk'), 'desk', 'hi', '--script', file]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      'troupe: adapter scripted (the default, replies from --script)',
      `invalid_option: The script ${file} has 4 problems:`,
      '  replies.desk[0]: expected a reply: a string, or { "text", "toolCalls", "delayMs" }',
      '  replies.legal: Invalid input: expected array, received string',
      '  latencyMs: Too small: expected number to be >=0',
      '  (the document): Unrecognized key: "extra"',
    ]);
    writeFileSync(file, '{ "replies": ');
    const notJson = await troupe(['run', join(fixtures, 'cli', 'desk'), 'desk', 'hi', '--script', file]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(new RegExp(`^troupe: adapter scripted \\(the default, replies from --script\\)\ninvalid_option: The script ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not JSON: [^\\n]+$`));
  });

  it('a failed process adapter shows the last lines of its stderr; --verbose shows the rest', async () => {
    const env = { TROUPE_ADAPTER: 'process', TROUPE_COMMAND: `'${process.execPath}' '${join(fixtures, 'cli', 'fail.mjs')}'` };
    const args = ['run', join(fixtures, 'cli', 'unknown-tool'), 'writer', 'hi', '--quiet'];
    const short = await troupe(args, env);
    expect(short.code).toBe(1);
    const lines = short.stderr.split('\n');
    expect(lines).toEqual([
      `adapter_error: Command "${process.execPath}" exited with code 1; the last 5 lines of its stderr:`,
      '  progress line 197',
      '  progress line 198',
      '  progress line 199',
      '  progress line 200',
      '  fatal: not logged in',
      "(--verbose shows more of the command's stderr)",
    ]);
    const verbose = await troupe([...args, '--verbose'], env);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toContain('\nstderr of the command (its last 2000 characters):\n');
    expect(verbose.stderr).toContain('progress line 120\nprogress line 121\n');
    expect(verbose.stderr.trimEnd().endsWith('progress line 200\nfatal: not logged in')).toBe(true);
  });

  it('squad run: runs a repository squad team offline, each worker given the request', async () => {
    const result = await troupe(['squad', 'run', join(fixtures, 'squad', 'Azure-Samples__eShopLite'), 'Add product search', '--trace']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('The workers answered: Ripley, Hicks, Bishop, Vasquez, Apone, Newt.');
    expect(result.stdout).toContain('agent: orchestrator   status: completed (goal-met)');
    expect(result.stdout).toMatch(/worker Ripley \[completed\]/);
    const none = await troupe(['squad', 'run', tempRoot(), 'x']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^No squad team in /);
    expect((await troupe(['squad', 'run', tempRoot()])).stderr.split('\n')[0]).toBe('troupe squad run: expected 2 arguments, got 1');
  });

  it('squad run: a script plays the orchestrator and the workers', async () => {
    const repo = tempRoot();
    mkdirSync(join(repo, '.squad', 'agents', 'ada'), { recursive: true });
    writeFileSync(join(repo, '.squad', 'team.md'), '# Tiny\n\n## Members\n\n| Name | Role |\n|---|---|\n| Ada | Lead |\n| Bob | Tester |\n');
    const script = join(repo, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        replies: {
          orchestrator: ['@worker:Bob\nTest the login form.\n@end', 'Bob tested the login form: it works.\n[[GROUP_REFLECT_COMPLETE]]'],
          Bob: ['The login form passes every test.'],
        },
      }),
    );
    const result = await troupe(['squad', 'run', repo, 'Check the login form', '--script', script, '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('Bob tested the login form: it works.');
  });

  it('serve --a2a and mcp serve: what is missing or wrong is one line, before anything listens', async () => {
    const panel = join(fixtures, 'a2a', 'panel');
    const noFolder = await troupe(['serve']);
    expect(noFolder.code).toBe(2);
    expect(noFolder.stderr.split('\n')[0]).toBe('Give the agent folder to serve: troupe serve --a2a <dir>');
    const group = await troupe(['mcp']);
    expect([group.code, group.stderr.split('\n')[0]]).toEqual([2, 'Usage: troupe mcp serve <dir> [--agent <name>] [--http] [--port <n>] [--host <host>] [--token <secret>]']);
    expect((await troupe(['mcp', 'serve'])).stderr.split('\n')[0]).toBe('troupe mcp serve: expected 1 argument, got 0');
    expect((await troupe(['mcp', 'serve', panel, '--a2a', 'x'])).stderr.split('\n')[0]).toBe('troupe mcp serve: unknown option --a2a');
    const empty = tempRoot();
    expect(await troupe(['serve', '--a2a', empty])).toMatchObject({ code: 1, stderr: `No agent files in ${empty} (\`troupe validate --help\` lists the formats troupe reads)` });
    expect(await troupe(['mcp', 'serve', panel, '--agent', 'nobody'])).toMatchObject({ code: 1, stderr: 'Unknown agent "nobody" (agents: clerk, review-panel, security, slowpoke, style)' });
    expect(await troupe(['serve', '--a2a', panel, '--port', '99999'])).toMatchObject({ code: 1, stderr: `troupe: adapter scripted (the default): offline replies, not a model's (routers pick their first destination, agents echo); --adapter or TROUPE_ADAPTER picks a model\ninvalid_option: Expected --port to be a port number (0-65535), got "99999"` });
    expect((await troupe(['serve', '--help'])).stdout).toMatch(/^Usage: troupe serve --a2a <dir>/);
  });
});

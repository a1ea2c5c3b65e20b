import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { drive } from '../plan/helpers.js';

const root = join(import.meta.dirname, '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'templates');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'troupe-cli-templates-'));
  dirs.push(d);
  return d;
}

/** Run the CLI in process on a simulated clock, advanced until it exits. */
async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const clock = new SimulatedClock();
  const code = await drive(clock, main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, clock }));
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('troupe validate <template file>', () => {
  it('passes a sound template with its warnings and fails a broken one with every error', async () => {
    const good = await troupe('validate', join(fixtures, 'fix-module.yaml'));
    expect(good).toMatchObject({ code: 0, stderr: '' });
    expect(good.stdout.split('\n')).toEqual(['template fix-module: 2 parameters, 3 chunks, 0 errors, 0 warnings']);
    const bad = await troupe('validate', join(fixtures, 'broken.yaml'));
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')).toEqual(['warning  parameters.unused: parameter "unused" is declared but no text uses it', 'template: 2 errors, 1 warning']);
    expect(bad.stderr.split('\n')).toEqual(['error    chunks.0.prompt: {{modul}} names no declared parameter', 'error    chunks: dependency cycle: 0 -> 1 -> 0']);
  });
});

describe('troupe run --template and troupe stats', () => {
  it('fills a template in from a file, runs the plan, logs it and records its outcomes; --learn uses them', async () => {
    const store = tempDir();
    const script = join(fixtures, 'script.json');
    const first = await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--set', 'module=cache', '--set', 'depth=thorough', '--script', script, '--store', store, '--quiet');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^0\. Analyse cache \(CodeAnalysis\): completed\n1\. Analyse the tests of cache \(CodeAnalysis\): completed\n2\. Fix cache \(Implementation\): completed$/m);
    expect(first.stdout).toMatch(/^plan: 3\/3 completed, 0 failed, 0 skipped {3}status: completed$/m);

    const stats = await troupe('stats', '--store', store);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/^1 run recorded$/m);
    expect(stats.stdout).toMatch(/^CodeAnalysis +2 +100% +1\.0 +1\.0 s /m);
    expect(stats.stdout).toMatch(/^Implementation +1 +100% +1\.0 +2\.0 s /m);
    expect(stats.stdout).toMatch(/^scripted:default +3 +100% +1\.3 s /m);

    await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--set', 'module=db', '--script', script, '--store', store, '--quiet');
    const learned = await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--set', 'module=ui', '--script', script, '--store', store, '--quiet', '--learn');
    expect(learned.stdout).toMatch(/^learned estimates: CodeAnalysis 1000 ms$/m);
    const json = JSON.parse((await troupe('stats', '--store', store, '--json')).stdout) as { runs: number; roles: Record<string, { count: number }> };
    expect(json.runs).toBe(3);
    expect(json.roles.CodeAnalysis!.count).toBe(6);
    // Every run of the store replays from its log alone, the one that learned with what it learned.
    const replayed = await troupe('replay', store);
    expect(replayed.stdout).toMatch(/\n3 runs, 0 failed to replay$/);
    expect(replayed.code).toBe(0);
  });

  it('refuses bad values before anything runs, and names what is wrong', async () => {
    const store = tempDir();
    const bad = await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--set', 'depth=deep', '--store', store, '--quiet');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('invalid_template_values: Invalid values for plan template "fix-module": values.module: parameter "module" (string) needs a value; values.depth: parameter "depth": expected one of "quick", "thorough", got "deep"');
    expect((await troupe('stats', '--store', store)).stdout).toBe('No runs recorded yet.');
    expect((await troupe('run', '--template', 'x', '--set', 'novalue')).stderr).toMatch(/not a file; to use a saved template, give --store/);
    expect((await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--set', 'novalue')).stderr).toBe('invalid_argument: Expected --set <key>=<value>, got "novalue"');
    expect((await troupe('run', '--template', join(fixtures, 'fix-module.yaml'), '--learn')).code).toBe(2);
  });

  it('saves a template in the registry, lists and shows it, and runs it by name', async () => {
    const store = tempDir();
    expect((await troupe('template', 'save', join(fixtures, 'fix-module.yaml'), '--store', store)).stdout).toBe(`saved template fix-module in ${store}`);
    expect((await troupe('template', 'list', '--store', store)).stdout).toBe('fix-module               module, depth   Find and fix a bug in one module');
    expect(JSON.parse((await troupe('template', 'show', 'fix-module', '--store', store)).stdout)).toMatchObject({ name: 'fix-module', parameters: { module: { type: 'string' } } });
    const ran = await troupe('run', '--template', 'fix-module', '--set', 'module=auth', '--script', join(fixtures, 'script.json'), '--store', store, '--quiet');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('2. Fix auth (Implementation): completed');
    const broken = join(tempDir(), 'broken.json');
    writeFileSync(broken, '{"name": "x", "planSummary": "{{y}}", "chunks": []}');
    expect((await troupe('template', 'save', broken, '--store', store)).code).toBe(1);
    expect((await troupe('template', 'show', 'nope', '--store', store)).code).toBe(1);
    expect((await troupe('template', 'list')).code).toBe(2);
  });
});

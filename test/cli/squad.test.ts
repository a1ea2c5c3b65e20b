import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { discoverSquad } from '../../src/squad/parse.js';
import { saveTeamAsPreset } from '../../src/squad/presets.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const squads = join(import.meta.dirname, '..', 'fixtures', 'squad');
const tempRoot = tempDirs('troupe-cli-squad-');

/** Run the CLI in-process; returns the exit code and both streams. */
async function troupe(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('troupe squad show', () => {
  it('prints the team as a table: name, slug, role, worker or infrastructure, charter; warnings listed', async () => {
    const { code, stdout } = await troupe(['squad', 'show', join(squads, 'Azure-Samples__eShopLite')]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^Squad Team \(orchestrator-reflect\), read from .*Azure-Samples__eShopLite[/\\]\.squad$/);
    expect(lines).toContain('name     slug     role            kind            charter');
    expect(lines).toContain('Ripley   ripley   Lead            worker          yes');
    expect(lines).toContain('Newt     newt     Aspire Expert   worker          yes');
    expect(lines).toContain('Scribe   scribe   Session Logger  infrastructure  yes');
    expect(lines).toContain('Ralph    ralph    Work Monitor    infrastructure  yes');
    expect(stdout).toMatch(/6 workers, 2 infrastructure; routing context \d+ chars, shared context \d+ chars/);
    expect(stdout).toContain('warnings (1):\n  - decisions.md: cut to the most recent 8000 characters (63 earlier entries left out)');
  });

  it('reads a legacy .ai-team folder, marks a missing charter, and fails without a team', async () => {
    const legacy = await troupe(['squad', 'show', join(squads, 'PureWeen__PolyPilot__TestData__legacy-ai-team')]);
    expect(legacy.code).toBe(0);
    expect(legacy.stdout).toMatch(/read from .*\.ai-team/);
    const root = tempRoot();
    mkdirSync(join(root, '.squad', 'agents', 'ada'), { recursive: true });
    writeFileSync(join(root, '.squad', 'team.md'), '# Tiny\n\n## Members\n\n| Name | Role |\n|---|---|\n| Ada | Lead |\n| Bob | Tester |\n');
    writeFileSync(join(root, '.squad', 'agents', 'ada', 'charter.md'), 'You are Ada.');
    const tiny = await troupe(['squad', 'show', root]);
    expect(tiny.stdout.split('\n')).toEqual(expect.arrayContaining(['Ada   ada   Lead    worker  yes', 'Bob   bob   Tester  worker  no']));
    expect(tiny.stdout).toContain('  - Bob has no charter (agents/bob/charter.md): using a generic prompt');
    const none = await troupe(['squad', 'show', tempRoot()]);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toMatch(/^No squad team in .* \(no \.squad\/team\.md or \.ai-team\/team\.md\)$/);
    expect((await troupe(['squad', 'show', join(root, 'missing')])).stderr).toMatch(/^No folder /);
  });
});

describe('troupe squad init', () => {
  it('writes a built-in preset as a squad folder and refuses to overwrite team.md without --force', async () => {
    const root = tempRoot();
    const first = await troupe(['squad', 'init', root, '--preset', 'code-review']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Wrote the code-review preset (builtin, broadcast) to ${join(root, '.squad')}`);
    expect(first.stdout).toContain('  agents/security-reviewer/charter.md');
    const team = await discoverSquad(root);
    expect(team).toMatchObject({ name: 'code-review', mode: 'broadcast' });
    expect(team?.workers.map((w) => w.name)).toEqual(['correctness-reviewer', 'security-reviewer', 'maintainability-reviewer']);

    const before = readFileSync(join(root, '.squad', 'team.md'), 'utf8');
    const again = await troupe(['squad', 'init', root, '--preset', 'bug-hunt']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`${join(root, '.squad', 'team.md')} exists: pass --force to overwrite it`);
    expect(readFileSync(join(root, '.squad', 'team.md'), 'utf8')).toBe(before);

    expect((await troupe(['squad', 'init', root, '--preset', 'Bug Hunt', '--force'])).code).toBe(0);
    expect((await discoverSquad(root))?.workers.map((w) => w.name)).toEqual(['reproducer', 'investigator', 'fixer']);
  });

  it('writes a user preset from --store or $TROUPE_STORE; an unknown preset lists the names', async () => {
    const storeDir = tempRoot();
    await saveTeamAsPreset(
      { name: 'docs-crew', mode: 'sequential', workers: [{ name: 'writer', systemPrompt: 'You are a technical writer.' }], sharedContext: '## Style\nShort sentences.' },
      { store: fileStore(storeDir, { fsync: false }) },
    );
    const root = tempRoot();
    const byFlag = await troupe(['squad', 'init', root, '--preset', 'docs-crew', '--store', storeDir]);
    expect(byFlag.code).toBe(0);
    expect(byFlag.stdout).toContain('Wrote the docs-crew preset (user, sequential)');
    expect(byFlag.stdout).toContain('  decisions.md');
    expect(await discoverSquad(root)).toMatchObject({ name: 'docs-crew', sharedContext: '## Style\nShort sentences.' });
    const byEnv = await troupe(['squad', 'init', tempRoot(), '--preset', 'docs-crew'], { TROUPE_STORE: storeDir });
    expect(byEnv.code).toBe(0);
    const unknown = await troupe(['squad', 'init', tempRoot(), '--preset', 'docs-crew']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('Unknown preset "docs-crew" (presets: code-review, implement-and-challenge, research-and-summarise, bug-hunt)');
  });
});

describe('troupe squad --help and usage', () => {
  it('prints help for squad and each subcommand; bad usage exits 2', async () => {
    expect((await troupe(['--help'])).stdout).toContain('troupe squad init <repo> --preset <name> [--force]');
    expect(await troupe(['squad', '--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('troupe squad show <repo>') });
    expect((await troupe(['squad', 'show', '--help'])).stdout).toContain('Exits 1 when <repo> has no\nsquad team.');
    const initHelp = await troupe(['squad', 'init', '--help']);
    expect(initHelp.stdout).toContain('--force           overwrite an existing team.md');
    expect(initHelp.stdout).toContain('code-review, implement-and-challenge, research-and-summarise, bug-hunt');
    expect((await troupe(['squad'])).code).toBe(2);
    expect((await troupe(['squad', 'bogus'])).stderr).toContain('troupe squad: unknown command "bogus"');
    expect((await troupe(['squad', 'show'])).stderr).toContain('troupe squad show: expected 1 argument, got 0\n\nUsage: troupe squad show <repo>');
    const noPreset = await troupe(['squad', 'init', tempRoot()]);
    expect(noPreset.code).toBe(2);
    expect(noPreset.stderr).toContain('troupe squad init: expected --preset <name>');
  });
});

import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTroupeError } from '../../src/core/errors.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { discoverSquad, parseSquad, TROUPE_CHARTER_MARKER } from '../../src/squad/parse.js';
import { TEAM_MODES, type TeamPresetInput } from '../../src/squad/preset.js';
import { DEFAULT_INFRASTRUCTURE, isInfrastructure, squadSlug } from '../../src/squad/slug.js';
import { roleFromPrompt, workerSlug, writeSquad } from '../../src/squad/write.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'squad');
const tempRoot = tempDirs('troupe-squad-write-');

const preset = (workers: string[], extra: Partial<TeamPresetInput> = {}): TeamPresetInput => ({
  name: 'Crew',
  mode: 'orchestrator',
  workers: workers.map((name) => ({ name, systemPrompt: `You are the ${name} of the crew. Do good work.` })),
  ...extra,
});

describe('writeSquad', () => {
  it('writes team.md, a charter per worker and the contexts', async () => {
    const root = tempRoot();
    const dir = await writeSquad(root, preset(['Ada', 'Code Reviewer'], { routingContext: '## Routing\nAda does X', sharedContext: '## D1\nuse zod' }));
    expect(dir).toBe(join(root, '.squad'));
    const team = readFileSync(join(dir, 'team.md'), 'utf8');
    expect(team).toBe(
      [
        '# Crew',
        '',
        'mode: orchestrator',
        '',
        '## Members',
        '',
        '| Name | Role | Charter | Status |',
        '|------|------|---------|--------|',
        '| Ada | Ada of the crew | .squad/agents/ada/charter.md | Active |',
        '| Code Reviewer | Code Reviewer of the crew | .squad/agents/code-reviewer/charter.md | Active |',
        '',
      ].join('\n'),
    );
    expect(readFileSync(join(dir, 'agents', 'code-reviewer', 'charter.md'), 'utf8')).toBe(
      `${TROUPE_CHARTER_MARKER}\n\nYou are the Code Reviewer of the crew. Do good work.\n`,
    );
    expect(readFileSync(join(dir, 'routing.md'), 'utf8')).toBe('## Routing\nAda does X\n');
    expect(readFileSync(join(dir, 'decisions.md'), 'utf8')).toBe('## D1\nuse zod\n');
    // Atomic writes leave no temp files behind.
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('derives roles from the first sentence and gives a worker without a prompt a generic charter', async () => {
    expect(roleFromPrompt('You are a security auditor specializing in apps. Focus on OWASP.')).toBe('Security auditor specializing in apps');
    expect(roleFromPrompt('You are the lead!')).toBe('Lead');
    expect(roleFromPrompt('# Ripley — Lead\n\n## Mission')).toBe('Ripley — Lead');
    expect(roleFromPrompt('')).toBe('');
    const root = tempRoot();
    const dir = await writeSquad(root, { name: 'Crew', mode: 'broadcast', workers: [{ name: 'Quiet', systemPrompt: '  ' }] });
    const team = await parseSquad(dir);
    expect(team?.workers[0]?.systemPrompt).toMatch(/^You are Quiet, a member of the Crew team\./);
  });

  it('sanitises folder names and strips a team-name prefix', async () => {
    expect(workerSlug('Crew Reviewer', 'Crew')).toBe('reviewer');
    expect(workerSlug('crew', 'Crew')).toBe('crew');
    expect(workerSlug('Zoë the Ünicorn!', 'X')).toBe('zoe-the-unicorn');
    const root = tempRoot();
    const dir = await writeSquad(root, preset(['../../etc', 'Crew-Tester']));
    expect(readdirSync(join(dir, 'agents')).sort()).toEqual(['etc', 'tester']);
    expect(existsSync(join(root, 'etc'))).toBe(false);
    const team = await parseSquad(dir);
    expect(team?.workers.map((w) => w.name)).toEqual(['../../etc', 'Crew-Tester']);
  });

  it('rejects names without letters, two workers sharing a folder, and an invalid preset', async () => {
    const root = tempRoot();
    await expect(writeSquad(root, preset(['!!!']))).rejects.toThrow(/no letter or digit/);
    await expect(writeSquad(root, preset(['Code Reviewer', 'code-reviewer']))).rejects.toThrow(/would share the folder agents\/code-reviewer/);
    await expect(writeSquad(root, { name: '', mode: 'broadcast', workers: [] })).rejects.toSatisfy((e: unknown) => isTroupeError(e, 'invalid_option'));
    expect(existsSync(join(root, '.squad'))).toBe(false);
  });

  it('removes agent folders it wrote that are no longer members, and no others', async () => {
    const root = tempRoot();
    const dir = await writeSquad(root, preset(['Ada', 'Bob', 'Cy']));
    // A folder a person wrote, and a person's charter for a member troupe then writes.
    mkdirSync(join(dir, 'agents', 'human'));
    writeFileSync(join(dir, 'agents', 'human', 'charter.md'), 'You are human.');
    mkdirSync(join(dir, 'agents', 'dee'));
    writeFileSync(join(dir, 'agents', 'dee', 'charter.md'), 'You are Dee.');
    writeFileSync(join(dir, 'agents', 'bob', 'history.md'), 'notes');
    await writeSquad(root, preset(['Ada', 'Dee']));
    expect(readdirSync(join(dir, 'agents')).sort()).toEqual(['ada', 'dee', 'human']);
    // Dee's folder was not troupe's: its charter is rewritten without the marker and survives Dee leaving.
    expect(readFileSync(join(dir, 'agents', 'dee', 'charter.md'), 'utf8').startsWith(TROUPE_CHARTER_MARKER)).toBe(false);
    await writeSquad(root, preset(['Ada']));
    expect(readdirSync(join(dir, 'agents')).sort()).toEqual(['ada', 'dee', 'human']);
  });

  it('refuses to write through a symbolic link', async () => {
    const root = tempRoot();
    const outside = tempRoot();
    mkdirSync(join(root, '.squad', 'agents'), { recursive: true });
    symlinkSync(outside, join(root, '.squad', 'agents', 'ada'));
    await expect(writeSquad(root, preset(['Ada']))).rejects.toSatisfy((e: unknown) => isTroupeError(e, 'unsafe_path'));
    expect(readdirSync(outside)).toEqual([]);
  });

  it('turns a file-system failure into a WorkspaceError', async () => {
    const root = tempRoot();
    writeFileSync(join(root, '.squad'), 'a file, not a folder');
    await expect(writeSquad(root, preset(['Ada']))).rejects.toSatisfy(
      (e: unknown) => isTroupeError(e, 'workspace_error') && (e as Error).message.includes('.squad'),
    );
  });

  it('writes into an existing legacy .ai-team folder and keeps infrastructure members', async () => {
    const root = tempRoot();
    cpSync(join(fixtures, 'Azure-Samples__eShopLite', '.squad'), join(root, '.ai-team'), { recursive: true });
    const before = await discoverSquad(root);
    if (!before) throw new Error('fixture missing');
    const dir = await writeSquad(root, before);
    expect(dir).toBe(join(root, '.ai-team'));
    const after = await parseSquad(dir);
    expect(after?.workers).toEqual(before.workers);
    expect(after?.roster.map((m) => [m.name, m.infrastructure])).toEqual(before.roster.map((m) => [m.name, m.infrastructure]));
    expect(readFileSync(join(dir, 'team.md'), 'utf8')).toContain('| Scribe | Session Logger | .ai-team/agents/scribe/charter.md | Active |');
    // The human-written charters stay unmarked, so no folder became troupe's.
    expect(readFileSync(join(dir, 'agents', 'ripley', 'charter.md'), 'utf8').startsWith(TROUPE_CHARTER_MARKER)).toBe(false);
  });
});

describe('round trip', () => {
  const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,8}$/);
  const name = fc
    .array(word, { minLength: 1, maxLength: 3 })
    .map((w) => w.join(' '))
    .filter((n) => !isInfrastructure(n, squadSlug(n), DEFAULT_INFRASTRUCTURE) && !['name', 'member', 'members'].includes(n.toLowerCase()));
  const text = (maxLength: number) =>
    fc
      .array(fc.string({ unit: 'grapheme', maxLength: 60 }), { minLength: 1, maxLength: 20 })
      .map((lines) => lines.join('\n').replace(/\r/g, '').trim().slice(0, maxLength).trim())
      .filter((t) => t !== '');
  const team = fc.record({
    name,
    mode: fc.constantFrom(...TEAM_MODES),
    workers: fc.uniqueArray(fc.record({ name, systemPrompt: text(4000) }), {
      minLength: 1,
      maxLength: 4,
      selector: (w) => squadSlug(w.name),
    }),
    routingContext: fc.option(text(8000), { nil: undefined }),
    sharedContext: fc.option(text(8000), { nil: undefined }),
  });

  it('parseSquad(writeSquad(preset)) keeps name, mode, workers, prompts and contexts', async () => {
    await fc.assert(
      fc.asyncProperty(team, async (input) => {
        const root = mkdtempSync(join(tmpdir(), 'troupe-squad-rt-'));
        try {
          const slugs = input.workers.map((w) => workerSlug(w.name, input.name));
          fc.pre(new Set(slugs).size === slugs.length);
          const written: TeamPresetInput = { name: input.name, mode: input.mode, workers: input.workers };
          if (input.routingContext !== undefined) written.routingContext = input.routingContext;
          if (input.sharedContext !== undefined) written.sharedContext = input.sharedContext;
          const parsed = await parseSquad(await writeSquad(root, written));
          expect(parsed?.name).toBe(input.name);
          expect(parsed?.mode).toBe(input.mode);
          expect(parsed?.workers.map((w) => [w.name, w.systemPrompt])).toEqual(input.workers.map((w) => [w.name, w.systemPrompt]));
          expect(parsed?.routingContext).toBe(input.routingContext);
          expect(parsed?.sharedContext).toBe(input.sharedContext);
          expect(parsed?.warnings).toEqual([]);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 30 },
    );
  });
});

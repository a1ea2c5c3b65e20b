import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, isTroupeError } from '../../src/core/errors.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { CHARTER_CAP, CONTEXT_CAP } from '../../src/squad/caps.js';
import { readSquadFile } from '../../src/squad/files.js';
import { findSquadDir } from '../../src/squad/find.js';
import { discoverSquad, parseSquad } from '../../src/squad/parse.js';
import { writeSquad } from '../../src/squad/write.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'squad');
const tempRoot = tempDirs('troupe-squad-');

/** A repository root with a `.squad` folder holding the given files. */
function squadRepo(files: Record<string, string>): { root: string; dir: string } {
  const root = tempRoot();
  const dir = join(root, '.squad');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(dir, { recursive: true });
  return { root, dir };
}

const expected: Record<string, { name: string; workers: string[]; infrastructure: string[]; charterWarnings?: string[] }> = {
  'Azure-Samples__eShopLite': {
    name: 'Squad Team',
    workers: ['Ripley', 'Hicks', 'Bishop', 'Vasquez', 'Apone', 'Newt'],
    infrastructure: ['Scribe', 'Ralph'],
  },
  // Ralph is on the roster without an agent folder.
  'Cabazure__Cabazure.Client': {
    name: 'Squad Team',
    workers: ['Ripley', 'Dallas', 'Hudson', 'Bishop'],
    infrastructure: ['Scribe', 'Ralph'],
    charterWarnings: ['Ralph has no charter (agents/ralph/charter.md)'],
  },
  csharpfritz__SquadUI: {
    name: 'Team Roster',
    workers: ['Danny', 'Rusty', 'Linus', 'Basher', 'Livingston', 'Virgil', 'Turk'],
    infrastructure: ['Scribe', 'Ralph'],
  },
  'PureWeen__PolyPilot__TestData__squad-sample': {
    name: 'The Review Squad',
    workers: ['security-reviewer', 'perf-analyst'],
    infrastructure: ['scribe'],
  },
  'PureWeen__PolyPilot__TestData__legacy-ai-team': { name: 'Legacy Team', workers: ['dev'], infrastructure: [] },
};

describe('discoverSquad on real squad folders', () => {
  it('has an expectation for every fixture folder', () => {
    expect(readdirSync(fixtures).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))('reads %s', async (folder, want) => {
    const team = await discoverSquad(join(fixtures, folder));
    expect(team).not.toBeNull();
    if (!team) return;
    expect(team.name).toBe(want.name);
    expect(team.mode).toBe('orchestrator-reflect');
    expect(team.source).toBe('repo');
    expect(team.workers.map((w) => w.name)).toEqual(want.workers);
    expect(team.roster.filter((m) => m.infrastructure).map((m) => m.name)).toEqual(want.infrastructure);
    for (const worker of team.workers) {
      expect(worker.systemPrompt.length).toBeGreaterThan(20);
      expect(worker.systemPrompt.length).toBeLessThanOrEqual(CHARTER_CAP);
    }
    for (const member of team.roster) expect(member.slug).toMatch(/^[a-z0-9-]+$/);
    expect(team.warnings.filter((w) => /charter|roster|team\.md/.test(w))).toEqual(want.charterWarnings ?? []);
    expect((team.sharedContext ?? '').length).toBeLessThanOrEqual(CONTEXT_CAP);
    expect((team.routingContext ?? '').length).toBeLessThanOrEqual(CONTEXT_CAP);
  });

  it('fills workers, roles, charter paths and contexts for eShopLite', async () => {
    const team = await discoverSquad(join(fixtures, 'Azure-Samples__eShopLite'));
    expect(team?.description).toBe('eShopLite');
    expect(team?.workers[0]).toMatchObject({ name: 'Ripley', role: 'Lead' });
    expect(team?.workers[0]?.systemPrompt).toMatch(/^# Ripley — Lead\n\n## Mission/);
    expect(team?.roster.find((m) => m.name === 'Hicks')).toMatchObject({ slug: 'hicks', status: 'Active', charterPath: 'agents/hicks/charter.md' });
    expect(team?.routingContext).toContain('| Work Type | Route To | Examples |');
    expect(team?.sharedContext).toMatch(/^\(\d+ earlier entries omitted\)/);
    expect(team?.warnings).toEqual([expect.stringMatching(/^decisions\.md: cut/)]);
  });

  it('excludes the @copilot coding agent and the Coordinator from the SquadUI roster', async () => {
    const team = await discoverSquad(join(fixtures, 'csharpfritz__SquadUI'));
    expect(team?.roster.map((m) => m.name)).not.toContain('@copilot');
    expect(team?.roster.map((m) => m.name)).not.toContain('Squad');
    expect(team?.roster.find((m) => m.name === 'Scribe')?.status).toBe('📋 Silent');
  });

  it('takes the infrastructure list as an option', async () => {
    const team = await discoverSquad(join(fixtures, 'Azure-Samples__eShopLite'), { infrastructure: ['ripley'] });
    expect(team?.workers.map((w) => w.name)).toEqual(['Hicks', 'Bishop', 'Vasquez', 'Apone', 'Newt', 'Scribe', 'Ralph']);
  });
});

describe('findSquadDir and missing files', () => {
  it('prefers .squad over .ai-team and returns null without either', async () => {
    const root = tempRoot();
    expect(await findSquadDir(root)).toBeNull();
    mkdirSync(join(root, '.ai-team'));
    expect(await findSquadDir(root)).toBe(join(root, '.ai-team'));
    mkdirSync(join(root, '.squad'));
    expect(await findSquadDir(root)).toBe(join(root, '.squad'));
  });

  it('findSquadDir honours its signal and rejects a root that is not a path', async () => {
    const root = tempRoot();
    mkdirSync(join(root, '.squad'));
    await expect(findSquadDir(root, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    // @ts-expect-error a root must be a string
    await expect(findSquadDir(42)).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('returns null for a folder without team.md, or no folder', async () => {
    const { root, dir } = squadRepo({ 'routing.md': '# R' });
    expect(await parseSquad(dir)).toBeNull();
    expect(await discoverSquad(root)).toBeNull();
    expect(await parseSquad(join(root, 'nowhere'))).toBeNull();
  });

  it('gives a worker without a charter a generic prompt and a warning', async () => {
    const { dir } = squadRepo({ 'team.md': '# Crew\n## Members\n| Name | Role |\n|---|---|\n| Code Reviewer | Reviewer |\n' });
    const team = await parseSquad(dir);
    expect(team?.roster[0]).toMatchObject({ name: 'Code Reviewer', slug: 'code-reviewer' });
    expect(team?.workers[0]?.systemPrompt).toMatch(/^You are Code Reviewer, the Reviewer of the Crew team\./);
    expect(team?.warnings).toEqual(['Code Reviewer has no charter (agents/code-reviewer/charter.md): using a generic prompt']);
  });

  it('gives an empty roster table no workers and a warning', async () => {
    const { dir } = squadRepo({ 'team.md': '# Crew\n## Members\n| Name | Role | Charter | Status |\n|---|---|---|---|\n' });
    const team = await parseSquad(dir);
    expect(team?.workers).toEqual([]);
    expect(team?.warnings.join()).toMatch(/no member rows/);
  });
});

describe('caps and limits', () => {
  it('cuts a 5,000-character charter to 4,000 at a line boundary', async () => {
    const charter = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')} ${'x'.repeat(45)}`).join('\n');
    expect(charter.length).toBe(4999);
    const { dir } = squadRepo({ 'team.md': '| Name | Role |\n|--|--|\n| Ada | Lead |', 'agents/ada/charter.md': charter });
    const team = await parseSquad(dir);
    const prompt = team?.workers[0]?.systemPrompt ?? '';
    expect(prompt.length).toBeLessThanOrEqual(4000);
    expect(prompt.length).toBeGreaterThan(3900);
    expect(charter.startsWith(`${prompt}\n`)).toBe(true);
    expect(team?.warnings).toEqual(['agents/ada/charter.md: cut to 4000 characters']);
  });

  it('reads at most 1 MB of a file, and the end of a long decisions log', async () => {
    const entry = (i: number) => `## Decision ${i}\n${'because '.repeat(60)}\n`;
    const log = Array.from({ length: 5000 }, (_, i) => entry(i)).join('\n');
    expect(log.length).toBeGreaterThan(2 * 1024 * 1024);
    const { dir } = squadRepo({ 'team.md': '# T', 'decisions.md': log });
    const head = await readSquadFile(dir, join(dir, 'decisions.md'));
    expect(head.status === 'ok' && head.text.length).toBe(1024 * 1024);
    expect(head.status === 'ok' && head.truncated).toBe(true);
    const team = await parseSquad(dir);
    expect(team?.sharedContext?.length).toBeLessThanOrEqual(CONTEXT_CAP);
    expect(team?.sharedContext).toContain('## Decision 4999\n');
    expect(team?.sharedContext).not.toContain('## Decision 0\n');
  });
});

describe('safety', () => {
  it('maps hostile roster names to confined folder names and reads nothing outside', async () => {
    const { root, dir } = squadRepo({
      'team.md': [
        '## Members',
        '| Name | Role | Charter |',
        '|---|---|---|',
        '| ../../etc | x | ../../../etc/charter.md |',
        '| <script>alert(1)</script>evil | x | /etc/passwd |',
        '| !!! | x | |',
        '| $(rm -rf ~) | x | agents/../../secret/charter.md |',
      ].join('\n'),
    });
    mkdirSync(join(root, 'etc'));
    writeFileSync(join(root, 'etc', 'charter.md'), 'SECRET OUTSIDE');
    mkdirSync(join(root, 'secret'));
    writeFileSync(join(root, 'secret', 'charter.md'), 'SECRET OUTSIDE');
    const team = await parseSquad(dir);
    expect(team?.roster.map((m) => m.slug)).toEqual(['etc', 'alert-1-evil', 'rm-rf']);
    for (const worker of team?.workers ?? []) expect(worker.systemPrompt).not.toContain('SECRET');
    expect(team?.warnings.join('\n')).toMatch(/"!!!" has no usable folder name/);
  });

  it('refuses a charter that is a symbolic link out of the folder, and accepts one inside', async () => {
    const { root, dir } = squadRepo({
      'team.md': '| Name | Role |\n|--|--|\n| Ada | Lead |\n| Bob | Dev |\n| Cy | Ops |',
      'agents/bob/real.md': 'You are Bob.',
    });
    writeFileSync(join(root, 'outside.md'), 'SECRET OUTSIDE');
    mkdirSync(join(dir, 'agents', 'ada'), { recursive: true });
    symlinkSync(join(root, 'outside.md'), join(dir, 'agents', 'ada', 'charter.md'));
    symlinkSync('real.md', join(dir, 'agents', 'bob', 'charter.md'));
    mkdirSync(join(root, 'elsewhere'));
    writeFileSync(join(root, 'elsewhere', 'charter.md'), 'SECRET OUTSIDE');
    symlinkSync(join(root, 'elsewhere'), join(dir, 'agents', 'cy'));
    const team = await parseSquad(dir);
    expect(team?.workers.map((w) => w.systemPrompt.includes('SECRET'))).toEqual([false, false, false]);
    expect(team?.workers[1]?.systemPrompt).toBe('You are Bob.');
    expect(team?.warnings.filter((w) => /symbolic link that leaves/.test(w))).toHaveLength(2);
  });

  it('refuses a team.md that links out of the folder with unsafe_path', async () => {
    const { root, dir } = squadRepo({});
    writeFileSync(join(root, 'team.md'), '# Outside');
    symlinkSync(join(root, 'team.md'), join(dir, 'team.md'));
    await expect(parseSquad(dir)).rejects.toSatisfy((e: unknown) => isTroupeError(e, 'unsafe_path'));
  });

  it('reads a squad folder that is reached through a link to a copy', async () => {
    const root = tempRoot();
    cpSync(join(fixtures, 'PureWeen__PolyPilot__TestData__legacy-ai-team', '.ai-team'), join(root, 'real-team'), { recursive: true });
    symlinkSync(join(root, 'real-team'), join(root, '.ai-team'));
    expect((await discoverSquad(root))?.workers.map((w) => w.name)).toEqual(['dev']);
  });

  it('refuses a squad folder that is a link out of the repository, with the error writeSquad gives', async () => {
    const root = tempRoot();
    const outside = tempRoot();
    cpSync(join(fixtures, 'PureWeen__PolyPilot__TestData__legacy-ai-team', '.ai-team'), join(outside, 'team'), { recursive: true });
    symlinkSync(join(outside, 'team'), join(root, '.squad'));
    const error = await discoverSquad(root).catch((e: unknown) => e);
    expect(isTroupeError(error, 'unsafe_path')).toBe(true);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toMatch(/^Refused to read .*\.squad: it is a symbolic link that leads out of the repository/);
    const written = await writeSquad(root, { name: 'T', mode: 'orchestrator', workers: [{ name: 'Ada', systemPrompt: 'You are Ada.' }] }).catch((e: unknown) => e);
    expect(isTroupeError(written, 'unsafe_path')).toBe(true);
    expect(readdirSync(join(outside, 'team')).sort()).toEqual(readdirSync(join(fixtures, 'PureWeen__PolyPilot__TestData__legacy-ai-team', '.ai-team')).sort());
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(discoverSquad(join(fixtures, 'Azure-Samples__eShopLite'), { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('habits of real squad folders', () => {
  it('finds a charter folder whose case differs from the roster, the Charter column first', async () => {
    const { root } = squadRepo({
      'team.md': [
        '# Crew',
        '## Members',
        '| Name | Role | Charter | Status |',
        '|---|---|---|---|',
        '| rai | Lead | .squad/agents/rai/charter.md | Active |',
        '| Mo | Tester | [charter](./agents/QA-Mo/charter.md) | Active |',
        '| Kim | Dev | | Active |',
        '| Scribe | Logger | — | Active |',
      ].join('\n'),
      'agents/Rai/charter.md': '# Rai\nYou lead the crew and keep it on track.',
      'agents/qa-mo/charter.md': '# Mo\nYou test every change before it ships.',
      'agents/KIM/charter.md': '# Kim\nYou build the features the lead assigns.',
    });
    const team = await discoverSquad(root);
    expect(team!.workers.map((w) => [w.name, w.systemPrompt.split('\n')[0]])).toEqual([
      ['rai', '# Rai'],
      ['Mo', '# Mo'],
      ['Kim', '# Kim'],
    ]);
    expect(team!.roster.map((m) => [m.name, m.slug, m.charterPath])).toEqual([
      ['rai', 'rai', 'agents/Rai/charter.md'],
      ['Mo', 'qa-mo', 'agents/qa-mo/charter.md'],
      ['Kim', 'kim', 'agents/KIM/charter.md'],
      ['Scribe', 'scribe', undefined],
    ]);
    // Every member without a charter is named, infrastructure too; no prompt is made up silently.
    expect(team!.warnings).toEqual(['Scribe has no charter (agents/scribe/charter.md)']);
  });

  it('says when the Charter column names a folder that is not there and another one is read', async () => {
    const { root } = squadRepo({
      'team.md': '# Crew\n## Members\n| Name | Role | Charter |\n|---|---|---|\n| Ada | Lead | .squad/agents/ada-lovelace/charter.md |',
      'agents/ada/charter.md': 'You are Ada, the lead of the crew.',
    });
    const team = await discoverSquad(root);
    expect(team!.workers[0]!.systemPrompt).toBe('You are Ada, the lead of the crew.');
    expect(team!.warnings).toEqual(['Ada: the Charter column names agents/ada-lovelace/charter.md, which is not there; read agents/ada/charter.md']);
  });

  it('strips a broken decoration (U+FFFD, an emoji read in the wrong encoding) from a roster name', async () => {
    const { root } = squadRepo({
      'team.md': '# Crew\n## Members\n| Name | Role |\n|---|---|\n| \uFFFD Alejandro | Architect |\n| \uFFFD\uFFFD Ada | Dev |',
      'agents/alejandro/charter.md': 'You design the system.',
      'agents/ada/charter.md': 'You write the code.',
    });
    const team = await discoverSquad(root);
    expect(team!.workers.map((w) => w.name)).toEqual(['Alejandro', 'Ada']);
    expect(team!.roster.map((m) => m.slug)).toEqual(['alejandro', 'ada']);
  });

  it('strips decorative emoji from names, so the coordinator\'s @worker: names match', async () => {
    const { root } = squadRepo({
      'team.md': '# Crew\n## Members\n| Name | Role |\n|---|---|\n| 🏗️ Alejandro | Architect |\n| 👩🏽‍💻 **Ada** | Dev |\n| 🤖 Scribe | Logger |',
      'agents/alejandro/charter.md': 'You design the system.',
      'agents/ada/charter.md': 'You write the code.',
    });
    const team = await discoverSquad(root);
    expect(team!.workers.map((w) => w.name)).toEqual(['Alejandro', 'Ada']);
    expect(team!.roster.map((m) => [m.name, m.slug, m.infrastructure])).toEqual([
      ['Alejandro', 'alejandro', false],
      ['Ada', 'ada', false],
      ['Scribe', 'scribe', true],
    ]);
    const { parseAssignments } = await import('../../src/reflection/assignments.js');
    const { assignments } = parseAssignments('@worker:alejandro\nSketch the modules.\n@end\n@worker:Ada\nBuild it.\n@end', team!.workers.map((w) => w.name));
    expect(assignments).toEqual([
      { worker: 'Alejandro', task: 'Sketch the modules.' },
      { worker: 'Ada', task: 'Build it.' },
    ]);
  });

  it('matches roster names with spaces and decoration by the rule of @worker: names (nameKey)', async () => {
    const { root } = squadRepo({
      'team.md': '# Crew\n## Members\n| Name | Role |\n|---|---|\n| 🔍 Code Reviewer | Reviewer |\n| 🧪 Test  Writer | Tests |\n| Code | Dev |',
      'agents/code-reviewer/charter.md': 'You review code.',
    });
    const team = await discoverSquad(root);
    const names = team!.workers.map((w) => w.name);
    expect(names).toEqual(['Code Reviewer', 'Test Writer', 'Code']);
    const { parseAssignments } = await import('../../src/reflection/assignments.js');
    const { nameKey } = await import('../../src/text/names.js');
    const plan = '@Worker:🔍 code reviewer\nReview it.\n@END\n@worker:Test Writer Test it.\n@worker:code Build it.';
    expect(parseAssignments(plan, names).assignments).toEqual([
      { worker: 'Code Reviewer', task: 'Review it.' },
      { worker: 'Test Writer', task: 'Test it.' },
      { worker: 'Code', task: 'Build it.' },
    ]);
    expect(team!.roster.every((m) => nameKey(m.name) === nameKey(`🔍 ${m.name.toUpperCase()}`))).toBe(true);
  });

  it('keeps members named in other scripts, and writes and reads them back', async () => {
    const { root } = squadRepo({
      'team.md': '# 团队\n## Members\n| Name | Role |\n|---|---|\n| 李明 | 负责人 |\n| Σωκράτης | Reviewer |',
      'agents/李明/charter.md': '你负责整个团队。',
    });
    const team = await discoverSquad(root);
    expect(team!.roster.map((m) => [m.name, m.slug])).toEqual([
      ['李明', '李明'],
      ['Σωκράτης', 'σωκρατης'],
    ]);
    expect(team!.workers[0]).toMatchObject({ name: '李明', role: '负责人', systemPrompt: '你负责整个团队。' });
    expect(team!.warnings).toEqual(['Σωκράτης has no charter (agents/σωκρατης/charter.md): using a generic prompt']);
    const out = tempRoot();
    const dir = await writeSquad(out, { name: '团队', mode: 'broadcast', workers: [{ name: '李明', systemPrompt: '你负责整个团队。' }, { name: 'Σωκράτης', systemPrompt: 'You question everything.' }] });
    expect(readdirSync(join(dir, 'agents')).sort()).toEqual(['σωκρατης', '李明'].sort());
    const again = await parseSquad(dir);
    expect(again!.workers.map((w) => [w.name, w.systemPrompt])).toEqual([
      ['李明', '你负责整个团队。'],
      ['Σωκράτης', 'You question everything.'],
    ]);
    expect(again!.warnings).toEqual([]);
  });
});

// Squad histories on the real folders of test/fixtures/squad (copied with
// their sources, see test/fixtures/SOURCES.md): each worker's history.md is
// part of its context, bounded and newest first; after a run, what it did is
// added in the file's own dated style (atomically), the oldest entries move
// to history-archive.md once the file passes 12 KiB, and a scribe records the
// run's decisions in decisions.md. Reading a folder back gives the same
// entries, and the new ones.
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter, type ScriptedRequest } from '../../src/adapters/scripted.js';
import { main } from '../../src/cli/main.js';
import { offlineTeam } from '../../src/cli/squad.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { fromPreset } from '../../src/squad/from-preset.js';
import { HISTORY_CAP, HISTORY_MAX_BYTES, addDecisionEntry, addHistoryEntry, archiveHistory, historyContext, parseHistory, type NewEntry } from '../../src/squad/history.js';
import { recordHistoryEntry } from '../../src/squad/memory.js';
import { parseSquad } from '../../src/squad/parse.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'squad');
const AT = Date.UTC(2026, 10, 27, 9, 30);
const entry = (title: string): NewEntry => ({ title, at: AT, fields: [{ key: 'Task', value: title }, { key: 'Outcome', value: 'Done.' }] });
const read = (path: string) => readFileSync(path, 'utf8');
const tempRoot = tempDirs('troupe-squad-history-');

/** Every history.md and history-archive.md of the fixtures. */
function histories(): string[] {
  const out: string[] = [];
  for (const repo of readdirSync(fixtures)) {
    for (const dir of ['.squad', '.ai-team']) {
      const agents = join(fixtures, repo, dir, 'agents');
      let names: string[] = [];
      try {
        names = readdirSync(agents);
      } catch {
        continue;
      }
      for (const name of names) for (const file of ['history.md']) if (readdirSync(join(agents, name)).includes(file)) out.push(join(agents, name, file));
    }
  }
  return out.sort();
}

/** A copy of a fixture repository in a temporary folder; its squad folder. */
function copyOf(repo: string, dir: '.squad' | '.ai-team'): string {
  const root = tempRoot();
  cpSync(join(fixtures, repo), root, { recursive: true });
  return join(root, dir);
}

/** The dated blocks of a history, as text. */
const datedBlocks = (text: string) => parseHistory(text).blocks.filter((b) => b.date !== undefined).map((b) => b.text.trimEnd());

describe('reading histories', () => {
  it('parses every real history.md into blocks that give its text back', () => {
    const files = histories();
    expect(files.length).toBe(21);
    for (const file of files) {
      const text = read(file).replace(/\r\n?/g, '\n').replace(/^\uFEFF/, '');
      const parsed = parseHistory(text);
      expect(parsed.head + parsed.blocks.map((b) => b.text).join('')).toBe(text);
    }
    const dallas = parseHistory(read(join(fixtures, 'Cabazure__Cabazure.Client/.squad/agents/dallas/history.md')));
    expect(dallas.blocks.filter((b) => b.date).map((b) => b.date)).toEqual(['2026-03-10', '2026-03-10', '2025-01-24', '2025-01-30', '2025-01-30', '2026-03-11', '2026-03-11', '2026-03-11', '2026-03-11']);
    // A dated entry keeps its own sub-headings.
    const hicks = parseHistory(read(join(fixtures, 'Azure-Samples__eShopLite/.squad/agents/hicks/history.md')));
    expect(hicks.blocks.find((b) => b.date)!.text).toContain('### Files Changed');
  });

  it('gives an agent its history bounded and newest first', () => {
    for (const file of histories()) {
      const { text } = historyContext(read(file));
      expect(text.length).toBeLessThanOrEqual(HISTORY_CAP);
      const dates = parseHistory(text).blocks.flatMap((b) => (b.date ? [b.date.slice(0, 10)] : []));
      expect([...dates].sort().reverse()).toEqual(dates);
    }
    const dallas = historyContext(read(join(fixtures, 'Cabazure__Cabazure.Client/.squad/agents/dallas/history.md')));
    expect(dallas.omitted).toBeGreaterThan(0);
    expect(dallas.text).toContain(`(${dallas.omitted} earlier entries omitted)`);
    expect(parseHistory(dallas.text).blocks.find((b) => b.date)!.heading).toBe('### 2026-03-11 - BC-03 (correct fix): HTTP/2 default in MessageRequestBuilder');
  });

  it('parseSquad gives each worker its history, and fromPreset puts it in the worker\'s prompt after its charter', async () => {
    const team = (await parseSquad(join(fixtures, 'Azure-Samples__eShopLite/.squad')))!;
    const hicks = team.workers.find((w) => w.name === 'Hicks')!;
    expect(hicks.history).toContain('## 2026-06-06 — Documentation Modernization (All Scenarios)');
    expect(team.workers.every((w) => w.history !== undefined)).toBe(true);
    const adapter = scriptedAdapter({ clock: new SimulatedClock(AT), fallback: offlineTeam(team.workers.map((w) => w.name)) });
    await run(fromPreset(team), 'Add product search', { adapter, clock: new SimulatedClock(AT) });
    const system = adapter.sessions.find((s) => s.agent === 'Hicks')!.system!;
    expect(system.indexOf('## Your history (history.md, newest first)')).toBeGreaterThan(system.indexOf(hicks.systemPrompt.slice(0, 40)));
    expect(system).toContain('Documentation Modernization (All Scenarios)');
  });
});

describe('adding to a history, in its own style', () => {
  const add = (path: string, title: string) => {
    const added = addHistoryEntry(read(join(fixtures, path)), entry(title));
    return added.split('\n').find((l) => l.includes(title))!;
  };

  it('makes the heading like the file\'s own dated headings', () => {
    expect(add('Cabazure__Cabazure.Client/.squad/agents/dallas/history.md', 'Add search')).toBe('### 2026-11-27 - Add search');
    expect(add('Cabazure__Cabazure.Client/.squad/agents/hudson/history.md', 'Add search')).toBe('### 2026-11-27: Add search');
    expect(add('Azure-Samples__eShopLite/.squad/agents/hicks/history.md', 'Add search')).toBe('## 2026-11-27 — Add search');
    expect(add('csharpfritz__SquadUI/.ai-team/agents/rusty/history.md', 'Add search')).toBe('### Add search (2026-11-27)');
    expect(add('Azure-Samples__eShopLite/.squad/agents/scribe/history.md', 'Add search')).toBe('### Session Log Entry: 2026-11-27T09:30:00Z — Add search');
    // No dated entry at all: squad's own form, at the end of its Learnings.
    const newt = addHistoryEntry(read(join(fixtures, 'Azure-Samples__eShopLite/.squad/agents/newt/history.md')), entry('Add search'));
    expect(newt.trimEnd().endsWith('### Add search (2026-11-27)\n- **Task:** Add search\n- **Outcome:** Done.')).toBe(true);
  });

  it('puts it where the file puts new entries, and keeps every other block as it was', () => {
    for (const file of histories()) {
      const before = read(file).replace(/\r\n?/g, '\n');
      const after = addHistoryEntry(before, entry('Add search'));
      const old = parseHistory(before).blocks.map((b) => b.text.trimEnd());
      // A fence a file leaves open at its end is closed before the new entry (Bishop's history does): the rest is unchanged.
      const now = parseHistory(after).blocks.map((b) => b.text.trimEnd().replace(/\n```$/, ''));
      expect(now.filter((b) => !b.includes('Add search'))).toEqual(old);
      expect(now.filter((b) => b.includes('Add search'))).toHaveLength(1);
    }
    // Squad appends: the new entry comes after the newest one.
    const hicks = addHistoryEntry(read(join(fixtures, 'Azure-Samples__eShopLite/.squad/agents/hicks/history.md')), entry('Add search'));
    expect(hicks.indexOf('## 2026-11-27 — Add search')).toBeGreaterThan(hicks.indexOf('## 2026-06-06 — Documentation Modernization'));
    expect(hicks.indexOf('## 2026-11-27 — Add search')).toBeLessThan(hicks.indexOf('## Team Update: .NET 10 Modernization Shipped'));
    // A file whose entries run newest first gets it first.
    const newestFirst = '# History\n\n## Log\n\n### 2026-02-01: Second\nb\n\n### 2026-01-01: First\na\n';
    expect(addHistoryEntry(newestFirst, entry('Third'))).toBe('# History\n\n## Log\n\n### 2026-11-27: Third\n- Task: Third\n- Outcome: Done.\n\n### 2026-02-01: Second\nb\n\n### 2026-01-01: First\na\n');
  });

  it('moves the oldest entries to the archive once the file passes 12 KiB, whole and unchanged', () => {
    const dallas = read(join(fixtures, 'Cabazure__Cabazure.Client/.squad/agents/dallas/history.md'));
    const added = addHistoryEntry(dallas, entry('Add search'));
    const { history, archive, moved } = archiveHistory(added, undefined);
    expect(Buffer.byteLength(history)).toBeLessThanOrEqual(HISTORY_MAX_BYTES);
    expect(moved.map((m) => m.date)).toEqual(['2026-03-10', '2025-01-24', '2025-01-30', '2025-01-30']);
    expect(archive.startsWith('# Project Context — Archive\n')).toBe(true);
    expect([...datedBlocks(history), ...datedBlocks(archive)].sort()).toEqual(datedBlocks(added).sort());
    // An existing archive keeps what it has; the moved entries go to its end.
    const basherArchive = read(join(fixtures, 'csharpfritz__SquadUI/.ai-team/agents/basher/history-archive.md'));
    const merged = archiveHistory(added, basherArchive);
    expect(merged.archive.startsWith(basherArchive.trimEnd())).toBe(true);
  });

  it('writes decisions at the end of decisions.md in its style', () => {
    const log = read(join(fixtures, 'csharpfritz__SquadUI/.ai-team/decisions.md'));
    const next = addDecisionEntry(log, { title: 'Use PostgreSQL', at: AT, fields: [{ key: 'By', value: 'Danny' }, { key: 'What', value: 'PostgreSQL for orders.' }] });
    expect(next.startsWith(log.trimEnd())).toBe(true);
    // Its last entries are separated by `---` rules: so is the new one.
    expect(next.slice(log.trimEnd().length)).toBe('\n\n---\n\n### 2026-11-27: Use PostgreSQL\n**By:** Danny  \n**What:** PostgreSQL for orders.\n');
    const plain = '# Decisions\n\n### 2026-01-01: One\nx\n';
    expect(addDecisionEntry(plain, { title: 'Two', at: AT, fields: [{ key: 'What', value: 'y' }] })).toBe(`${plain}\n### 2026-11-27: Two\n**What:** y\n`);
    const ruled = '# Decisions\n\n### 2026-01-01: One\nx\n\n---\n\n### 2026-01-02: Two\ny\n';
    expect(addDecisionEntry(ruled, { title: 'Three', at: AT, fields: [{ key: 'What', value: 'z' }] })).toBe(`${ruled}\n---\n\n### 2026-11-27: Three\n**What:** z\n`);
  });
});

describe('a squad team that remembers', () => {
  it('adds what each worker did to its history.md, archives past 12 KiB, and a folder read back gives the same entries', async () => {
    const dir = copyOf('Cabazure__Cabazure.Client', '.squad');
    const before = new Map<string, string>();
    for (const name of ['ripley', 'dallas', 'hudson', 'bishop']) before.set(name, read(join(dir, 'agents', name, 'history.md')));
    const team = (await parseSquad(dir))!;
    const workers = team.workers.map((w) => w.name);
    expect(workers).toEqual(['Ripley', 'Dallas', 'Hudson', 'Bishop']);
    const clock = new SimulatedClock(AT);
    const adapter = scriptedAdapter({ clock, fallback: offlineTeam(workers) });
    const events: TroupeEvent[] = [];
    const result = await run(fromPreset(team, { history: true }), 'Add retry support to the generated clients', { adapter, clock, onEvent: (e) => events.push(e) });
    expect(result.status).toBe('completed');

    const written = events.filter((e): e is TroupeEvent<'squad.history'> => e.type === 'squad.history');
    expect(written.map((e) => [e.worker, e.path])).toEqual([
      ['Ripley', 'agents/ripley/history.md'],
      ['Dallas', 'agents/dallas/history.md'],
      ['Hudson', 'agents/hudson/history.md'],
      ['Bishop', 'agents/bishop/history.md'],
    ]);
    expect(written.find((e) => e.worker === 'Dallas')!.archived).toBe(4);
    expect(written.find((e) => e.worker === 'Ripley')).toMatchObject({ heading: '### Add retry support to the generated clients (2026-11-27)', archived: 0 });

    for (const [name, old] of before) {
      const now = read(join(dir, 'agents', name, 'history.md'));
      const archive = name === 'dallas' ? read(join(dir, 'agents', name, 'history-archive.md')) : '';
      // Every entry there was is still there (in the history or its archive), unchanged; one more is added.
      expect([...datedBlocks(now), ...datedBlocks(archive)].filter((b) => !b.includes('Add retry support')).sort()).toEqual(datedBlocks(old).sort());
      const added = datedBlocks(now).filter((b) => b.includes('Add retry support'));
      expect(added).toHaveLength(1);
      expect(added[0]).toContain(result.runId);
      expect(Buffer.byteLength(now)).toBeLessThanOrEqual(Math.max(HISTORY_MAX_BYTES, Buffer.byteLength(old) + 600));
    }
    // Written atomically: no temporary file is left beside them.
    for (const name of before.keys()) expect(readdirSync(join(dir, 'agents', name)).filter((f) => f.startsWith('.tmp-'))).toEqual([]);

    // Read back: the same entries, the new one the newest.
    const again = (await parseSquad(dir))!;
    const ripley = again.workers.find((w) => w.name === 'Ripley')!.history!;
    expect(ripley.indexOf('Add retry support to the generated clients (2026-11-27)')).toBeLessThan(ripley.indexOf('PR #26 Description Rewrite (2026-03-11)'));
    const reparsed = parseHistory(read(join(dir, 'agents', 'ripley', 'history.md')));
    const writtenAgain = addHistoryEntry(before.get('ripley')!, { title: 'Add retry support to the generated clients', at: AT, fields: [] });
    expect(reparsed.blocks.map((b) => b.heading)).toEqual(parseHistory(writtenAgain).blocks.map((b) => b.heading));
  });

  it('with a scribe, records the run\'s decisions in decisions.md; read back, they are the newest shared context', async () => {
    const dir = copyOf('csharpfritz__SquadUI', '.ai-team');
    const decisionsBefore = read(join(dir, 'decisions.md'));
    const team = (await parseSquad(dir))!;
    const workers = team.workers.map((w) => w.name);
    const offline = offlineTeam(workers);
    const clock = new SimulatedClock(AT);
    const adapter = scriptedAdapter({
      clock,
      fallback: (r: ScriptedRequest) => (r.agent === 'Danny' && r.text.includes('ASSIGNED TASK') ? `Reviewed the plan.\nDECISION: Threads are kept per customer.` : offline(r)),
    });
    const events: TroupeEvent[] = [];
    await run(fromPreset(team, { history: true, scribe: true }), 'Plan the v2 memory feature', { adapter, clock, onEvent: (e) => events.push(e) });
    const decisions = read(join(dir, 'decisions.md'));
    expect(decisions.startsWith(decisionsBefore.trimEnd())).toBe(true);
    expect(decisions.slice(decisionsBefore.trimEnd().length)).toContain('### 2026-11-27: Threads are kept per customer.\n**By:** Danny  \n**What:** Threads are kept per customer.  \n**Why:** Run ');
    expect(events.filter((e) => e.type === 'squad.decision')).toHaveLength(1);
    const again = (await parseSquad(dir))!;
    expect(again.sharedContext).toContain('### 2026-11-27: Threads are kept per customer.');
    // Basher's archive keeps what it had.
    expect(read(join(dir, 'agents', 'basher', 'history-archive.md'))).toBe(read(join(fixtures, 'csharpfritz__SquadUI/.ai-team/agents/basher/history-archive.md')));
    expect(read(join(dir, 'agents', 'basher', 'history.md'))).toContain('Plan the v2 memory feature');
  });

  it('without DECISION lines the scribe records the run\'s answer; a preset not read from a folder is refused', async () => {
    const dir = copyOf('PureWeen__PolyPilot__TestData__squad-sample', '.squad');
    const team = (await parseSquad(dir))!;
    const clock = new SimulatedClock(AT);
    const adapter = scriptedAdapter({ clock, fallback: offlineTeam(team.workers.map((w) => w.name)) });
    const result = await run(fromPreset(team, { scribe: true }), 'Pick a logging library', { adapter, clock });
    const decisions = read(join(dir, 'decisions.md'));
    expect(decisions).toContain(`### 2026-11-27: Pick a logging library\n**By:** ${result.agent}  \n**What:** `);
    expect(() => fromPreset({ ...team, sourcePath: undefined } as never, { history: true })).toThrow(/not read from a squad folder/);
    expect(() => fromPreset(team, { history: { maxBytes: -1 } })).toThrow(/history/);
  });

  it('refuses a folder name that is a path', async () => {
    const dir = copyOf('Cabazure__Cabazure.Client', '.squad');
    await expect(recordHistoryEntry(dir, '../ripley', entry('x'))).rejects.toMatchObject({ code: 'unsafe_path' });
  });

  it('troupe squad run --history --scribe writes the folder it ran', async () => {
    const dir = copyOf('Cabazure__Cabazure.Client', '.squad');
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['squad', 'run', join(dir, '..'), 'Document the retry options', '--history', '--scribe', '--quiet'], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
    expect(err.join('\n')).toBe('');
    expect(code).toBe(0);
    expect(read(join(dir, 'agents', 'hudson', 'history.md'))).toContain('Document the retry options');
    // This log dates its entries after their title: so does the new one, at its end, where squad appends.
    expect(read(join(dir, 'decisions.md')).trimEnd()).toMatch(/\n### Document the retry options \(\d{4}-\d\d-\d\d\)\n\*\*By:\*\* [^\n]+\n\*\*What:\*\* [^\n]+\n\*\*Why:\*\* Run [^\n]+$/);
  });
});

import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/agents/load.js';
import { safeParseAgentFile } from '../../src/agents/parse.js';
import { TroupeError } from '../../src/core/errors.js';
import { parseTeamRegistry } from '../../src/persistence/team-registry.js';
import { parseAssignments } from '../../src/reflection/assignments.js';
import { parseEvaluation } from '../../src/reflection/evaluation.js';
import { parseSentinels, stripSentinels } from '../../src/reflection/sentinels.js';
import { splitEntries } from '../../src/squad/caps.js';
import { parseSquad } from '../../src/squad/parse.js';
import { parseTeamMd } from '../../src/squad/team-md.js';
import { fencedBlocks } from '../../src/text/fences.js';
import { safeFindJson } from '../../src/text/json.js';
import { tempDirs } from '../helpers/temp-dirs.js';

// Every fixture, read as it is and again with Windows line endings (and a BOM): the same result.
const root = join(import.meta.dirname, '..', 'fixtures');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');
const settle = <T>(read: () => T): unknown => {
  try {
    return { value: read() };
  } catch (error) {
    if (error instanceof TroupeError) return { error: error.code };
    throw error;
  }
};

/** The readers each fixture goes through, by where it lives and what it is. */
function readersOf(path: string): Record<string, (text: string) => unknown> {
  const rel = relative(root, path);
  const ext = extname(path);
  if (ext === '.json') {
    const readers: Record<string, (text: string) => unknown> = { 'JSON.parse': (t) => JSON.parse(t.replace(/^\uFEFF/, '')), safeFindJson: (t) => safeFindJson(t, { kind: 'any' }) };
    if (rel.includes('team-registry')) readers.parseTeamRegistry = (t) => settle(() => parseTeamRegistry(JSON.parse(t.replace(/^\uFEFF/, ''))));
    return readers;
  }
  if (ext === '.ai' || (ext === '.md' && (rel.startsWith('agents') || rel.startsWith('cli')))) return { safeParseAgentFile: (t) => safeParseAgentFile(t, { name: 'fixture', file: rel }) };
  if (ext === '.md' && rel.startsWith('reflection')) {
    return { parseSentinels, stripSentinels, parseEvaluation, parseAssignments: (t) => parseAssignments(t, ['Code Reviewer', 'Test Writer', 'Docs Writer']) };
  }
  if (ext === '.md') return { parseTeamMd, splitEntries, fencedBlocks };
  return { fencedBlocks };
}

describe('every fixture with CRLF endings', () => {
  const all = files(root);
  it('covers the fixtures', () => {
    expect(all.length).toBeGreaterThan(40);
  });
  for (const path of all) {
    const rel = relative(root, path);
    it(rel, () => {
      const text = readFileSync(path, 'utf8');
      for (const [name, read] of Object.entries(readersOf(path))) {
        const lf = settle(() => read(text));
        expect(settle(() => read(crlf(text))), `${name} on CRLF`).toEqual(lf);
        expect(settle(() => read(`\uFEFF${crlf(text)}`)), `${name} on BOM + CRLF`).toEqual(lf);
      }
    });
  }
});

describe('fixture folders with CRLF endings', () => {
  const dirs = tempDirs('troupe-crlf-');
  const convert = (from: string): string => {
    const to = dirs();
    cpSync(from, to, { recursive: true });
    for (const file of files(to)) writeFileSync(file, crlf(readFileSync(file, 'utf8')));
    return to;
  };

  it('agent folders load the same', async () => {
    for (const folder of ['agents/code-review', 'agents/claude-code', 'agents/copilot', 'agents/opencode', 'agents/ai-agent-team', 'cli/desk']) {
      const lf = await loadAgents(join(root, folder));
      expect(await loadAgents(convert(join(root, folder)))).toEqual(lf);
    }
  });

  it('squad folders read the same', async () => {
    for (const name of readdirSync(join(root, 'squad'))) {
      const repo = join(root, 'squad', name);
      const folder = readdirSync(repo, { withFileTypes: true }).find((e) => e.isDirectory())!.name;
      const lf = await parseSquad(join(repo, folder));
      const copied = await parseSquad(join(convert(repo), folder));
      expect(lf, name).not.toBeNull();
      expect({ ...copied, sourcePath: undefined }, name).toEqual({ ...lf, sourcePath: undefined });
    }
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/agents/load.js';
import { validateAgents } from '../../src/agents/validate.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'agents');
const dirs: string[] = [];
const tempDir = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-agents-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('loadAgents', () => {
  it('loads the real agent files without errors, unknown keys as warnings', async () => {
    const defs = await loadAgents(fixtures);
    expect(defs.map((d) => d.name)).toEqual(['code-review-discovery', 'code-review-security', 'code-review']);
    expect(defs[2]).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', tools: ['batch'], file: join('code-review', 'code-review.ai') });
    expect(defs[2]!.system).toMatch(/^You coordinate a multi-agent code review/);
    const { errors, warnings } = validateAgents(defs);
    expect(errors).toEqual([]);
    expect(warnings.map((w) => w.path?.[0])).toContain('maxToolTurns');
  });

  it('walks folders recursively in a deterministic order', async () => {
    const dir = tempDir({ 'b.md': '---\n---\nB', 'a/z.md': '---\n---\nZ', 'a/y.ai': '#!/bin/x\n---\n---\nY', 'notes.txt': 'skip' });
    expect((await loadAgents(dir)).map((d) => d.name)).toEqual(['y', 'z', 'b']);
  });

  it('names every file that failed', async () => {
    const dir = tempDir({ 'ok.md': '---\n---\nfine', 'bad.md': '---\ntemperature: hot\n---\n', 'evil.md': '---js\n1\n---\n' });
    const error = (await loadAgents(dir).catch((e: unknown) => e)) as Error & { details: { files: string[] } };
    expect(error.message).toContain('bad.md: `temperature`');
    expect(error.message).toContain('evil.md: Front matter in "js" is not allowed');
    expect(error.details.files).toEqual(['bad.md', 'evil.md']);
  });

  it('refuses a file over 1 MB before reading it', async () => {
    const dir = tempDir({ 'big.md': `---\n---\n${'x'.repeat(1024 * 1024 + 1)}` });
    await expect(loadAgents(dir)).rejects.toMatchObject({ code: 'parse_error', message: expect.stringContaining('big.md: larger than 1 MB') });
  });

  it('reports a missing folder clearly', async () => {
    await expect(loadAgents(join(tmpdir(), 'no-such-troupe-dir'))).rejects.toThrow(/Cannot read the agent folder/);
  });
});

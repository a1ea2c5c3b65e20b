import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTroupeError } from '../../src/core/errors.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import type { Store } from '../../src/core/store.js';
import { discoverSquad } from '../../src/squad/parse.js';
import { parseTeamPreset, safeParseTeamPreset, type TeamPreset } from '../../src/squad/preset.js';
import { builtInPresets, loadUserPresets, mergePresets, saveTeamAsPreset } from '../../src/squad/presets.js';

/** A tiny store over a Map, enough of the contract for presets (get, set, list). */
function mapStore(): Store & { docs: Map<string, unknown> } {
  const docs = new Map<string, unknown>();
  return {
    docs,
    get: async (key) => structuredClone(docs.get(key)),
    set: async (key, value) => void docs.set(key, JSON.parse(JSON.stringify(value))),
    delete: async (key) => docs.delete(key),
    list: async (prefix) => [...docs.keys()].filter((k) => k.startsWith(prefix)).sort(),
    append: async () => undefined,
    read: async () => ({ records: [], next: 0 }),
  };
}

const tempRoot = tempDirs('troupe-preset-');

const team = (name: string, prompt = 'You are a helper.'): TeamPreset => ({
  name,
  mode: 'sequential',
  workers: [{ name: 'w', systemPrompt: prompt }],
  source: 'user',
});

describe('presets', () => {
  it('ships four valid built-in presets', () => {
    const presets = builtInPresets();
    expect(presets.map((p) => p.name)).toEqual(['code-review', 'implement-and-challenge', 'research-and-summarise', 'bug-hunt']);
    for (const preset of presets) {
      expect(preset.source).toBe('builtin');
      expect(parseTeamPreset(preset, 'builtin')).toEqual(preset);
    }
    // Fresh copies: changing one does not change the next.
    presets[0]?.workers.pop();
    expect(builtInPresets()[0]?.workers).toHaveLength(3);
  });

  it('merges by name: repository over user over built-in, each with its source', () => {
    const merged = mergePresets(
      [{ ...team('code-review', 'builtin'), source: 'builtin' }, { ...team('bug-hunt', 'builtin'), source: 'builtin' }],
      [team('Code Review', 'user'), team('mine', 'user')],
      [{ ...team('code review', 'repo'), source: 'repo' }, { ...team('bug-hunt', 'repo'), source: 'user' }],
    );
    expect(merged.map((p) => [p.name, p.source, p.workers[0]?.systemPrompt])).toEqual([
      ['code review', 'repo', 'repo'],
      ['bug-hunt', 'repo', 'repo'],
      ['mine', 'user', 'user'],
    ]);
  });

  it('saves a team as a user preset and loads it back', async () => {
    const store = mapStore();
    const saved = await saveTeamAsPreset({ name: 'My Team', mode: 'broadcast', workers: [{ name: 'a', systemPrompt: 'You are A.' }] }, { store });
    expect(saved.key).toBe('presets/my-team');
    expect(store.docs.get('presets/my-team')).toEqual({ version: 1, preset: { name: 'My Team', mode: 'broadcast', workers: [{ name: 'a', systemPrompt: 'You are A.' }], source: 'user' } });
    const loaded = await loadUserPresets(store);
    expect(loaded).toEqual([saved.preset]);
    expect(loaded[0]?.source).toBe('user');
  });

  it('writes the squad folder too when given a repository root', async () => {
    const root = tempRoot();
    const store = mapStore();
    const [review] = builtInPresets();
    if (!review) throw new Error('no built-in');
    const saved = await saveTeamAsPreset(review, { store, repoRoot: root });
    expect(saved.squadDir).toBe(join(root, '.squad'));
    const repo = await discoverSquad(root);
    expect(repo?.workers).toEqual(review.workers);
    expect(repo?.mode).toBe('broadcast');
    const merged = mergePresets(builtInPresets(), await loadUserPresets(store), repo ? [repo] : []);
    expect(merged.find((p) => p.name === 'code-review')?.source).toBe('repo');
  });

  it('rejects invalid presets with typed errors', async () => {
    const store = mapStore();
    await expect(saveTeamAsPreset({ name: 'x', mode: 'broadcast', workers: [] }, { store })).rejects.toSatisfy((e: unknown) =>
      isTroupeError(e, 'invalid_option'),
    );
    expect(store.docs.size).toBe(0);
    expect(safeParseTeamPreset({ name: 'x', mode: 'loop', workers: [{ name: 'a', systemPrompt: '' }] }, 'user')).toMatchObject({
      success: false,
      issues: [{ path: 'mode' }],
    });
    expect(parseTeamPreset({ name: 'x', workers: [{ name: 'a', systemPrompt: '' }] }, 'user').mode).toBe('orchestrator-reflect');
    await store.set('presets/future', { version: 2, preset: { name: 'future', workers: [{ name: 'a', systemPrompt: '' }] } });
    await expect(loadUserPresets(store)).rejects.toThrow(/schema version 2/);
    await store.delete('presets/future');
    await store.set('presets/broken', { version: 1, preset: { name: 'broken' } });
    await expect(loadUserPresets(store)).rejects.toSatisfy(
      (e: unknown) => isTroupeError(e, 'parse_error') && (e as Error).message.includes('presets/broken'),
    );
  });
});

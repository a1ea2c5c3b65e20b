/**
 * `workspaceSuite`: the conformance suite every workspace strategy must pass.
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { WorkspaceChunk, WorkspaceStrategy } from '../workspaces/types.js';
import { anything, boolean, defineOptions } from '../core/options.js';
import { expect } from './expect.js';
import { resolveRunner, type SuiteRunner, type SuiteTestContext } from './runner.js';

/** A strategy and a fresh base directory to try it on. */
export interface WorkspaceFixture {
  strategy: WorkspaceStrategy;
  /** A fresh base directory holding a committed file `README.md` (a git repository for git strategies). */
  baseDir: string;
  /** Remove the base directory and anything else the fixture made. */
  close?: () => Promise<void> | void;
}

/** Options of {@link workspaceSuite}. */
export interface WorkspaceSuiteOptions {
  /** The strategy is read-only: skip the tests that write (default false). */
  readOnly?: boolean;
  /** Workspaces are separate directories whose changes reach the base only through `merge` (default false). */
  isolated?: boolean;
  /** The test runner's `describe` and `it` (vitest's or `node:test`'s). Default: global `describe` and `it`. */
  runner?: SuiteRunner;
}

const workspaceSuiteOptions = defineOptions<WorkspaceSuiteOptions>('workspaceSuite', { readOnly: boolean, isolated: boolean, runner: anything });

/**
 * Register the conformance tests for a workspace strategy with your test
 * runner: availability, prepare, write and merge, nothing to merge,
 * idempotent cleanup, a cancelled prepare, hostile chunk ids, concurrent
 * chunks. Each test closes its fixture when it ends.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or 'node:test'
 * workspaceSuite('my strategy', async () => ({ strategy: myStrategy(), baseDir: await makeRepo() }), { isolated: true, runner: { describe, it } });
 * ```
 */
export function workspaceSuite(
  name: string,
  factory: () => WorkspaceFixture | Promise<WorkspaceFixture>,
  options: WorkspaceSuiteOptions = {},
): void {
  workspaceSuiteOptions.check(options);
  const runner = resolveRunner('workspaceSuite', options.runner);
  const { describe } = runner;
  describe(`workspace conformance: ${name}`, () => {
    const fixtures: WorkspaceFixture[] = [];
    const setup = async () => {
      const fixture = await factory();
      fixtures.push(fixture);
      return fixture;
    };
    // Every test closes the fixtures it made, whatever the runner (no afterEach needed).
    const it = (title: string, fn: (t: SuiteTestContext) => Promise<void>) =>
      runner.it(title, async (t) => {
        try {
          await fn(t);
        } finally {
          for (const fixture of fixtures.splice(0)) await fixture.close?.();
        }
      });

    basicCases(setup, it, options);
    safetyCases(setup, it, options);
  });
}

/** A test of the workspace suite, which closes the fixtures it made. */
type WorkspaceIt = (title: string, fn: (t: SuiteTestContext) => Promise<void>) => void;

/** Cases of {@link workspaceSuite}. */
function basicCases(setup: () => Promise<WorkspaceFixture>, it: WorkspaceIt, options: WorkspaceSuiteOptions): void {
  it('is available in its base directory', async () => {
    const { strategy, baseDir } = await setup();
    expect(await strategy.isAvailable(baseDir)).toBe(true);
  });

  it('prepares an existing directory for the chunk', async () => {
    const { strategy, baseDir } = await setup();
    const ws = await strategy.prepare({ id: 'first', title: 'First', baseDir });
    try {
      expect(ws.chunkId).toBe('first');
      expect(typeof ws.kind).toBe('string');
      expect(isAbsolute(ws.path)).toBe(true);
      expect(existsSync(join(ws.path, 'README.md'))).toBe(true);
      if (options.isolated) expect(ws.path).not.toBe(ws.baseDir);
    } finally {
      await strategy.cleanup(ws);
    }
  });

  it('brings a change written in the workspace into the base directory', async (t) => {
    if (options.readOnly) return t.skip();
    const { strategy, baseDir } = await setup();
    const ws = await strategy.prepare({ id: 'writer', title: 'Writer', workingScope: ['notes.txt'], baseDir });
    try {
      await writeFile(join(ws.path, 'notes.txt'), 'hello\n');
      if (options.isolated) expect(existsSync(join(baseDir, 'notes.txt'))).toBe(false);
      if (strategy.changes) expect((await strategy.changes(ws)).files.map((f) => [f.path, f.status])).toEqual([['notes.txt', 'added']]);
      const result = await strategy.merge(ws);
      expect(result.conflicts).toEqual([]);
      expect(result.status).toBe(options.isolated ? 'merged' : 'nothing-to-merge');
      expect(await readFile(join(baseDir, 'notes.txt'), 'utf8')).toBe('hello\n');
    } finally {
      await strategy.cleanup(ws);
    }
  });

  it('reports nothing to merge when nothing changed', async () => {
    const { strategy, baseDir } = await setup();
    const ws = await strategy.prepare({ id: 'idle', title: 'Idle', baseDir });
    try {
      if (strategy.changes) expect(await strategy.changes(ws)).toEqual({ files: [] });
      expect(await strategy.merge(ws)).toEqual({ status: 'nothing-to-merge', conflicts: [] });
    } finally {
      await strategy.cleanup(ws);
    }
  });

  it('cleans up idempotently', async () => {
    const { strategy, baseDir } = await setup();
    const ws = await strategy.prepare({ id: 'twice', title: 'Twice', baseDir });
    await strategy.cleanup(ws);
    await strategy.cleanup(ws);
    if (ws.path !== ws.baseDir) expect(existsSync(ws.path)).toBe(false);
    expect(existsSync(join(baseDir, 'README.md'))).toBe(true);
  });
}

/** Cases of {@link workspaceSuite}. */
function safetyCases(setup: () => Promise<WorkspaceFixture>, it: WorkspaceIt, options: WorkspaceSuiteOptions): void {
  it('rejects a chunk without an id or a base directory, with a ConfigurationError', async () => {
    const { strategy, baseDir } = await setup();
    for (const chunk of [{ id: 'no-base', title: 'No base' }, { id: 'empty-base', title: 'Empty base', baseDir: '' }, { id: '', title: 'No id', baseDir }]) {
      await expect(strategy.prepare(chunk as WorkspaceChunk)).rejects.toMatchObject({ name: 'ConfigurationError', code: 'invalid_option' });
    }
  });

  it('rejects a prepare whose signal has aborted', async () => {
    const { strategy, baseDir } = await setup();
    const controller = new AbortController();
    controller.abort();
    await expect(strategy.prepare({ id: 'cancelled', title: 'Cancelled', baseDir }, { signal: controller.signal })).rejects.toMatchObject({
      code: 'cancelled',
    });
    // Nothing is held: the same chunk can be prepared again.
    const ws = await strategy.prepare({ id: 'cancelled', title: 'Cancelled', baseDir });
    await strategy.cleanup(ws);
  });

  it('keeps hostile chunk ids and titles harmless', async () => {
    const { strategy, baseDir } = await setup();
    const hostile = ['x; rm -rf /', '--upload-pack=touch pwned', '../../etc', '-b', '$(touch pwned)'];
    for (const id of hostile) {
      const ws = await strategy.prepare({ id, planId: id, title: id, baseDir });
      try {
        expect(ws.chunkId).toBe(id);
        expect(ws.path.split(/[\\/]/)).not.toContain('..');
        if (ws.branch !== undefined) expect(ws.branch.startsWith('-')).toBe(false);
        if (!options.readOnly) await writeFile(join(ws.path, 'hostile.txt'), id);
        const merged = await strategy.merge(ws);
        expect(merged.conflicts).toEqual([]);
      } finally {
        await strategy.cleanup(ws);
      }
    }
    expect(existsSync(join(baseDir, 'pwned'))).toBe(false);
    expect(existsSync(join(process.cwd(), 'pwned'))).toBe(false);
  });

  it('prepares concurrent chunks with disjoint scopes', async () => {
    const { strategy, baseDir } = await setup();
    const [a, b] = await Promise.all([
      strategy.prepare({ id: 'a', title: 'A', workingScope: ['a/**'], baseDir }),
      strategy.prepare({ id: 'b', title: 'B', workingScope: ['b/**'], baseDir }),
    ]);
    await Promise.all([strategy.cleanup(a), strategy.cleanup(b)]);
    expect(a.chunkId).toBe('a');
    expect(b.chunkId).toBe('b');
  });
}

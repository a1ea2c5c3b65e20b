import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withFallback, type WorkspaceFallbackWarning } from '../../src/workspaces/fallback.js';
import { fileLocking } from '../../src/workspaces/file-locking.js';
import { gitWorktree } from '../../src/workspaces/git-worktree.js';
import { inMemory } from '../../src/workspaces/in-memory.js';
import { makeFolder, makeRepo } from '../helpers/git-repo.js';

const disposers: Array<() => void> = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

describe('withFallback', () => {
  it('uses the fallback outside a git repository and warns once per directory', async () => {
    const plain = makeFolder();
    const { root, dispose } = makeRepo();
    disposers.push(plain.dispose, dispose);
    const warnings: WorkspaceFallbackWarning[] = [];
    const strategy = withFallback(gitWorktree({ root }), fileLocking({ lockDir: join(root, 'locks') }), {
      onWarning: (w) => warnings.push(w),
    });
    const a = await strategy.prepare({ id: 'a', title: 'A', workingScope: ['a.txt'], baseDir: plain.dir });
    const b = await strategy.prepare({ id: 'b', title: 'B', workingScope: ['b.txt'], baseDir: plain.dir });
    expect(a.kind).toBe('file-locking');
    expect(a.path).toBe(plain.dir);
    expect(warnings).toEqual([
      {
        message: `Workspace strategy git-worktree is not available in ${plain.dir}; using file-locking instead`,
        primary: 'git-worktree',
        fallback: 'file-locking',
        baseDir: plain.dir,
      },
    ]);
    expect(await strategy.merge(a)).toEqual({ status: 'nothing-to-merge', conflicts: [] });
    await strategy.cleanup(a);
    await strategy.cleanup(b);
  });

  it('uses the fallback when there is no git binary', async () => {
    const { repo, root, dispose } = makeRepo();
    disposers.push(dispose);
    const warnings: WorkspaceFallbackWarning[] = [];
    const strategy = withFallback(gitWorktree({ root, git: join(root, 'no-such-git') }), inMemory(), {
      onWarning: (w) => warnings.push(w),
    });
    const ws = await strategy.prepare({ id: 'a', title: 'A', baseDir: repo });
    expect(ws).toMatchObject({ kind: 'in-memory', path: repo });
    expect(warnings).toHaveLength(1);
    await strategy.cleanup(ws);
  });

  it('uses the primary strategy in a repository, without a warning', async () => {
    const { repo, root, dispose } = makeRepo();
    disposers.push(dispose);
    const warnings: WorkspaceFallbackWarning[] = [];
    const strategy = withFallback(gitWorktree({ root }), fileLocking({ crossProcess: false }), { onWarning: (w) => warnings.push(w) });
    expect(strategy.kind).toBe('git-worktree');
    expect(await strategy.isAvailable(repo)).toBe(true);
    const ws = await strategy.prepare({ id: 'a', title: 'A', baseDir: repo });
    expect(ws.kind).toBe('git-worktree');
    await strategy.cleanup(ws);
    expect(existsSync(ws.path)).toBe(false);
    expect(warnings).toEqual([]);
  });
});

describe('inMemory', () => {
  it('hands out the base directory and never merges', async () => {
    const plain = makeFolder();
    disposers.push(plain.dispose);
    const strategy = inMemory();
    const [a, b] = await Promise.all([
      strategy.prepare({ id: 'a', title: 'A', workingScope: ['**'], baseDir: plain.dir }),
      strategy.prepare({ id: 'b', title: 'B', workingScope: ['**'], baseDir: plain.dir }),
    ]);
    expect([a.path, b.path]).toEqual([plain.dir, plain.dir]);
    expect(await strategy.merge(a)).toEqual({ status: 'nothing-to-merge', conflicts: [] });
    expect(await strategy.isAvailable(join(plain.dir, 'missing'))).toBe(false);
  });
});

describe('withFallback in a plan', () => {
  it('executePlan emits workspace.fallback when the fallback strategy is used', async () => {
    const { executePlan } = await import('../../src/plan/engine/execute.js');
    const plain = makeFolder();
    const { root, dispose } = makeRepo();
    disposers.push(plain.dispose, dispose);
    const strategy = withFallback(gitWorktree({ root }), inMemory());
    const events: unknown[] = [];
    const plan = {
      planSummary: 'one chunk',
      chunks: [{ sequenceIndex: 0, title: 'Read', prompt: 'Read the files and report.', dependsOnIndexes: [], complexity: 'Low' as const, role: 'Generic' as const }],
    };
    const outcome = await executePlan(plan, {
      workspace: strategy,
      baseDir: plain.dir,
      runChunk: async ({ workspace }) => `read in ${workspace.kind}`,
      onEvent: (e) => {
        if (e.type === 'workspace.fallback') events.push(e);
      },
    });
    expect(outcome.results[0]!.output).toBe('read in in-memory');
    expect(events).toEqual([expect.objectContaining({ primary: 'git-worktree', fallback: 'in-memory', baseDir: plain.dir })]);
  });
});

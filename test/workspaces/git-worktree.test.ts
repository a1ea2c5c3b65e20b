import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gitWorktree } from '../../src/workspaces/git-worktree.js';
import { KeyedSerialQueue, sanitizeName } from '../../src/workspaces/git.js';
import { git, makeFolder, makeRepo } from '../helpers/git-repo.js';

const disposers: Array<() => void> = [];
afterEach(() => {
  vi.unstubAllEnvs();
  for (const dispose of disposers.splice(0)) dispose();
});

function repo() {
  const r = makeRepo();
  disposers.push(r.dispose);
  return r;
}

function branches(dir: string): string[] {
  return git(dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
}

function worktrees(dir: string): string[] {
  return git(dir, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

describe('gitWorktree', () => {
  it('creates branch troupe/<planId>/<chunkId> in a worktree under the root', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const ws = await strategy.prepare({ id: 'parser', planId: 'p1', title: 'Parser', baseDir: dir });
    expect(ws.branch).toBe('troupe/p1/parser');
    expect(ws.path.startsWith(root)).toBe(true);
    expect(branches(dir)).toContain('troupe/p1/parser');
    expect(worktrees(dir)).toContain(ws.path);
    await strategy.cleanup(ws);
    expect(branches(dir)).toEqual(['main']);
    expect(worktrees(dir)).toEqual([dir]);
  });

  it('merges two chunks that edited different files in parallel', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const [a, b] = await Promise.all([
      strategy.prepare({ id: 'a', planId: 'p', title: 'A', baseDir: dir }),
      strategy.prepare({ id: 'b', planId: 'p', title: 'B', baseDir: dir }),
    ]);
    await Promise.all([writeFile(join(a.path, 'a.txt'), 'from a\n'), writeFile(join(b.path, 'b.txt'), 'from b\n')]);
    const results = await Promise.all([strategy.merge(a), strategy.merge(b)]);
    expect(results).toEqual([
      { status: 'merged', conflicts: [] },
      { status: 'merged', conflicts: [] },
    ]);
    await Promise.all([strategy.cleanup(a), strategy.cleanup(b)]);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('from a\n');
    expect(await readFile(join(dir, 'b.txt'), 'utf8')).toBe('from b\n');
    // Two --no-ff merge commits on main.
    expect(git(dir, 'log', '--merges', '--format=%s').trim().split('\n')).toEqual(['Merge troupe/p/b', 'Merge troupe/p/a']);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(branches(dir)).toEqual(['main']);
  });

  it('reports a conflict on the same line, aborts the merge and leaves the base clean', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const a = await strategy.prepare({ id: 'a', title: 'A', baseDir: dir });
    const b = await strategy.prepare({ id: 'b', title: 'B', baseDir: dir });
    await writeFile(join(a.path, 'app.txt'), 'line 1\nline two (a)\nline 3\n');
    await writeFile(join(b.path, 'app.txt'), 'line 1\nline 2 (b)\nline 3\n');
    expect(await strategy.merge(a)).toEqual({ status: 'merged', conflicts: [] });
    const head = git(dir, 'rev-parse', 'HEAD');
    expect(await strategy.merge(b)).toEqual({ status: 'conflict', conflicts: ['app.txt'] });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(existsSync(join(dir, '.git', 'MERGE_HEAD'))).toBe(false);
    expect(await readFile(join(dir, 'app.txt'), 'utf8')).toBe('line 1\nline two (a)\nline 3\n');
    await strategy.cleanup(a);
    await strategy.cleanup(b);
    expect(branches(dir)).toEqual(['main']);
  });

  it('commits the worker\'s changes even where git has no identity configured', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const ws = await strategy.prepare({ id: 'anon', title: 'Anon', baseDir: dir });
    await writeFile(join(ws.path, 'new.txt'), 'x\n');
    // No global or system configuration: the strategy passes its own identity.
    vi.stubEnv('GIT_CONFIG_GLOBAL', '/dev/null');
    vi.stubEnv('GIT_CONFIG_NOSYSTEM', '1');
    vi.stubEnv('GIT_AUTHOR_NAME', undefined);
    vi.stubEnv('GIT_AUTHOR_EMAIL', undefined);
    vi.stubEnv('GIT_COMMITTER_NAME', undefined);
    vi.stubEnv('GIT_COMMITTER_EMAIL', undefined);
    vi.stubEnv('EMAIL', undefined);
    const result = await strategy.merge(ws);
    expect(result.status).toBe('merged');
    expect(git(dir, 'log', '-1', '--format=%an', 'HEAD^2').trim()).toBe('troupe');
    await strategy.cleanup(ws);
  });

  it('removes the worktree and branch when a chunk is cancelled mid-work', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const controller = new AbortController();
    const ws = await strategy.prepare({ id: 'slow', title: 'Slow', baseDir: dir }, { signal: controller.signal });
    await writeFile(join(ws.path, 'half.txt'), 'half done');
    controller.abort();
    // The executor always cleans up, also after a cancellation.
    await expect(strategy.merge(ws, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
    await strategy.cleanup(ws);
    expect(existsSync(ws.path)).toBe(false);
    expect(branches(dir)).toEqual(['main']);
    expect(worktrees(dir)).toEqual([dir]);
    expect(existsSync(join(dir, 'half.txt'))).toBe(false);
  });

  it('cancels a prepare that waits behind other git commands and leaves nothing', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const controller = new AbortController();
    const first = strategy.prepare({ id: 'first', title: 'First', baseDir: dir });
    const second = strategy.prepare({ id: 'second', title: 'Second', baseDir: dir }, { signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'cancelled' });
    await strategy.cleanup(await first);
    expect(branches(dir)).toEqual(['main']);
    expect(worktrees(dir)).toEqual([dir]);
  });

  it('keeps hostile ids harmless: no command runs, nothing lands outside the root', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const hostile = ['x; rm -rf /', '--upload-pack=touch pwned', '../../etc', '-c', 'a\nb', '.lock', 'ref@{1}'];
    const prepared = [];
    for (const id of hostile) prepared.push(await strategy.prepare({ id, planId: '--plan', title: id, baseDir: dir }));
    for (const ws of prepared) {
      expect(ws.path.startsWith(root + '/')).toBe(true);
      expect(ws.path.split('/')).not.toContain('..');
      expect(ws.branch).toMatch(/^troupe\/[A-Za-z0-9][A-Za-z0-9_-]*\/[A-Za-z0-9][A-Za-z0-9_-]*$/);
    }
    expect(new Set(prepared.map((w) => w.branch)).size).toBe(hostile.length);
    for (const ws of prepared) await strategy.cleanup(ws);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(existsSync(join(root, 'pwned'))).toBe(false);
    expect(existsSync('pwned')).toBe(false);
    expect(branches(dir)).toEqual(['main']);
  });

  it('sanitises names to a safe alphabet that never starts with a dash', () => {
    for (const raw of ['--upload-pack=x', '-', '', '../..', 'ok-name', 'ünïcode']) {
      const name = sanitizeName(raw);
      expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
    }
    expect(sanitizeName('ok-name')).toBe('ok-name');
    expect(sanitizeName('a b')).not.toBe(sanitizeName('a-b'));
  });

  it('cleanupStale removes the worktrees and branches a crashed run left', async () => {
    const { repo: dir, root } = repo();
    const crashed = gitWorktree({ root });
    const ws = await crashed.prepare({ id: 'left', planId: 'old', title: 'Left behind', baseDir: dir });
    git(dir, 'branch', 'troupe/old/orphan'); // a branch whose worktree is already gone
    git(dir, 'branch', 'feature'); // not ours: kept
    const fresh = gitWorktree({ root });
    const keep = await fresh.prepare({ id: 'live', planId: 'new', title: 'Live', baseDir: dir });
    const removed = await fresh.cleanupStale(dir);
    expect(removed.worktrees).toEqual([ws.path]);
    expect(removed.branches.sort()).toEqual(['troupe/old/left', 'troupe/old/orphan']);
    expect(existsSync(ws.path)).toBe(false);
    expect(branches(dir)).toEqual(['feature', 'main', 'troupe/new/live']);
    await expect(fresh.prepare({ id: 'live', planId: 'new', title: 'Again', baseDir: dir })).rejects.toThrow(/already exists/);
    await fresh.cleanup(keep);
    expect(await fresh.cleanupStale(dir)).toEqual({ worktrees: [], branches: [] });
  });

  it('is unavailable outside a repository, in a repository without commits, or without git', async () => {
    const plain = makeFolder();
    disposers.push(plain.dispose);
    expect(await gitWorktree().isAvailable(plain.dir)).toBe(false);
    execFileSync('git', ['init', '--quiet'], { cwd: plain.dir });
    expect(await gitWorktree().isAvailable(plain.dir)).toBe(false);
    const { repo: dir } = repo();
    expect(await gitWorktree().isAvailable(dir)).toBe(true);
    expect(await gitWorktree({ git: '/nonexistent/git' }).isAvailable(dir)).toBe(false);
  });

  it('refuses a root inside the repository and bad options', async () => {
    const { repo: dir } = repo();
    await expect(gitWorktree({ root: join(dir, 'wt') }).prepare({ id: 'a', title: 'A', baseDir: dir })).rejects.toMatchObject({
      code: 'invalid_option',
    });
    expect(() => gitWorktree({ root: '' })).toThrow(/`root`/);
    expect(() => gitWorktree({ baseBranch: '--evil' })).toThrow(/`baseBranch`/);
    expect(readdirSync(dir).sort()).toEqual(['.git', 'README.md', 'app.txt']);
  });

  it('refuses to merge into a base with uncommitted changes, without touching them', async () => {
    const { repo: dir, root } = repo();
    const strategy = gitWorktree({ root });
    const ws = await strategy.prepare({ id: 'a', title: 'A', baseDir: dir });
    await writeFile(join(ws.path, 'a.txt'), 'a\n');
    writeFileSync(join(dir, 'README.md'), 'local edit\n');
    await expect(strategy.merge(ws)).rejects.toMatchObject({ code: 'workspace_error' });
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('local edit\n');
    await strategy.cleanup(ws);
  });
});

describe('KeyedSerialQueue', () => {
  it('runs tasks of one key in order, drops a task cancelled while waiting, lets a started task finish', async () => {
    const queue = new KeyedSerialQueue();
    const order: string[] = [];
    let finishFirst = () => {};
    const first = queue.run('repo', () => new Promise<string>((r) => (finishFirst = () => r('first'))).then((v) => (order.push(v), v)));
    const controller = new AbortController();
    const dropped = queue.run('repo', async () => order.push('dropped'), controller.signal);
    const third = queue.run('repo', async () => (order.push('third'), 'third'));
    const other = queue.run('other-repo', async () => (order.push('other'), 'other'));
    await other;
    controller.abort();
    await expect(dropped).rejects.toMatchObject({ code: 'cancelled' });
    const running = new AbortController();
    const late = queue.run('late', async () => {
      running.abort();
      await new Promise((r) => setImmediate(r));
      return 'finished';
    }, running.signal);
    finishFirst();
    expect(await first).toBe('first');
    expect(await third).toBe('third');
    expect(await late).toBe('finished');
    expect(order).toEqual(['other', 'first', 'third']);
  });
});

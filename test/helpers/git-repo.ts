import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Run git in `cwd` with a fixed identity (CI has none). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@localhost', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A fresh temporary folder (real path). */
export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** A throw-away repository on branch `main` with one commit holding README.md and app.txt, plus a worktree root beside it. */
export function makeRepo(): { repo: string; root: string; dispose: () => void } {
  const base = tempDir('troupe-test-');
  const repo = join(base, 'repo');
  const root = join(base, 'worktrees');
  git(base, 'init', '--quiet', '--initial-branch=main', repo);
  writeFileSync(join(repo, 'README.md'), '# test\n');
  writeFileSync(join(repo, 'app.txt'), 'line 1\nline 2\nline 3\n');
  git(repo, 'add', '--all');
  git(repo, 'commit', '--quiet', '-m', 'init');
  return { repo, root, dispose: () => rmSync(base, { recursive: true, force: true }) };
}

/** A plain folder (not a repository) holding README.md. */
export function makeFolder(): { dir: string; dispose: () => void } {
  const dir = tempDir('troupe-plain-');
  writeFileSync(join(dir, 'README.md'), '# plain\n');
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

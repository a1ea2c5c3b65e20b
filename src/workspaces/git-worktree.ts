/**
 * The git worktree strategy: each chunk works on its own branch
 * `troupe/<planId>/<chunkId>` in its own worktree outside the repository;
 * `merge` commits the worker's changes and merges them into the base branch
 * with `--no-ff`; a conflict is aborted and reported.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, WorkspaceError, describeValue } from '../core/errors.js';
import { GIT_IDENTITY, KeyedSerialQueue, mustGit, pathKey, runGit, sanitizeName } from './git.js';
import { expectChunk } from './chunk.js';
import { MAX_PATCH_CHARS, type FileChange, type MergeResult, type Workspace, type WorkspaceCallOptions, type WorkspaceChanges, type WorkspaceChunk, type WorkspaceStrategy } from './types.js';
import { anything, defineOptions } from '../core/options.js';

/** Options of {@link gitWorktree}. */
export interface GitWorktreeOptions {
  /** Folder that holds the worktrees; must lie outside the repository. Default: `<os tmpdir>/troupe-worktrees`. */
  root?: string;
  /** Branch to start from and merge into. Default: the branch checked out in the base directory. */
  baseBranch?: string;
  /** The git binary. Default: `git` (looked up on `PATH`). */
  git?: string;
  /** Plan id for chunks that carry none. Default: a random id per strategy instance. */
  planId?: string;
}

/** What {@link GitWorktreeStrategy.cleanupStale} removed. */
export interface StaleCleanupResult {
  /** Worktree folders removed. */
  worktrees: string[];
  /** `troupe/` branches deleted. */
  branches: string[];
}

/** The git worktree strategy, with stale clean-up. */
export interface GitWorktreeStrategy extends WorkspaceStrategy {
  readonly kind: 'git-worktree';
  /** The folder that holds the worktrees. */
  readonly root: string;
  /**
   * Remove worktrees and `troupe/` branches an earlier (crashed) run left in
   * the repository of `baseDir`. Workspaces this instance holds are kept.
   * Call it when no other process is running chunks on the repository.
   */
  cleanupStale(baseDir: string, options?: WorkspaceCallOptions): Promise<StaleCleanupResult>;
}

const BRANCH_PREFIX = 'troupe/';

/** The values are checked by `gitWorktree` itself. */
const gitWorktreeOptions = defineOptions<GitWorktreeOptions>('gitWorktree', { root: anything, baseBranch: anything, git: anything, planId: anything });

/**
 * Create the git worktree strategy.
 *
 * @example
 * ```ts
 * const strategy = gitWorktree({ root: '/tmp/my-worktrees' });
 * const ws = await strategy.prepare({ id: 'parser', title: 'Fix the parser', baseDir: repoDir });
 * try { await work(ws.path); await strategy.merge(ws); } finally { await strategy.cleanup(ws); }
 * ```
 */
export function gitWorktree(options: GitWorktreeOptions = {}): GitWorktreeStrategy {
  gitWorktreeOptions.check(options);
  for (const key of ['root', 'baseBranch', 'git', 'planId'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
      throw new ConfigurationError(`Expected \`${key}\` to be a non-empty string, got ${describeValue(value)}`);
    }
  }
  if (options.baseBranch !== undefined && options.baseBranch.startsWith('-')) {
    throw new ConfigurationError(`Expected \`baseBranch\` to be a branch name, got ${describeValue(options.baseBranch)}`);
  }
  return new GitWorktrees(options);
}

/** The git worktree strategy: one branch and worktree per chunk, merged into the base branch. */
class GitWorktrees implements GitWorktreeStrategy {
  readonly kind = 'git-worktree';
  readonly root: string;
  readonly #git: string;
  readonly #baseBranch: string | undefined;
  readonly #defaultPlan: string;
  /** Operations on one repository, one at a time. */
  readonly #queue = new KeyedSerialQueue();
  /** Branches of the workspaces this instance holds, by repository. */
  readonly #active = new Map<string, Set<string>>();
  /** The commit each held branch started from, for `changes`. */
  readonly #starts = new Map<string, string>();
  /** Top-level folder of the repository of each base directory (cached, so calls queue in the order they were made). */
  readonly #toplevels = new Map<string, Promise<string>>();

  constructor(options: GitWorktreeOptions) {
    this.#git = options.git ?? 'git';
    this.root = resolve(options.root ?? join(tmpdir(), 'troupe-worktrees'));
    this.#baseBranch = options.baseBranch;
    this.#defaultPlan = sanitizeName(options.planId ?? randomUUID().slice(0, 8), 'plan');
  }

  async isAvailable(baseDir: string): Promise<boolean> {
    const inside = await runGit(this.#git, ['rev-parse', '--is-inside-work-tree'], resolve(baseDir)).catch(() => undefined);
    if (!inside || inside.code !== 0 || inside.stdout.trim() !== 'true') return false;
    const head = await runGit(this.#git, ['rev-parse', '--verify', '--quiet', 'HEAD'], resolve(baseDir));
    return head.code === 0;
  }

  async prepare(chunk: WorkspaceChunk, { signal }: WorkspaceCallOptions = {}): Promise<Workspace> {
    validateChunk(chunk);
    throwIfAborted(signal);
    const top = await this.#toplevel(chunk.baseDir);
    const plan = chunk.planId === undefined ? this.#defaultPlan : sanitizeName(chunk.planId, 'plan');
    const id = sanitizeName(chunk.id);
    const branch = `${BRANCH_PREFIX}${plan}/${id}`;
    return this.#queue.run(top, () => this.#addWorktree(top, chunk, { plan, id, branch }, signal), signal);
  }

  async merge(workspace: Workspace, { signal }: WorkspaceCallOptions = {}): Promise<MergeResult> {
    const branch = workspace.branch;
    if (branch === undefined || !branch.startsWith(BRANCH_PREFIX)) {
      throw new WorkspaceError(`Workspace of chunk ${workspace.chunkId} has no troupe branch to merge`);
    }
    throwIfAborted(signal);
    const top = await this.#toplevel(workspace.baseDir);
    return this.#queue.run(
      top,
      async () => {
        await this.#commit(workspace);
        return this.#mergeBranch(top, branch, signal);
      },
      signal,
    );
  }

  /** Everything the worker changed on its branch since it started from the base (commits and files left in the worktree), with each file's patch. */
  async changes(workspace: Workspace, options: WorkspaceCallOptions = {}): Promise<WorkspaceChanges> {
    const branch = workspace.branch;
    if (branch === undefined || !branch.startsWith(BRANCH_PREFIX)) {
      throw new WorkspaceError(`Workspace of chunk ${workspace.chunkId} has no troupe branch to compare`);
    }
    throwIfAborted(options.signal);
    const top = await this.#toplevel(workspace.baseDir);
    return this.#queue.run(top, () => this.#diff(top, workspace, branch), options.signal);
  }

  async cleanup(workspace: Workspace): Promise<void> {
    let top: string;
    try {
      top = await this.#toplevel(workspace.baseDir);
    } catch {
      return; // the repository itself is gone
    }
    await this.#queue.run(top, async () => {
      const folder = await this.#repoRoot(top);
      await this.#removeWorktree(top, workspace.path, workspace.branch, folder);
      if (workspace.branch !== undefined) {
        this.#active.get(top)?.delete(workspace.branch);
        this.#starts.delete(workspace.branch);
      }
    });
  }

  async cleanupStale(baseDir: string, { signal }: WorkspaceCallOptions = {}): Promise<StaleCleanupResult> {
    throwIfAborted(signal);
    const top = await this.#toplevel(baseDir);
    return this.#queue.run(
      top,
      async () => {
        const folder = await this.#repoRoot(top);
        const keep = this.#active.get(top) ?? new Set<string>();
        const removed: StaleCleanupResult = { worktrees: await this.#removeStaleWorktrees(top, folder, keep), branches: await this.#removeStaleBranches(top, keep) };
        if (keep.size === 0) await rm(folder, { recursive: true, force: true });
        return removed;
      },
      signal,
    );
  }

  /** Create the chunk's branch and worktree (in the repository's queue). */
  async #addWorktree(top: string, chunk: WorkspaceChunk, names: { plan: string; id: string; branch: string }, signal: AbortSignal | undefined): Promise<Workspace> {
    const git = this.#git;
    const { plan, id, branch } = names;
    const folder = await this.#repoRoot(top);
    const path = join(folder, plan, id);
    const start = this.#baseBranch ?? 'HEAD';
    const exists = await runGit(git, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], top);
    if (exists.code === 0) {
      throw new WorkspaceError(`Branch ${branch} already exists: chunk ${id} is already prepared, or an earlier run crashed (call cleanupStale)`, {
        details: { branch, chunkId: chunk.id },
      });
    }
    await mkdir(dirname(path), { recursive: true });
    await mustGit(git, ['worktree', 'add', '--quiet', '-b', branch, '--', path, start], top, `create the worktree for chunk ${id}`);
    const held = this.#active.get(top) ?? new Set<string>();
    held.add(branch);
    this.#active.set(top, held);
    this.#starts.set(branch, (await mustGit(git, ['rev-parse', 'HEAD'], path, 'read the start of the worktree')).trim());
    const workspace: Workspace = { kind: 'git-worktree', path, branch, chunkId: chunk.id, baseDir: top };
    if (signal?.aborted) {
      await this.#removeWorktree(top, path, branch, folder);
      held.delete(branch);
      throwIfAborted(signal);
    }
    return workspace;
  }

  /** The worktree's changes against the commit its branch started from (staged first, so new files count). */
  async #diff(top: string, workspace: Workspace, branch: string): Promise<WorkspaceChanges> {
    const git = this.#git;
    const cwd = workspace.path;
    await mustGit(git, ['add', '--all'], cwd, "stage the worker's changes");
    const base = this.#starts.get(branch) ?? (await mustGit(git, ['merge-base', 'HEAD', this.#baseBranch ?? (await this.#currentBranch(top))], cwd, 'find where the branch started')).trim();
    const listed = await mustGit(git, ['diff', '--cached', '--no-renames', '--name-status', '-z', base, '--'], cwd, 'list the changed files');
    const fields = listed.split('\0');
    const files: FileChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const code = fields[i]!;
      const path = fields[i + 1]!;
      if (path === '') continue;
      const status = code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified';
      const patch = await runGit(git, ['diff', '--cached', '--no-renames', '--no-color', base, '--', path], cwd);
      const text = patch.stdout;
      files.push({ path, status, ...(text === '' ? {} : { patch: text.length > MAX_PATCH_CHARS ? text.slice(0, MAX_PATCH_CHARS) : text }) });
    }
    return { files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) };
  }

  /** Commit what the worker left in its worktree. */
  async #commit(workspace: Workspace): Promise<void> {
    const git = this.#git;
    await mustGit(git, ['add', '--all'], workspace.path, "stage the worker's changes");
    const staged = await runGit(git, ['diff', '--cached', '--quiet'], workspace.path);
    if (staged.code !== 1) return;
    await mustGit(git, [...GIT_IDENTITY, 'commit', '--quiet', '--no-verify', '-m', `troupe: chunk ${sanitizeName(workspace.chunkId)}`], workspace.path, "commit the worker's changes");
  }

  /** Merge `branch` into the base branch checked out in `top` (`--no-ff`); a conflict is aborted and reported. */
  async #mergeBranch(top: string, branch: string, signal: AbortSignal | undefined): Promise<MergeResult> {
    const git = this.#git;
    const base = this.#baseBranch ?? (await this.#currentBranch(top));
    const checkedOut = await this.#currentBranch(top);
    if (checkedOut !== base) throw new WorkspaceError(`The base directory has ${checkedOut} checked out, not the base branch ${base}`);
    const ahead = await mustGit(git, ['rev-list', '--count', `${base}..${branch}`, '--'], top, 'compare branches');
    if (Number(ahead.trim()) === 0) return { status: 'nothing-to-merge', conflicts: [] };
    const dirty = await runGit(git, ['status', '--porcelain', '--untracked-files=no'], top);
    if (dirty.stdout.trim() !== '') {
      throw new WorkspaceError(`The base directory ${top} has uncommitted changes; commit or stash them before merging`, { details: { baseDir: top } });
    }
    throwIfAborted(signal);
    const merged = await runGit(git, [...GIT_IDENTITY, 'merge', '--no-ff', '--no-edit', '-m', `Merge ${branch}`, '--', branch], top);
    if (merged.code === 0) return { status: 'merged', conflicts: [] };
    const unmerged = await runGit(git, ['diff', '--name-only', '--diff-filter=U', '-z'], top);
    const conflicts = unmerged.stdout.split('\0').filter((p) => p !== '');
    await runGit(git, ['merge', '--abort'], top);
    if (conflicts.length === 0) {
      throw new WorkspaceError(`git failed to merge ${branch}: ${merged.stderr.trim() || merged.stdout.trim()}`, { details: { branch } });
    }
    return { status: 'conflict', conflicts: conflicts.sort() };
  }

  /** Remove the worktrees of troupe branches (or under the root) that this instance does not hold. */
  async #removeStaleWorktrees(top: string, folder: string, keep: ReadonlySet<string>): Promise<string[]> {
    const git = this.#git;
    const removed: string[] = [];
    const list = await mustGit(git, ['worktree', 'list', '--porcelain'], top, 'list worktrees');
    for (const entry of parseWorktrees(list)) {
      if (entry.branch !== undefined && keep.has(entry.branch)) continue;
      const ours = entry.branch?.startsWith(BRANCH_PREFIX) === true || isInside(entry.path, folder);
      if (!ours || entry.path === top) continue;
      await runGit(git, ['worktree', 'remove', '--force', '--force', '--', entry.path], top);
      if (isInside(entry.path, folder)) await rm(entry.path, { recursive: true, force: true });
      removed.push(entry.path);
    }
    await runGit(git, ['worktree', 'prune'], top);
    return removed;
  }

  /** Delete the troupe branches that this instance does not hold. */
  async #removeStaleBranches(top: string, keep: ReadonlySet<string>): Promise<string[]> {
    const git = this.#git;
    const removed: string[] = [];
    const refs = await mustGit(git, ['for-each-ref', '--format=%(refname)', '--', 'refs/heads/troupe/'], top, 'list branches');
    for (const ref of refs.split('\n').filter((r) => r !== '')) {
      const branch = ref.slice('refs/heads/'.length);
      if (keep.has(branch)) continue;
      const deleted = await runGit(git, ['branch', '-D', '--', branch], top);
      if (deleted.code === 0) removed.push(branch);
    }
    return removed;
  }

  #toplevel(baseDir: string): Promise<string> {
    const dir = resolve(baseDir);
    let top = this.#toplevels.get(dir);
    if (!top) {
      top = mustGit(this.#git, ['rev-parse', '--show-toplevel'], dir, 'find the repository').then((out) => realpath(out.trim()));
      this.#toplevels.set(dir, top);
      top.catch(() => this.#toplevels.delete(dir));
    }
    return top;
  }

  /** The folder of the repository's worktrees under the root (which must lie outside the repository). */
  async #repoRoot(top: string): Promise<string> {
    const realRoot = await realpathOfMaybe(this.root);
    const rel = relative(top, realRoot);
    if (rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel))) {
      throw new ConfigurationError(`The worktree root ${realRoot} must lie outside the repository ${top}`, { details: { root: realRoot, repository: top } });
    }
    await mkdir(realRoot, { recursive: true });
    return join(realRoot, `${sanitizeName(basename(top), 'repo')}-${pathKey(top)}`);
  }

  async #removeWorktree(top: string, path: string, branch: string | undefined, folder: string): Promise<void> {
    const git = this.#git;
    await runGit(git, ['worktree', 'remove', '--force', '--force', '--', path], top);
    if (isInside(path, folder)) await rm(path, { recursive: true, force: true });
    await runGit(git, ['worktree', 'prune'], top);
    if (branch !== undefined && branch.startsWith(BRANCH_PREFIX)) await runGit(git, ['branch', '-D', '--', branch], top);
  }

  async #currentBranch(dir: string): Promise<string> {
    const out = await runGit(this.#git, ['symbolic-ref', '--quiet', '--short', 'HEAD'], dir);
    if (out.code !== 0) throw new WorkspaceError(`The base directory ${dir} has no branch checked out (detached HEAD)`);
    return out.stdout.trim();
  }
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) && resolve(folder, rel) === path;
}

function validateChunk(chunk: WorkspaceChunk): void {
  expectChunk(chunk);
  if (chunk.planId !== undefined && (typeof chunk.planId !== 'string' || chunk.planId === '')) {
    throw new ConfigurationError(`Expected chunk \`planId\` to be a non-empty string, got ${describeValue(chunk.planId)}`);
  }
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
async function realpathOfMaybe(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathOfMaybe(parent), basename(path));
  }
}

/** Parse `git worktree list --porcelain` (one field a line, entries separated by blank lines). */
function parseWorktrees(out: string): Array<{ path: string; branch?: string }> {
  const entries: Array<{ path: string; branch?: string }> = [];
  let current: { path: string; branch?: string } | undefined;
  for (const field of out.split('\n')) {
    if (field.startsWith('worktree ')) {
      current = { path: field.slice('worktree '.length) };
      entries.push(current);
    } else if (field.startsWith('branch refs/heads/') && current) {
      current.branch = field.slice('branch refs/heads/'.length);
    }
  }
  return entries;
}

/**
 * The file-locking strategy: every chunk works in the base directory itself,
 * and holds a lock on its `workingScope` while it runs. Chunks whose scopes
 * overlap wait in order; disjoint ones run in parallel. A lock file (through
 * proper-lockfile) makes two processes on one directory exclude each other.
 * @module
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { raceAbort, throwIfAborted } from '../core/abort.js';
import { MAX_TIMER_DELAY_MS, abortError, realClock, sleep, type Clock } from '../core/clock.js';
import { ConfigurationError, WorkspaceError, describeValue, errorMessage } from '../core/errors.js';
import { anything, boolean, clock as clockCheck, defineOptions, expectPositiveNumber, func, string } from '../core/options.js';
import { pathKey } from './git.js';
import { expectChunk } from './chunk.js';
import { diffSnapshots, scopeRoots, snapshotFiles, type FileSnapshot } from './snapshot.js';
import type { MergeResult, Workspace, WorkspaceCallOptions, WorkspaceChanges, WorkspaceChunk, WorkspaceStrategy } from './types.js';

/** Options of {@link fileLocking}. */
export interface FileLockingOptions {
  /** Clock for the waits between attempts at the cross-process lock. Default: the real clock. */
  clock?: Clock;
  /** Also lock across processes (a lock file per base directory). Default: true. */
  crossProcess?: boolean;
  /** Folder of the cross-process lock files. Default: `<os tmpdir>/troupe-locks`. */
  lockDir?: string;
  /** Wait between attempts at a lock another process holds, in ms. Default: 100. */
  pollMs?: number;
  /** A lock file not refreshed for this long belongs to a dead process and is taken over, in ms. Default: 10000. */
  staleMs?: number;
  /** Called when the cross-process lock was lost (its file removed or gone stale under us). */
  onWarning?: (warning: { message: string; code: string; baseDir: string }) => void;
}

interface Waiter {
  chunkId: string;
  scope: string[][];
  grant: () => void;
}

interface DirState {
  held: Map<string, string[][]>;
  waiting: Waiter[];
  /** Chunks holding a scope; the process lock is held while this is above zero. */
  refs: number;
  processLock?: { acquired: Promise<() => Promise<void>>; stop: AbortController };
}

const MAGIC = /[*?[\]{}()!]/;

/**
 * The static part of a scope entry: its path segments before the first one
 * with a glob character (`src/lib/*.ts` → `['src', 'lib']`; a plain path is
 * all static). Any path a glob matches starts with its static part.
 * @throws ConfigurationError for absolute paths and `..` segments.
 */
export function staticPrefix(pattern: string): string[] {
  if (typeof pattern !== 'string' || pattern.trim() === '') {
    throw new ConfigurationError(`Expected a \`workingScope\` entry to be a non-empty string, got ${describeValue(pattern)}`);
  }
  const slashed = pattern.replace(/\\/g, '/');
  const raw = slashed.split('/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed) || raw.includes('..')) {
    throw new ConfigurationError(
      `Expected a \`workingScope\` entry to be a relative path inside the base directory, got ${describeValue(pattern)}`,
    );
  }
  if (slashed.startsWith('!')) return []; // a negation: conservatively the whole directory
  const segments: string[] = [];
  for (const segment of raw) {
    if (MAGIC.test(segment)) break;
    if (segment === '' || segment === '.') continue;
    segments.push(segment.toLowerCase()); // case-insensitive file systems: compare conservatively
  }
  return posix.normalize(segments.join('/') || '.').split('/').filter((s) => s !== '.' && s !== '');
}

/**
 * Whether two scopes may touch a common path: some pair of entries where one
 * static prefix is a prefix of the other (a sound, conservative rule: it
 * never says "disjoint" for globs that can match the same file).
 */
export function scopesOverlap(a: readonly string[], b: readonly string[]): boolean {
  const pa = a.length === 0 ? [[]] : a.map(staticPrefix);
  const pb = b.length === 0 ? [[]] : b.map(staticPrefix);
  return prefixesOverlap(pa, pb);
}

function prefixesOverlap(a: readonly string[][], b: readonly string[][]): boolean {
  return a.some((x) => b.some((y) => x.every((s, i) => i >= y.length || y[i] === s)));
}

/**
 * Create the file-locking strategy. A chunk without a `workingScope` locks
 * the whole base directory.
 *
 * @example
 * ```ts
 * const strategy = fileLocking();
 * const ws = await strategy.prepare({ id: 'docs', title: 'Docs', baseDir: repoDir, workingScope: ['docs/** `pollMs` and `staleMs` are checked by `fileLocking` itself. */
const fileLockingOptions = defineOptions<FileLockingOptions>('fileLocking', { clock: clockCheck, crossProcess: boolean, lockDir: string, pollMs: anything, staleMs: anything, onWarning: func });

/**'] }, { signal });
 * try { await work(ws.path); } finally { await strategy.cleanup(ws); }
 * ```
 */
export function fileLocking(options: FileLockingOptions = {}): WorkspaceStrategy {
  fileLockingOptions.check(options);
  const pollMs = expectPositiveNumber('pollMs', options.pollMs) ?? 100;
  const staleMs = options.staleMs ?? 10_000;
  if (!(Number.isFinite(staleMs) && staleMs >= 2000)) {
    throw new ConfigurationError(`Expected \`staleMs\` to be a number of at least 2000, got ${describeValue(options.staleMs)}`);
  }
  return new FileLocks(options, pollMs, staleMs);
}

/** The file-locking strategy: scope locks per base directory in this process, and one lock file per directory across processes. */
class FileLocks implements WorkspaceStrategy {
  readonly kind = 'file-locking';
  readonly #options: FileLockingOptions;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #staleMs: number;
  readonly #lockDir: string;
  readonly #dirs = new Map<string, DirState>();
  /** The files of each held scope when it was granted (by directory and chunk), for `changes`. */
  readonly #before = new Map<string, { roots: string[]; files: FileSnapshot }>();
  /** Real paths of base directories (cached, so prepares queue in the order they were called). */
  readonly #realDirs = new Map<string, Promise<string>>();

  constructor(options: FileLockingOptions, pollMs: number, staleMs: number) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#pollMs = pollMs;
    this.#staleMs = staleMs;
    this.#lockDir = resolve(options.lockDir ?? join(tmpdir(), 'troupe-locks'));
  }

  async isAvailable(baseDir: string): Promise<boolean> {
    return (await stat(baseDir).catch(() => undefined))?.isDirectory() === true;
  }

  async prepare(chunk: WorkspaceChunk, { signal }: WorkspaceCallOptions = {}): Promise<Workspace> {
    expectChunk(chunk);
    const scope = (chunk.workingScope ?? []).map(staticPrefix);
    if (scope.length === 0) scope.push([]);
    throwIfAborted(signal);
    const dir = await this.#realDir(chunk.baseDir);
    const s = this.#state(dir);
    if (s.held.has(chunk.id) || s.waiting.some((w) => w.chunkId === chunk.id)) {
      throw new WorkspaceError(`Chunk ${chunk.id} already holds or awaits a workspace in ${dir}`, { details: { chunkId: chunk.id } });
    }
    await this.#waitForScope(s, chunk.id, scope, signal);
    s.refs += 1;
    if (this.#options.crossProcess !== false && !s.processLock) {
      const stop = new AbortController();
      const acquired = this.#lockProcess(dir, stop.signal);
      acquired.catch(() => undefined);
      s.processLock = { acquired, stop };
    }
    const pending = s.processLock;
    try {
      if (pending) await raceAbort(pending.acquired, signal);
    } catch (error) {
      // A failed attempt (not a cancelled wait) must not be shared with the chunks that come next.
      if (!signal?.aborted && s.processLock === pending) delete s.processLock;
      await this.#release(dir, chunk.id);
      throw error;
    }
    try {
      const roots = scopeRoots(chunk.workingScope);
      this.#before.set(`${dir}\0${chunk.id}`, { roots, files: await snapshotFiles(dir, roots, signal) });
    } catch (error) {
      await this.#release(dir, chunk.id);
      throw error;
    }
    return { kind: 'file-locking', path: dir, chunkId: chunk.id, baseDir: dir };
  }

  async merge(): Promise<MergeResult> {
    return { status: 'nothing-to-merge', conflicts: [] };
  }

  /** The files under the chunk's scope that changed since its lock was granted (the lock keeps other chunks of this process out of it). */
  async changes(workspace: Workspace, options: WorkspaceCallOptions = {}): Promise<WorkspaceChanges> {
    const before = this.#before.get(`${workspace.baseDir}\0${workspace.chunkId}`);
    if (!before) throw new WorkspaceError(`Chunk ${workspace.chunkId} holds no workspace in ${workspace.baseDir}`, { details: { chunkId: workspace.chunkId } });
    return { files: diffSnapshots(before.files, await snapshotFiles(workspace.baseDir, before.roots, options.signal)) };
  }

  async cleanup(workspace: Workspace): Promise<void> {
    this.#before.delete(`${workspace.baseDir}\0${workspace.chunkId}`);
    await this.#release(workspace.baseDir, workspace.chunkId);
  }

  #realDir(baseDir: string): Promise<string> {
    const dir = resolve(baseDir);
    let real = this.#realDirs.get(dir);
    if (!real) {
      real = realpath(dir).catch((error: unknown) => {
        this.#realDirs.delete(dir);
        throw new WorkspaceError(`The base directory ${baseDir} does not exist`, { cause: error, details: { baseDir } });
      });
      this.#realDirs.set(dir, real);
    }
    return real;
  }

  #state(dir: string): DirState {
    let s = this.#dirs.get(dir);
    if (!s) {
      s = { held: new Map(), waiting: [], refs: 0 };
      this.#dirs.set(dir, s);
    }
    return s;
  }

  /** Grant waiting chunks whose scopes overlap nothing held (nor a waiter before them), in order. */
  #pump(s: DirState): void {
    const blocked: string[][][] = [];
    for (const waiter of [...s.waiting]) {
      const busy = [...s.held.values(), ...blocked].some((other) => prefixesOverlap(other, waiter.scope));
      if (busy) {
        blocked.push(waiter.scope);
        continue;
      }
      s.waiting.splice(s.waiting.indexOf(waiter), 1);
      s.held.set(waiter.chunkId, waiter.scope);
      waiter.grant();
    }
  }

  #waitForScope(s: DirState, chunkId: string, scope: string[][], signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolveGrant, reject) => {
      const onAbort = () => {
        const index = s.waiting.indexOf(waiter);
        if (index >= 0) s.waiting.splice(index, 1);
        reject(abortError(signal));
        this.#pump(s);
      };
      const waiter: Waiter = {
        chunkId,
        scope,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolveGrant();
        },
      };
      s.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pump(s);
    });
  }

  /** Take the cross-process lock of `dir`, polling on the clock until it is free or `stop` aborts; resolves with the unlock. */
  async #lockProcess(dir: string, stop: AbortSignal): Promise<() => Promise<void>> {
    await mkdir(this.#lockDir, { recursive: true });
    const target = join(this.#lockDir, pathKey(dir));
    const lockfile = await loadLockfile();
    const staleMs = this.#staleMs;
    for (;;) {
      try {
        return await lockfile.lock(target, {
          realpath: false,
          stale: staleMs,
          // proper-lockfile refreshes the lock every `stale / 2` ms with its own timer: keep that within Node's limit.
          update: Math.min(staleMs / 2, MAX_TIMER_DELAY_MS),
          retries: 0,
          onCompromised: (error) =>
            this.#options.onWarning?.({ message: `The lock on ${dir} was compromised: ${error.message}`, code: 'lock_compromised', baseDir: dir }),
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') {
          throw new WorkspaceError(`Could not lock ${dir}: ${errorMessage(error)}`, { cause: error, details: { baseDir: dir } });
        }
      }
      await sleep(this.#clock, this.#pollMs, stop);
    }
  }

  async #release(dir: string, chunkId: string): Promise<void> {
    const s = this.#dirs.get(dir);
    if (!s || !s.held.delete(chunkId)) return;
    s.refs -= 1;
    this.#pump(s);
    if (s.refs > 0 || !s.processLock) return;
    const { acquired, stop } = s.processLock;
    delete s.processLock;
    stop.abort();
    const unlock = await acquired.catch(() => undefined);
    await unlock?.().catch(() => undefined);
    if (s.refs === 0 && s.waiting.length === 0 && s.held.size === 0 && !s.processLock) this.#dirs.delete(dir);
  }
}

type Lockfile = typeof import('proper-lockfile');
let lockfileModule: Promise<Lockfile> | undefined;

/**
 * proper-lockfile, loaded on the first cross-process lock: it installs
 * SIGTERM, SIGINT and SIGHUP listeners when it loads (through signal-exit),
 * which an import of troupe must not do.
 */
function loadLockfile(): Promise<Lockfile> {
  lockfileModule ??= import('proper-lockfile').then((m) => (m as { default?: Lockfile }).default ?? m);
  return lockfileModule;
}

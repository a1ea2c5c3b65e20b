/**
 * Running git safely: `execFile` with an argument array (never a shell), a
 * clean environment, and a per-repository queue so that commands on one
 * repository never overlap.
 * @module
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { abortError } from '../core/clock.js';
import { WorkspaceError } from '../core/errors.js';

/** The outcome of one git command. */
export interface GitResult {
  /** Exit code (`-1` when git could not be started). */
  code: number;
  stdout: string;
  stderr: string;
  /** Set when git could not be started at all (for example `ENOENT`: no git binary). */
  spawnError?: NodeJS.ErrnoException;
}

/** The identity used for the commits and merges troupe makes, so git works on machines without one. */
export const GIT_IDENTITY = ['-c', 'user.name=troupe', '-c', 'user.email=troupe@localhost', '-c', 'commit.gpgsign=false'];

// Variables that would point git at another repository than the one we name.
const GIT_ENV_OVERRIDES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_CEILING_DIRECTORIES'];

/** Run `git <args>` in `cwd` without a shell. Never throws; read `code`. */
export function runGit(binary: string, args: readonly string[], cwd: string): Promise<GitResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const name of GIT_ENV_OVERRIDES) delete env[name];
  return new Promise((resolve) => {
    execFile(binary, [...args], { cwd, env, maxBuffer: 32 * 1024 * 1024, windowsHide: true }, (error, stdout, stderr) => {
      const err = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (err && typeof err.code === 'string') {
        resolve({ code: -1, stdout: String(stdout), stderr: String(stderr), spawnError: err });
        return;
      }
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Run git and throw a {@link WorkspaceError} when it fails. Returns stdout. */
export async function mustGit(binary: string, args: readonly string[], cwd: string, what: string): Promise<string> {
  const result = await runGit(binary, args, cwd);
  if (result.code !== 0) {
    const reason = result.spawnError ? result.spawnError.message : result.stderr.trim() || `exit code ${result.code}`;
    throw new WorkspaceError(`git failed to ${what}: ${reason}`, {
      cause: result.spawnError,
      details: { args: [...args], cwd, code: result.code },
    });
  }
  return result.stdout;
}

/**
 * Serialises tasks per key (one repository = one key). Each key's tasks run
 * one at a time in the order they were queued. A task whose signal aborts
 * while it waits is dropped and rejects at once; a task that has started
 * runs to the end (killing git half-way would leave the repository in an
 * inconsistent state). Owned by one strategy instance.
 */
export class KeyedSerialQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Queue `task` behind the tasks already queued for `key`. */
  run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<T>((resolve, reject) => {
      let started = false;
      const onAbort = () => {
        if (!started) reject(abortError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const previous = this.#tails.get(key) ?? Promise.resolve();
      const tail = previous.then(async () => {
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) return; // dropped while waiting (already rejected)
        started = true;
        try {
          resolve(await task());
        } catch (error) {
          reject(error);
        }
      });
      this.#tails.set(key, tail);
      void tail.then(() => {
        if (this.#tails.get(key) === tail) this.#tails.delete(key);
      });
    });
  }
}

/**
 * A name safe for a git branch component and a folder: only
 * `[A-Za-z0-9_-]`, never starting with `-` or `_`, at most 48 characters.
 * When anything had to change, a short hash of the original keeps distinct
 * inputs distinct.
 */
export function sanitizeName(raw: string, fallback = 'chunk'): string {
  let name = raw.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/-{2,}/g, '-');
  name = name.replace(/^[-_]+/, '').replace(/[-_]+$/, '').slice(0, 40);
  if (name === raw && name !== '') return name;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  return name === '' ? `${fallback}-${hash}` : `${name}-${hash}`;
}

/** A stable short id of a path (for folder and lock names). */
export function pathKey(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 12);
}

/**
 * Finding a repository's squad folder.
 * @module
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { abortSignal, defineOptions } from '../core/options.js';

/** Options of {@link findSquadDir}. */
export interface FindSquadDirOptions {
  /** Stops the search (a `CancelledError`). */
  signal?: AbortSignal;
}

const findSquadDirOptions = defineOptions<FindSquadDirOptions>('findSquadDir', { signal: abortSignal });

/** The folder names of a squad team, preferred first (`.ai-team` is the legacy name). */
export const SQUAD_DIR_NAMES: readonly string[] = ['.squad', '.ai-team'];

/**
 * The absolute path of the squad folder of a repository: `.squad` when it is
 * a folder, else `.ai-team`, else `null`.
 *
 * @example
 * ```ts
 * const dir = await findSquadDir(process.cwd()); // '/repo/.squad' or null
 * ```
 */
export async function findSquadDir(root: string, options: FindSquadDirOptions = {}): Promise<string | null> {
  if (typeof root !== 'string' || root === '') throw new ConfigurationError(`Expected \`root\` to be a non-empty string, got ${describeValue(root)}`);
  findSquadDirOptions.check(options);
  for (const name of SQUAD_DIR_NAMES) {
    throwIfAborted(options.signal);
    const dir = join(resolve(root), name);
    const info = await stat(dir).catch(() => undefined);
    if (info?.isDirectory()) return dir;
  }
  return null;
}

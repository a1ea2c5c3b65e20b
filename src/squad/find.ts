/**
 * Finding a repository's squad folder.
 * @module
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

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
export async function findSquadDir(root: string): Promise<string | null> {
  for (const name of SQUAD_DIR_NAMES) {
    const dir = join(resolve(root), name);
    const info = await stat(dir).catch(() => undefined);
    if (info?.isDirectory()) return dir;
  }
  return null;
}

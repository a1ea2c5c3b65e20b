/**
 * A snapshot of the files under a few folders of a directory (a fingerprint
 * per file: size, modification time in nanoseconds and inode, read with one
 * `stat` and no file contents), and the difference between two snapshots:
 * how strategies that let workers write in place (file locking) tell what a
 * worker changed.
 * @module
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import type { FileChange } from './types.js';

/** Folders never looked into: version control and installed packages. */
const SKIPPED = new Set(['.git', 'node_modules']);

/** Most files one snapshot reads; past it, the rest count as unchanged. */
export const MAX_SNAPSHOT_FILES = 50_000;

/** Fingerprints by path (relative, `/`-separated). */
export type FileSnapshot = Map<string, string>;

/** The folders a working scope covers: the static part of each entry (`src/lib/*.ts` → `src/lib`), or the whole directory. */
export function scopeRoots(scope: readonly string[] | undefined): string[] {
  if (!scope || scope.length === 0) return [''];
  const roots = new Set<string>();
  for (const entry of scope) {
    const segments: string[] = [];
    for (const segment of entry.replace(/\\/g, '/').split('/')) {
      if (/[*?[\]{}()!]/.test(segment)) break;
      if (segment !== '' && segment !== '.') segments.push(segment);
    }
    roots.add(segments.join('/'));
  }
  return roots.has('') ? [''] : [...roots];
}

/** Fingerprint every file under `roots` of `dir` (a root may be a file). */
export async function snapshotFiles(dir: string, roots: readonly string[], signal?: AbortSignal): Promise<FileSnapshot> {
  const out: FileSnapshot = new Map();
  const stack = [...roots];
  while (stack.length > 0 && out.size < MAX_SNAPSHOT_FILES) {
    throwIfAborted(signal);
    const rel = stack.pop()!;
    const abs = rel === '' ? dir : join(dir, rel);
    const info = await stat(abs, { bigint: true }).catch(() => undefined);
    if (!info) continue;
    if (info.isFile()) {
      out.set(rel, `${info.size}:${info.mtimeNs}:${info.ino}`);
      continue;
    }
    if (!info.isDirectory()) continue;
    for (const entry of await readdir(abs, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory() && SKIPPED.has(entry.name)) continue;
      if (entry.isDirectory() || entry.isFile()) stack.push(rel === '' ? entry.name : `${rel}/${entry.name}`);
    }
  }
  return out;
}

/** The files added, modified or deleted between two snapshots, sorted by path. */
export function diffSnapshots(before: FileSnapshot, after: FileSnapshot): FileChange[] {
  const changes: FileChange[] = [];
  for (const [path, hash] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push({ path, status: 'added' });
    else if (was !== hash) changes.push({ path, status: 'modified' });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, status: 'deleted' });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

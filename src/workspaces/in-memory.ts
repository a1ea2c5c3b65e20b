/**
 * The in-memory strategy, for read-only analysis: every chunk reads the base
 * directory; there is nothing to merge and nothing to clean up.
 * @module
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { expectChunk } from './chunk.js';
import type { Workspace, WorkspaceStrategy } from './types.js';

/**
 * Create the in-memory strategy. Workers must not write: nothing isolates
 * them and nothing is merged.
 *
 * @example
 * ```ts
 * const ws = await inMemory().prepare({ id: 'review', title: 'Review', baseDir: repoDir });
 * // ws.path === repoDir
 * ```
 */
export function inMemory(): WorkspaceStrategy {
  return {
    kind: 'in-memory',
    async isAvailable(baseDir) {
      return (await stat(baseDir).catch(() => undefined))?.isDirectory() === true;
    },
    async prepare(chunk, { signal } = {}): Promise<Workspace> {
      expectChunk(chunk);
      throwIfAborted(signal);
      const dir = resolve(chunk.baseDir);
      return { kind: 'in-memory', path: dir, chunkId: chunk.id, baseDir: dir };
    },
    merge: async () => ({ status: 'nothing-to-merge', conflicts: [] }),
    changes: async () => ({ files: [] }),
    cleanup: async () => undefined,
  };
}

/**
 * The in-memory strategy, for read-only analysis: every chunk reads the base
 * directory; there is nothing to merge and nothing to clean up.
 * @module
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { Workspace, WorkspaceStrategy } from './types.js';

/**
 * Create the in-memory strategy. Workers must not write: nothing isolates
 * them and nothing is merged.
 *
 * @example
 * ```ts
 * const ws = await inMemory().prepare({ id: 'review', title: 'Review' }, repoDir);
 * // ws.path === repoDir
 * ```
 */
export function inMemory(): WorkspaceStrategy {
  return {
    kind: 'in-memory',
    async isAvailable(baseDir) {
      return (await stat(baseDir).catch(() => undefined))?.isDirectory() === true;
    },
    async prepare(chunk, baseDir, signal): Promise<Workspace> {
      if (!chunk || typeof chunk.id !== 'string' || chunk.id === '') {
        throw new ConfigurationError(`Expected chunk \`id\` to be a non-empty string, got ${describeValue(chunk?.id)}`);
      }
      throwIfAborted(signal);
      const dir = resolve(baseDir);
      return { kind: 'in-memory', path: dir, chunkId: chunk.id, baseDir: dir };
    },
    merge: async () => ({ status: 'nothing-to-merge', conflicts: [] }),
    cleanup: async () => undefined,
  };
}

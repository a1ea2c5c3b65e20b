/**
 * `withFallback`: use a primary strategy where it is available (for example
 * git worktrees in a git repository) and a fallback elsewhere, with a warning.
 * @module
 */
import { resolve } from 'node:path';
import { expectChunk } from './chunk.js';
import type { Workspace, WorkspaceStrategy, WorkspaceWarning } from './types.js';
import { defineOptions, func } from '../core/options.js';

/** The warning {@link withFallback} reports (the payload of the `workspace.fallback` event). */
export type WorkspaceFallbackWarning = WorkspaceWarning;

/** Options of {@link withFallback}. */
export interface WithFallbackOptions {
  /**
   * Called once per base directory where the fallback is used. The plan
   * executor also subscribes through the strategy's `onWarning` and emits
   * `workspace.fallback`, so this is only needed outside plans.
   */
  onWarning?: (warning: WorkspaceFallbackWarning) => void;
}

const withFallbackOptions = defineOptions<WithFallbackOptions>('withFallback', { onWarning: func });

/**
 * A strategy that uses `primary` in base directories where it is available
 * and `fallback` (with a warning) where it is not. Workspaces are merged and
 * cleaned up by the strategy that prepared them.
 *
 * @example
 * ```ts
 * const strategy = withFallback(gitWorktree(), fileLocking(), {
 *   onWarning: (w) => ctx.emit('workspace.fallback', w),
 * });
 * ```
 */
export function withFallback(primary: WorkspaceStrategy, fallback: WorkspaceStrategy, options: WithFallbackOptions = {}): WorkspaceStrategy {
  withFallbackOptions.check(options);
  const choice = new Map<string, Promise<WorkspaceStrategy>>();
  const listeners = new Set<(warning: WorkspaceWarning) => void>();
  const warn = (warning: WorkspaceWarning) => {
    options.onWarning?.(warning);
    for (const listener of listeners) listener(warning);
  };
  const preparedBy = new WeakMap<Workspace, WorkspaceStrategy>();

  function choose(baseDir: string): Promise<WorkspaceStrategy> {
    const dir = resolve(baseDir);
    let chosen = choice.get(dir);
    if (!chosen) {
      chosen = primary.isAvailable(dir).then(
        (ok) => ok,
        () => false,
      ).then((ok) => {
        if (ok) return primary;
        warn({
          message: `Workspace strategy ${primary.kind} is not available in ${dir}; using ${fallback.kind} instead`,
          primary: primary.kind,
          fallback: fallback.kind,
          baseDir: dir,
        });
        return fallback;
      });
      choice.set(dir, chosen);
    }
    return chosen;
  }

  function owner(workspace: Workspace): WorkspaceStrategy {
    return preparedBy.get(workspace) ?? (workspace.kind === primary.kind ? primary : fallback);
  }

  return {
    kind: primary.kind,
    async isAvailable(baseDir) {
      return (await primary.isAvailable(baseDir).catch(() => false)) || fallback.isAvailable(baseDir);
    },
    async prepare(chunk, options) {
      expectChunk(chunk);
      const strategy = await choose(chunk.baseDir);
      const workspace = await strategy.prepare(chunk, options);
      preparedBy.set(workspace, strategy);
      return workspace;
    },
    merge: (workspace, options) => owner(workspace).merge(workspace, options),
    changes: async (workspace, options) => {
      const strategy = owner(workspace);
      return strategy.changes ? strategy.changes(workspace, options) : { files: [] };
    },
    cleanup: (workspace) => owner(workspace).cleanup(workspace),
    onWarning(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * # The workspace contract
 *
 * Workers that edit files at the same time must not trample each other. A
 * {@link WorkspaceStrategy} gives each chunk of work its own workspace:
 * `prepare` it before the chunk runs, `merge` its changes back afterwards,
 * and always `cleanup`, also after a failure or a cancellation.
 *
 * Strategies live one per file in `src/workspaces/`; `workspaceSuite` in
 * `troupe/testing` is the conformance suite every strategy must pass.
 * @module
 */
import { throwIfAborted } from '../core/abort.js';
import { expectChunk } from './chunk.js';

/** What a strategy needs to know of the work it prepares a workspace for. */
export interface WorkspaceChunk {
  /** Unique within the plan (used in branch and folder names, after sanitising). */
  id: string;
  /** The directory the work is done in (a git strategy: a folder of the repository); the workspace is prepared from it and merged back into it. */
  baseDir: string;
  /** The plan the chunk belongs to (used in branch names, after sanitising). */
  planId?: string;
  /** A human title (never trusted as a path or an argument). */
  title: string;
  /** Paths or globs, relative to the base directory, that the chunk will touch. */
  workingScope?: string[];
}

/** A prepared workspace. */
export interface Workspace {
  /** The strategy that prepared it. */
  kind: string;
  /** The directory the worker should work in. */
  path: string;
  /** The branch the work is committed on, for git strategies. */
  branch?: string;
  /** The chunk it was prepared for. */
  chunkId: string;
  /** The base directory it was prepared from. */
  baseDir: string;
}

/** The result of merging a workspace back. */
export interface MergeResult {
  status: 'merged' | 'conflict' | 'nothing-to-merge';
  /** Paths that conflicted (empty unless `status` is `conflict`). */
  conflicts: string[];
}

/** Options of {@link WorkspaceStrategy.prepare} and {@link WorkspaceStrategy.merge}. */
export interface WorkspaceCallOptions {
  /** Cancels the call (a wait for locks, a git command). */
  signal?: AbortSignal;
}

/** How a file changed in a workspace. */
export interface FileChange {
  /** The path, relative to the base directory, with `/` separators. */
  path: string;
  status: 'added' | 'modified' | 'deleted';
  /** The change as a unified diff, when the strategy can tell (git worktrees), cut at {@link MAX_PATCH_CHARS}. */
  patch?: string;
}

/** What a worker changed in its workspace. */
export interface WorkspaceChanges {
  /** Every changed file, sorted by path. */
  files: FileChange[];
}

/** Longest patch of one file a strategy reports, in characters. */
export const MAX_PATCH_CHARS = 20_000;

/** A way to isolate concurrent workers. */
export interface WorkspaceStrategy {
  /** A short name (`git-worktree`, `file-locking`, `in-memory`, `none`). */
  readonly kind: string;
  /** Whether the strategy can work in `baseDir` (for example: it is a git repository). */
  isAvailable(baseDir: string): Promise<boolean>;
  /** Prepare a workspace for a chunk, from `chunk.baseDir`. May wait (for locks); must honour `signal`. */
  prepare(chunk: WorkspaceChunk, options?: WorkspaceCallOptions): Promise<Workspace>;
  /** Bring the workspace's changes back into the base directory it was prepared from (`workspace.baseDir`). */
  merge(workspace: Workspace, options?: WorkspaceCallOptions): Promise<MergeResult>;
  /**
   * What the worker changed in the workspace so far (before `merge`): the
   * files, and for strategies that can tell, each file's patch. Optional;
   * every built-in strategy has it (read-only strategies report none). The
   * plan executor calls it after a chunk's worker is done, so each chunk
   * result lists the files it changed.
   */
  changes?(workspace: Workspace, options?: WorkspaceCallOptions): Promise<WorkspaceChanges>;
  /** Release everything the workspace holds. Idempotent; never throws for a workspace already gone. Takes no signal: it must also run after a cancellation. */
  cleanup(workspace: Workspace): Promise<void>;
  /**
   * Optional: subscribe to the strategy's warnings (for example a fallback
   * to another strategy). Returns a function that unsubscribes. The plan
   * executor subscribes while a plan runs and emits them as
   * `workspace.fallback` events.
   */
  onWarning?(listener: (warning: WorkspaceWarning) => void): () => void;
}

/** A warning from a strategy: it could not do what was asked and did something else. */
export interface WorkspaceWarning {
  /** A readable explanation. */
  message: string;
  /** The strategy that was not available. */
  primary: string;
  /** The strategy used instead. */
  fallback: string;
  /** The base directory in question. */
  baseDir: string;
}

/** The no-op strategy: every chunk works in the base directory; nothing to merge or clean. */
export function noWorkspace(): WorkspaceStrategy {
  return {
    kind: 'none',
    isAvailable: async () => true,
    async prepare(chunk, { signal } = {}) {
      expectChunk(chunk);
      throwIfAborted(signal);
      return { kind: 'none', path: chunk.baseDir, chunkId: chunk.id, baseDir: chunk.baseDir };
    },
    merge: async () => ({ status: 'nothing-to-merge', conflicts: [] }),
    changes: async () => ({ files: [] }),
    cleanup: async () => undefined,
  };
}

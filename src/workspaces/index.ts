/**
 * `troupe/workspaces`: the workspace contract and its strategies — a git
 * worktree per chunk, file locking, in memory, and a fallback wrapper.
 * @module troupe/workspaces
 * @category Workspaces
 */
export { MAX_PATCH_CHARS, noWorkspace, type FileChange, type MergeResult, type Workspace, type WorkspaceCallOptions, type WorkspaceChanges, type WorkspaceChunk, type WorkspaceStrategy, type WorkspaceWarning } from './types.js';
export { gitWorktree, type GitWorktreeOptions, type GitWorktreeStrategy, type StaleCleanupResult } from './git-worktree.js';
export { fileLocking, scopesOverlap, staticPrefix, type FileLockingOptions } from './file-locking.js';
export { inMemory } from './in-memory.js';
export { withFallback, type WithFallbackOptions, type WorkspaceFallbackWarning } from './fallback.js';
export { MergeConflictError, type ConflictingChange } from './conflict.js';

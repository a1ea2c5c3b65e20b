/**
 * `troupe/persistence`: stores (memory and file), the store contract, run
 * logs (read, timeline, export, prune), threads (conversations that
 * continue across runs: list, read, truncate, delete), and the team
 * registry. Checkpoints
 * and `resume` are the kernel's (`troupe/kernel`, and `resume` from
 * `troupe`).
 * @module troupe/persistence
 * @category Persistence
 */
export type {
  CompareAndSetStore,
  SetIfResult,
  Store,
  StoreCallOptions,
  StoreReadOptions,
  StoreReadResult,
  StoreSetIfOptions,
  VersionedDocument,
} from '../core/store.js';
export { supportsCompareAndSet } from '../core/store.js';
export { memoryStore, type MemoryStore } from '../core/memory-store.js';
export { fileStore, encodeKey, decodeKey, type FileStore, type FileStoreOptions } from './file-store.js';
export {
  exportRun,
  isEvent,
  pruneRuns,
  readRun,
  timeline,
  type ExportedRun,
  type PruneRunsOptions,
  type RunLog,
  type RunMeta,
  type RunStoreOptions,
  type SkippedRecord,
  type TornRecord,
  type TimelineEntry,
  type TimelineOptions,
} from './run-log.js';
export { listRuns } from './runs.js';
export type { ConversationMessage } from '../core/adapter.js';
export {
  ThreadBusyError,
  deleteThread,
  listThreads,
  readThread,
  truncateThread,
  type DeleteThreadOptions,
  type ThreadLog,
  type ThreadMessage,
  type ThreadStoreOptions,
  type ThreadSummary,
  type TruncateThreadOptions,
} from './threads.js';
export {
  TEAM_REGISTRY_SCHEMA_VERSION,
  deleteGroup,
  isMultiAgentGroup,
  parseTeamRegistry,
  reconcile,
  safeParseTeamRegistry,
  teamRegistry,
  type DeleteGroupResult,
  type LoadedTeamRegistry,
  type ReconcileAgent,
  type ReconcileChange,
  type ReconcileResult,
  type TeamGroup,
  type TeamMember,
  type TeamRegistry,
  type TeamRegistryOptions,
  type TeamRegistryParseResult,
  type TeamRegistryState,
} from './team-registry.js';

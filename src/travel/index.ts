/**
 * `troupe/travel`: time travel over logged runs. List a run's checkpoints
 * and fork a new run from any of them with its state edited (`resume`
 * continues the fork); replay a run with no model calls; and replay it
 * with an agent's prompt or model or a tool's result changed, answering
 * every unchanged model call from the recording, to compare the two runs.
 * @module troupe/travel
 * @category Time travel
 */
export type { RunParent } from '../core/events.js';
export { listCheckpoints, type RunCheckpoint, type RunEvents } from './checkpoints.js';
export { builtInCheckpointSchemas, forkRun, type CheckpointSchemas, type ForkEdit, type ForkOptions, type ForkResult, type ForkTarget } from './fork.js';
export {
  whatIfAdapter,
  type AgentChange,
  type ToolResultChange,
  type WhatIfAdapter,
  type WhatIfAdapterOptions,
  type WhatIfCall,
  type WhatIfChange,
  type WhatIfSource,
} from './what-if-adapter.js';
export {
  replayRun,
  whatIf,
  type ReplayRunOptions,
  type ReplayRunResult,
  type RunScorer,
  type RunSummary,
  type ScoreChange,
  type WhatIfOptions,
  type WhatIfReport,
} from './what-if.js';
export { formatWhatIf, type FormatWhatIfOptions } from './format.js';

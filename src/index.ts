/**
 * troupe: composable multi-agent orchestration for TypeScript.
 *
 * The root is what an application uses: running and resuming, the
 * patterns, tools, your own runnables, errors, and the main types. The rest
 * lives in one subpath per layer: `troupe/kernel` (contracts, run context,
 * events, errors, for authors of patterns, adapters and stores),
 * `troupe/patterns`, `troupe/reflection`, `troupe/text`,
 * `troupe/workspaces`, `troupe/plan`, `troupe/coordination`,
 * `troupe/agents`, `troupe/squad`, `troupe/persistence`; test doubles in
 * `troupe/testing`, vendor adapters in `troupe/adapters/<name>`, and the
 * integrations `troupe/redis`, `troupe/otel`, `troupe/report`, `troupe/mcp`.
 * Nothing here has side effects.
 * @module troupe
 * @category Application
 */

// The events of the layers (merged into the event map), so that `TroupeEvent` knows them all.
import './patterns/events.js';
import './plan/events.js';
import './coordination/events.js';

// Running
export { run, startRun, type RunHandle, type RunOptions, type RunResult } from './core/run.js';
export { resume, type ResumeOptions } from './core/resume.js';
export type { RunContext } from './core/context.js';
export type { Outcome, OutcomeStatus } from './core/outcome.js';
export { defineRunnable, type Runnable, type RunnableSpec } from './core/runnable.js';
export { defineTool, type ToolDefinition } from './core/tools.js';
export type { ModelAdapter } from './core/adapter.js';
export type { TroupeEvent, TroupeEventName } from './core/events.js';
export { formatOpTree, type OpNode } from './core/ops.js';
export type { Usage } from './core/usage.js';
export type { Store } from './core/store.js';

// Errors: one base class with a literal code
export { TroupeError, isTroupeError, CancelledError, ConfigurationError, TimeoutError, type TroupeErrorCode } from './core/errors.js';

// Patterns
export { agent, type Agent, type AgentOptions } from './patterns/agent.js';
export { handoff, type HandoffOptions } from './patterns/handoff.js';
export { router, type RouterOptions } from './patterns/router.js';
export { advisors, type AdvisorsOptions } from './patterns/advisors.js';
export { broadcast, type BroadcastOptions } from './patterns/broadcast.js';
export { sequential, type SequentialOptions } from './patterns/sequential.js';
export { team, type TeamOptions, type TeamOutcome } from './patterns/team.js';
export { reflect, type ReflectOptions, type ReflectOutcome } from './patterns/reflect.js';
export { orchestrate, type OrchestrateOptions, type OrchestrateOutcome } from './patterns/orchestrate.js';

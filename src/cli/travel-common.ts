/**
 * What `troupe fork`, `troupe replay` and `troupe dev` share: the store
 * folder, and the runnable a logged run was made from — rebuilt from the
 * run's own log when it is a plan run (its log holds the plan), else
 * compiled from its agent files.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { ConfigurationError } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import type { Runnable } from '../core/runnable.js';
import { compileAgents } from '../agents/compile.js';
import { planRunnable, type PlanRunOptions } from '../plan/engine/execute.js';
import { planExecutionStateSchema } from '../plan/engine/state.js';
import { learningRecordSchema, type LearningRecord } from '../plan/learning/learning-record.js';
import { PlanControl, planChangesFromLog } from '../plan/live/control.js';
import type { PlanChangeRecord } from '../plan/live/replan.js';
import type { Plan } from '../plan/model/plan.js';
import type { RunEvents } from '../travel/checkpoints.js';
import { startRecord } from '../travel/fork.js';
import { adapterLine, cliAdapterName, createCliAdapter } from './adapters.js';
import { loadFolder } from './agents.js';
import type { CliIo } from './io.js';
import { defined } from '../core/defined.js';

/** The file store folder: `--store`, else `TROUPE_STORE`. */
export function storeDir(flag: string | undefined, io: CliIo): string | undefined {
  return flag ?? (io.env.TROUPE_STORE || undefined);
}

/** The flags that say where agents and the model come from. */
export interface AgentFlags {
  adapter?: string | undefined;
  script?: string | undefined;
  as?: string | undefined;
}

/** The runnable named `name` among the agents of `dir` (a logged run names its runnable), and the adapter of the flags. */
export async function compileForRun(dir: string, name: string, flags: AgentFlags, io: CliIo): Promise<{ runnable: Runnable; adapter: ModelAdapter; names: string[] }> {
  const loaded = await loadFolder(dir, flags, io);
  const flows = compileAgents(loaded.agents, { unknownTools: 'warn' });
  const runnable = Object.values(flows).find((f) => f.name === name) ?? flows[name];
  if (!runnable) throw new ConfigurationError(`The run was made by "${name}", which is not among the agents in ${dir} (${Object.keys(flows).join(', ')})`, { code: 'unknown_agent', details: { name } });
  io.err(adapterLine('troupe', flags.adapter, io.env, flags.script));
  const adapter = await createCliAdapter(cliAdapterName(flags.adapter, io.env), { defs: loaded.agents, env: io.env, ...defined({ script: flags.script, clock: io.clock }) });
  const names = [...new Set(loaded.agents.map((a) => a.adapter).filter((a): a is string => typeof a === 'string'))];
  return { runnable, adapter, names };
}

/** The plan a logged run ran at its top, as its log holds it (see {@link loggedPlan}). */
export interface LoggedPlan {
  /** The plan as it started (a fork: as it was at the checkpoint it was forked from). */
  plan: Plan;
  /** The plan's id: the run's runnable. */
  planId: string;
  /** The learning record it ran with (`troupe run --template --learn`). */
  learning?: LearningRecord;
  /** The changes made to it while it ran, in order (a replay applies them again). */
  changes: PlanChangeRecord[];
}

/**
 * The plan of a plan run (`executePlan` or `planRunnable` with a store,
 * `troupe run --template --store`, a plan template in `troupe dev`): the
 * state its first checkpoint saved at the top of the run, which holds the
 * plan. `undefined` when the run is not a plan run, or when its log holds
 * no checkpoint of its plan (it ran without a store).
 */
export function loggedPlan(log: RunEvents): LoggedPlan | undefined {
  const { runnable } = startRecord(log);
  let state: { plan: Plan; planId: string } | undefined;
  let learning: LearningRecord | undefined;
  for (const record of log.events) {
    if (record === null || typeof record !== 'object') continue;
    const e = record as Partial<TroupeEvent<'checkpoint.saved'>> & Partial<TroupeEvent<'plan.learning'>> & { type?: unknown };
    if (e.type === 'plan.learning' && e.planId === runnable && learning === undefined) {
      const parsed = learningRecordSchema.safeParse(e.learning);
      if (parsed.success) learning = parsed.data;
    }
    // The top of the run: a path of one segment (`/plan:<planId>#0`).
    if (e.type !== 'checkpoint.saved' || e.kind !== 'plan' || state !== undefined || typeof e.path !== 'string' || e.path.lastIndexOf('/') !== 0) continue;
    const parsed = planExecutionStateSchema.safeParse(e.state);
    if (parsed.success && parsed.data.planId === runnable) state = parsed.data;
  }
  if (state === undefined) return undefined;
  const changes = planChangesFromLog(log as { events: readonly TroupeEvent[] }, state.planId);
  return { plan: state.plan, planId: state.planId, ...defined({ learning }), changes };
}

/** True when the log shows a plan at the top of the run (its op, or its events), whether or not it holds the plan. */
function ranAPlan(log: RunEvents, runnable: string): boolean {
  return log.events.some((record) => {
    const e = record as { type?: unknown; kind?: unknown; depth?: unknown; planId?: unknown } | null;
    return (e?.type === 'op.started' && e.kind === 'plan' && e.depth === 1 && (e as { name?: unknown }).name === runnable) || (e?.type === 'plan.started' && e.planId === runnable);
  });
}

/**
 * The runnable of a plan run, rebuilt from its log: `planRunnable` of the
 * logged plan (its id and learning record too), with `options` (the
 * approvals, tools and instructions the caller gives its plans), and the
 * `PlanControl` a zero-model replay applies the logged changes with.
 * `undefined` when the log holds no plan (see {@link loggedPlan}).
 */
export function planRunnableOfRun(log: RunEvents, options: PlanRunOptions = {}): { runnable: Runnable; control: PlanControl } | undefined {
  const logged = loggedPlan(log);
  if (logged === undefined) return undefined;
  const runnable = planRunnable(logged.plan, { ...options, planId: logged.planId, ...defined({ learning: logged.learning }) });
  return { runnable, control: new PlanControl({ replay: logged.changes }) };
}

/** What a logged run is run again with, on the command line. */
export interface RebuiltRun {
  runnable: Runnable;
  /** The adapter of the flags (built only when asked for). */
  adapter?: ModelAdapter;
  /** Adapter names the runnable's agents use. */
  names: string[];
  /** A plan run's control: it applies the plan's logged changes in a replay. */
  control?: PlanControl;
  /** True for a plan run (rebuilt from its log). */
  plan: boolean;
}

/** The runnable name a planning session's log starts with (`runPlanningSession`). */
const PLANNING_SESSION = 'planning-session';

/** What a replay says when a rebuilt plan run asks what its log does not hold. */
export const PLAN_REPLAY_HINT = "a plan run is rebuilt with troupe's default roles and no tools: one made with its own roles, tools or chunk runner replays from code";

/**
 * The runnable `log` was made from: a plan run's from its log (no agent
 * files needed), an agent-file run's from `agents`. A run that cannot be
 * rebuilt is a `ConfigurationError` (`invalid_argument`) of one line that
 * says why. `adapter` builds the flags' adapter too (and says which on
 * standard error): a replay with no change needs none.
 */
export async function rebuildRun(log: RunEvents, agents: string | undefined, flags: AgentFlags, io: CliIo, adapter: boolean): Promise<RebuiltRun> {
  const { runnable: name } = startRecord(log);
  const rebuilt = planRunnableOfRun(log);
  const label = `Run${log.runId === undefined ? '' : ` "${log.runId}"`}`;
  if (rebuilt !== undefined) {
    if (!adapter) return { ...rebuilt, names: [], plan: true };
    io.err(adapterLine('troupe', flags.adapter, io.env, flags.script));
    const built = await createCliAdapter(cliAdapterName(flags.adapter, io.env), { defs: [], env: io.env, ...defined({ script: flags.script, clock: io.clock }) });
    return { ...rebuilt, adapter: built, names: [], plan: true };
  }
  if (name === PLANNING_SESSION) {
    throw new ConfigurationError(`${label} is a planning session: it moves on with a person's answers, and is not replayed or forked; open it in troupe dev`, { code: 'invalid_argument', details: { runnable: name } });
  }
  if (ranAPlan(log, name)) {
    throw new ConfigurationError(`${label} is a plan run, but its log holds no plan (no checkpoint of it was saved: it ran without a store?), so troupe cannot rebuild it; replay it from code: replayRun(planRunnable(plan), log)`, {
      code: 'invalid_argument',
      details: { runnable: name },
    });
  }
  if (agents === undefined) {
    throw new ConfigurationError(`${label} was made by "${name}" from agent files: give --agents <dir>, the folder it was made from`, { code: 'invalid_argument', details: { runnable: name } });
  }
  const compiled = await compileForRun(agents, name, flags, io);
  return { ...compiled, plan: false };
}

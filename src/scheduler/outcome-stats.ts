/**
 * Outcome statistics: how chunks of each role, each agent and each model
 * fared in earlier runs (success, attempts, duration, tokens, cost,
 * evaluation scores), folded from a run's events and kept in a store across
 * runs as one document updated by compare-and-set, so that concurrent runs
 * lose no update. `learning.ts` turns them into scheduling estimates, a
 * planner summary and a model choice, when asked to.
 * @module
 */
import { z } from 'zod';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, StoreError, describeValue } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { runEventsStream } from '../core/run-log-writer.js';
import { supportsCompareAndSet, type Store, type StoreCallOptions } from '../core/store.js';
import type { Usage } from '../core/usage.js';
// The events of the patterns this reader folds (their declarations merge into `TroupeEvent`; the module holds types only).
import '../patterns/events.js';
import './events.js';

/** The store key of the statistics document. */
export const OUTCOME_STATS_KEY = 'stats/outcomes';
/** The schema version of the statistics document. */
export const OUTCOME_STATS_VERSION = 1;
/** How many recorded run ids the document keeps, so that recording a run twice counts it once. */
const RECENT_RUNS = 200;
/** How many kinds of failure a tally keeps (the most frequent). */
const FAILURE_KINDS = 8;

const tallySchema = z.object({
  count: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  attempts: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
  scoreSum: z.number().nonnegative(),
  scores: z.number().int().nonnegative(),
  failures: z.record(z.string(), z.number().int().positive()),
});

const statsSchema = z.object({
  schemaVersion: z.literal(OUTCOME_STATS_VERSION),
  runs: z.number().int().nonnegative(),
  recentRuns: z.array(z.string()),
  roles: z.record(z.string(), tallySchema),
  agents: z.record(z.string(), tallySchema),
  models: z.record(z.string(), tallySchema),
  roleModels: z.record(z.string(), z.record(z.string(), tallySchema)),
});

/**
 * Totals of one subject (a role, an agent, a model). For roles `count` is
 * chunks that finished (succeeded or failed) and `attempts` their attempts;
 * for agents and models `count` is agent runs that finished, one attempt
 * each. Durations, tokens and cost are sums; a mean is the sum over
 * `count`, a score mean `scoreSum / scores` (0–1). `failures` counts the
 * kinds of failure (an error code, or a chunk's error cut to its first
 * words), the most frequent few.
 */
export type OutcomeTally = z.infer<typeof tallySchema>;

/**
 * The statistics document: per chunk role, per agent, per model, and per
 * role and model together (what the model choice reads). `runs` counts
 * the runs recorded; `recentRuns` holds the last ids, so recording one run
 * twice counts it once.
 */
export type OutcomeStats = z.infer<typeof statsSchema>;

/** What one run adds to the statistics: tallies by subject, keyed by the run. */
export interface OutcomeDelta {
  runId: string;
  roles: Record<string, OutcomeTally>;
  agents: Record<string, OutcomeTally>;
  models: Record<string, OutcomeTally>;
  roleModels: Record<string, Record<string, OutcomeTally>>;
}

/** Statistics with nothing recorded. */
export function emptyOutcomeStats(): OutcomeStats {
  return { schemaVersion: OUTCOME_STATS_VERSION, runs: 0, recentRuns: [], roles: {}, agents: {}, models: {}, roleModels: {} };
}

/** A tally with nothing counted. */
export function emptyTally(): OutcomeTally {
  return { count: 0, succeeded: 0, failed: 0, attempts: 0, durationMs: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, scoreSum: 0, scores: 0, failures: {} };
}

/** `into` plus `add` (failure kinds merged, the most frequent kept). */
function addTally(into: OutcomeTally, add: OutcomeTally): OutcomeTally {
  const failures: Record<string, number> = { ...into.failures };
  for (const [kind, n] of Object.entries(add.failures)) failures[kind] = (failures[kind] ?? 0) + n;
  const kept = Object.entries(failures).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FAILURE_KINDS);
  return {
    count: into.count + add.count,
    succeeded: into.succeeded + add.succeeded,
    failed: into.failed + add.failed,
    attempts: into.attempts + add.attempts,
    durationMs: into.durationMs + add.durationMs,
    inputTokens: into.inputTokens + add.inputTokens,
    outputTokens: into.outputTokens + add.outputTokens,
    costUsd: into.costUsd + add.costUsd,
    scoreSum: into.scoreSum + add.scoreSum,
    scores: into.scores + add.scores,
    failures: Object.fromEntries(kept),
  };
}

function addTallies(into: Record<string, OutcomeTally>, add: Record<string, OutcomeTally>): Record<string, OutcomeTally> {
  const out = { ...into };
  for (const [key, tally] of Object.entries(add)) out[key] = addTally(out[key] ?? emptyTally(), tally);
  return out;
}

/**
 * `stats` with one run's delta added. A run already in `recentRuns` is not
 * counted again (the same statistics come back). Pure.
 */
export function mergeOutcomes(stats: OutcomeStats, delta: OutcomeDelta): OutcomeStats {
  if (stats.recentRuns.includes(delta.runId)) return stats;
  const roleModels = { ...stats.roleModels };
  for (const [role, byModel] of Object.entries(delta.roleModels)) roleModels[role] = addTallies(roleModels[role] ?? {}, byModel);
  return {
    schemaVersion: OUTCOME_STATS_VERSION,
    runs: stats.runs + 1,
    recentRuns: [...stats.recentRuns, delta.runId].slice(-RECENT_RUNS),
    roles: addTallies(stats.roles, delta.roles),
    agents: addTallies(stats.agents, delta.agents),
    models: addTallies(stats.models, delta.models),
    roleModels,
  };
}

/** Validate a statistics document; a `StoreError` names what is wrong. */
export function parseOutcomeStats(value: unknown): OutcomeStats {
  const version = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > OUTCOME_STATS_VERSION) {
    throw new StoreError(`Outcome statistics have schema version ${version}; this troupe reads up to ${OUTCOME_STATS_VERSION}`, { details: { version } });
  }
  const parsed = statsSchema.safeParse(value);
  if (!parsed.success) throw new StoreError(`Invalid outcome statistics: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Options of the statistics' store calls. */
export interface OutcomeStatsOptions extends StoreCallOptions {
  /** The document's key. Default: {@link OUTCOME_STATS_KEY}. */
  key?: string;
}

/** The statistics kept in `store` (empty when none were recorded). */
export async function loadOutcomeStats(store: Store, options: OutcomeStatsOptions = {}): Promise<OutcomeStats> {
  const { key = OUTCOME_STATS_KEY, ...call } = options;
  const raw = await store.get(key, call);
  return raw === undefined ? emptyOutcomeStats() : parseOutcomeStats(raw);
}

/** Compare-and-set attempts before {@link recordOutcomes} gives up (each failed one means another writer progressed). */
const CAS_ATTEMPTS = 100;

/**
 * Add one run's delta to the statistics in `store` and return what was
 * written. With compare-and-set (`getVersioned`/`setIf`: the memory, file
 * and Redis stores) the read, merge and write repeat until no other writer
 * came in between, so concurrent runs lose no update; a store without it
 * reads and writes (concurrent writers may then overwrite each other).
 *
 * @example
 * ```ts
 * const outcomes = outcomeCollector();
 * const result = await run(flow, input, { adapter, onEvent: outcomes.onEvent });
 * for (const delta of outcomes.deltas()) await recordOutcomes(store, delta);
 * ```
 */
export async function recordOutcomes(store: Store, delta: OutcomeDelta, options: OutcomeStatsOptions = {}): Promise<OutcomeStats> {
  const { key = OUTCOME_STATS_KEY, ...call } = options;
  if (!delta || typeof delta.runId !== 'string') throw new ConfigurationError(`Expected an outcome delta with a runId, got ${describeValue(delta)}`, { code: 'invalid_argument' });
  if (!supportsCompareAndSet(store)) {
    const next = mergeOutcomes(await loadOutcomeStats(store, options), delta);
    await store.set(key, next, call);
    return next;
  }
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    throwIfAborted(call.signal);
    const current = await store.getVersioned(key, call);
    const stats = current === undefined ? emptyOutcomeStats() : parseOutcomeStats(current.value);
    const next = mergeOutcomes(stats, delta);
    if (next === stats) return stats;
    const written = await store.setIf(key, next, { ...call, ifVersion: current?.version ?? null });
    if (written.ok) return next;
  }
  throw new StoreError(`Outcome statistics "${key}" kept changing: ${CAS_ATTEMPTS} compare-and-set attempts failed`, { details: { key } });
}

/**
 * Fold the run log of `runId` in `store` (a run made with `{ store }`) into
 * its outcomes and add them to the statistics there (see
 * {@link recordOutcomes}); recording a run twice counts it once.
 */
export async function recordRunOutcomes(store: Store, runId: string, options: OutcomeStatsOptions = {}): Promise<OutcomeStats> {
  const { key: _key, ...call } = options;
  const collector = outcomeCollector();
  const { records } = await store.read(runEventsStream(runId), call);
  for (const record of records) if (isEvent(record)) collector.onEvent(record);
  const delta = collector.deltas().find((d) => d.runId === runId) ?? { runId, roles: {}, agents: {}, models: {}, roleModels: {} };
  return recordOutcomes(store, delta, options);
}

function isEvent(value: unknown): value is TroupeEvent {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && typeof (value as { runId?: unknown }).runId === 'string';
}

/** Folds events into outcome deltas, one per run; see {@link outcomeCollector}. */
export interface OutcomeCollector {
  /** Fold one event in (pass it as a run's `onEvent`). Never throws. */
  readonly onEvent: (event: TroupeEvent) => void;
  /** The deltas of every run seen so far, in the order the runs started. */
  deltas(): OutcomeDelta[];
}

interface OpInfo {
  parentId: string | undefined;
  kind: string;
  agent: string | undefined;
  path: string | undefined;
  /** `<plan op id>/<chunk id>` of the plan chunk the op serves. */
  chunk: string | undefined;
  /** The last model its turns used. */
  model?: string;
  /** Agents that finished under this op since its last evaluation. */
  evaluated?: Set<string>;
}

interface ChunkInfo {
  role: string;
  start?: number;
  status?: 'Succeeded' | 'Failed';
  end?: number;
  attempts: number;
  error?: string;
  model?: string;
  usage: Usage[];
  scoreSum: number;
  scores: number;
}

interface RunFold {
  delta: OutcomeDelta;
  ops: Map<string, OpInfo>;
  chunks: Map<string, ChunkInfo>;
  /** The last model each agent used. */
  agentModels: Map<string, string>;
}

/** Kinds of op that are one agent's work (an agent, an orchestration's worker, a team member). */
const AGENT_KINDS: ReadonlySet<string> = new Set(['agent', 'worker', 'team-member']);

/** Whether an op above `op` is the same agent's work (then only that one counts). */
function insideSameAgent(state: RunFold, op: OpInfo, agent: string): boolean {
  for (let up = op.parentId === undefined ? undefined : state.ops.get(op.parentId); up; up = up.parentId === undefined ? undefined : state.ops.get(up.parentId)) {
    if (AGENT_KINDS.has(up.kind) && up.agent === agent) return true;
  }
  return false;
}

/** The model a turn of `spec` used, as the statistics name it (`<adapter>:default` when the spec names none). */
function modelName(adapter: string, model: string | undefined): string {
  return model ?? `${adapter}:default`;
}

/** A kind of failure: an error code, else the error's first words. */
function failureKind(code: string | undefined, error: string | undefined): string {
  if (code) return code;
  const words = (error ?? 'error').split('\n', 1)[0]!.trim().split(/\s+/).slice(0, 6).join(' ');
  return words.length > 60 ? `${words.slice(0, 60)}…` : words || 'error';
}

/**
 * A collector of outcomes: feed it a run's events (as `onEvent`, or from a
 * run log) and read each run's delta. It counts:
 *
 * - per chunk role, each chunk that succeeded or failed: its attempts,
 *   the time from its first start to its end, the usage of its attempts'
 *   ops, and the model its turns used (also per role and model);
 * - per agent and per model, each agent run (an `agent`, `worker` or
 *   `team-member` op, the outermost of one agent) that completed or failed
 *   (cancelled runs are not counted): its duration and usage;
 * - evaluation scores (`reflect.evaluated`): for each agent that made a
 *   model turn under the evaluated loop since its last evaluation (the
 *   evaluator excepted), its model, and the role of the chunk the loop
 *   runs in.
 *
 * @example
 * ```ts
 * const outcomes = outcomeCollector();
 * await executePlan(plan, { adapter, onEvent: outcomes.onEvent });
 * const [delta] = outcomes.deltas();
 * ```
 */
export function outcomeCollector(): OutcomeCollector {
  const runs = new Map<string, RunFold>();
  const fold = (runId: string): RunFold => {
    let state = runs.get(runId);
    if (!state) runs.set(runId, (state = { delta: { runId, roles: {}, agents: {}, models: {}, roleModels: {} }, ops: new Map(), chunks: new Map(), agentModels: new Map() }));
    return state;
  };
  const tally = (map: Record<string, OutcomeTally>, key: string): OutcomeTally => (map[key] ??= emptyTally());
  const add = (t: OutcomeTally, ok: boolean, attempts: number, durationMs: number, usage: Partial<Usage>, failure?: string) => {
    t.count++;
    if (ok) t.succeeded++;
    else {
      t.failed++;
      if (failure) t.failures[failure] = (t.failures[failure] ?? 0) + 1;
    }
    t.attempts += attempts;
    t.durationMs += Math.max(0, durationMs);
    t.inputTokens += usage.inputTokens ?? 0;
    t.outputTokens += usage.outputTokens ?? 0;
    t.costUsd += usage.costUsd ?? 0;
  };

  const apply = (event: TroupeEvent): void => {
    const state = fold(event.runId);
    switch (event.type) {
      case 'op.started': {
        if (event.opId === undefined) return;
        const parent = event.parentId === undefined ? undefined : state.ops.get(event.parentId);
        let chunk = parent?.chunk;
        if (parent?.kind === 'plan' && event.path !== undefined && parent.path !== undefined && event.path.startsWith(`${parent.path}/chunk-`)) {
          chunk = `${event.parentId}/${event.path.slice(parent.path.length + 7).split('/', 1)[0]}`;
        }
        state.ops.set(event.opId, { parentId: event.parentId, kind: event.kind, agent: event.agent, path: event.path, chunk });
        return;
      }
      case 'model.turn': {
        const model = modelName(event.adapter, event.spec.model);
        state.agentModels.set(event.agent, model);
        const op = event.opId === undefined ? undefined : state.ops.get(event.opId);
        if (op) op.model = model;
        // The loops above this op evaluate what this agent said.
        for (let up = op; up; up = up.parentId === undefined ? undefined : state.ops.get(up.parentId)) (up.evaluated ??= new Set()).add(event.agent);
        const chunk = op?.chunk === undefined ? undefined : state.chunks.get(op.chunk);
        if (chunk) chunk.model = model;
        return;
      }
      case 'op.completed': {
        const op = event.opId === undefined ? undefined : state.ops.get(event.opId);
        if (!op) return;
        const parent = op.parentId === undefined ? undefined : state.ops.get(op.parentId);
        // An attempt's ops sit right under the plan: their usage is the chunk's.
        if (op.chunk !== undefined && parent?.kind === 'plan') state.chunks.get(op.chunk)?.usage.push(event.usage);
        if (AGENT_KINDS.has(event.kind) && event.agent !== undefined && (event.status === 'completed' || event.status === 'failed') && !insideSameAgent(state, op, event.agent)) {
          const ok = event.status === 'completed';
          const failure = ok ? undefined : failureKind(event.code, event.error);
          const model = op.model ?? state.agentModels.get(event.agent);
          add(tally(state.delta.agents, event.agent), ok, 1, event.durationMs, event.usage, failure);
          if (model !== undefined) add(tally(state.delta.models, model), ok, 1, event.durationMs, event.usage, failure);
        }
        return;
      }
      case 'chunk.status': {
        if (event.opId === undefined) return;
        const id = `${event.opId}/${event.chunkId}`;
        let chunk = state.chunks.get(id);
        if (!chunk) state.chunks.set(id, (chunk = { role: event.role, attempts: 0, usage: [], scoreSum: 0, scores: 0 }));
        chunk.attempts = Math.max(chunk.attempts, event.attempt);
        if (event.status === 'Running' && chunk.start === undefined) chunk.start = event.time;
        if (event.status === 'Succeeded' || event.status === 'Failed') {
          chunk.status = event.status;
          chunk.end = event.time;
          if (event.error !== undefined) chunk.error = event.error;
        }
        return;
      }
      case 'reflect.evaluated': {
        const loop = event.opId === undefined ? undefined : state.ops.get(event.opId);
        if (!loop) return;
        const agents = [...(loop.evaluated ?? [])].filter((a) => a !== event.evaluator);
        loop.evaluated = undefined;
        const score = (t: OutcomeTally) => {
          t.scoreSum += event.score;
          t.scores++;
        };
        const models = new Set<string>();
        for (const agent of agents) {
          score(tally(state.delta.agents, agent));
          const model = state.agentModels.get(agent);
          if (model !== undefined) models.add(model);
        }
        for (const model of models) score(tally(state.delta.models, model));
        const chunk = loop.chunk === undefined ? undefined : state.chunks.get(loop.chunk);
        if (chunk) {
          chunk.scoreSum += event.score;
          chunk.scores++;
        }
        return;
      }
      default:
        return;
    }
  };

  return {
    onEvent(event) {
      try {
        apply(event);
      } catch {
        // A malformed event (a foreign log line) adds nothing.
      }
    },
    deltas() {
      return [...runs.values()].map(({ delta, chunks }) => {
        const out: OutcomeDelta = structuredClone(delta);
        for (const chunk of chunks.values()) {
          if (chunk.status === undefined) continue;
          const ok = chunk.status === 'Succeeded';
          const usage = chunk.usage.reduce<Partial<Usage>>((a, u) => ({ inputTokens: (a.inputTokens ?? 0) + u.inputTokens, outputTokens: (a.outputTokens ?? 0) + u.outputTokens, costUsd: (a.costUsd ?? 0) + u.costUsd }), {});
          const duration = chunk.end! - (chunk.start ?? chunk.end!);
          const failure = ok ? undefined : failureKind(undefined, chunk.error);
          const targets = [tally(out.roles, chunk.role)];
          if (chunk.model !== undefined) targets.push(tally((out.roleModels[chunk.role] ??= {}), chunk.model));
          for (const t of targets) {
            add(t, ok, Math.max(1, chunk.attempts), duration, usage, failure);
            t.scoreSum += chunk.scoreSum;
            t.scores += chunk.scores;
          }
        }
        return out;
      });
    },
  };
}

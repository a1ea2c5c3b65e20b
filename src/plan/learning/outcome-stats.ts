/**
 * Outcome statistics: how chunks of each role, each agent and each model
 * fared in earlier runs (success, attempts, duration, tokens, cost,
 * evaluation scores), folded from a run's events and kept in a store across
 * runs as one document updated by compare-and-set, so that concurrent runs
 * lose no update (the fold itself is `outcome-collector.ts`). `learning.ts` turns them into scheduling estimates, a
 * planner summary and a model choice, when asked to.
 * @module
 */
import { z } from 'zod';
import { throwIfAborted } from '../../core/abort.js';
import { ConfigurationError, StoreError, describeValue } from '../../core/errors.js';
import { abortSignal, defineOptions, nonEmptyString, required, store as storeCheck } from '../../core/options.js';
import { supportsCompareAndSet, type Store, type StoreCallOptions } from '../../core/store.js';

/** The store key of the statistics document. */
export const OUTCOME_STATS_KEY = 'stats/outcomes';
/** The schema version of the statistics document. */
export const OUTCOME_STATS_VERSION = 1;
/** How many recorded run ids the document keeps, so that recording a run twice counts it once. */
const RECENT_RUNS = 200;
/** How many kinds of failure a tally keeps (the most frequent). */
const FAILURE_KINDS = 8;

/** A tally saved before chunk statuses were renamed counts `succeeded`: today's `completed`. */
function currentTally(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('succeeded' in value) || 'completed' in value) return value;
  const { succeeded, ...rest } = value as Record<string, unknown>;
  return { ...rest, completed: succeeded };
}

const tallyShape = z.object({
  count: z.number().int().nonnegative(),
  completed: z.number().int().nonnegative(),
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
const tallySchema = z.preprocess(currentTally, tallyShape);

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
 * chunks that finished (completed or failed) and `attempts` their attempts;
 * for agents and models `count` is agent runs that finished, one attempt
 * each. Durations, tokens and cost are sums; a mean is the sum over
 * `count`, a score mean `scoreSum / scores` (0–1). `failures` counts the
 * kinds of failure (an error code, or a chunk's error cut to its first
 * words), the most frequent few.
 */
export type OutcomeTally = z.infer<typeof tallyShape>;

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
  return { count: 0, completed: 0, failed: 0, attempts: 0, durationMs: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, scoreSum: 0, scores: 0, failures: {} };
}

/** `into` plus `add` (failure kinds merged, the most frequent kept). */
function addTally(into: OutcomeTally, add: OutcomeTally): OutcomeTally {
  const failures: Record<string, number> = { ...into.failures };
  for (const [kind, n] of Object.entries(add.failures)) failures[kind] = (failures[kind] ?? 0) + n;
  const kept = Object.entries(failures).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FAILURE_KINDS);
  return {
    count: into.count + add.count,
    completed: into.completed + add.completed,
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

/** Where the statistics are: the store, the document's key, and a signal for the store calls. */
export interface OutcomeStatsOptions extends StoreCallOptions {
  /** The store that keeps the statistics. */
  store: Store;
  /** The document's key. Default: {@link OUTCOME_STATS_KEY}. */
  key?: string;
}

/** The description {@link loadOutcomeStats}, {@link recordOutcomes} and `recordRunOutcomes` check their options against. */
export const outcomeStatsOptions = defineOptions<OutcomeStatsOptions>('loadOutcomeStats', { store: required(storeCheck), key: nonEmptyString, signal: abortSignal });

/**
 * The statistics kept in `options.store` (empty when none were recorded).
 *
 * @example
 * ```ts
 * const stats = await loadOutcomeStats({ store });
 * ```
 */
export async function loadOutcomeStats(options: OutcomeStatsOptions): Promise<OutcomeStats> {
  outcomeStatsOptions.check(options);
  const { store, key = OUTCOME_STATS_KEY, ...call } = options;
  const raw = await store.get(key, call);
  return raw === undefined ? emptyOutcomeStats() : parseOutcomeStats(raw);
}

/** Compare-and-set attempts before {@link recordOutcomes} gives up (each failed one means another writer progressed). */
const CAS_ATTEMPTS = 100;

/**
 * Add one run's delta to the statistics in `options.store` and return what was
 * written. With compare-and-set (`getVersioned`/`setIf`: the memory, file
 * and Redis stores) the read, merge and write repeat until no other writer
 * came in between, so concurrent runs lose no update; a store without it
 * reads and writes (concurrent writers may then overwrite each other).
 *
 * @example
 * ```ts
 * const outcomes = outcomeCollector();
 * const result = await run(flow, input, { adapter, onEvent: outcomes.onEvent });
 * for (const delta of outcomes.deltas()) await recordOutcomes(delta, { store });
 * ```
 */
export async function recordOutcomes(delta: OutcomeDelta, options: OutcomeStatsOptions): Promise<OutcomeStats> {
  outcomeStatsOptions.check(options, '', 'recordOutcomes');
  const { store, key = OUTCOME_STATS_KEY, ...call } = options;
  if (!delta || typeof delta.runId !== 'string') throw new ConfigurationError(`Expected an outcome delta with a runId, got ${describeValue(delta)}`, { code: 'invalid_argument' });
  if (!supportsCompareAndSet(store)) {
    const next = mergeOutcomes(await loadOutcomeStats(options), delta);
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

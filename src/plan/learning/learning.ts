/**
 * Learning from earlier runs: outcome statistics (see `outcome-stats.ts`)
 * turned into what a plan may use when the caller opts in — each role's
 * usual duration as its scheduling estimate, a model for each role chosen
 * among configured ones by past success and cost, and a short factual
 * summary for the planner. The result is a {@link LearningRecord}: plain
 * data that a plan applies and logs (`plan.learning`), so a resumed or
 * replayed run uses the same numbers whatever the statistics say later.
 * @module
 */
import { z } from 'zod';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { abortSignal, boolean, check, defineOptions, fraction, listOf, positiveInteger, required, store as storeCheck, string } from '../../core/options.js';
import { runEventsStream } from '../../core/run-log-writer.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { chunkRoles, type ChunkRole } from '../model/plan.js';
import type { RoleOverrides } from '../model/roles.js';
import { learningRecordSchema, type LearningRecord } from './learning-record.js';
import type { OutcomeStats, OutcomeTally } from './outcome-stats.js';

export { learningRecordSchema, type LearningRecord } from './learning-record.js';

/** What to use from the statistics; nothing is used unless asked for. */
export interface LearnOptions {
  /** Use each role's mean duration (from its first start to its end, over the chunks that finished) as the estimate of its chunks. Default: false. */
  estimates?: boolean;
  /**
   * Choose each listed role's model among these candidates (in order of
   * preference): the best past success rate (smoothed: `(completed + 1) /
   * (count + 2)`), and among candidates within `tolerance` of it the lowest
   * mean cost per chunk; a candidate with fewer than `minSamples` chunks of
   * the role is not judged, and when none has enough the first is chosen.
   */
  models?: Partial<Record<ChunkRole, readonly string[]>>;
  /** Write a summary for the planner (see {@link outcomeSummary}). Default: false. */
  summary?: boolean;
  /** Chunks of a role (or of a role on a model) needed before its numbers are used. Default: 3. */
  minSamples?: number;
  /** How far below the best success rate a cheaper model may be. Default: 0.05. */
  tolerance?: number;
}

/** Model candidates by chunk role (`LearnOptions.models`). */
const modelsByRole = check(`an object of model lists by chunk role (${chunkRoles.join(', ')})`, (v) => typeof v === 'object' && v !== null && !Array.isArray(v));

const learnOptions = defineOptions<LearnOptions>('learnFromStats', { estimates: boolean, models: modelsByRole, summary: boolean, minSamples: positiveInteger, tolerance: fraction });

const mean = (sum: number, n: number): number => (n > 0 ? sum / n : 0);

/** A role's numbers. */
function basis(t: OutcomeTally): LearningRecord['basis'][string] {
  return {
    chunks: t.count,
    successRate: mean(t.completed, t.count),
    meanAttempts: mean(t.attempts, t.count),
    meanMs: Math.round(mean(t.durationMs, t.count)),
    meanCostUsd: mean(t.costUsd, t.count),
  };
}

/**
 * Decide what a run uses from `stats` (see {@link LearnOptions}); pure, so
 * the same statistics and options give the same record.
 *
 * @example
 * ```ts
 * const learning = learnFromStats(await loadOutcomeStats({ store }), { estimates: true, models: { Implementation: ['large', 'small'] } });
 * await executePlan(plan, { adapter, learning });
 * ```
 */
export function learnFromStats(stats: OutcomeStats, options: LearnOptions = {}): LearningRecord {
  learnOptions.check(options);
  const minSamples = options.minSamples ?? 3;
  const tolerance = options.tolerance ?? 0.05;
  const record: LearningRecord = { runs: stats.runs, estimates: {}, models: {}, basis: {} };
  const use = (role: string, t: OutcomeTally) => (record.basis[role] = basis(t));
  if (options.estimates) {
    for (const [role, t] of Object.entries(stats.roles)) {
      if (t.completed < minSamples || !(chunkRoles as readonly string[]).includes(role)) continue;
      const ms = Math.round(t.durationMs / t.count);
      if (ms > 0) {
        record.estimates[role] = ms;
        use(role, t);
      }
    }
  }
  for (const [role, candidates] of Object.entries(options.models ?? {})) {
    if (!(chunkRoles as readonly string[]).includes(role)) throw new ConfigurationError(`Expected \`models\` to be keyed by chunk role, got "${role}" (roles: ${chunkRoles.join(', ')})`);
    if (!Array.isArray(candidates) || candidates.length === 0 || !candidates.every((m) => typeof m === 'string' && m !== '')) {
      throw new ConfigurationError(`Expected \`models.${role}\` to be a non-empty list of model names, got ${describeValue(candidates)}`);
    }
    record.models[role] = chooseModel(stats.roleModels[role] ?? {}, candidates, minSamples, tolerance);
    if (stats.roles[role]) use(role, stats.roles[role]);
  }
  if (options.summary) record.summary = outcomeSummary(stats, { minSamples: 1 });
  return record;
}

function chooseModel(byModel: Record<string, OutcomeTally>, candidates: readonly string[], minSamples: number, tolerance: number): { model: string; reason: string } {
  const judged = candidates.flatMap((model, order) => {
    const t = byModel[model];
    return t && t.count >= minSamples ? [{ model, order, rate: (t.completed + 1) / (t.count + 2), cost: mean(t.costUsd, t.count), n: t.count, completed: t.completed }] : [];
  });
  if (judged.length === 0) return { model: candidates[0]!, reason: `no candidate has ${minSamples} chunks of this role yet: the first` };
  const best = Math.max(...judged.map((j) => j.rate));
  const pick = judged.filter((j) => j.rate >= best - tolerance).sort((a, b) => a.cost - b.cost || a.order - b.order)[0]!;
  const pct = (r: number) => `${Math.round(r * 100)}%`;
  // The rate is smoothed ((completed + 1) / (chunks + 2): 2 of 2 scores 75%), so the reason gives the count too.
  return { model: pick.model, reason: `${pick.completed} of ${pick.n} chunks completed (score ${pct(pick.rate)}, best ${pct(best)}), $${pick.cost.toFixed(4)} a chunk` };
}

/**
 * `roles` with a learning record applied: the learned estimate of a role
 * whose override sets none, and the chosen model of a role whose override
 * names none (what the caller configured wins).
 */
export function applyLearning(roles: RoleOverrides | undefined, learning: LearningRecord): RoleOverrides {
  const out: RoleOverrides = { ...(roles ?? {}) };
  for (const [role, ms] of Object.entries(learning.estimates)) {
    const r = role as ChunkRole;
    if (out[r]?.estimatedMs === undefined) out[r] = { ...out[r], estimatedMs: ms };
  }
  for (const [role, { model }] of Object.entries(learning.models)) {
    const r = role as ChunkRole;
    if (out[r]?.model === undefined) out[r] = { ...out[r], model };
  }
  return out;
}

/** Validate a learning record (a plan's `learning` option); a `ConfigurationError` names the problem. */
export function parseLearningRecord(value: unknown): LearningRecord {
  const parsed = learningRecordSchema.safeParse(value);
  if (!parsed.success) throw new ConfigurationError(`Invalid \`learning\`: ${z.prettifyError(parsed.error)}`, { details: { issues: parsed.error.issues } });
  return parsed.data;
}

/** Options of {@link outcomeSummary}. */
export interface OutcomeSummaryOptions {
  /** Only these roles. Default: every role with numbers. */
  roles?: readonly string[];
  /** Roles with fewer chunks are left out. Default: 3. */
  minSamples?: number;
}

const outcomeSummaryOptions = defineOptions<OutcomeSummaryOptions>('outcomeSummary', { roles: listOf(string), minSamples: positiveInteger });

/** Options of {@link usedLearning}. */
export interface UsedLearningOptions extends StoreCallOptions {
  /** The store the run was logged in. */
  store: Store;
}

const usedLearningOptions = defineOptions<UsedLearningOptions>('usedLearning', { store: required(storeCheck), signal: abortSignal });

const duration = (ms: number): string => (ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

/**
 * A short, factual summary of how each role's chunks went, for a planner's
 * prompt (`decompose(task, { context })`): one line per role with its
 * chunks, success rate, mean attempts, mean duration, mean score and most
 * frequent failures. Empty when there is nothing to say.
 *
 * @example
 * ```ts
 * // - Testing: 12 chunks, 75% succeeded, 1.4 attempts, 2.5 min each; failures: timeout ×2
 * const context = outcomeSummary(await loadOutcomeStats({ store }));
 * ```
 */
export function outcomeSummary(stats: OutcomeStats, options: OutcomeSummaryOptions = {}): string {
  outcomeSummaryOptions.check(options);
  const minSamples = options.minSamples ?? 3;
  const lines: string[] = [];
  for (const [role, t] of Object.entries(stats.roles).sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (t.count < minSamples || (options.roles && !options.roles.includes(role))) continue;
    const b = basis(t);
    const parts = [`${t.count} chunks`, `${Math.round(b.successRate * 100)}% succeeded`, `${b.meanAttempts.toFixed(1)} attempts`, `${duration(b.meanMs)} each`];
    if (t.scores > 0) parts.push(`score ${(t.scoreSum / t.scores).toFixed(2)}`);
    const failures = Object.entries(t.failures).slice(0, 3).map(([kind, n]) => `${kind} ×${n}`);
    lines.push(`- ${role}: ${parts.join(', ')}${failures.length ? `; failures: ${failures.join(', ')}` : ''}`);
  }
  return lines.length === 0 ? '' : `How chunks of each role went in ${stats.runs} earlier run${stats.runs === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}

/**
 * The learning records a logged run used (its `plan.learning` events, in
 * order): pass one back as `learning` to resume or replay the run with the
 * same numbers.
 *
 * @example
 * ```ts
 * const [used] = await usedLearning('run-7', { store });
 * await resume(planRunnable(plan, { learning: used?.learning }), 'run-7', { store, adapter });
 * ```
 */
export async function usedLearning(runId: string, options: UsedLearningOptions): Promise<Array<{ planId: string; learning: LearningRecord }>> {
  usedLearningOptions.check(options);
  const { store, ...call } = options;
  const { records } = await store.read(runEventsStream(runId), call);
  const used: Array<{ planId: string; learning: LearningRecord }> = [];
  for (const r of records) {
    const e = r as { type?: unknown; planId?: unknown; learning?: unknown };
    if (e?.type !== 'plan.learning' || typeof e.planId !== 'string') continue;
    const parsed = learningRecordSchema.safeParse(e.learning);
    if (parsed.success) used.push({ planId: e.planId, learning: parsed.data });
  }
  return used;
}

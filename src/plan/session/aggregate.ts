/**
 * The aggregator: a synthesis session reads every chunk's title, role,
 * status, response and files, and writes a conversational summary that
 * explains failures and flags conflicts between workers.
 * @module
 */
import { totalUsage } from '../../core/ops.js';
import { defineOptions, nonNegativeNumber, string } from '../../core/options.js';
import { roleOverrides } from '../engine/options.js';
import { conversationShape, withConversation, type ConversationOptions } from './conversation.js';
import type { Plan } from '../model/plan.js';
import { resolveRole, type RoleOverrides } from '../model/roles.js';
import type { AggregateReport, ChunkResult, PlanStats } from '../engine/types.js';

export type { AggregateReport, PlanStats } from '../engine/types.js';

/** Options of {@link aggregate}. */
export interface AggregateOptions extends ConversationOptions {
  /** The task the plan served. Default: the plan's summary. */
  task?: string;
  /** The synthesis session's system prompt. Default: the Synthesis role's. */
  system?: string;
  /** Overrides of the roles: the Synthesis role's system prompt, model and temperature are the defaults of the session. */
  roles?: RoleOverrides;
  /** The execution's duration, for the stats. Default: 0. */
  durationMs?: number;
}

/** The description {@link AggregateOptions} are checked against. */
const aggregateOptions = defineOptions<AggregateOptions>('aggregate', { ...conversationShape, task: string, system: string, roles: roleOverrides, durationMs: nonNegativeNumber });

/**
 * Summarise a plan's results with a synthesis session.
 *
 * @example
 * ```ts
 * const report = await aggregate(plan, outcome.results, { adapter, task });
 * console.log(report.summary, report.stats);
 * ```
 */
export async function aggregate(plan: Plan, results: readonly ChunkResult[], options: AggregateOptions): Promise<AggregateReport> {
  aggregateOptions.check(options);
  const conflicts = fileConflicts(results);
  const prompt = synthesisPrompt(plan, results, options.task ?? plan.planSummary, conflicts);
  const role = resolveRole('Synthesis', options.roles);
  const settings: ConversationOptions = { ...options };
  if (settings.model === undefined && role.model !== undefined) settings.model = role.model;
  if (settings.temperature === undefined && role.temperature !== undefined) settings.temperature = role.temperature;
  const { value: summary, usage } = await withConversation(
    'synthesis',
    options.system ?? role.system,
    settings,
    async (session, signal) => (await session.send(prompt, signal ? { signal } : {})).text,
  );
  return {
    summary,
    stats: { ...countResults(results), durationMs: options.durationMs ?? 0, usage: options.ctx ? totalUsage(options.ctx.op) : usage },
    conflicts,
    mergeConflicts: mergeConflicts(results),
  };
}

/** Every merge conflict of the results, by chunk, in order. */
export function mergeConflicts(results: readonly ChunkResult[]): AggregateReport['mergeConflicts'] {
  return results.flatMap((r) =>
    (r.mergeConflicts ?? []).map((c) => ({ chunk: r.sequenceIndex, attempt: c.attempt, paths: [...c.paths], with: c.with.map((w) => w.sequenceIndex), resolved: c.resolved })),
  );
}

/** The synthesis prompt (exported for custom aggregators). */
export function synthesisPrompt(plan: Plan, results: readonly ChunkResult[], task: string, conflicts: AggregateReport['conflicts'] = fileConflicts(results)): string {
  const sections = results.map((r) => {
    const lines = [`### ${r.sequenceIndex}. ${r.title}`, `Role: ${r.role} · Status: ${r.status} · Attempts: ${r.attempts}`];
    if (r.files?.length) lines.push(`Files: ${r.files.join(', ')}`);
    if (r.toolCalls?.length) lines.push(`Tool calls: ${r.toolCalls.length} (${[...new Set(r.toolCalls.map((t) => t.name))].join(', ')})`);
    for (const c of r.mergeConflicts ?? []) {
      const others = c.with.length ? ` with chunk${c.with.length > 1 ? 's' : ''} ${c.with.map((w) => w.sequenceIndex).join(', ')}` : '';
      lines.push(`Merge conflict (attempt ${c.attempt}) in ${c.paths.join(', ')}${others}: ${c.resolved ? 'resolved by a later attempt' : 'not resolved'}`);
    }
    if (r.output !== undefined) lines.push('', 'Response:', r.output);
    if (r.error !== undefined && r.status !== 'completed') lines.push('', `Error: ${r.error}`);
    return lines.join('\n');
  });
  const overlap = conflicts.length
    ? `\n\n## Files changed by more than one worker\n\n${conflicts.map((c) => `- ${c.file}: chunks ${c.chunks.join(', ')}`).join('\n')}`
    : '';
  return (
    `## Task\n\n${task}\n\n## Plan\n\n${plan.planSummary}\n\n## Results\n\n${sections.join('\n\n')}${overlap}\n\n` +
    'Write a conversational summary for the user: what was found and done, why any chunk failed, was skipped or cancelled, ' +
    'and any conflicts between workers (contradicting findings, the same file changed by several workers, or merge conflicts and how they were resolved).'
  );
}

function fileConflicts(results: readonly ChunkResult[]): AggregateReport['conflicts'] {
  const byFile = new Map<string, number[]>();
  for (const r of results) for (const f of r.files ?? []) byFile.set(f, [...(byFile.get(f) ?? []), r.sequenceIndex]);
  return [...byFile].filter(([, chunks]) => chunks.length > 1).map(([file, chunks]) => ({ file, chunks }));
}

/** Counts of a plan's results by status (`retried`: chunks that needed more than one attempt). */
export function countResults(results: readonly ChunkResult[]): Omit<PlanStats, 'durationMs' | 'usage'> {
  const counts = { total: results.length, completed: 0, failed: 0, retried: 0, skipped: 0, cancelled: 0 };
  for (const r of results) {
    if (r.status === 'completed') counts.completed++;
    else if (r.status === 'failed') counts.failed++;
    else if (r.status === 'skipped') counts.skipped++;
    else if (r.status === 'cancelled') counts.cancelled++;
    if (r.attempts > 1) counts.retried++;
  }
  return counts;
}

/**
 * `troupe stats`: the outcome statistics of earlier runs kept in a file
 * store, per role, agent and model; `--record <run-id>` adds a logged run.
 * @module
 */
import { defined } from '../core/defined.js';
import { fileStore } from '../persistence/file-store.js';
import { recordRunOutcomes } from '../plan/learning/outcome-collector.js';
import { loadOutcomeStats, type OutcomeStats, type OutcomeTally } from '../plan/learning/outcome-stats.js';
import type { CliIo } from './io.js';

/** The help text of `troupe stats`. */
export const STATS_HELP = `Usage: troupe stats [--store <dir>] [--json] [--record <run-id>]

Print the outcome statistics of the runs recorded in the store (--store
<dir>, else $TROUPE_STORE): for each chunk role, agent and model, how many
finished, the share that completed, the mean attempts, duration, tokens and
cost, the mean evaluation score, and the most frequent failures. \`troupe run\`
with a store records every run it makes.

  --record <run-id>   first add the outcomes of a run logged in the store (counted once)
  --json              print the statistics document as JSON`;

/** The flags `troupe stats` reads. */
export interface StatsFlags {
  store?: string | undefined;
  json?: boolean | undefined;
  record?: string | undefined;
  help?: boolean | undefined;
}

/** `troupe stats`. */
export async function statsCommand(rest: readonly string[], values: StatsFlags, io: CliIo): Promise<number> {
  if (values.help) {
    io.out(STATS_HELP);
    return 0;
  }
  if (rest.length > 0) {
    io.err(`Expected no arguments, got ${rest.length}.\n\n${STATS_HELP}`);
    return 2;
  }
  const dir = values.store ?? (io.env.TROUPE_STORE || undefined);
  if (dir === undefined) {
    io.err('The statistics are in a store: give --store <dir> (or set TROUPE_STORE).');
    return 2;
  }
  const store = fileStore(dir);
  const options = { store, ...defined({ signal: io.signal }) };
  const stats = values.record === undefined ? await loadOutcomeStats(options) : await recordRunOutcomes(values.record, options);
  if (values.json) {
    io.out(JSON.stringify(stats, null, 2));
    return 0;
  }
  io.out(formatOutcomeStats(stats));
  return 0;
}

const pct = (n: number, of: number) => (of === 0 ? '-' : `${Math.round((n / of) * 100)}%`);
const avg = (sum: number, n: number) => (n === 0 ? 0 : sum / n);
function ms(value: number): string {
  if (value >= 60_000) return `${(value / 60_000).toFixed(1)} min`;
  if (value >= 1000) return `${(value / 1000).toFixed(1)} s`;
  return `${Math.round(value)} ms`;
}

/** The statistics as tables: one per kind of subject, one row per subject. */
export function formatOutcomeStats(stats: OutcomeStats): string {
  if (stats.runs === 0) return 'No runs recorded yet.';
  const sections = [`${stats.runs} run${stats.runs === 1 ? '' : 's'} recorded`];
  const table = (title: string, rows: Record<string, OutcomeTally>, attempts: boolean) => {
    const entries = Object.entries(rows).filter(([, t]) => t.count > 0 || t.scores > 0).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    if (entries.length === 0) return;
    const head = ['', 'done', 'success', ...(attempts ? ['attempts'] : []), 'duration', 'tokens in/out', 'cost', 'score', 'failures'];
    const body = entries.map(([name, t]) => [
      name,
      String(t.count),
      pct(t.completed, t.count),
      ...(attempts ? [avg(t.attempts, t.count).toFixed(1)] : []),
      ms(avg(t.durationMs, t.count)),
      `${Math.round(avg(t.inputTokens, t.count))}/${Math.round(avg(t.outputTokens, t.count))}`,
      `$${avg(t.costUsd, t.count).toFixed(4)}`,
      t.scores === 0 ? '-' : (t.scoreSum / t.scores).toFixed(2),
      Object.entries(t.failures).slice(0, 3).map(([kind, n]) => `${kind} ×${n}`).join(', ') || '-',
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
    sections.push(`\n${title} (means per ${attempts ? 'chunk' : 'run'})\n${line([title.toLowerCase().replace(/s$/, ''), ...head.slice(1)])}\n${body.map(line).join('\n')}`);
  };
  table('Roles', stats.roles, true);
  table('Agents', stats.agents, false);
  table('Models', stats.models, false);
  return sections.join('\n');
}

/**
 * A what-if report as text: the two runs side by side.
 * @module
 */
import { defineOptions, positiveNumber } from '../core/options.js';
import type { Usage } from '../core/usage.js';
import type { WhatIfReport } from './what-if.js';

/** Options of {@link formatWhatIf}. */
export interface FormatWhatIfOptions {
  /** Characters per line. Default: 100. */
  width?: number;
}

const formatWhatIfOptions = defineOptions<FormatWhatIfOptions>('formatWhatIf', { width: positiveNumber });

/**
 * The report of a what-if replay as text: status, scores, usage, cost and
 * model calls of both runs in two columns, the agents whose answers
 * changed, and both outputs side by side when they differ.
 *
 * @example
 * ```ts
 * console.log(formatWhatIf(await whatIf(flow, recorded, { adapter, changes })));
 * ```
 */
export function formatWhatIf(report: WhatIfReport, options: FormatWhatIfOptions = {}): string {
  formatWhatIfOptions.check(options);
  const width = Math.max(40, Math.floor(options.width ?? 100));
  const label = 16;
  const column = Math.floor((width - label - 3) / 2);
  const row = (name: string, left: string, right: string) => `${pad(name, label)} ${pad(left, column)} | ${right}`.trimEnd();
  const { recorded: r, whatIf: w } = report;
  const lines = [
    `what-if of run ${report.recordedRunId ?? '(recorded)'} as ${report.runId}: ${report.changes.length > 0 ? report.changes.join('; ') : 'no change (the runnable as it is now)'}`,
    row('', 'recorded', 'what-if'),
    row('status', r.reason === undefined ? r.status : `${r.status} (${r.reason})`, w.reason === undefined ? w.status : `${w.status} (${w.reason})`),
  ];
  for (const s of report.scores) {
    const delta = s.delta === undefined ? '' : ` (${s.delta >= 0 ? '+' : ''}${round(s.delta)})`;
    lines.push(row(`score ${s.scorer}`, s.recorded === undefined ? '-' : String(round(s.recorded)), `${s.whatIf === undefined ? '-' : round(s.whatIf)}${delta}${s.dropped ? '  DROPPED' : ''}`));
  }
  lines.push(row('tokens in/out', tokens(r.usage), tokens(w.usage)));
  lines.push(row('cost', cost(r.usage), cost(w.usage)));
  lines.push(row('model calls', String(r.usage.turns), `${report.calls.length}: ${report.counts.recorded} recorded, ${report.counts.live} new, ${report.counts.context} to restore context`));
  lines.push(row('spent', '', `${tokens(report.liveUsage)} tokens, ${cost(report.liveUsage)}`));
  lines.push(`new calls for: ${report.liveAgents.length > 0 ? report.liveAgents.join(', ') : 'none'}`);
  lines.push(`answers changed: ${report.changedAgents.length > 0 ? report.changedAgents.join(', ') : 'none'}`);
  if (w.error !== undefined) lines.push(`what-if run failed: ${w.error}`);
  if (report.outputChanged) {
    lines.push('', row('output', 'recorded', 'what-if'));
    const left = wrap(r.output, column);
    const right = wrap(w.output, width - label - column - 3);
    for (let i = 0; i < Math.max(left.length, right.length); i++) lines.push(row('', left[i] ?? '', right[i] ?? ''));
  } else lines.push('output: unchanged');
  if (report.regressed) lines.push('REGRESSED: a score dropped or the what-if run failed');
  return lines.join('\n');
}

function pad(text: string, width: number): string {
  return text.length >= width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function tokens(u: Usage): string {
  return `${u.inputTokens}/${u.outputTokens}`;
}

function cost(u: Usage): string {
  return `$${u.costUsd.toFixed(4)}`;
}

/** Text in lines of at most `width` characters (a line's own breaks kept). */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) out.push('');
    for (let i = 0; i < line.length; i += width) out.push(line.slice(i, i + width));
  }
  return out;
}

/**
 * `renderRunReport`: a run log as one self-contained HTML page. The data,
 * the style sheet and the page script (with dagre, bundled at build time)
 * are inline; a content security policy lets the page load nothing else.
 * @module
 */
import { createHash } from 'node:crypto';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import type { TroupeEvent } from '../../core/events.js';
import { defineOptions, string } from '../../core/options.js';
import { buildReportData, reportDataOptions, type ReportDataOptions, type RunReportData } from './data.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLES } from './styles.js';

const runReportOptions = defineOptions<RunReportOptions>('renderRunReport', { ...reportDataOptions.shape, title: string });

/** What {@link renderRunReport} reads: a run log (`readRun`, `exportRun`) or its events. */
export type RunReportSource = { events: readonly unknown[] } | readonly unknown[];

/** Options of {@link renderRunReport}. */
export interface RunReportOptions extends ReportDataOptions {
  /** The page title. Default: `troupe run <runnable>`. */
  title?: string;
}

/**
 * Render a run as one HTML page: a summary, a timeline of every op per
 * pattern, chunk and agent (retries, stalls and cancellations marked), each
 * plan's dependency graph with its critical path, usage and cost per agent
 * and model, evaluator scores per iteration, and the details of any op or
 * chunk on click. Everything is inline; the page loads nothing.
 *
 * @example
 * ```ts
 * import { renderRunReport } from 'troupe/report';
 * const html = renderRunReport(await readRun(runId, { store }));
 * await writeFile('report.html', html);
 * ```
 */
export function renderRunReport(log: RunReportSource, options: RunReportOptions = {}): string {
  const events = Array.isArray(log) ? log : (log as { events?: unknown }).events;
  if (!Array.isArray(events)) {
    throw new ConfigurationError(`Expected a run log (an object with \`events\`) or an array of events, got ${describeValue(log)}`);
  }
  const { title, ...dataOptions } = runReportOptions.check(options);
  const data = buildReportData(events as readonly TroupeEvent[], dataOptions);
  return renderReportData(data, title);
}

/** Render report data (from {@link buildReportData}) as the HTML page. */
export function renderReportData(data: RunReportData, title?: string): string {
  const pageTitle = title ?? `troupe run ${data.run.name || data.run.runId}`;
  const script = safeInScript(PAGE_SCRIPT);
  const csp = [
    "default-src 'none'",
    `script-src '${sha256(script)}'`,
    `style-src '${sha256(PAGE_STYLES)}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="troupe">
<title>${escapeHtml(pageTitle)}</title>
<style>${PAGE_STYLES}</style>
</head>
<body>
<noscript><p>This report draws its timeline and graphs with JavaScript; the run's data is in the page source.</p></noscript>
<main id="app"><p>Loading the report…</p></main>
<script type="application/json" id="troupe-report-data">${jsonInScript(data)}</script>
<script>${script}</script>
</body>
</html>
`;
}

function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}

/** JSON that cannot end its `<script>` element or open a comment: `<`, `>` and `&` as escapes. */
function jsonInScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Script text that cannot end its `<script>` element early. */
function safeInScript(code: string): string {
  return code.replace(/<\/(script)/gi, '<\\/$1');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

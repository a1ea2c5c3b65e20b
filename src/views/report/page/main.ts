/**
 * The report page's script: reads the run's data from the page and draws
 * the summary, the timeline, each plan's graph, usage and cost, evaluator
 * scores, and the details of whatever is clicked. Bundled (with dagre) into
 * one inline script at build time.
 * @module
 */
import type { RunReportData } from '../data.js';
import { budgetsSection, scoresSection, usageSection } from './charts.js';
import { planGraph } from './dag.js';
import { details } from './details.js';
import { cost, duration, h, statusClass, statusText, tokens } from './dom.js';
import { timeline } from './timeline.js';

/** What the details panel shows: an op, or a chunk (`<planOpId>|<chunkId>`). */
export type Selection = { op: string } | { chunk: string };
/** Show a selection in the details panel. */
export type Select = (selection: Selection) => void;

function summary(data: RunReportData): HTMLElement {
  const r = data.run;
  const card = (label: string, value: string | Node) => h('div', { class: 'card' }, h('div', { class: 'card-label' }, label), h('div', { class: 'card-value' }, value));
  const chunks = data.plans.flatMap((p) => p.chunks);
  return h(
    'header',
    {},
    h('h1', {}, h('span', { class: 'muted' }, 'troupe run '), r.name || r.runId),
    h('p', { class: 'muted run-id' }, `run ${r.runId}${r.segments > 1 ? ` · resumed ${r.segments - 1}×` : ''}${data.skipped ? ` · ${data.skipped} records skipped` : ''}${data.truncated ? ` · ${data.truncated} long texts cut` : ''}`),
    h(
      'div',
      { class: 'cards' },
      card('Status', h('span', { class: `badge ${statusClass(r.status, r.reason)}` }, statusText(r.status, r.reason))),
      card('Duration', r.end === undefined ? 'not ended' : duration(r.end - r.start)),
      card('Ops', String(data.ops.length)),
      card('Model turns', String(data.turns.length)),
      card('Tokens', `${tokens(r.usage.inputTokens)} in · ${tokens(r.usage.outputTokens)} out`),
      card('Cost', cost(r.usage.costUsd)),
      chunks.length ? card('Chunks', `${chunks.filter((c) => c.status === 'completed').length}/${chunks.length} completed`) : null,
    ),
    r.error !== undefined ? h('pre', { class: 'error run-error' }, r.error) : null,
  );
}

function start(): void {
  const source = document.getElementById('troupe-report-data');
  const app = document.getElementById('app');
  if (!source || !app) return;
  const data = JSON.parse(source.textContent ?? '{}') as RunReportData;
  const panel = h('div', { class: 'details-body' });
  const aside = h('aside', { id: 'details', 'data-testid': 'details' }, h('h2', {}, 'Details'), panel);
  let selected: Element[] = [];
  const select: Select = (selection) => {
    panel.replaceChildren(...details(data, selection, select));
    for (const el of selected) el.classList.remove('selected');
    const attr = 'op' in selection ? `[data-op="${CSS.escape(selection.op)}"]` : `[data-chunk="${CSS.escape(selection.chunk)}"]`;
    selected = [...document.querySelectorAll(attr)];
    for (const el of selected) el.classList.add('selected');
  };
  panel.replaceChildren(...details(data, undefined, select));
  const plans = data.plans.length ? h('section', { id: 'plans' }, h('h2', {}, 'Plans'), data.plans.map((p) => planGraph(p, select))) : null;
  const content = h('div', { class: 'content' }, timeline(data, select), plans ?? '', usageSection(data), budgetsSection(data) ?? '', scoresSection(data) ?? '');
  app.replaceChildren(summary(data), h('div', { class: 'layout' }, content, aside));
}

start();

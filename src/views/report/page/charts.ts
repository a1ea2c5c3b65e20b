/**
 * Usage and cost per agent and model, and each loop's evaluator scores per
 * iteration as a small chart.
 * @module
 */
import type { ReportLoop, RunReportData } from '../data.js';
import { cost, h, s, tokens } from './dom.js';

/** The usage table: one row per agent and model, with its share of the run's tokens as a bar. */
export function usageSection(data: RunReportData): HTMLElement {
  const total = data.usage.reduce((n, r) => n + r.inputTokens + r.outputTokens, 0) || 1;
  const rows = data.usage.map((r) => {
    const share = (r.inputTokens + r.outputTokens) / total;
    const bar = h('span', { class: 'share' });
    bar.style.width = `${(share * 100).toFixed(1)}%`;
    return h(
      'tr',
      {},
      h('td', {}, r.agent),
      h('td', {}, r.model),
      h('td', { class: 'muted' }, r.adapter),
      h('td', { class: 'num' }, r.turns),
      h('td', { class: 'num' }, tokens(r.inputTokens)),
      h('td', { class: 'num' }, tokens(r.outputTokens)),
      h('td', { class: 'num' }, tokens(r.cachedTokens)),
      h('td', { class: 'num' }, cost(r.costUsd)),
      h('td', { class: 'share-cell' }, h('span', { class: 'share-track' }, bar)),
    );
  });
  const u = data.run.usage;
  return h(
    'section',
    { id: 'usage' },
    h('h2', {}, 'Usage and cost'),
    data.usage.length === 0
      ? h('p', { class: 'hint' }, 'No model turns were logged.')
      : h(
          'table',
          { class: 'usage', 'data-testid': 'usage' },
          h('thead', {}, h('tr', {}, ...['Agent', 'Model', 'Adapter', 'Turns', 'Input', 'Output', 'Cached', 'Cost', 'Share of tokens'].map((t) => h('th', {}, t)))),
          h('tbody', {}, rows),
          h(
            'tfoot',
            {},
            h('tr', {}, h('td', { colspan: 3 }, 'Run total'), h('td', { class: 'num' }, u.turns), h('td', { class: 'num' }, tokens(u.inputTokens)), h('td', { class: 'num' }, tokens(u.outputTokens)), h('td', { class: 'num' }, tokens(u.cachedTokens)), h('td', { class: 'num' }, cost(u.costUsd)), h('td', {})),
          ),
        ),
  );
}

/** Every budget of the run: each limit with what was spent against it, and the conversations that were compacted. */
export function budgetsSection(data: RunReportData): HTMLElement | undefined {
  const budgets = data.budgets ?? [];
  const compactions = data.compactions ?? [];
  if (budgets.length === 0 && compactions.length === 0) return undefined;
  const show = (key: string, n: number) => (key === 'costUsd' ? cost(n) : key === 'wallClockMs' ? `${Math.round(n)} ms` : tokens(n));
  const rows = budgets.flatMap((b) => {
    const limits = Object.entries(b.limits) as Array<[keyof typeof b.spent, number]>;
    return limits.map(([key, max]) => {
      const spent = b.spent[key] ?? 0;
      const bar = h('span', { class: 'share' });
      bar.style.width = `${Math.min(100, (100 * spent) / max).toFixed(1)}%`;
      const out = b.exhausted?.limit === key ? ` — ${b.exhausted.reason}` : '';
      return h('tr', {}, h('td', {}, b.name), h('td', {}, key), h('td', { class: 'num' }, show(key, spent)), h('td', { class: 'num' }, show(key, max)), h('td', { class: 'share-cell' }, h('span', { class: 'share-track' }, bar)), h('td', {}, `${b.exhausted ? 'exhausted' : 'within'}${out}`));
    });
  });
  const compacted = compactions.map((c) => h('li', {}, `${c.agent}: ${tokens(c.before)} → ${tokens(c.after)} tokens of ${tokens(c.budget)} (${c.strategy})`));
  return h(
    'section',
    { id: 'budgets' },
    h('h2', {}, 'Budgets'),
    rows.length === 0
      ? ''
      : h('table', { class: 'usage', 'data-testid': 'budgets' }, h('thead', {}, h('tr', {}, ...['Budget', 'Limit', 'Spent', 'Max', 'Spent of max', 'State'].map((t) => h('th', {}, t)))), h('tbody', {}, rows)),
    compacted.length === 0 ? '' : h('div', {}, h('h3', {}, 'Context compactions'), h('ul', { 'data-testid': 'compactions' }, ...compacted)),
  );
}

/** One small chart per loop with evaluator scores. */
export function scoresSection(data: RunReportData): HTMLElement | undefined {
  const loops = data.loops.filter((l) => l.scores.length > 0 || l.stalls.length > 0);
  if (loops.length === 0) return undefined;
  return h('section', { id: 'scores' }, h('h2', {}, 'Evaluator scores'), h('div', { class: 'charts' }, ...loops.map(scoreChart)));
}

function scoreChart(loop: ReportLoop): HTMLElement {
  const W = 320;
  const H = 150;
  const left = 34;
  const bottom = 24;
  const top = 12;
  const iterations = Math.max(1, ...loop.scores.map((p) => p.iteration), ...loop.stalls.map((p) => p.iteration));
  const x = (i: number) => left + (iterations === 1 ? (W - left - 16) / 2 : ((i - 1) / (iterations - 1)) * (W - left - 16));
  const y = (score: number) => top + (1 - Math.min(1, Math.max(0, score))) * (H - top - bottom);
  const grid = [0, 0.5, 1].map((v) => s('g', {}, s('line', { x1: left, x2: W - 8, y1: y(v), y2: y(v), class: 'grid' }), s('text', { x: left - 6, y: y(v) + 4, class: 'axis-label end' }, v.toFixed(1))));
  const ticks = Array.from({ length: iterations }, (_, k) => s('text', { x: x(k + 1), y: H - 6, class: 'axis-label middle' }, k + 1));
  const line = loop.scores.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.iteration).toFixed(1)},${y(p.score).toFixed(1)}`).join(' ');
  const points = loop.scores.map((p) =>
    s('circle', { cx: x(p.iteration), cy: y(p.score), r: 4, class: p.goalMet ? 'point met' : 'point' }, s('title', {}, `Iteration ${p.iteration}: ${p.score.toFixed(2)} (${p.trend}) by ${p.evaluator}\n${p.rationale}`)),
  );
  const stalls = loop.stalls.map((st) => s('text', { x: x(st.iteration), y: top + 4, class: st.stalled ? 'stall stalled' : 'stall' }, s('title', {}, st.stalled ? `Stalled at iteration ${st.iteration}` : `Stall warning at iteration ${st.iteration}`), '⚠'));
  return h(
    'figure',
    { class: 'score-chart', 'data-testid': 'scores' },
    s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, role: 'img', 'aria-label': `Evaluator scores of ${loop.name}` }, ...grid, ...ticks, s('path', { d: line, class: 'score-line' }), ...points, ...stalls),
    h('figcaption', {}, `${loop.name}: score per iteration`),
  );
}

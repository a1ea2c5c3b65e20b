/**
 * The timeline: a Gantt chart with one lane per pattern, plan chunk and
 * agent; bars coloured by status, model turns inside their agent's bars,
 * waits before retries hatched, and markers for retries, stalls,
 * cancellations and warnings.
 * @module
 */
import type { ReportBar, ReportLane, RunReportData } from '../data.js';
import { clip, duration, h, s, statusClass } from './dom.js';
import type { Select } from './main.js';

const LABEL = 230;
const WIDTH = 1000;
const ROW = 16;
const GAP = 6;
const AXIS = 26;

const GROUPS: Record<ReportLane['group'], string> = { flow: 'Run and patterns', chunks: 'Plan chunks', agents: 'Agents' };

/** A step between ticks: 1, 2 or 5 times a power of ten, for about eight ticks. */
function tickStep(span: number): number {
  const raw = span / 8;
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** The timeline section. */
export function timeline(data: RunReportData, select: Select): HTMLElement {
  const t0 = data.run.start;
  let lastEnd = Math.max(t0 + 1, data.run.end ?? t0);
  for (const l of data.lanes) for (const b of l.bars) if (b.end > lastEnd) lastEnd = b.end;
  const span = lastEnd - t0;
  const chart = WIDTH - LABEL - 10;
  const x = (t: number) => LABEL + ((t - t0) / span) * chart;

  let y = AXIS;
  const body: SVGElement[] = [];
  let group: ReportLane['group'] | undefined;
  data.lanes.forEach((lane, index) => {
    if (lane.group !== group) {
      group = lane.group;
      body.push(s('text', { x: 4, y: y + 12, class: 'lane-group' }, GROUPS[group]));
      y += 18;
    }
    const height = lane.rows * ROW + GAP;
    const g = s('g', { class: 'lane', 'data-lane': lane.id });
    g.append(s('rect', { x: 0, y, width: WIDTH, height, class: index % 2 ? 'lane-bg odd' : 'lane-bg' }));
    g.append(s('text', { x: 8, y: y + ROW / 2 + 7, class: 'lane-label' }, s('title', {}, lane.label), clip(lane.label, 34)));
    for (const bar of lane.bars.filter((b) => b.kind !== 'turn')) g.append(barElement(bar, x, y, select));
    for (const bar of lane.bars.filter((b) => b.kind === 'turn')) g.append(barElement(bar, x, y, select));
    for (const m of lane.markers) {
      const mx = x(m.time);
      const my = y + 1;
      g.append(s('path', { d: `M${mx - 5},${my} L${mx + 5},${my} L${mx},${my + 7} Z`, class: `marker marker-${m.kind}` }, s('title', {}, m.label)));
    }
    body.push(g);
    y += height;
  });

  const axis = s('g', { class: 'axis' });
  const step = tickStep(span);
  for (let t = 0; t <= span; t += step) {
    const tx = x(t0 + t);
    axis.append(s('line', { x1: tx, x2: tx, y1: AXIS - 6, y2: y, class: 'tick' }));
    axis.append(s('text', { x: tx, y: AXIS - 10, class: 'tick-label' }, duration(t)));
  }

  const defs = s('defs', {}, s('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, s('rect', { width: 2.5, height: 6, class: 'hatch-line' })));
  const svg = s('svg', { viewBox: `0 0 ${WIDTH} ${y + 4}`, width: '100%', class: 'timeline', 'data-testid': 'timeline', role: 'img', 'aria-label': 'Timeline of the run' }, defs, axis, body);
  return h(
    'section',
    { id: 'timeline' },
    h('h2', {}, 'Timeline'),
    h('p', { class: 'hint' }, 'One lane per pattern, plan chunk and agent. Darker segments are model turns; hatched bars are waits before a retry; triangles mark retries, stalls, cancellations and warnings. Click a bar for its details.'),
    legend(),
    svg,
  );
}

function barElement(bar: ReportBar, x: (t: number) => number, laneY: number, select: Select): SVGElement {
  const turn = bar.kind === 'turn';
  const x1 = x(bar.start);
  const width = Math.max(turn ? 1.5 : 2.5, x(bar.end) - x1);
  const y = laneY + GAP / 2 + bar.row * ROW + (turn ? 4 : 1);
  const height = turn ? ROW - 10 : ROW - 2;
  const classes = ['bar', `bar-${bar.kind}`, statusClass(bar.status, bar.reason), bar.open ? 'open' : '', bar.inside ? 'inside' : ''].filter(Boolean).join(' ');
  const target = bar.opId !== undefined ? { op: bar.opId } : bar.chunk !== undefined ? { chunk: bar.chunk } : undefined;
  return s(
    'rect',
    {
      x: x1,
      y,
      width,
      height,
      rx: turn ? 1 : 2,
      class: classes,
      'data-op': bar.opId,
      'data-chunk': bar.chunk,
      tabindex: target ? 0 : undefined,
      onclick: target ? () => select(target) : undefined,
      onkeydown: target ? (e: Event) => (e as KeyboardEvent).key === 'Enter' && select(target) : undefined,
    },
    s('title', {}, `${bar.label}\n${duration(bar.end - bar.start)}${bar.open ? ' (still running when the log ends)' : ''}`),
  );
}

function legend(): HTMLElement {
  const item = (cls: string, label: string) => h('span', { class: 'legend-item' }, h('span', { class: `swatch ${cls}` }), label);
  return h(
    'div',
    { class: 'legend' },
    item('st-completed', 'completed'),
    item('st-failed', 'failed'),
    item('st-cancelled', 'cancelled'),
    item('st-completed rs-max-iterations', 'stopped early (max-iterations, stalled, max-rounds)'),
    item('st-running', 'running'),
    item('st-retrying', 'failed attempt / waiting to retry'),
    item('st-turn', 'model turn'),
  );
}

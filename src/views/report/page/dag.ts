/**
 * A plan's dependency graph, laid out by dagre: one node per chunk with its
 * status, duration and attempts, the critical path drawn heavier.
 * @module
 */
import { Graph, layout, type Edge, type EdgeLabel, type GraphLabel, type NodeLabel, type Point } from '@dagrejs/dagre';
import type { ReportPlan } from '../data.js';
import { clip, duration, h, s, statusClass } from './dom.js';
import type { Select } from './main.js';

const NODE_W = 190;
const NODE_H = 58;

/** The section of one plan. */
export function planGraph(plan: ReportPlan, select: Select): HTMLElement {
  const g = new Graph<GraphLabel, NodeLabel, EdgeLabel>();
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 56, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(plan.chunks.map((c) => c.chunkId));
  for (const c of plan.chunks) g.setNode(c.chunkId, { width: NODE_W, height: NODE_H });
  for (const c of plan.chunks) for (const d of c.dependsOn) if (ids.has(d)) g.setEdge(d, c.chunkId);
  layout(g);
  const size = g.graph();
  const width = Math.max(size.width ?? NODE_W, NODE_W);
  const height = Math.max(size.height ?? NODE_H, NODE_H);

  const critical = new Set<string>();
  for (let i = 1; i < plan.criticalPath.length; i++) critical.add(`${plan.criticalPath[i - 1]}->${plan.criticalPath[i]}`);

  const defs = s(
    'defs',
    {},
    s('marker', { id: `arrow-${plan.opId}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 Z', class: 'arrow' })),
  );
  const edges = g.edges().map((e: Edge) => {
    const points: Point[] = (g.edge(e) as EdgeLabel | undefined)?.points ?? [];
    const d = points.map((p: Point, i: number) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
    const onPath = critical.has(`${e.v}->${e.w}`);
    return s('path', { d, class: onPath ? 'edge critical' : 'edge', 'marker-end': `url(#arrow-${plan.opId})` });
  });
  const nodes = plan.chunks.map((c) => {
    const n = g.node(c.chunkId);
    const x = (n?.x ?? 0) - NODE_W / 2;
    const y = (n?.y ?? 0) - NODE_H / 2;
    const key = `${plan.opId}|${c.chunkId}`;
    const attempts = c.attempts.length > 1 ? ` · ${c.attempts.length} attempts` : '';
    return s(
      'g',
      {
        class: `dag-node ${statusClass(c.status)}${c.critical ? ' critical' : ''}`,
        transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`,
        'data-chunk': key,
        tabindex: 0,
        onclick: () => select({ chunk: key }),
        onkeydown: (ev: Event) => (ev as KeyboardEvent).key === 'Enter' && select({ chunk: key }),
      },
      s('title', {}, `#${c.chunkId} ${c.title} (${c.role}): ${c.status}${c.error ? `\n${c.error}` : ''}`),
      s('rect', { width: NODE_W, height: NODE_H, rx: 6, class: 'node-box' }),
      s('text', { x: 10, y: 19, class: 'node-title' }, clip(`#${c.chunkId} ${c.title}`, 28)),
      s('text', { x: 10, y: 35, class: 'node-meta' }, clip(`${c.role} · ${c.status}`, 32)),
      s('text', { x: 10, y: 50, class: 'node-meta' }, `${c.attempts.length ? duration(c.durationMs) : 'not run'}${attempts}`),
    );
  });
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width: Math.min(width, 1000), class: 'dag', 'data-testid': 'dag', role: 'img', 'aria-label': `Dependency graph of plan ${plan.planId}` }, defs, edges, nodes);
  const path = plan.criticalPath.map((id) => `#${id}`).join(' → ');
  return h(
    'section',
    { class: 'plan', 'data-plan': plan.planId },
    h('h3', {}, `Plan ${plan.planId}`),
    h('p', { class: 'hint' }, plan.hasGraph ? `Critical path (longest chain of measured durations): ${path || '–'}` : 'This log predates dependency graphs: chunks are shown without their edges.'),
    h('div', { class: 'dag-scroll' }, svg),
  );
}

/**
 * Graphs as Mermaid or Graphviz DOT text: the agent graph (edges labelled
 * by kind) and a plan's dependency graph.
 * @module
 */
import type { AgentDefinition } from '../agents/definition.js';
import { agentEdges } from '../agents/validate.js';
import type { Plan } from '../plan/model/plan.js';

/** The formats `troupe graph` writes. */
export type GraphFormat = 'mermaid' | 'dot';

/** Render the agent graph of `defs` (hand-off choices, which a person or model may take, as dashed edges). */
export function formatAgentGraph(defs: readonly AgentDefinition[], format: GraphFormat): string {
  const edges = agentEdges(defs);
  if (format === 'dot') {
    const q = (s: string) => JSON.stringify(s);
    return [
      'digraph agents {',
      '  rankdir=LR;',
      ...defs.map((d) => `  ${q(d.name)};`),
      ...edges.map((e) => `  ${q(e.from)} -> ${q(e.to)} [label=${q(e.kind)}${e.kind === 'handoff-choice' ? ', style=dashed' : ''}];`),
      '}',
    ].join('\n');
  }
  const ids = new Map<string, string>();
  const id = (name: string) => {
    if (!ids.has(name)) ids.set(name, `n${ids.size}`);
    return ids.get(name)!;
  };
  const label = (s: string) => s.replace(/"/g, '#quot;');
  return [
    'flowchart LR',
    ...defs.map((d) => `  ${id(d.name)}["${label(d.name)}"]`),
    ...edges.map((e) => `  ${id(e.from)} ${e.kind === 'handoff-choice' ? '-.->' : '-->'}|${e.kind}| ${id(e.to)}${defs.some((d) => d.name === e.to) ? '' : `["${label(e.to)} (missing)"]`}`),
  ].join('\n');
}

/** Render a plan's dependency graph: one node per chunk (`#index title`, its role), an edge from each dependency to its dependent. */
export function formatPlanGraph(plan: Plan, format: GraphFormat): string {
  const chunks = plan.chunks;
  const known = new Set(chunks.map((c) => c.sequenceIndex));
  if (format === 'dot') {
    const q = (s: string) => JSON.stringify(s);
    return [
      'digraph plan {',
      '  rankdir=LR;',
      '  node [shape=box];',
      ...chunks.map((c) => `  ${q(String(c.sequenceIndex))} [label=${q(`#${c.sequenceIndex} ${c.title}\n${c.role} · ${c.complexity}`)}];`),
      ...chunks.flatMap((c) => c.dependsOnIndexes.filter((d) => known.has(d)).map((d) => `  ${q(String(d))} -> ${q(String(c.sequenceIndex))};`)),
      '}',
    ].join('\n');
  }
  const label = (s: string) => s.replace(/"/g, '#quot;');
  return [
    'flowchart LR',
    ...chunks.map((c) => `  c${c.sequenceIndex}["#${c.sequenceIndex} ${label(c.title)}<br/><small>${label(c.role)} · ${c.complexity}</small>"]`),
    ...chunks.flatMap((c) => c.dependsOnIndexes.filter((d) => known.has(d)).map((d) => `  c${d} --> c${c.sequenceIndex}`)),
  ].join('\n');
}

/**
 * Graphs as Mermaid or Graphviz DOT text: the agent graph (edges labelled
 * by kind) and a plan's dependency graph; and a folder's team as an
 * indented list (`troupe validate`).
 * @module
 */
import type { AgentDefinition } from '../agents/definition.js';
import { agentEdges, entryAgents, type AgentEdge } from '../agents/validate.js';
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

/** Edge kinds drawn as children in {@link formatTeam}, with the tag a child of each kind gets (sub-agents get none). */
const CHILD_TAGS: Partial<Record<AgentEdge['kind'], string>> = { subagent: '', team: 'member', router: 'route', advisor: 'advisor' };

/** At most `max` names, then "and K more". */
export function someNames(names: readonly string[], max: number): string {
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/**
 * The team of a folder, one line per agent: each entry agent (those no
 * other agent names), then what it calls indented under it (sub-agents;
 * team members, router destinations and advisors tagged so), each line
 * ending with the agent's hand-offs (`→ a, b`). An agent already shown is
 * named again as `(above)`; the agents only hand-offs reach follow, then
 * those nothing reaches.
 */
export function formatTeam(defs: readonly AgentDefinition[]): string[] {
  const edges = agentEdges(defs);
  const names = new Set(defs.map((d) => d.name));
  const entries = entryAgents(defs);
  const shown = new Set<string>();
  const lines: string[] = [];
  const handoffs = (name: string) => {
    const to = [...new Set(edges.filter((e) => e.from === name && (e.kind === 'handoff' || e.kind === 'handoff-choice')).map((e) => e.to))];
    return to.length === 0 ? '' : `  → ${someNames(to, 4)}`;
  };
  const visit = (name: string, depth: number, tag: string, note: string): void => {
    const indent = '  '.repeat(depth + 1);
    const label = `${indent}${tag === '' ? '' : `[${tag}] `}${name}`;
    if (shown.has(name)) {
      lines.push(`${label}  (above)`);
      return;
    }
    shown.add(name);
    lines.push(`${label}${note}${handoffs(name)}`);
    for (const edge of edges) {
      const childTag = CHILD_TAGS[edge.kind];
      if (edge.from !== name || childTag === undefined || edge.to === name || !names.has(edge.to)) continue;
      visit(edge.to, depth + 1, childTag, '');
    }
  };
  for (const entry of entries) visit(entry, 0, '', '  (entry)');
  // Then the agents hand-offs reach from those shown, and last the agents nothing shown reaches.
  const isHandoff = (e: AgentEdge) => e.kind === 'handoff' || e.kind === 'handoff-choice';
  for (let edge = edges.find((e) => isHandoff(e) && shown.has(e.from) && names.has(e.to) && !shown.has(e.to)); edge; edge = edges.find((e) => isHandoff(e) && shown.has(e.from) && names.has(e.to) && !shown.has(e.to))) {
    visit(edge.to, 0, '', `  (a hand-off of ${edge.from})`);
  }
  for (const def of defs) if (!shown.has(def.name)) visit(def.name, 0, '', def.mode === 'subagent' ? '  (a sub-agent no agent here calls)' : '  (no entry agent reaches it)');
  return [`team: ${entries.length} entry agent${entries.length === 1 ? '' : 's'}; under each, what it calls (indented); → its hand-offs`, ...lines];
}

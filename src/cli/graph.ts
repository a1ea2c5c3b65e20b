/**
 * The agent graph as Mermaid or Graphviz DOT text, edges labelled by kind.
 * @module
 */
import type { AgentDefinition } from '../agents/definition.js';
import { agentEdges } from '../agents/validate.js';

/** The formats `troupe graph` writes. */
export type GraphFormat = 'mermaid' | 'dot';

/** Render the agent graph of `defs`. */
export function formatAgentGraph(defs: readonly AgentDefinition[], format: GraphFormat): string {
  const edges = agentEdges(defs);
  if (format === 'dot') {
    const q = (s: string) => JSON.stringify(s);
    return [
      'digraph agents {',
      '  rankdir=LR;',
      ...defs.map((d) => `  ${q(d.name)};`),
      ...edges.map((e) => `  ${q(e.from)} -> ${q(e.to)} [label=${q(e.kind)}];`),
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
    ...edges.map((e) => `  ${id(e.from)} -->|${e.kind}| ${id(e.to)}${defs.some((d) => d.name === e.to) ? '' : `["${label(e.to)} (missing)"]`}`),
  ].join('\n');
}

/**
 * Graph validation: check a set of agent definitions as a whole before
 * anything runs (references, duplicate names, cycles, incompatible
 * combinations) and find the agents that can own the final answer.
 * @module
 */
import { Graph, alg } from '@dagrejs/graphlib';
import type { AgentDefinition, AgentIssue } from './definition.js';

/** The kind of an edge between two agents. */
export type AgentEdgeKind = 'handoff' | 'router' | 'advisor' | 'team';

/** One edge of the agent graph. */
export interface AgentEdge {
  /** The agent that declares the edge. */
  from: string;
  /** The agent it names. */
  to: string;
  /** Which key declared it. */
  kind: AgentEdgeKind;
}

/** What {@link validateAgents} returns. */
export interface AgentValidation {
  /** Problems that stop the graph from being compiled. */
  errors: AgentIssue[];
  /** Problems worth a look (unknown keys, ...). */
  warnings: AgentIssue[];
}

/** Every edge the definitions declare, in declaration order. */
export function agentEdges(defs: readonly AgentDefinition[]): AgentEdge[] {
  const edges: AgentEdge[] = [];
  for (const def of defs) {
    for (const to of def.advisors ?? []) edges.push({ from: def.name, to, kind: 'advisor' });
    for (const to of def.router?.destinations ?? []) edges.push({ from: def.name, to, kind: 'router' });
    const fallback = def.router?.fallback;
    if (fallback !== undefined && !def.router?.destinations.includes(fallback)) edges.push({ from: def.name, to: fallback, kind: 'router' });
    if (def.handoff !== undefined) edges.push({ from: def.name, to: def.handoff, kind: 'handoff' });
    if (def.team) {
      const members = [...def.team.members, ...(def.team.coordinator === undefined || def.team.coordinator === def.name ? [] : [def.team.coordinator])];
      for (const to of new Set(members)) edges.push({ from: def.name, to, kind: 'team' });
    }
  }
  return edges;
}

/** The agent graph as a graphlib multigraph (edge names are the kinds). */
export function agentGraph(defs: readonly AgentDefinition[]): Graph {
  const graph = new Graph({ directed: true, multigraph: true });
  for (const def of defs) graph.setNode(def.name, def);
  for (const edge of agentEdges(defs)) {
    if (graph.hasNode(edge.to)) graph.setEdge(edge.from, edge.to, edge.kind, edge.kind);
  }
  return graph;
}

/**
 * Validate agent definitions as a whole: unknown references, duplicate
 * names (case-insensitive), cycles through handoff, router, advisor and team
 * edges (`code: 'cycle'`, `path: ['a', 'b', 'a']`), a router that declares
 * its own tools, an empty router, a team coordinator with a handoff.
 *
 * @example
 * ```ts
 * const { errors } = validateAgents(await loadAgents('./agents'));
 * for (const e of errors) console.error(e.message);
 * ```
 */
export function validateAgents(defs: readonly AgentDefinition[]): AgentValidation {
  const errors: AgentIssue[] = [];
  const warnings: AgentIssue[] = defs.flatMap((d) => d.warnings ?? []);
  const at = (def: AgentDefinition) => (def.file === undefined ? {} : { file: def.file });
  const byName = new Map<string, AgentDefinition>();
  const seen = new Map<string, AgentDefinition>();
  for (const def of defs) {
    const key = def.name.toLowerCase();
    const first = seen.get(key);
    if (first) {
      errors.push({
        code: 'duplicate_name',
        message: `Agent name "${def.name}" is used twice${first.file && def.file ? ` (${first.file}, ${def.file})` : ''} (names are case-insensitive)`,
        agent: def.name,
        ...at(def),
      });
    } else seen.set(key, def);
    byName.set(def.name, def);
  }
  for (const edge of agentEdges(defs)) {
    if (byName.has(edge.to)) continue;
    const def = byName.get(edge.from)!;
    const near = seen.get(edge.to.toLowerCase());
    errors.push({
      code: 'unknown_reference',
      message: `Agent "${edge.from}" names unknown agent "${edge.to}" (${edge.kind})${near ? `; did you mean "${near.name}"?` : ''}`,
      agent: edge.from,
      path: [edge.kind === 'advisor' ? 'advisors' : edge.kind, edge.to],
      ...at(def),
    });
  }
  for (const def of defs) {
    if (def.router && def.router.destinations.length === 0) {
      errors.push({ code: 'empty_router', message: `Router "${def.name}" has no destinations`, agent: def.name, path: ['router'], ...at(def) });
    }
    if (def.router && (def.tools?.length ?? 0) > 0) {
      errors.push({
        code: 'router_with_tools',
        message: `Router "${def.name}" declares its own tools (${def.tools!.join(', ')}); a router's one turn only chooses a destination`,
        agent: def.name,
        path: ['tools'],
        ...at(def),
      });
    }
    const coordinator = def.team?.coordinator === undefined ? undefined : byName.get(def.team.coordinator);
    if (coordinator?.handoff !== undefined) {
      errors.push({
        code: 'coordinator_handoff',
        message: `Team "${def.name}" has coordinator "${coordinator.name}", which hands off to "${coordinator.handoff}"; a coordinator owns the team's answer`,
        agent: def.name,
        path: ['team', 'coordinator'],
        ...at(def),
      });
    }
  }
  const graph = agentGraph(defs);
  for (const component of alg.findCycles(graph)) {
    const path = cyclePath(graph, component);
    errors.push({ code: 'cycle', message: `Cycle: ${path.join(' -> ')}`, agent: path[0]!, path, ...at(byName.get(path[0]!)!) });
  }
  errors.sort((a, b) => (a.agent ?? '').localeCompare(b.agent ?? '') || a.code.localeCompare(b.code));
  return { errors, warnings };
}

/** A closed path through a strongly connected component, starting at its first name in sort order. */
function cyclePath(graph: Graph, component: string[]): string[] {
  const inside = new Set(component);
  const start = [...component].sort()[0]!;
  const visited = new Set<string>();
  const walk = (node: string, path: string[]): string[] | undefined => {
    for (const next of [...(graph.successors(node) ?? [])].sort()) {
      if (next === start) return [...path, start];
      if (!inside.has(next) || visited.has(next)) continue;
      visited.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]) ?? [start, start];
}

/**
 * The agents that can own the final answer when `name` runs: the end of its
 * handoff chain, the terminals of every router destination, the team
 * coordinator.
 */
export function terminalsOf(defs: readonly AgentDefinition[], name: string): string[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  const out = new Set<string>();
  const visiting = new Set<string>();
  const visit = (n: string): void => {
    const def = byName.get(n);
    if (!def || visiting.has(n)) return;
    visiting.add(n);
    if (def.handoff !== undefined) visit(def.handoff);
    else if (def.router) for (const d of new Set([...def.router.destinations, ...(def.router.fallback ? [def.router.fallback] : [])])) visit(d);
    else if (def.team?.coordinator !== undefined) visit(def.team.coordinator);
    else out.add(n);
    visiting.delete(n);
  };
  visit(name);
  return [...out];
}

/**
 * Graph validation: check a set of agent definitions as a whole before
 * anything runs (references, duplicate names, cycles, incompatible
 * combinations) and find the agents that can own the final answer.
 * @module
 */
import { Graph, alg } from '@dagrejs/graphlib';
import { isPathReference, type AgentDefinition, type AgentIssue } from './definition.js';
import { resolveAgentMcpServers } from './mcp-servers.js';
import { agentResolutionOptions, resolveAgentModel, resolveAgentTools, type AgentResolutionOptions } from './resolve.js';
import { defined } from '../core/defined.js';

/**
 * The kind of an edge between two agents: `subagent` (called as a tool),
 * `handoff-choice` (a hand-off the agent may offer once it has answered;
 * these may form loops, which a run bounds).
 */
export type AgentEdgeKind = 'handoff' | 'router' | 'advisor' | 'team' | 'subagent' | 'handoff-choice';

/** The sub-agents of `def`: its `subAgents`, with `*` standing for every other agent that may be called by a model (`mode` not `primary`). */
export function subAgentsOf(def: AgentDefinition, defs: readonly AgentDefinition[]): string[] {
  const out: string[] = [];
  for (const ref of def.subAgents ?? []) {
    if (ref === '*') out.push(...defs.filter((d) => d.name !== def.name && d.mode !== 'primary').map((d) => d.name));
    else out.push(ref);
  }
  return [...new Set(out)];
}

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
      const members = [...def.team.members, ...(def.team.lead === undefined || def.team.lead === def.name ? [] : [def.team.lead])];
      for (const to of new Set(members)) edges.push({ from: def.name, to, kind: 'team' });
    }
    for (const to of subAgentsOf(def, defs)) edges.push({ from: def.name, to, kind: 'subagent' });
    for (const to of new Set((def.handoffs ?? []).map((h) => h.agent))) edges.push({ from: def.name, to, kind: 'handoff-choice' });
  }
  return edges;
}

/**
 * The entry agents of a folder: those no other agent names (as a sub-agent,
 * hand-off, advisor, router destination or team member) and whose file does
 * not say only other agents call it (`mode: subagent`), in the order of
 * `defs`. They are what a person (or another program) starts: front desks,
 * teams, single agents.
 *
 * @example
 * ```ts
 * entryAgents(await loadAgents('./agents')); // ['support-desk', 'review-panel']
 * ```
 */
export function entryAgents(defs: readonly AgentDefinition[]): string[] {
  const named = new Set(agentEdges(defs).filter((e) => e.to !== e.from).map((e) => e.to));
  return defs.filter((d) => d.mode !== 'subagent' && !named.has(d.name)).map((d) => d.name);
}

/** The agents `name` reaches through any edge (itself first, then breadth-first, each once). */
export function reachableAgents(defs: readonly AgentDefinition[], name: string): string[] {
  const edges = agentEdges(defs);
  const out = [name];
  const seen = new Set(out);
  for (let i = 0; i < out.length; i++) {
    for (const edge of edges) {
      if (edge.from === out[i] && !seen.has(edge.to)) {
        seen.add(edge.to);
        out.push(edge.to);
      }
    }
  }
  return out;
}

/**
 * The agent graph as a graphlib multigraph (edge names are the kinds).
 * `kinds` limits it to some edge kinds (cycles are looked for without
 * `handoff-choice` edges).
 */
export function agentGraph(defs: readonly AgentDefinition[], kinds?: readonly AgentEdgeKind[]): Graph {
  const graph = new Graph({ directed: true, multigraph: true });
  for (const def of defs) graph.setNode(def.name, def);
  for (const edge of agentEdges(defs)) {
    if (kinds !== undefined && !kinds.includes(edge.kind)) continue;
    if (graph.hasNode(edge.to)) graph.setEdge(edge.from, edge.to, edge.kind, edge.kind);
  }
  return graph;
}

/** The key that declares an edge of each kind, for issue paths. */
const EDGE_KEYS: Record<AgentEdgeKind, string> = {
  handoff: 'handoff',
  router: 'router',
  advisor: 'advisors',
  team: 'team',
  subagent: 'agents',
  'handoff-choice': 'handoffs',
};

/** Edge kinds that run every time (a cycle through them never ends). */
const STATIC_KINDS: readonly AgentEdgeKind[] = ['handoff', 'router', 'advisor', 'team', 'subagent'];

/**
 * Validate agent definitions as a whole: unknown references (of every edge
 * kind), duplicate names (case-insensitive), cycles through handoff,
 * router, advisor, team and sub-agent edges (`code: 'cycle'`, `path: ['a',
 * 'b', 'a']`; hand-off choices may loop), a router that declares its own
 * tools or sub-agents, an empty router, a team lead with a handoff,
 * hand-off choices beside a router, team, handoff or advisors. With
 * `options` (how the app resolves names), also the tools that resolve to
 * nothing (`unresolved_tool`: an error, or a warning when `unknownTools`
 * is `warn`), the model aliases that resolve to nothing
 * (`unresolved_model`, a warning), MCP server configurations that cannot
 * be used (`invalid_value`) and servers named without one that the app
 * does not know (`unresolved_mcp_server`, an error or a warning like
 * `unresolved_tool`).
 *
 * @example
 * ```ts
 * const { errors } = validateAgents(await loadAgents('./agents'));
 * for (const e of errors) console.error(e.message);
 * ```
 */
export function validateAgents(defs: readonly AgentDefinition[], options?: AgentResolutionOptions): AgentValidation {
  agentResolutionOptions.check(options, '', 'validateAgents');
  const issues: Issues = { errors: [], warnings: defs.flatMap((d) => d.warnings ?? []) };
  const { byName, seen } = checkNames(defs, issues);
  checkReferences(defs, byName, seen, issues);
  for (const def of defs) {
    checkShape(def, byName, issues);
    if (options !== undefined) checkResolution(def, options, issues);
  }
  checkCycles(defs, byName, issues);
  issues.errors.sort((a, b) => (a.agent ?? '').localeCompare(b.agent ?? '') || a.code.localeCompare(b.code));
  return issues;
}

/** The errors and warnings found so far. */
interface Issues {
  errors: AgentIssue[];
  warnings: AgentIssue[];
}

/** Where an issue of `def` is: its file, when it has one. */
function at(def: AgentDefinition): { file?: string } {
  return defined({ file: def.file });
}

/** Names used twice (case-insensitively); the definitions by name, and by lower-cased name. */
function checkNames(defs: readonly AgentDefinition[], issues: Issues): { byName: Map<string, AgentDefinition>; seen: Map<string, AgentDefinition> } {
  const { errors } = issues;
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
  return { byName, seen };
}

/** References to agents that are not in the folder, and sub-agents whose file says no model may call them. */
function checkReferences(defs: readonly AgentDefinition[], byName: ReadonlyMap<string, AgentDefinition>, seen: ReadonlyMap<string, AgentDefinition>, issues: Issues): void {
  const { errors, warnings } = issues;
  for (const edge of agentEdges(defs)) {
    if (byName.has(edge.to)) continue;
    const def = byName.get(edge.from)!;
    const near = seen.get(edge.to.toLowerCase());
    errors.push({
      code: 'unknown_reference',
      message: isPathReference(edge.to)
        ? `Agent "${edge.from}" names the agent file "${edge.to}" (${edge.kind}), which is not in the folder`
        : `Agent "${edge.from}" names unknown agent "${edge.to}" (${edge.kind})${near ? `; did you mean "${near.name}"?` : ''}`,
      agent: edge.from,
      path: [EDGE_KEYS[edge.kind], edge.to],
      ...at(def),
    });
  }
  for (const edge of agentEdges(defs)) {
    if (edge.kind !== 'subagent' || byName.get(edge.to)?.mode !== 'primary') continue;
    warnings.push({
      code: 'subagent_primary',
      message: `Agent "${edge.from}" lists "${edge.to}" as a sub-agent, but its file says no model may call it`,
      agent: edge.from,
      path: ['agents', edge.to],
      ...at(byName.get(edge.from)!),
    });
  }
}

/** Combinations that cannot work: routers with tools, hand-offs beside other patterns, a lead that hands off. */
function checkShape(def: AgentDefinition, byName: ReadonlyMap<string, AgentDefinition>, issues: Issues): void {
  const { errors } = issues;
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
  if (def.router && (def.subAgents?.length ?? 0) > 0) {
    errors.push({
      code: 'router_with_tools',
      message: `Router "${def.name}" declares sub-agents (${def.subAgents!.join(', ')}); a router's one turn only chooses a destination`,
      agent: def.name,
      path: ['agents'],
      ...at(def),
    });
  }
  if ((def.handoffs?.length ?? 0) > 0) {
    const beside = (['router', 'team', 'handoff', 'advisors'] as const).filter((k) => def[k] !== undefined);
    if (beside.length > 0) {
      errors.push({
        code: 'incompatible_handoffs',
        message: `Agent "${def.name}" offers hand-offs beside ${beside.map((k) => `\`${k}\``).join(', ')}; an agent that offers hand-offs answers itself`,
        agent: def.name,
        path: ['handoffs'],
        ...at(def),
      });
    }
  }
  const lead = def.team?.lead === undefined ? undefined : byName.get(def.team.lead);
  if (lead?.handoff !== undefined) {
    errors.push({
      code: 'lead_handoff',
      message: `Team "${def.name}" has lead "${lead.name}", which hands off to "${lead.handoff}"; a lead owns the team's answer`,
      agent: def.name,
      path: ['team', 'lead'],
      ...at(def),
    });
  }
}

/** Tools, models and MCP servers that resolve to nothing with the resolution options. */
function checkResolution(def: AgentDefinition, options: AgentResolutionOptions, issues: Issues): void {
  const { errors, warnings } = issues;
  const unresolved = resolveAgentTools(def, options).unresolved;
  if (unresolved.length > 0) {
    const issue: AgentIssue = {
      code: 'unresolved_tool',
      message: `Agent "${def.name}": ${unresolved.length} tool${unresolved.length === 1 ? '' : 's'} resolve${unresolved.length === 1 ? 's' : ''} to nothing: ${unresolved.join(', ')}`,
      agent: def.name,
      path: ['tools', ...unresolved],
      ...at(def),
    };
    ((options.unknownTools ?? 'error') === 'error' ? errors : warnings).push(issue);
  }
  const models = resolveAgentModel(def, options).unresolved;
  if (models.length > 0) {
    warnings.push({
      code: 'unresolved_model',
      message: `Agent "${def.name}": model ${models.map((m) => `"${m}"`).join(', ')} is not in the model map; the adapter's default model is used`,
      agent: def.name,
      path: ['model', ...models],
      ...at(def),
    });
  }
  const mcp = resolveAgentMcpServers(def, options);
  errors.push(...mcp.errors);
  warnings.push(...mcp.warnings);
  if (mcp.unresolved.length > 0) {
    ((options.unknownTools ?? 'error') === 'error' ? errors : warnings).push({
      code: 'unresolved_mcp_server',
      message: `Agent "${def.name}": MCP server${mcp.unresolved.length === 1 ? '' : 's'} ${mcp.unresolved.map((n) => `"${n}"`).join(', ')} named without a configuration, and not in \`mcpServers\``,
      agent: def.name,
      path: ['mcpServers', ...mcp.unresolved],
      ...at(def),
    });
  }
}

/** Cycles through hand-offs, routers, advisors and teams, with their path. */
function checkCycles(defs: readonly AgentDefinition[], byName: ReadonlyMap<string, AgentDefinition>, issues: Issues): void {
  const { errors } = issues;
  const graph = agentGraph(defs, STATIC_KINDS);
  for (const component of alg.findCycles(graph)) {
    const path = cyclePath(graph, component);
    errors.push({ code: 'cycle', message: `Cycle: ${path.join(' -> ')}`, agent: path[0]!, path, ...at(byName.get(path[0]!)!) });
  }
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
 * lead; an agent that offers hand-offs, and the terminals of each.
 */
export function terminalsOf(defs: readonly AgentDefinition[], name: string): string[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  const out = new Set<string>();
  // Each agent is looked at once: its terminals do not depend on the way it was reached.
  const visited = new Set<string>();
  const visit = (n: string): void => {
    const def = byName.get(n);
    if (!def || visited.has(n)) return;
    visited.add(n);
    if ((def.handoffs?.length ?? 0) > 0) {
      out.add(n);
      for (const h of def.handoffs!) visit(h.agent);
    } else if (def.handoff !== undefined) visit(def.handoff);
    else if (def.router) for (const d of new Set([...def.router.destinations, ...(def.router.fallback ? [def.router.fallback] : [])])) visit(d);
    else if (def.team?.lead !== undefined) visit(def.team.lead);
    else out.add(n);
  };
  visit(name);
  return [...out];
}

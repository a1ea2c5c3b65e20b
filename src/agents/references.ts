/**
 * References between the agents of one folder, resolved to names the way
 * the tools that own the formats match them: a path relative to the
 * referring file (`./reviewer.ai`, ai-agent's way), an agent's name in any
 * case, or the name of its file (`devsquad.plan` for
 * `devsquad.plan.agent.md`). Knows only definitions.
 * @module
 */
import { posix } from 'node:path';
import { isPathReference, type AgentDefinition } from './definition.js';
import { nameFromFileName } from './formats/index.js';

/** A file path with `/` separators. */
const toPosix = (path: string): string => path.replaceAll('\\', '/');

/**
 * `defs` with every reference that names an agent of `defs` by a path, by
 * its name in another case, or by its file's name rewritten to that
 * agent's name. Other references are left as they are (validation reports
 * them). Returns new definitions; `defs` is not changed.
 *
 * @example
 * ```ts
 * resolveReferences(defs); // `agents: [./discovery.ai]` in review/lead.ai becomes ['discovery']
 * ```
 */
export function resolveReferences(defs: readonly AgentDefinition[]): AgentDefinition[] {
  const exact = new Set(defs.map((d) => d.name));
  const byLower = new Map<string, string>();
  const byFile = new Map<string, string>();
  const byFileName = new Map<string, string>();
  for (const def of defs) {
    if (!byLower.has(def.name.toLowerCase())) byLower.set(def.name.toLowerCase(), def.name);
    if (def.file === undefined) continue;
    const file = posix.normalize(toPosix(def.file));
    byFile.set(file, def.name);
    const base = nameFromFileName(file).toLowerCase();
    if (!byFileName.has(base)) byFileName.set(base, def.name);
  }
  const resolveFrom = (def: AgentDefinition) => (ref: string): string => {
    if (ref === '*' || exact.has(ref)) return ref;
    if (isPathReference(ref)) {
      if (def.file === undefined || ref.startsWith('/')) return ref;
      const target = posix.normalize(posix.join(posix.dirname(toPosix(def.file)), toPosix(ref)));
      if (target === '..' || target.startsWith('../')) return ref;
      for (const candidate of [target, `${target}.md`, `${target}.ai`, `${target}.agent.md`]) {
        const name = byFile.get(candidate);
        if (name !== undefined) return name;
      }
      return ref;
    }
    return byLower.get(ref.toLowerCase()) ?? byFileName.get(ref.toLowerCase()) ?? ref;
  };
  return defs.map((def) => {
    const resolve = resolveFrom(def);
    const out: AgentDefinition = { ...def };
    if (def.subAgents) out.subAgents = def.subAgents.map(resolve);
    if (def.advisors) out.advisors = def.advisors.map(resolve);
    if (def.handoff !== undefined) out.handoff = resolve(def.handoff);
    if (def.handoffs) out.handoffs = def.handoffs.map((h) => ({ ...h, agent: resolve(h.agent) }));
    if (def.router) {
      out.router = {
        destinations: def.router.destinations.map(resolve),
        ...(def.router.fallback === undefined ? {} : { fallback: resolve(def.router.fallback) }),
      };
    }
    if (def.team) {
      out.team = { ...def.team, members: def.team.members.map(resolve), ...(def.team.lead === undefined ? {} : { lead: resolve(def.team.lead) }) };
    }
    return out;
  });
}

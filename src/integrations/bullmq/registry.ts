/**
 * A worker's registry: the runnables it can run, by name, given in code or
 * compiled from a folder of agent files; and how a chunk's role resolves to
 * one of them (or, when the registry has none, to an agent built from the
 * role configuration the job carries, as a plan does in process).
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import type { Runnable } from '../../core/runnable.js';
import type { ToolDefinition } from '../../core/tools.js';
import { defined } from '../../core/defined.js';
import { compileAgents } from '../../agents/compile.js';
import { loadAgents } from '../../agents/load.js';
import { validateAgents } from '../../agents/validate.js';
import { agent } from '../../patterns/agent.js';
import { chunkRoles, type ChunkRole } from '../../plan/model/plan.js';
import type { ChunkJobWire } from './wire.js';

/** The runnables a worker can run: by name, as a list (each under its `name`), or a folder of agent files. */
export type WorkerAgents = Readonly<Record<string, Runnable>> | readonly Runnable[] | string;

/** Which agent of the registry runs the chunks of a role (by default the one named after the role). */
export type RoleAgents = Partial<Record<ChunkRole, string>>;

/** Build the registry; a folder is loaded, validated and compiled with `adapters` and `tools`. */
export async function loadRegistry(
  agents: WorkerAgents | undefined,
  options: { adapters: Record<string, ModelAdapter>; tools: readonly ToolDefinition[]; signal?: AbortSignal },
): Promise<Map<string, Runnable>> {
  if (agents === undefined) return new Map();
  if (typeof agents === 'string') {
    const defs = await loadAgents(agents, options.signal ? { signal: options.signal } : {});
    const { errors } = validateAgents(defs);
    if (errors.length > 0) {
      throw new ConfigurationError(`The agents in ${agents} are invalid:\n${errors.map((e) => `  ${e.message}`).join('\n')}`, { code: 'invalid_graph', details: { errors } });
    }
    const tools = Object.fromEntries(options.tools.map((t) => [t.name, t]));
    // Agent files may name tools this worker does not provide: they are left out unless the worker was given tools.
    const compiled = compileAgents(defs, { adapters: options.adapters, tools, unknownTools: options.tools.length > 0 ? 'error' : 'skip' });
    return new Map(Object.entries(compiled));
  }
  const entries: Array<[string, unknown]> = Array.isArray(agents)
    ? (agents as readonly Runnable[]).map((r) => [r?.name, r])
    : typeof agents === 'object' && agents !== null
      ? Object.entries(agents)
      : [];
  if (entries.length === 0 && !(Array.isArray(agents) || (typeof agents === 'object' && agents !== null))) {
    throw new ConfigurationError(`Expected \`agents\` to be runnables by name, a list of runnables or a folder of agent files, got ${describeValue(agents)}`);
  }
  const registry = new Map<string, Runnable>();
  for (const [name, runnable] of entries) {
    if (typeof name !== 'string' || name === '' || !runnable || typeof (runnable as Runnable).run !== 'function') {
      throw new ConfigurationError(`Expected every entry of \`agents\` to be a named runnable, got ${describeValue(runnable)}`);
    }
    if (registry.has(name)) throw new ConfigurationError(`Two agents are named "${name}"`, { details: { name } });
    registry.set(name, runnable as Runnable);
  }
  return registry;
}

/** Check `roles`: known roles mapped to names. */
export function checkRoleAgents(roles: unknown): RoleAgents {
  if (roles === undefined) return {};
  if (typeof roles !== 'object' || roles === null) throw new ConfigurationError(`Expected \`roles\` to map chunk roles to agent names, got ${describeValue(roles)}`);
  for (const [role, name] of Object.entries(roles)) {
    if (!(chunkRoles as readonly string[]).includes(role)) throw new ConfigurationError(`Unknown chunk role "${role}" in \`roles\` (roles: ${chunkRoles.join(', ')})`);
    if (typeof name !== 'string' || name === '') throw new ConfigurationError(`Expected \`roles.${role}\` to be an agent name, got ${describeValue(name)}`);
  }
  return roles as RoleAgents;
}

/** What resolving a chunk's runnable needs. */
export interface ChunkResolution {
  registry: ReadonlyMap<string, Runnable>;
  roles: RoleAgents;
  adapters: Readonly<Record<string, ModelAdapter>>;
  tools: readonly ToolDefinition[];
}

/**
 * The runnable of a chunk: the agent the job names (a coordination
 * worker's turn), else `roles[role]` or the agent named after the role,
 * when the registry has it; else an agent built from the job's role
 * configuration (its system prompt, model, temperature and named adapter)
 * with the worker's tools the role allows (its `tools`, else those its
 * `preferredTools` name; none when it names none), working in `workspace`.
 */
export function chunkRunnable(job: ChunkJobWire, workspace: string, r: ChunkResolution): Runnable {
  const role = job.chunk.role;
  const mapped = job.agent === undefined ? r.roles[role] : undefined;
  const found = r.registry.get(job.agent ?? mapped ?? role);
  if (found) return found;
  if (mapped !== undefined) {
    throw new ConfigurationError(`This worker maps role ${role} to agent "${mapped}", which it does not have (agents: ${[...r.registry.keys()].join(', ') || 'none'})`, {
      code: 'unknown_agent',
      details: { role, agent: mapped },
    });
  }
  const config = job.role;
  const names = new Set(config.tools ?? config.preferredTools);
  const allowed = r.tools.filter((t) => names.has(t.name));
  let adapter: ModelAdapter | undefined;
  if (config.adapter !== undefined) {
    adapter = r.adapters[config.adapter];
    if (!adapter) {
      throw new ConfigurationError(`Role ${role} asks for adapter "${config.adapter}", which this worker does not have (adapters: ${Object.keys(r.adapters).join(', ') || 'none'})`, {
        code: 'unknown_adapter',
        details: { role, adapter: config.adapter },
      });
    }
  }
  return agent({
    name: job.agent ?? role,
    system: config.system,
    workspace,
    metadata: { planId: job.planId, chunk: job.chunk.sequenceIndex, attempt: job.attempt, preferredTools: config.preferredTools },
    ...defined({ model: config.model, temperature: config.temperature, adapter }),
    ...(allowed.length === 0 ? {} : { tools: allowed }),
  });
}

/** The runnable `name` of the registry, or a `ConfigurationError` (`unknown_agent`) naming what the worker has. */
export function namedRunnable(name: string, registry: ReadonlyMap<string, Runnable>): Runnable {
  const found = registry.get(name);
  if (found) return found;
  throw new ConfigurationError(`This worker has no agent "${name}" (agents: ${[...registry.keys()].join(', ') || 'none'})`, { code: 'unknown_agent', details: { agent: name } });
}

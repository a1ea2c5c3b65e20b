/**
 * Agent definitions: the data an agent file (or `defineAgent`) describes,
 * its zod schema, and the issues reported about it.
 * @module
 */
import type { ParseIssue, SafeParseResult as CoreSafeParseResult } from '../core/parse-result.js';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';

/** One problem found in an agent file or an agent graph. */
export interface AgentIssue extends ParseIssue {
  /** Which rule failed: `unknown_key`, `invalid_value`, `unknown_reference`, `cycle`, ... */
  code: string;
  /** A readable message. */
  message: string;
  /** The agent concerned, when there is one. */
  agent?: string;
  /** A key path (`['limits', 'maxTurns']`) or, for cycles, the agents on it (`['a', 'b', 'a']`). */
  path?: Array<string | number>;
  /** The file it came from, when known. */
  file?: string;
}

/** A team declared by an agent (compiled by the team pattern). */
export interface TeamDefinition {
  /** The members' names. */
  members: string[];
  /** The coordinator's name; it owns the team's answer. */
  coordinator?: string;
  /** How the team decides it is done (`max-rounds` and `coordinator` are accepted as aliases). */
  terminationMode?: 'consensus' | 'maxRounds' | 'coordinatorDecides';
  /** Most deliberation rounds. */
  maxRounds?: number;
  /** Members speak in turn rather than all at once. */
  turnBased?: boolean;
}

/** A validated agent definition, from a file or from {@link defineAgent}. */
export interface AgentDefinition {
  /** Unique (case-insensitive) name. */
  name: string;
  /** The system prompt (the body of an agent file). */
  system: string;
  /** One line on what the agent does. */
  description?: string;
  /** The model (the first of `models` when only a list is given). */
  model?: string;
  /** Models in order of preference. */
  models?: string[];
  /** The name of a registered adapter. */
  adapter?: string;
  /** Sampling temperature. */
  temperature?: number;
  /** Names of the tools the agent may call. */
  tools?: string[];
  /** Turn and time limits. */
  limits?: { maxTurns?: number; timeoutMs?: number };
  /** The agent that receives this one's output and owns the answer. */
  handoff?: string;
  /** Routes each request to one destination. */
  router?: { destinations: string[]; fallback?: string };
  /** Agents consulted before this one answers. */
  advisors?: string[];
  /** A team this agent stands for. */
  team?: TeamDefinition;
  /** A free-form role. */
  role?: string;
  /** Free-form data handed to the adapter. */
  metadata?: Record<string, unknown>;
  /** Frontmatter keys troupe does not use, kept as they were. */
  extra?: Record<string, unknown>;
  /** Warnings found while reading it (unknown keys ...). */
  warnings?: AgentIssue[];
  /** The file it was read from. */
  file?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const agentName = z.string().regex(NAME, 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
const oneOrMany = z.union([agentName, z.array(agentName)]).transform((v) => (Array.isArray(v) ? v : [v]));

/** The frontmatter keys troupe reads; any other key is kept in `extra` with a warning. */
export const KNOWN_KEYS = [
  'name', 'description', 'model', 'models', 'adapter', 'temperature', 'tools', 'limits', 'handoff',
  'router', 'agents', 'advisors', 'team', 'role', 'metadata', 'system',
] as const;

/** The zod schema of agent frontmatter (known keys only; the rest pass through). */
export const agentFrontmatterSchema = z.looseObject({
  name: agentName.optional(),
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  models: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v])).optional(),
  adapter: z.string().min(1).optional(),
  temperature: z.number().min(0).optional(),
  tools: z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v])).optional(),
  limits: z.strictObject({ maxTurns: z.number().int().positive().optional(), timeoutMs: z.number().positive().optional() }).optional(),
  handoff: agentName.optional(),
  router: z.union([z.boolean(), z.strictObject({ destinations: z.array(agentName), fallback: agentName.optional() })]).optional(),
  agents: z.unknown().optional(),
  advisors: oneOrMany.optional(),
  team: z.strictObject({
    members: z.array(agentName).min(1),
    coordinator: agentName.optional(),
    terminationMode: z
      .enum(['consensus', 'maxRounds', 'coordinatorDecides', 'max-rounds', 'coordinator'])
      .transform((m) => (m === 'max-rounds' ? 'maxRounds' : m === 'coordinator' ? 'coordinatorDecides' : m))
      .optional(),
    maxRounds: z.number().int().positive().optional(),
    turnBased: z.boolean().optional(),
  }).optional(),
  role: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  system: z.string().optional(),
});

/** The result of `safeParseAgentFile`: the definition, or the issues that refused it. */
export type AgentParseResult<T> = CoreSafeParseResult<T, AgentIssue>;

/**
 * Turn frontmatter `data` and a body into a definition. Returns the issues
 * instead of throwing.
 */
export function definitionFrom(data: Record<string, unknown>, body: string, fallbackName?: string): AgentParseResult<AgentDefinition> {
  const parsed = agentFrontmatterSchema.safeParse(data);
  if (!parsed.success) {
    return {
      success: false,
      issues: parsed.error.issues.map((i) => ({
        code: 'invalid_value',
        message: `${i.path.length ? `\`${i.path.join('.')}\`` : 'frontmatter'}: ${i.message}`,
        path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
      })),
    };
  }
  const f = parsed.data;
  const name = f.name ?? fallbackName;
  if (name === undefined || !NAME.test(name)) {
    return { success: false, issues: [{ code: 'invalid_value', message: `\`name\`: expected an agent name, got ${JSON.stringify(name)}`, path: ['name'] }] };
  }
  const issues: AgentIssue[] = [];
  const warnings: AgentIssue[] = [];
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if ((KNOWN_KEYS as readonly string[]).includes(key) && !(key === 'agents' && f.router !== true)) continue;
    extra[key] = value;
    warnings.push({ code: 'unknown_key', message: `Unknown key \`${key}\` is kept but not used`, agent: name, path: [key] });
  }
  let router: AgentDefinition['router'];
  if (f.router === true) {
    const agents = z.array(agentName).safeParse(f.agents);
    if (!agents.success) issues.push({ code: 'invalid_value', message: '`router: true` needs `agents`: a list of agent names', agent: name, path: ['agents'] });
    else router = { destinations: agents.data };
  } else if (f.router && typeof f.router === 'object') {
    router = { destinations: f.router.destinations, ...(f.router.fallback === undefined ? {} : { fallback: f.router.fallback }) };
  }
  if (issues.length) return { success: false, issues };
  const def: AgentDefinition = { name, system: body.trim() || (f.system ?? '') };
  const copy = <K extends keyof AgentDefinition>(key: K, value: AgentDefinition[K] | undefined) => {
    if (value !== undefined) def[key] = value;
  };
  copy('description', f.description);
  copy('model', f.model ?? f.models?.[0]);
  copy('models', f.models);
  copy('adapter', f.adapter);
  copy('temperature', f.temperature);
  copy('tools', f.tools);
  copy('limits', f.limits as AgentDefinition['limits']);
  copy('handoff', f.handoff);
  copy('router', router);
  copy('advisors', f.advisors);
  copy('team', f.team as TeamDefinition | undefined);
  copy('role', f.role);
  copy('metadata', f.metadata);
  if (Object.keys(extra).length) def.extra = extra;
  def.warnings = warnings;
  return { success: true, data: def };
}

/** What {@link defineAgent} accepts: a definition in code (`system` may be omitted). */
export type AgentDefinitionInput = Omit<AgentDefinition, 'system' | 'warnings' | 'extra' | 'file' | 'advisors'> & {
  system?: string;
  advisors?: string | string[];
};

/**
 * Define an agent in code, validated by the same rules as an agent file.
 *
 * @example
 * ```ts
 * const desk = defineAgent({ name: 'desk', system: 'Route requests.', router: { destinations: ['billing'] } });
 * ```
 */
export function defineAgent(input: AgentDefinitionInput): AgentDefinition {
  const { system = '', ...rest } = (input ?? {}) as AgentDefinitionInput;
  const result = definitionFrom(rest as Record<string, unknown>, system);
  if (!result.success) {
    throw new ConfigurationError(`Invalid agent definition${typeof rest.name === 'string' ? ` "${rest.name}"` : ''}: ${result.issues.map((i) => i.message).join('; ')}`, {
      code: 'invalid_agent',
      details: { issues: result.issues },
    });
  }
  return result.data;
}

/**
 * Agent definitions in code, validated by the same rules as troupe's agent
 * files.
 * @module
 */
import { ConfigurationError } from '../core/errors.js';
import type { AgentDefinition } from './definition.js';
import { troupeFormat } from './formats/troupe.js';
import { defined } from '../core/defined.js';

/** What {@link defineAgent} accepts: a definition in code (`system` may be omitted; `advisors` may be one name). */
export type AgentDefinitionInput = Omit<AgentDefinition, 'system' | 'warnings' | 'extra' | 'file' | 'advisors' | 'format'> & {
  system?: string;
  advisors?: string | string[];
};

/**
 * Define an agent in code, validated by the same rules as an agent file.
 * Throws a `ConfigurationError` (`invalid_agent`) listing every problem.
 *
 * @example
 * ```ts
 * const desk = defineAgent({ name: 'desk', system: 'Route requests.', router: { destinations: ['billing'] } });
 * const lead = defineAgent({ name: 'lead', subAgents: ['researcher'], handoffs: [{ agent: 'writer', send: true }] });
 * ```
 */
export function defineAgent(input: AgentDefinitionInput): AgentDefinition {
  const { system = '', subAgents, mcpServers, ...rest } = (input ?? {}) as AgentDefinitionInput;
  const data: Record<string, unknown> = {
    ...rest,
    ...defined({ agents: subAgents }),
    ...(mcpServers === undefined ? {} : { mcpServers: Array.isArray(mcpServers) ? mcpServers.map((s) => (s?.config === undefined ? s?.name : { [s.name]: s.config })) : mcpServers }),
  };
  const result = troupeFormat.read({ data, body: system });
  if (!result.success) {
    throw new ConfigurationError(`Invalid agent definition${typeof rest.name === 'string' ? ` "${rest.name}"` : ''}: ${result.issues.map((i) => i.message).join('; ')}`, {
      code: 'invalid_agent',
      details: { issues: result.issues },
    });
  }
  return result.data;
}

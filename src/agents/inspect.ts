/**
 * What troupe understood of each agent file: its format, name, tools
 * (resolved or not), model, sub-agents, hand-offs and warnings. The data
 * behind `troupe agents inspect`.
 * @module
 */
import type { AgentDefinition, AgentFormat, AgentIssue } from './definition.js';
import { agentResolutionOptions, resolveAgentModel, resolveAgentTools, type AgentResolutionOptions } from './resolve.js';
import { subAgentsOf, validateAgents } from './validate.js';
import { defined } from '../core/defined.js';

/** One agent as troupe understood it. */
export interface AgentInspection {
  name: string;
  file?: string;
  format: AgentFormat;
  mode?: AgentDefinition['mode'];
  tools: {
    /** As the file lists them. */
    listed: string[];
    /** Registered troupe tools they resolved to (`listed → tool`). */
    resolved: string[];
    /** Passed to the CLI of the agent's vendor. */
    cli: string[];
    /** Resolved to nothing. */
    unresolved: string[];
    /** Mapped to `null` by `toolAliases`: left out, not reported (present when there are any). */
    ignored?: string[];
  };
  /** The models the adapter gets, in order (empty: the adapter's default). */
  models: string[];
  /** Model aliases not in the model map. */
  unresolvedModels: string[];
  subAgents: string[];
  handoffs: Array<{ to: string; label?: string; send: boolean }>;
  /** The graph's errors about the agent (unknown references, cycles, ...). */
  errors: AgentIssue[];
  /** The agent's warnings (from its file, and from the graph). */
  warnings: AgentIssue[];
}

/**
 * Inspect every definition with the app's resolution `options`.
 *
 * @example
 * ```ts
 * for (const row of inspectAgents(await loadAgents('.github/agents'), { unknownTools: 'warn' })) console.log(row.name, row.tools.unresolved);
 * ```
 */
export function inspectAgents(defs: readonly AgentDefinition[], options: AgentResolutionOptions = {}): AgentInspection[] {
  agentResolutionOptions.check(options, '', 'inspectAgents');
  const { errors, warnings } = validateAgents(defs, options);
  const about = (list: AgentIssue[], name: string) => list.filter((i) => i.agent === name);
  return defs.map((def) => {
    const tools = resolveAgentTools(def, options);
    const model = resolveAgentModel(def, options);
    const row: AgentInspection = {
      name: def.name,
      format: def.format ?? 'troupe',
      tools: {
        listed: [...(def.tools ?? [])],
        resolved: tools.tools.map((t) => (t.listed === t.tool.name ? t.tool.name : `${t.listed} → ${t.tool.name}`)),
        cli: tools.cli?.allowed ?? (tools.onCli ? ['*'] : []),
        unresolved: tools.unresolved,
        ...(tools.ignored ? { ignored: tools.ignored } : {}),
      },
      models: model.models,
      unresolvedModels: model.unresolved,
      subAgents: subAgentsOf(def, defs),
      handoffs: (def.handoffs ?? []).map((h) => ({ to: h.agent, ...defined({ label: h.label }), send: h.send === true })),
      errors: about(errors, def.name),
      warnings: about(warnings, def.name),
    };
    if (def.file !== undefined) row.file = def.file;
    if (def.mode !== undefined) row.mode = def.mode;
    return row;
  });
}

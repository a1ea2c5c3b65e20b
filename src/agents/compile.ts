/**
 * Compile validated agent definitions into runnables, composed as their
 * files say: sub-agents as tools, advisors before the agent's own session,
 * then router, then handoff, recursively; an agent that offers hand-offs
 * runs inside the hand-off choices pattern.
 * @module
 */
import { CLI_TOOLS_KEY, MCP_SERVERS_KEY, type ModelAdapter } from '../core/adapter.js';
import { ConfigurationError } from '../core/errors.js';
import { check, defineOptions, func, nonNegativeInteger, object } from '../core/options.js';
import type { Runnable } from '../core/runnable.js';
import type { ToolDefinition } from '../core/tools.js';
import { advisors, advisorsOptions, consultAdvisors, formatAdvice, type AdvisorsOptions } from '../patterns/advisors.js';
import { agent, type Agent } from '../patterns/agent.js';
import { asTool } from '../patterns/as-tool.js';
import { handoffChoices, type HandoffApprover, type HandoffChoice } from '../patterns/handoff-choices.js';
import { handoff } from '../patterns/handoff.js';
import { router } from '../patterns/router.js';
import { team } from '../patterns/team.js';
import type { ApprovalQueue } from '../guardrails/approvals.js';
import type { AgentDefinition, AgentIssue } from './definition.js';
import { resolveAgentMcpServers } from './mcp-servers.js';
import { agentResolutionOptions, resolutionOf, resolveAgentModel, resolveAgentTools, subAgentToolName, type AgentResolutionOptions } from './resolve.js';
import { subAgentsOf, validateAgents } from './validate.js';
import { defined } from '../core/defined.js';

/** Options of {@link compileAgents}. */
export interface CompileAgentsOptions extends AgentResolutionOptions {
  /** Adapters by name, for definitions that name one (`adapter: openai`). Unresolved names are looked up in the run's `adapters`. */
  adapters?: Record<string, ModelAdapter>;
  /** The adapter of definitions that name none. Default: the run's `adapter`. */
  defaultAdapter?: ModelAdapter | string;
  /** Options of every advisors step (failure policy, parallelism, time-out). */
  advisors?: AdvisorsOptions;
  /**
   * The approval queue: tools an agent's approval policy marks `ask` go
   * through `approvals.guard`, and hand-offs whose `send` is not true wait
   * for it. Without it, such hand-offs are not taken, and an `ask` tool is
   * a `ConfigurationError`.
   */
  approvals?: ApprovalQueue | HandoffApprover;
  /** Most hand-offs in one run of an agent that offers them. Default: 8. */
  maxHandoffs?: number;
  /**
   * Told of what compiles with a loss: a tool left out under `unknownTools:
   * 'warn'` (`unresolved_tool`), a model alias not in the model map, for
   * which the adapter's default model is used (`unresolved_model`), an MCP
   * server named without a configuration (`unresolved_mcp_server`) or a
   * key of its configuration that is not used (`unused_key`), MCP servers
   * of an agent whose adapter does not start them (`mcp_servers_unused`).
   */
  onWarning?: (issue: AgentIssue) => void;
}

/** The description {@link CompileAgentsOptions} are checked against: the resolution options and the compiler's own. */
const compileAgentsOptions = defineOptions<CompileAgentsOptions>('compileAgents', {
  ...agentResolutionOptions.shape,
  adapters: object,
  defaultAdapter: check('a model adapter or an adapter name', (v) => typeof v === 'string' || typeof (v as ModelAdapter | null)?.openSession === 'function'),
  advisors: advisorsOptions,
  approvals: check('an approval queue (with request())', (v) => typeof (v as HandoffApprover | null)?.request === 'function'),
  maxHandoffs: nonNegativeInteger,
  onWarning: func,
});

/**
 * Validate `defs` as a graph and compile each into a runnable, by name. The
 * runnable of an agent with advisors, a router or a handoff is the composed
 * flow; its outcome's `agent` is the terminal agent. Tools and models
 * resolve as `resolveAgentTools` and `resolveAgentModel` say; a tool name
 * that resolves to nothing fails unless `unknownTools` is `warn`.
 *
 * @example
 * ```ts
 * const flows = compileAgents(await loadAgents('./agents'), { tools: { read_file }, toolAliases: { Read: 'read_file' } });
 * const result = await run(flows['support-desk']!, 'I was charged twice', { adapter });
 * ```
 */
export function compileAgents(defs: readonly AgentDefinition[], options: CompileAgentsOptions = {}): Record<string, Runnable> {
  compileAgentsOptions.check(options);
  const { errors } = validateAgents(defs);
  if (errors.length > 0) {
    throw new ConfigurationError(`Invalid agent graph:\n${errors.map((e) => `  ${e.message}`).join('\n')}`, {
      code: 'invalid_graph',
      details: { errors },
    });
  }
  const byName = new Map(defs.map((d) => [d.name, d]));
  const agents = new Map<string, Agent>();
  const cores = new Map<string, Runnable>();

  const baseAgent = (def: AgentDefinition): Agent => {
    let found = agents.get(def.name);
    if (!found) {
      const subTools = subAgentsOf(def, defs).map((sub) => asTool(core(sub), { name: subAgentToolName(sub), description: byName.get(sub)!.description ?? `Ask ${sub} to do a task; returns its answer.` }));
      found = agent(agentOptions(def, options, subTools));
      agents.set(def.name, found);
    }
    return found;
  };

  /** An agent's flow without its hand-off choices (what a sub-agent call and a hand-off run). */
  const core = (name: string): Runnable => {
    const cached = cores.get(name);
    if (cached) return cached;
    const def = byName.get(name)!;
    const self = baseAgent(def);
    const advisorList = (def.advisors ?? []).map(core);
    let flow: Runnable = def.team ? compileTeam(def, self, core) : self;
    if (def.router) {
      const destinations = Object.fromEntries(def.router.destinations.map((d) => [d, core(d)]));
      const prepare = advisorList.length
        ? async (input: string, ctx: Parameters<Runnable['run']>[1]) =>
            formatAdvice(input, await consultAdvisors(def.name, advisorList, input, ctx, options.advisors))
        : undefined;
      const descriptions = Object.fromEntries(
        def.router.destinations.flatMap((d) => (byName.get(d)!.description === undefined ? [] : [[d, byName.get(d)!.description!]])),
      );
      flow = router(self, destinations, {
        descriptions,
        ...defined({ fallback: def.router.fallback }),
        ...(prepare ? { prepare } : {}),
      });
    } else if (advisorList.length) {
      flow = advisors(flow, advisorList, { ...options.advisors, name: `${def.name} + advisors` });
    }
    if (def.handoff !== undefined) flow = handoff(flow, core(def.handoff), { name: `${def.name} -> ${def.handoff}` });
    cores.set(name, flow);
    return flow;
  };

  const offering = defs.filter((d) => (d.handoffs?.length ?? 0) > 0);
  const choices: Record<string, HandoffChoice[]> = Object.fromEntries(
    offering.map((d) => [
      d.name,
      d.handoffs!.map((h) => ({ to: h.agent, ...defined({ label: h.label, prompt: h.prompt, send: h.send }) })),
    ]),
  );
  const everyCore = (): Record<string, Runnable> => Object.fromEntries(defs.map((d) => [d.name, core(d.name)]));
  return Object.fromEntries(
    defs.map((d) => [
      d.name,
      (d.handoffs?.length ?? 0) > 0
        ? handoffChoices(d.name, {
            agents: everyCore(),
            choices,
            ...defined({ approvals: options.approvals, maxHandoffs: options.maxHandoffs }),
          })
        : core(d.name),
    ]),
  );
}

/**
 * Compile an agent's `team:` key into the team pattern: its members, and
 * its lead (the declaring agent unless `lead` names another).
 */
function compileTeam(def: AgentDefinition, self: Agent, build: (name: string) => Runnable): Runnable {
  const spec = def.team!;
  const lead = spec.lead === undefined || spec.lead === def.name ? self : build(spec.lead);
  return team({
    name: `${def.name} (team)`,
    members: spec.members.map(build),
    lead,
    ...defined({ terminationMode: spec.terminationMode, maxRounds: spec.maxRounds, turnBased: spec.turnBased }),
  });
}

function agentOptions(def: AgentDefinition, options: CompileAgentsOptions, subTools: ToolDefinition[]): Parameters<typeof agent>[0] {
  const resolved = resolveAgentTools(def, resolutionOf(options));
  if (resolved.unresolved.length > 0 && (options.unknownTools ?? 'error') === 'error') {
    const many = resolved.unresolved.length > 1;
    throw new ConfigurationError(
      `Agent "${def.name}" lists tool${many ? 's' : ''} ${resolved.unresolved.map((t) => `"${t}"`).join(', ')}, which ${many ? 'are' : 'is'} not in \`tools\`` +
        (options.toolAliases ? ' or `toolAliases`' : '') +
        (def.format !== undefined && def.format !== 'troupe' && def.format !== 'ai-agent' ? ` (an agent run on its own CLI gets them there: see \`cli\`)` : '') +
        '; pass `unknownTools: "warn"` to leave them out',
      { code: 'invalid_agent', details: { agent: def.name, tools: resolved.unresolved } },
    );
  }
  const at = defined({ file: def.file });
  if (resolved.unresolved.length > 0) {
    options.onWarning?.({ code: 'unresolved_tool', message: `Agent "${def.name}": left out ${resolved.unresolved.length === 1 ? 'a tool that resolves' : 'tools that resolve'} to nothing: ${resolved.unresolved.join(', ')}`, agent: def.name, path: ['tools', ...resolved.unresolved], ...at });
  }
  const approvals = options.approvals;
  const tools: ToolDefinition[] = resolved.tools.map(({ tool, decision, listed }) => {
    if (decision === 'allow') return tool;
    if (approvals === undefined || !('guard' in approvals)) {
      throw new ConfigurationError(`Agent "${def.name}" needs the person's approval before using "${listed}", but no approval queue was given (\`approvals\`)`, {
        code: 'invalid_option',
        details: { agent: def.name, tool: listed },
      });
    }
    return approvals.guard(tool);
  });
  const taken = new Set(tools.map((t) => t.name));
  for (const sub of subTools) {
    const named = taken.has(sub.name) ? { ...sub, name: `${sub.name}_agent`.slice(0, 64) } : sub;
    taken.add(named.name);
    tools.push(named);
  }
  const { models, unresolved } = resolveAgentModel(def, resolutionOf(options));
  if (unresolved.length > 0) {
    options.onWarning?.({ code: 'unresolved_model', message: `Agent "${def.name}": model ${unresolved.map((m) => `"${m}"`).join(', ')} is not in the model map; the adapter's default model is used`, agent: def.name, path: ['model', ...unresolved], ...at });
  }
  const cliAdapter = resolved.onCli ? options.cli?.[def.format!] : undefined;
  const named = def.adapter ?? cliAdapter;
  const adapter = named === undefined ? options.defaultAdapter : typeof named === 'string' ? (options.adapters?.[named] ?? named) : named;
  const servers = agentMcpServers(def, options, typeof adapter === 'object' ? adapter : undefined);
  const metadata =
    resolved.cli === undefined && servers === undefined
      ? def.metadata
      : { ...def.metadata, ...(resolved.cli === undefined ? {} : { [CLI_TOOLS_KEY]: resolved.cli }), ...(servers === undefined ? {} : { [MCP_SERVERS_KEY]: servers }) };
  return {
    name: def.name,
    system: def.system,
    ...defined({ description: def.description, model: models[0] }),
    ...(models.length > 1 ? { models } : {}),
    ...defined({ adapter }),
    ...(tools.length ? { tools } : {}),
    ...defined({ temperature: def.temperature }),
    ...defined({ maxTurns: def.limits?.maxTurns, timeoutMs: def.limits?.timeoutMs }),
    ...defined({ metadata }),
  };
}

/**
 * The MCP servers `def` hands its adapter (`metadata[MCP_SERVERS_KEY]`),
 * or `undefined` when it has none, or when `adapter` (known when compiled)
 * does not start them: then a `mcp_servers_unused` warning says so, and
 * nothing else about them matters. Otherwise a server that cannot be used
 * fails, and a name without a configuration fails or is left out (by
 * `unknownTools`).
 */
function agentMcpServers(def: AgentDefinition, options: CompileAgentsOptions, adapter: ModelAdapter | undefined) {
  if ((def.mcpServers?.length ?? 0) === 0) return undefined;
  const at = defined({ file: def.file });
  if (adapter !== undefined && adapter.capabilities.mcpServers !== true) {
    const names = def.mcpServers!.map((s) => s.name).join(', ');
    options.onWarning?.({
      code: 'mcp_servers_unused',
      message: `Agent "${def.name}": its MCP servers (${names}) are not started: adapter "${adapter.id}" does not start an agent's own MCP servers (a coding-agent CLI run by the process adapter with an MCP profile does)`,
      agent: def.name,
      path: ['mcpServers'],
      ...at,
    });
    return undefined;
  }
  const { servers, unresolved, errors, warnings } = resolveAgentMcpServers(def, resolutionOf(options));
  if (errors.length > 0) {
    throw new ConfigurationError(errors.map((e) => e.message).join('\n'), { code: 'invalid_agent', details: { agent: def.name, errors } });
  }
  if (unresolved.length > 0) {
    const many = unresolved.length > 1;
    const message = `Agent "${def.name}" names MCP server${many ? 's' : ''} ${unresolved.map((n) => `"${n}"`).join(', ')} without a configuration, and \`mcpServers\` does not hold ${many ? 'them' : 'it'}`;
    if ((options.unknownTools ?? 'error') === 'error') {
      throw new ConfigurationError(`${message}; pass \`unknownTools: "warn"\` to leave ${many ? 'them' : 'it'} out`, { code: 'invalid_agent', details: { agent: def.name, mcpServers: unresolved } });
    }
    options.onWarning?.({ code: 'unresolved_mcp_server', message: `${message}: left out`, agent: def.name, path: ['mcpServers', ...unresolved], ...at });
  }
  for (const warning of warnings) options.onWarning?.(warning);
  return servers.length === 0 ? undefined : servers;
}

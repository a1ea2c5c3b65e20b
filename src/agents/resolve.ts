/**
 * What an agent's tool and model names mean in the app that runs it. A
 * tool named in a file resolves, in this order, to a tool the app
 * registered (by name, or through its alias map), to the CLI's own tool
 * when the agent runs on the CLI of its format's vendor (passed to the CLI
 * as its allow-list), or to nothing (an error or a warning, by the app's
 * policy). A model alias resolves through the app's model map, or passes
 * as it is to the vendor's own CLI. Pure functions of the definition.
 * @module
 */
import type { CliToolList, McpServerConfig, ModelAdapter } from '../core/adapter.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineOptions, object, oneOf } from '../core/options.js';
import type { ToolDefinition } from '../core/tools.js';
import type { AgentDefinition, AgentFormat, ToolDecision } from './definition.js';

/** How the app resolves the tool and model names of agent files. */
export interface AgentResolutionOptions {
  /** Tools the app registered, by name. */
  tools?: Record<string, ToolDefinition>;
  /**
   * Tool names as files write them (`Read`, `read/readFile`,
   * `mcp__github__get_issue`), mapped to names of `tools`; `null` says the
   * app has no tool for the name, and it is left out without being
   * reported (on the vendor's CLI it still goes to the CLI). A name of
   * `tools` that the map names but `tools` does not hold is a
   * `ConfigurationError`.
   */
  toolAliases?: Record<string, string | null>;
  /**
   * The adapter (or registered adapter name) running each format's own CLI
   * through the process adapter (`{ 'claude-code': 'claude' }`): an agent of
   * that format that names no other adapter runs on it, its tool names that
   * `tools` does not hold are passed to the CLI as its allow-list, and its
   * model aliases pass as they are.
   */
  cli?: Partial<Record<AgentFormat, ModelAdapter | string>>;
  /**
   * A tool name that resolves to nothing, or an MCP server named without a
   * configuration that `mcpServers` does not hold: `error` (the default)
   * fails, `warn` (or `skip`) leaves it out with a warning.
   */
  unknownTools?: 'error' | 'warn' | 'skip';
  /**
   * MCP servers the app knows by name, for agent files that name a server
   * without configuring it (Claude Code's `mcpServers: [github]`, which
   * Claude Code finds in the user's or the project's MCP settings).
   */
  mcpServers?: Record<string, McpServerConfig>;
  /** Model names as files write them (`sonnet`, `Claude Sonnet 4.6 (copilot)`), mapped to the models the adapters know. */
  modelMap?: Record<string, string>;
}

/** The description {@link AgentResolutionOptions} are checked against (every resolver, `validateAgents`, `inspectAgents`; `compileAgents` extends it). */
export const agentResolutionOptions = defineOptions<AgentResolutionOptions>('resolveAgentTools', {
  tools: object,
  toolAliases: object,
  cli: object,
  unknownTools: oneOf(['error', 'warn', 'skip']),
  mcpServers: object,
  modelMap: object,
});

/**
 * The resolution options among `options` (a compiler's options hold more),
 * for the resolvers, which refuse other keys.
 * @internal
 */
export function resolutionOf(options: AgentResolutionOptions): AgentResolutionOptions {
  return Object.fromEntries(agentResolutionOptions.keys.filter((key) => key in options).map((key) => [key, (options as Record<string, unknown>)[key]]));
}

/** One registered tool an agent gets. */
export interface ResolvedTool {
  /** The name as the file wrote it (`*` for every registered tool). */
  listed: string;
  /** The registered tool. */
  tool: ToolDefinition;
  /** Whether its calls need the person's approval (`ask`) or run (`allow`). */
  decision: Exclude<ToolDecision, 'deny'>;
}

/** What {@link resolveAgentTools} finds. */
export interface ResolvedTools {
  /** Registered tools, once each. */
  tools: ResolvedTool[];
  /** The CLI's own tools, when the agent runs on its vendor's CLI. */
  cli?: CliToolList;
  /** Names that resolved to nothing, as the file wrote them. */
  unresolved: string[];
  /** Names `toolAliases` maps to `null`: left out, not reported (present when there are any). */
  ignored?: string[];
  /** True when the agent runs on its format's CLI. */
  onCli: boolean;
}

/**
 * Check that every name `toolAliases` maps to is a tool of `tools` (or
 * `null`): a map that names a tool the app does not have would resolve
 * nothing, silently.
 */
function checkToolAliases(options: AgentResolutionOptions): void {
  const aliases = options.toolAliases;
  if (aliases === undefined) return;
  const registered = options.tools ?? {};
  for (const [name, target] of Object.entries(aliases)) {
    if (target === null || (typeof target === 'string' && Object.hasOwn(registered, target))) continue;
    const have = Object.keys(registered);
    throw new ConfigurationError(
      typeof target === 'string'
        ? `\`toolAliases\` maps "${name}" to "${target}", which is not in \`tools\` (${have.length === 0 ? 'none' : have.join(', ')}); map it to null to leave it out without a warning`
        : `\`toolAliases\` maps "${name}" to ${describeValue(target)}: expected the name of a tool of \`tools\`, or null`,
      { code: 'invalid_option', details: { name, target } },
    );
  }
}

/** True when `def` runs on the CLI of its format's vendor (see {@link AgentResolutionOptions.cli}). */
export function runsOnCli(def: AgentDefinition, options: AgentResolutionOptions): boolean {
  agentResolutionOptions.check(options, '', 'runsOnCli');
  const cli = def.format === undefined ? undefined : options.cli?.[def.format];
  if (cli === undefined) return false;
  return def.adapter === undefined || (typeof cli === 'string' ? def.adapter === cli : def.adapter === cli.id);
}

/** The decision of `def`'s approval policy for a tool. */
export function toolDecision(def: AgentDefinition, tool: string): ToolDecision {
  return def.approval?.tools?.[tool] ?? def.approval?.default ?? 'allow';
}

/**
 * Resolve the tool names of `def`: registered tools (by name or alias), the
 * CLI's own tools when the agent runs on its vendor's CLI, and the names
 * that resolve to nothing. `*` is every registered tool; it names none of
 * the CLI's (an agent whose file names none, or has no `tools:` line, which
 * the vendors' formats read as `*`, gets what its profile gives such an
 * agent: none by default, see `defaultCliTools`). `disallowedTools` and tools the approval policy denies are
 * left out (on the CLI: passed as its deny-list).
 *
 * @example
 * ```ts
 * resolveAgentTools(def, { tools: { read_file: readFile }, toolAliases: { Read: 'read_file' } });
 * // { tools: [{ listed: 'Read', tool: readFile, decision: 'allow' }], unresolved: ['Grep'], onCli: false }
 * ```
 */
export function resolveAgentTools(def: AgentDefinition, options: AgentResolutionOptions = {}): ResolvedTools {
  agentResolutionOptions.check(options);
  checkToolAliases(options);
  const onCli = runsOnCli(def, options);
  const registered = options.tools ?? {};
  const disallowed = new Set(def.disallowedTools ?? []);
  const aliases = options.toolAliases ?? {};
  const targetOf = (name: string): string | undefined => (Object.hasOwn(registered, name) ? name : Object.hasOwn(aliases, name) ? (aliases[name] ?? undefined) : undefined);
  const ignored: string[] = [];
  const disallowedTargets = new Set([...disallowed].map(targetOf).filter((t): t is string => t !== undefined));
  const tools: ResolvedTool[] = [];
  const seen = new Set<string>();
  const unresolved: string[] = [];
  const allowed: string[] = [];
  const denied = new Set(onCli ? disallowed : []);
  let all = false;
  const add = (listed: string, target: string): void => {
    const tool = registered[target];
    const decision = toolDecision(def, listed === '*' ? target : listed);
    if (tool === undefined || seen.has(tool.name) || disallowedTargets.has(target) || decision === 'deny') return;
    seen.add(tool.name);
    tools.push({ listed, tool, decision });
  };
  for (const name of def.tools ?? []) {
    if (name === '*') {
      all = true;
      for (const target of Object.keys(registered)) add('*', target);
      continue;
    }
    const target = targetOf(name);
    if (target !== undefined && Object.hasOwn(registered, target)) add(name, target);
    else if (disallowed.has(name)) continue;
    else if (onCli) {
      if (toolDecision(def, name) === 'deny') denied.add(name);
      else allowed.push(name);
    } else if (Object.hasOwn(aliases, name) && aliases[name] === null) ignored.push(name);
    else unresolved.push(name);
  }
  if (onCli && def.approval !== undefined) {
    for (const [name, decision] of Object.entries(def.approval.tools ?? {})) if (decision === 'deny' && targetOf(name) === undefined) denied.add(name);
  }
  const out: ResolvedTools = { tools, unresolved, ...(ignored.length > 0 ? { ignored } : {}), onCli };
  // `*` names no tool of the CLI: with nothing else named, the agent gets what its profile gives such an agent (none, by default).
  if (onCli) out.cli = { ...(all && allowed.length === 0 ? {} : { allowed }), disallowed: [...denied] };
  return out;
}

/** What {@link resolveAgentModel} finds. */
export interface ResolvedModel {
  /** The models to use, in order of preference (empty: the adapter's default). */
  models: string[];
  /** Model aliases that resolved to nothing. */
  unresolved: string[];
}

/**
 * The models of `def` for its adapter: `model` and `models` through the
 * model map (or as they are), then each model alias through the model map,
 * or as it is when the agent runs on its vendor's CLI; an alias that does
 * neither is unresolved (and left out).
 *
 * @example
 * ```ts
 * resolveAgentModel(def, { modelMap: { sonnet: 'claude-sonnet-4-5' } }); // { models: ['claude-sonnet-4-5'], unresolved: [] }
 * ```
 */
export function resolveAgentModel(def: AgentDefinition, options: AgentResolutionOptions = {}): ResolvedModel {
  agentResolutionOptions.check(options, '', 'resolveAgentModel');
  const map = options.modelMap ?? {};
  const mapped = (m: string): string => (Object.hasOwn(map, m) ? map[m]! : m);
  const models = [...(def.model === undefined ? [] : [def.model]), ...(def.models ?? [])].map(mapped);
  const unresolved: string[] = [];
  const onCli = runsOnCli(def, options);
  for (const alias of def.modelAliases ?? []) {
    if (Object.hasOwn(map, alias)) models.push(map[alias]!);
    else if (onCli) models.push(alias);
    else unresolved.push(alias);
  }
  return { models: [...new Set(models)], unresolved };
}

/** The name of the tool that calls the sub-agent `agent`: its name with characters tools may not hold written `_` (`devsquad.plan` → `devsquad_plan`). */
export function subAgentToolName(agent: string): string {
  return agent.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

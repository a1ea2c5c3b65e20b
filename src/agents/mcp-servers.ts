/**
 * An agent's own MCP servers, read into one shape for the CLI it runs on:
 * the configurations its file gives inline (Claude Code's `mcpServers`,
 * Copilot's `mcp-servers`, troupe's `mcpServers`), or the servers of the
 * app that it names. Each tool spells a configuration its own way (`type:
 * local` or `stdio`, no `type` at all); they all become an
 * {@link McpServerSpec}. Pure functions of the definition.
 * @module
 */
import type { McpServerConfig, McpServerSpec } from '../core/adapter.js';
import { describeValue } from '../core/errors.js';
import type { AgentDefinition, AgentIssue, McpServerReference } from './definition.js';
import { agentResolutionOptions, type AgentResolutionOptions } from './resolve.js';
import { defined } from '../core/defined.js';

/** What an MCP server's name must match: it becomes part of tool names (`mcp__<name>__<tool>`) and config keys. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** What {@link resolveAgentMcpServers} finds. */
export interface ResolvedMcpServers {
  /** The servers, in the file's order. */
  servers: McpServerSpec[];
  /** Names the file gives without a configuration, which the app does not know either. */
  unresolved: string[];
  /** Servers that cannot be used (a bad name, a name given twice ignoring case, no `command` or `url`, a value of the wrong type). */
  errors: AgentIssue[];
  /** Keys of a configuration that are not used. */
  warnings: AgentIssue[];
}

const TYPES: Record<string, McpServerConfig['type']> = { stdio: 'stdio', local: 'stdio', http: 'http', sse: 'sse' };
const USED_KEYS = new Set(['type', 'command', 'args', 'env', 'url', 'headers', 'tools']);

/**
 * The MCP servers of `def`, each as an {@link McpServerSpec}: an inline
 * configuration read as its tool writes it (`type` `stdio` or `local`,
 * `http`, `sse`; without `type`, `command` means stdio and `url` means
 * HTTP), a bare name through the app's `mcpServers`. Numbers and booleans
 * in `args`, `env` and `headers` are read as text; `tools: ['*']` is every
 * tool.
 *
 * @example
 * ```ts
 * resolveAgentMcpServers(def, { mcpServers: { github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/' } } });
 * // { servers: [{ name: 'github', type: 'http', url: '...' }], unresolved: [], errors: [], warnings: [] }
 * ```
 */
export function resolveAgentMcpServers(def: AgentDefinition, options: Pick<AgentResolutionOptions, 'mcpServers'> = {}): ResolvedMcpServers {
  // The other resolution options may come along (the same options as the other resolvers'): they are not used.
  agentResolutionOptions.check(options, '', 'resolveAgentMcpServers');
  const out: ResolvedMcpServers = { servers: [], unresolved: [], errors: [], warnings: [] };
  const at = defined({ file: def.file });
  const seen = new Set<string>();
  for (const reference of def.mcpServers ?? []) {
    const { name } = reference;
    const issue = (message: string, path: Array<string | number> = []): AgentIssue => ({
      code: 'invalid_value',
      message: `Agent "${def.name}": MCP server "${name}": ${message}`,
      agent: def.name,
      path: ['mcpServers', name, ...path],
      ...at,
    });
    if (!MCP_SERVER_NAME_PATTERN.test(name)) {
      out.errors.push(issue('a name may hold only letters, digits, `_` and `-` (1-64 of them)'));
      continue;
    }
    if (seen.has(name.toLowerCase())) {
      out.errors.push(issue('the name is given twice (ignoring case)'));
      continue;
    }
    seen.add(name.toLowerCase());
    const config = configOf(reference, options);
    if (config === undefined) {
      out.unresolved.push(name);
      continue;
    }
    const read = readConfig(config, issue);
    if (read.error) out.errors.push(read.error);
    else out.servers.push({ name, ...read.config });
    for (const key of read.unused) {
      out.warnings.push({ ...issue(`\`${key}\` is not used`, [key]), code: 'unused_key' });
    }
  }
  return out;
}

function configOf(reference: McpServerReference, options: Pick<AgentResolutionOptions, 'mcpServers'>): Record<string, unknown> | undefined {
  if (reference.config !== undefined) return reference.config;
  const known = options.mcpServers;
  return known !== undefined && Object.hasOwn(known, reference.name) ? (known[reference.name] as unknown as Record<string, unknown>) : undefined;
}

type ReadConfig = { config: McpServerConfig; error?: undefined; unused: string[] } | { error: AgentIssue; unused: string[] };

function readConfig(config: Record<string, unknown>, issue: (message: string, path?: Array<string | number>) => AgentIssue): ReadConfig {
  const unused = Object.keys(config).filter((k) => !USED_KEYS.has(k));
  const wrong = (key: string, expected: string, value: unknown): ReadConfig => ({ error: issue(`expected \`${key}\` to be ${expected}, got ${describeValue(value)}`, [key]), unused });
  const { type: rawType, command, args, env, url, headers, tools } = config;
  let type: McpServerConfig['type'];
  if (rawType === undefined || rawType === null) {
    if (typeof command === 'string') type = 'stdio';
    else if (typeof url === 'string') type = 'http';
    else return { error: issue('give a `command` (a program spoken to over stdio) or a `url`'), unused };
  } else if (typeof rawType === 'string' && Object.hasOwn(TYPES, rawType.toLowerCase())) type = TYPES[rawType.toLowerCase()]!;
  else return wrong('type', '"stdio" (or "local"), "http" or "sse"', rawType);
  const toolList = textList(tools);
  if (toolList === null) return wrong('tools', 'a list of tool names', tools);
  const only = toolList === undefined || toolList.includes('*') ? {} : { tools: toolList };
  if (type === 'stdio') {
    if (typeof command !== 'string' || command.trim() === '') return wrong('command', 'a program', command);
    const argList = textList(args);
    if (argList === null) return wrong('args', 'a list of arguments', args);
    const envMap = textRecord(env);
    if (envMap === null) return wrong('env', 'a mapping of variable names to values', env);
    for (const key of ['url', 'headers']) if (config[key] !== undefined) unused.push(key);
    return { config: { type, command, ...defined({ args: argList, env: envMap }), ...only }, unused };
  }
  if (typeof url !== 'string' || url.trim() === '') return wrong('url', 'a URL', url);
  const headerMap = textRecord(headers);
  if (headerMap === null) return wrong('headers', 'a mapping of header names to values', headers);
  for (const key of ['command', 'args', 'env']) if (config[key] !== undefined) unused.push(key);
  return { config: { type, url, ...defined({ headers: headerMap }), ...only }, unused };
}

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** A list of scalars as text; `undefined` when absent, `null` when not a list of scalars. */
function textList(value: unknown): string[] | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every(isScalar)) return null;
  return value.map(String);
}

/** A mapping of scalars as text; `undefined` when absent, `null` when not a mapping of scalars. */
function textRecord(value: unknown): Record<string, string> | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (!isScalar(item)) return null;
    out[key] = String(item);
  }
  return out;
}

/**
 * What a CLI session declares to its CLI through the profile's `configure`:
 * troupe's MCP server (when the session has tools), the agent's own MCP
 * servers, the CLI's own tools the agent may use and its system prompt.
 * The profile turns them into the CLI's arguments, which replace `{mcp}`.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_SYSTEM_PROMPT_KEY, CLI_TOOLS_KEY, MCP_SERVERS_KEY, type CliToolList, type McpServerSpec, type SessionSpec } from '../core/adapter.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { CliToolCalls, type McpServerLaunch } from './process-tools.js';
import { defined } from '../core/defined.js';

export type { McpServerLaunch } from './process-tools.js';

/** What {@link ProcessMcpOptions.configure} declares to the CLI for one session. */
export interface McpLaunch {
  /** The agent the session speaks for (for warnings). */
  readonly agent?: string;
  /** troupe's MCP server, when the session has tools. */
  readonly troupe?: McpServerLaunch;
  /**
   * The agent's own MCP servers (`SessionSpec.metadata[MCP_SERVERS_KEY]`,
   * from its file's `mcpServers` / `mcp-servers`), to declare beside
   * troupe's, with the permissions the CLI needs to call their tools. None
   * is named like troupe's server (the session is refused first). Empty
   * for most sessions.
   */
  readonly servers: readonly McpServerSpec[];
  /**
   * The CLI's own tools the agent may use (`SessionSpec.metadata[CLI_TOOLS_KEY]`,
   * from `agent({ cli: { tools } })` or an agent file run on its vendor's
   * CLI), to pass as the CLI's own switches beside the permissions of the
   * MCP servers. Absent: the agent names none (the built-in profiles then
   * offer none of the CLI's tools, unless `defaultCliTools: 'all'`).
   */
  readonly cliTools?: CliToolList;
  /** The session's system prompt, for a profile that gives it to the CLI as the CLI's own system prompt (then it returns `system: true`). */
  readonly system?: string;
  /** How the agent wants its system prompt to reach the CLI (`SessionSpec.metadata[CLI_SYSTEM_PROMPT_KEY]`); absent: the profile decides. */
  readonly systemPrompt?: 'append' | 'replace';
  /** A private folder (mode 0700) for the CLI's config files, removed with the session. */
  readonly dir: string;
}

/** What `configure` returns: the arguments that replace `{mcp}`, and variables for the CLI's environment. */
export interface McpLaunchConfig {
  /** Replace the whole-argument `{mcp}` placeholder of the command (and of the resume command). */
  args: readonly string[];
  /** Set in the CLI's environment (they win over `passEnv` and `env`). */
  env?: Record<string, string>;
  /**
   * True when `args` give the CLI the session's system prompt (`launch.system`)
   * as the CLI's own: the prompt of each turn then leaves it out. Default:
   * false (the prompt of the first turn starts with it, as without MCP).
   */
  system?: boolean;
  /**
   * What the CLI could not be given as the session asked (a tool the CLI
   * does not have, a system prompt it cannot replace): each becomes a
   * `warning` event of the session's agent (on its first turn).
   */
  warnings?: readonly CliLaunchWarning[];
}

/** Something a profile could not declare to its CLI as the session asked. */
export interface CliLaunchWarning {
  /** `unknown_cli_tool`, `system_prompt_not_replaced`, ... */
  code: string;
  message: string;
  data?: Record<string, unknown>;
}

/** How a CLI learns of MCP servers and tools: see `processAdapter`'s `mcp` option. */
export interface ProcessMcpOptions {
  /** The name of troupe's server, as the CLI will know it. Default: `troupe`. */
  serverName?: string;
  /**
   * How long, in ms of real time, a turn waits for more calls after each
   * call that arrives, so that calls the CLI makes at once come in one turn
   * (and troupe runs them in parallel). Default:
   * {@link DEFAULT_TOOL_CALL_GATHER_MS} (150 ms).
   */
  gatherMs?: number;
  /**
   * The CLI's arguments (and environment) that declare troupe's server and
   * the agent's own servers, allow their tools, say which of the CLI's own
   * tools the agent may use (none when it names none), and give the CLI the
   * agent's system prompt. Called once per session; it may write config
   * files into `launch.dir`. Built-in: {@link claudeCodeProfile},
   * {@link codexProfile}, {@link copilotProfile}.
   */
  configure(launch: McpLaunch): McpLaunchConfig | Promise<McpLaunchConfig>;
}

/** What a session declared: its tool calls (when troupe serves tools), the CLI's arguments, and the end of it all. */
export interface CliLaunch {
  readonly calls: CliToolCalls | undefined;
  readonly config: McpLaunchConfig;
  close(): Promise<void>;
}

/** The name of troupe's server when `serverName` is not given. */
export const DEFAULT_MCP_SERVER_NAME = 'troupe';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The agent's own MCP servers of `spec`, checked: a list of
 * {@link McpServerSpec}, names unique (ignoring case) and none named
 * `reserved` (troupe's server).
 */
export function sessionMcpServers(spec: SessionSpec, reserved: string): McpServerSpec[] {
  const value = spec.metadata?.[MCP_SERVERS_KEY];
  if (value === undefined) return [];
  const fail = (message: string, details: Record<string, unknown> = {}) =>
    new ConfigurationError(`Agent "${spec.agent}": ${message}`, { code: 'invalid_agent', details: { agent: spec.agent, ...details } });
  if (!Array.isArray(value)) throw fail(`expected \`metadata.${MCP_SERVERS_KEY}\` to be a list of MCP servers, got ${describeValue(value)}`);
  const seen = new Set<string>();
  for (const server of value as unknown[]) {
    const problem = serverProblem(server);
    if (problem !== undefined) throw fail(`expected each of \`metadata.${MCP_SERVERS_KEY}\` to be an MCP server ({ name, type: 'stdio', command } or { name, type: 'http' | 'sse', url }): ${problem}, in ${describeValue(server)}`);
    const { name } = server as McpServerSpec;
    const key = name.toLowerCase();
    if (key === reserved.toLowerCase()) {
      throw fail(`its MCP server "${name}" has the name of troupe's own server for the session's tools; rename the agent's server, or give troupe's another name (the profile's \`serverName\`)`, {
        server: name,
      });
    }
    if (seen.has(key)) throw fail(`two of its MCP servers are named "${name}"`, { server: name });
    seen.add(key);
  }
  return value as McpServerSpec[];
}

function serverProblem(server: unknown): string | undefined {
  if (server === null || typeof server !== 'object' || Array.isArray(server)) return 'not an object';
  const s = server as Record<string, unknown>;
  const strings = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  const record = (v: unknown) => v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'));
  if (typeof s['name'] !== 'string' || !NAME.test(s['name'])) return '`name` must be 1-64 letters, digits, `_` or `-`';
  if (!strings(s['tools'])) return '`tools` must be a list of names';
  if (s['type'] === 'stdio') {
    if (typeof s['command'] !== 'string' || s['command'] === '') return '`command` must be a program';
    if (!strings(s['args'])) return '`args` must be a list of strings';
    if (!record(s['env'])) return '`env` must map names to strings';
    return undefined;
  }
  if (s['type'] === 'http' || s['type'] === 'sse') {
    if (typeof s['url'] !== 'string' || s['url'] === '') return '`url` must be a URL';
    if (!record(s['headers'])) return '`headers` must map names to strings';
    return undefined;
  }
  return '`type` must be "stdio", "http" or "sse"';
}

/** The CLI tools of `spec` (`metadata[CLI_TOOLS_KEY]`), checked. */
export function sessionCliTools(spec: SessionSpec): CliToolList | undefined {
  const value = spec.metadata?.[CLI_TOOLS_KEY];
  if (value === undefined) return undefined;
  const list = value as Partial<CliToolList> | null;
  const names = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (typeof list !== 'object' || list === null || !(list.allowed === undefined || names(list.allowed)) || !names(list.disallowed)) {
    throw new ConfigurationError(`Agent "${spec.agent}": expected \`metadata.${CLI_TOOLS_KEY}\` to be { allowed?: string[], disallowed: string[] }, got ${describeValue(value)}`, {
      code: 'invalid_agent',
      details: { agent: spec.agent },
    });
  }
  return value as CliToolList;
}

/** How `spec`'s agent wants its system prompt to reach the CLI (`metadata[CLI_SYSTEM_PROMPT_KEY]`), checked. */
export function sessionSystemPrompt(spec: SessionSpec): 'append' | 'replace' | undefined {
  const value = spec.metadata?.[CLI_SYSTEM_PROMPT_KEY];
  if (value === undefined || value === 'append' || value === 'replace') return value;
  throw new ConfigurationError(`Agent "${spec.agent}": expected \`metadata.${CLI_SYSTEM_PROMPT_KEY}\` to be "append" or "replace", got ${describeValue(value)}`, {
    code: 'invalid_agent',
    details: { agent: spec.agent },
  });
}

/**
 * Declare a session to its CLI: start troupe's server when the session has
 * tools, and ask `mcp.configure` for the arguments of everything the
 * session has (troupe's tools, the agent's servers, the CLI's tools, the
 * system prompt), or has not: a CLI is told to offer none of its own
 * tools to an agent that names none.
 */
export async function launchCli(mcp: ProcessMcpOptions, spec: SessionSpec, signal: AbortSignal | undefined): Promise<CliLaunch> {
  const name = mcp.serverName ?? DEFAULT_MCP_SERVER_NAME;
  const servers = sessionMcpServers(spec, name);
  const cliTools = sessionCliTools(spec);
  const systemPrompt = sessionSystemPrompt(spec);
  const hasTools = spec.tools !== undefined && spec.tools.length > 0;
  const calls = hasTools ? await CliToolCalls.start(spec.tools!, name, mcp.gatherMs, signal) : undefined;
  let dir = calls?.dir;
  const close = async () => {
    if (calls) await calls.close();
    else if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  };
  try {
    dir ??= await mkdtemp(join(tmpdir(), 'troupe-cli-'));
    const config = await mcp.configure({
      agent: spec.agent,
      ...(calls ? { troupe: calls.server } : {}),
      servers,
      ...defined({ cliTools, system: spec.system, systemPrompt }),
      dir,
    });
    if (!config || !Array.isArray(config.args) || !config.args.every((a) => typeof a === 'string')) {
      throw new ConfigurationError(`Expected \`mcp.configure\` to return { args: string[] }, got ${describeValue(config)}`);
    }
    return { calls, config, close };
  } catch (error) {
    await close();
    throw error;
  }
}

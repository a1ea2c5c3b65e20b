/**
 * Built-in profiles of the process adapter: the command lines of Claude
 * Code, Codex and GitHub Copilot, each serving a session's tools to the CLI
 * over MCP beside the agent's own MCP servers, allowing their tools and the
 * CLI's own tools the agent may use, and switching off the CLI's own
 * sub-agent tool, so that an orchestrator CLI dispatches through troupe.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { McpServerSpec } from '../core/adapter.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { ProcessAdapterOptions } from './process-options.js';
import { copilotToolArgs } from './process-copilot-tools.js';
import type { McpLaunch } from './process-launch.js';
import { defined } from '../core/defined.js';

/** Options of the built-in CLI profiles. */
export interface CliProfileOptions {
  /** The program (a name on `PATH` or a path), or a program and its first arguments (`['npx', 'claude']`). Default: `claude`, `codex` or `copilot`. */
  command?: string | readonly string[];
  /** More arguments for every turn (a model, permissions for the CLI's own tools, ...), placed after the profile's own. */
  args?: readonly string[];
  /** The name of troupe's MCP server, as the CLI shows it. Default: `troupe`. An agent's own server may not have it. */
  serverName?: string;
  /**
   * How long the CLI waits for each MCP server (troupe's and the agent's
   * own) to start before it goes on without that server's tools, in ms.
   * Default: {@link DEFAULT_MCP_STARTUP_TIMEOUT_MS} (60 s; the CLIs' own
   * defaults of 10 to 30 s leave a server without its tools on a loaded
   * machine). Claude Code and Codex; Copilot has no such setting.
   */
  mcpStartupTimeoutMs?: number;
}

/** How long a CLI waits for an MCP server to start when `mcpStartupTimeoutMs` is not given. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 60_000;

function startupTimeoutMs(options: CliProfileOptions): number {
  const ms = options.mcpStartupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new ConfigurationError(`Expected \`mcpStartupTimeoutMs\` to be a positive number of ms, got ${describeValue(ms)}`, { code: 'invalid_option' });
  }
  return ms;
}

/** The Claude Code version {@link claudeCodeProfile} was written and tested against. */
export const CLAUDE_CODE_VERSION = '2.1.197';
/** The Codex CLI version {@link codexProfile} was written and tested against. */
export const CODEX_VERSION = '0.169.0';
/** The GitHub Copilot CLI version {@link copilotProfile} was written against. */
export const COPILOT_VERSION = '1.0.102';

/**
 * Claude Code (`claude -p`, written against {@link CLAUDE_CODE_VERSION}):
 * JSON output, resume by session id, the prompt on stdin. The MCP servers
 * (troupe's, serving the session's tools, and the agent's own) in a config
 * file (`--mcp-config`, and `--strict-mcp-config` so no other MCP server
 * of the user or the project is loaded); their tools allowed
 * (`--allowedTools mcp__troupe__<tool>,mcp__<server>`: `-p` mode denies
 * what is not allowed); the built-in tools of an agent file run on Claude
 * Code offered (`--tools Read,Grep`) and allowed (`--allowedTools`), its
 * disallowed ones refused; the built-in sub-agent tool disallowed (`Task`,
 * named `Agent` in API requests).
 *
 * @example
 * ```ts
 * const claude = processAdapter({ ...claudeCodeProfile({ args: ['--model', 'sonnet'] }), passEnv: [...DEFAULT_PASS_ENV, 'ANTHROPIC_API_KEY'] });
 * ```
 */
export function claudeCodeProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  const program = programOf(options, 'claude');
  const startupMs = startupTimeoutMs(options);
  const rest = ['--output-format', 'json', ...(options.args ?? [])];
  return {
    id: 'claude',
    command: [...program, '-p', '{mcp}', ...rest],
    resume: { command: [...program, '-p', '--resume', '{sessionId}', '{mcp}', ...rest] },
    output: 'jsonl',
    prompt: 'stdin',
    mcp: {
      ...defined({ serverName: options.serverName }),
      async configure({ troupe, servers, cliTools, dir }) {
        const args: string[] = [];
        const config: Record<string, unknown> = {};
        if (troupe) config[troupe.name] = { type: 'stdio', command: troupe.command, args: troupe.args };
        for (const server of servers) config[server.name] = claudeServer(server);
        if (Object.keys(config).length > 0) {
          const file = join(dir, 'claude-mcp.json');
          await writeFile(file, JSON.stringify({ mcpServers: config }), { mode: 0o600 });
          args.push('--mcp-config', file, '--strict-mcp-config');
        }
        // Claude Code merges every --allowedTools it is given; one list says it all.
        const allowed = [
          ...(troupe?.tools.map((t) => `mcp__${troupe.name}__${t}`) ?? []),
          ...servers.flatMap((s) => (s.tools === undefined ? [`mcp__${s.name}`] : s.tools.map((t) => `mcp__${s.name}__${t}`))),
          ...(cliTools?.allowed ?? []),
        ];
        // --tools limits the built-in tools offered (MCP tools are not built-in); --allowedTools only permits.
        if (cliTools?.allowed) args.push('--tools', unique(cliTools.allowed.filter((t) => !t.startsWith('mcp__')).map(toolName)).join(','));
        if (allowed.length > 0) args.push('--allowedTools', unique(allowed).join(','));
        args.push('--disallowedTools', unique(['Task', 'Agent', ...(cliTools?.disallowed ?? [])]).join(','));
        return { args, env: { MCP_TIMEOUT: String(Math.ceil(startupMs)) } };
      },
    },
  };
}

/** An agent's MCP server as Claude Code's `--mcp-config` writes it. */
function claudeServer(server: McpServerSpec): Record<string, unknown> {
  if (server.type === 'stdio') return { type: 'stdio', command: server.command, args: server.args ?? [], ...(server.env ? { env: server.env } : {}) };
  return { type: server.type, url: server.url, ...(server.headers ? { headers: server.headers } : {}) };
}

/** `Bash(git *)` → `Bash`: the tool a permission rule is about. */
function toolName(rule: string): string {
  const at = rule.indexOf('(');
  return (at < 0 ? rule : rule.slice(0, at)).trim();
}

/**
 * Codex (`codex exec --json`, written against {@link CODEX_VERSION}): resume
 * by thread id, the prompt on stdin; its usage is the thread's total so far
 * (`usageReport: 'cumulative'`), which the adapter turns into each turn's.
 * The MCP servers given as `-c mcp_servers.<server>.*` overrides (nothing
 * is written to the user's `config.toml`), each with its tools approved (`exec` never asks, so a
 * tool that needs approval fails): troupe's, with a tool time-out of a day
 * (Codex's default of 60 s would cut a worker short; troupe's own time
 * limits apply) and parallel calls allowed, and the agent's own (stdio or
 * streamable HTTP; Codex has no SSE client). Sub-agents off
 * (`agents.enabled=false`). Codex has no allow-list of its own tools (its
 * sandbox decides what commands may do), so `cliTools` is not used.
 * Outside a Git repository Codex also wants `args: ['--skip-git-repo-check']`.
 *
 * @example
 * ```ts
 * const codex = processAdapter({ ...codexProfile({ args: ['--sandbox', 'workspace-write'] }), passEnv: [...DEFAULT_PASS_ENV, 'OPENAI_API_KEY'] });
 * ```
 */
export function codexProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  const program = programOf(options, 'codex');
  const startupSec = String(Math.ceil(startupTimeoutMs(options) / 1000));
  const rest = ['--json', ...(options.args ?? [])];
  return {
    id: 'codex',
    command: [...program, 'exec', '{mcp}', ...rest, '-'],
    resume: { command: [...program, 'exec', 'resume', '{mcp}', ...rest, '{sessionId}', '-'] },
    output: 'jsonl',
    prompt: 'stdin',
    usageReport: 'cumulative',
    mcp: {
      ...defined({ serverName: options.serverName }),
      configure({ troupe, servers }: McpLaunch) {
        const args: string[] = [];
        const set = (server: string, key: string, value: string) => args.push('-c', `mcp_servers.${server}.${key}=${value}`);
        if (troupe) {
          set(troupe.name, 'command', tomlString(troupe.command));
          set(troupe.name, 'args', tomlArray(troupe.args));
          set(troupe.name, 'default_tools_approval_mode', '"approve"');
          set(troupe.name, 'tool_timeout_sec', '86400');
          set(troupe.name, 'supports_parallel_tool_calls', 'true');
          set(troupe.name, 'startup_timeout_sec', startupSec);
        }
        for (const server of servers) {
          if (server.type === 'sse') {
            throw new ConfigurationError(`MCP server "${server.name}" is reached over SSE, which Codex does not speak (it reaches MCP servers over stdio or streamable HTTP)`, {
              code: 'invalid_agent',
              details: { server: server.name },
            });
          }
          if (server.type === 'stdio') {
            set(server.name, 'command', tomlString(server.command));
            if (server.args) set(server.name, 'args', tomlArray(server.args));
            if (server.env) set(server.name, 'env', tomlTable(server.env));
          } else {
            set(server.name, 'url', tomlString(server.url));
            if (server.headers) set(server.name, 'http_headers', tomlTable(server.headers));
          }
          if (server.tools) set(server.name, 'enabled_tools', tomlArray(server.tools));
          set(server.name, 'default_tools_approval_mode', '"approve"');
          set(server.name, 'startup_timeout_sec', startupSec);
        }
        args.push('-c', 'agents.enabled=false');
        return { args };
      },
    },
  };
}

/**
 * GitHub Copilot CLI (`copilot -p`, written against {@link COPILOT_VERSION}):
 * plain text output (`-s`), the earlier turns in the prompt. The MCP
 * servers (troupe's and the agent's own) in `--additional-mcp-config
 * @<file>` (added to the user's MCP servers for this run), each allowed
 * (`--allow-tool <server>`); the tools of an agent file run on Copilot, by
 * the names and aliases its files use (`read`, `edit`, `search`,
 * `execute`, `read/readFile`, `<server>/<tool>`), offered alone with the
 * MCP servers (`--available-tools view grep glob troupe ...`) and allowed
 * where Copilot asks (`shell`, `write`); the built-in sub-agent tool
 * `task` excluded, with the tools that manage the background agents it
 * starts (`read_agent`, `list_agents`, `write_agent`).
 *
 * @example
 * ```ts
 * const copilot = processAdapter({ ...copilotProfile(), passEnv: [...DEFAULT_PASS_ENV, 'COPILOT_GITHUB_TOKEN'] });
 * ```
 */
export function copilotProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  const program = programOf(options, 'copilot');
  return {
    id: 'copilot',
    command: [...program, '{mcp}', '-s', '--no-auto-update', ...(options.args ?? []), '-p', '{prompt}'],
    mcp: {
      ...defined({ serverName: options.serverName }),
      async configure({ troupe, servers, cliTools, dir }: McpLaunch) {
        const args: string[] = [];
        const config: Record<string, unknown> = {};
        if (troupe) config[troupe.name] = { type: 'local', command: troupe.command, args: troupe.args, tools: ['*'], timeout: 86_400_000 };
        for (const server of servers) config[server.name] = copilotServer(server);
        const names = Object.keys(config);
        if (names.length > 0) {
          const file = join(dir, 'copilot-mcp.json');
          await writeFile(file, JSON.stringify({ mcpServers: config }), { mode: 0o600 });
          args.push('--additional-mcp-config', `@${file}`);
        }
        const own = cliTools === undefined ? undefined : copilotToolArgs(cliTools);
        // --available-tools limits every tool offered, MCP tools too (a server's name stands for all of its tools).
        if (own?.available) args.push('--available-tools', ...unique([...own.available, ...names]));
        const allowed = unique([...names, ...(own?.allow ?? [])]);
        if (allowed.length > 0) args.push('--allow-tool', ...allowed);
        args.push('--excluded-tools', ...unique(['task', 'read_agent', 'list_agents', 'write_agent', ...(own?.excluded ?? [])]));
        return { args };
      },
    },
  };
}

/** An agent's MCP server as Copilot's MCP config writes it. */
function copilotServer(server: McpServerSpec): Record<string, unknown> {
  const tools = server.tools ?? ['*'];
  if (server.type === 'stdio') return { type: 'local', command: server.command, args: server.args ?? [], ...(server.env ? { env: server.env } : {}), tools };
  return { type: server.type, url: server.url, ...(server.headers ? { headers: server.headers } : {}), tools };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function programOf(options: CliProfileOptions, fallback: string): string[] {
  const command = options.command ?? fallback;
  return typeof command === 'string' ? [command] : [...command];
}

/** A TOML basic string: JSON's escapes are valid TOML. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

function tomlArray(values: readonly string[]): string {
  return `[${values.map(tomlString).join(',')}]`;
}

/** A TOML inline table of strings, its keys quoted. */
function tomlTable(values: Record<string, string>): string {
  return `{${Object.entries(values).map(([k, v]) => `${tomlString(k)}=${tomlString(v)}`).join(',')}}`;
}

/**
 * Built-in profiles of the process adapter: the command lines of Claude
 * Code, Codex and GitHub Copilot, each serving a session's tools to the CLI
 * over MCP beside the agent's own MCP servers, offering exactly the CLI's
 * own tools the agent names (none when it names none), giving the CLI the
 * agent's system prompt (appended to the CLI's own, or replacing it), and
 * switching off the CLI's own sub-agent tool, so that an orchestrator CLI
 * dispatches through troupe.
 * @module
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { McpServerSpec } from '../core/adapter.js';
import { ConfigurationError } from '../core/errors.js';
import { check, defineOptions, listOf, nonEmptyString, oneOf, positiveNumber } from '../core/options.js';
import type { ProcessAdapterOptions } from './process-options.js';
import { copilotToolArgs } from './process-copilot-tools.js';
import { claudeToolArgs, codexToolArgs } from './process-cli-tools.js';
import type { CliLaunchWarning, McpLaunch } from './process-launch.js';
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
  /**
   * How an agent's system prompt reaches the CLI when the agent does not
   * say (`agent({ cli: { systemPrompt } })`): `append`ed to the CLI's own
   * system prompt (Claude Code's `--append-system-prompt-file`, Codex's
   * `developer_instructions`, a Copilot custom agent), or `replace`-ing it
   * (Claude Code's `--system-prompt-file`, Codex's
   * `model_instructions_file`; Copilot CLI cannot replace its prompt, and
   * `copilotProfile` refuses it). Default: `append`.
   */
  systemPrompt?: 'append' | 'replace';
  /**
   * What an agent that names none of the CLI's own tools gets: `none` (the
   * CLI offers only troupe's tools and the agent's MCP servers' tools), or
   * `all`, the CLI's full set, as the CLI would offer it by itself (its
   * sub-agent tool excepted). One agent gets the full set with
   * `agent({ cli: { tools: 'all' } })`. Default: `none`.
   */
  defaultCliTools?: 'none' | 'all';
}

const profileOptions = defineOptions<CliProfileOptions>('a CLI profile', {
  command: check('a program or a non-empty list of strings', (v) => (typeof v === 'string' && v !== '') || (Array.isArray(v) && v.length > 0 && v.every((a) => typeof a === 'string' && a !== ''))),
  args: listOf(check('a string', (v) => typeof v === 'string')),
  serverName: nonEmptyString,
  systemPrompt: oneOf(['append', 'replace']),
  defaultCliTools: oneOf(['none', 'all']),
  mcpStartupTimeoutMs: positiveNumber,
});

/** How long a CLI waits for an MCP server to start when `mcpStartupTimeoutMs` is not given. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 60_000;

/** Check a profile's options eagerly (`of` names the profile in messages). */
function checked(options: CliProfileOptions, of: string): CliProfileOptions {
  profileOptions.check(options, '', of);
  return options;
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
 * what is not allowed); exactly the built-in tools the agent names offered
 * (`--tools Read,Grep`, by Claude Code's names or the common aliases
 * `read`, `edit`, `search`, `execute`, `web`; `--tools ""` when it names
 * none) and allowed (`--allowedTools`), its disallowed ones refused; the
 * built-in sub-agent tool disallowed (`Task`, named `Agent` in API
 * requests); the agent's system prompt in a file, appended to Claude
 * Code's (`--append-system-prompt-file`) or replacing it
 * (`--system-prompt-file`).
 *
 * @example
 * ```ts
 * const claude = processAdapter({ ...claudeCodeProfile({ args: ['--model', 'sonnet'] }), passEnv: [...DEFAULT_PASS_ENV, 'ANTHROPIC_API_KEY'] });
 * ```
 */
export function claudeCodeProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  checked(options, 'claudeCodeProfile');
  const program = programOf(options, 'claude');
  const startupMs = options.mcpStartupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS;
  const rest = ['--output-format', 'json', ...(options.args ?? [])];
  const defaultAll = options.defaultCliTools === 'all';
  return {
    id: 'claude',
    command: [...program, '-p', '{mcp}', ...rest],
    resume: { command: [...program, '-p', '--resume', '{sessionId}', '{mcp}', ...rest] },
    output: 'jsonl',
    prompt: 'stdin',
    mcp: {
      ...defined({ serverName: options.serverName }),
      async configure({ agent, troupe, servers, cliTools, system, systemPrompt, dir }) {
        const args: string[] = [];
        const config: Record<string, unknown> = {};
        if (troupe) config[troupe.name] = { type: 'stdio', command: troupe.command, args: troupe.args };
        for (const server of servers) config[server.name] = claudeServer(server);
        if (Object.keys(config).length > 0) {
          const file = join(dir, 'claude-mcp.json');
          await writeFile(file, JSON.stringify({ mcpServers: config }), { mode: 0o600 });
          args.push('--mcp-config', file, '--strict-mcp-config');
        }
        const own = claudeToolArgs(cliTools, defaultAll);
        // Claude Code merges every --allowedTools it is given; one list says it all.
        const allowed = [
          ...(troupe?.tools.map((t) => `mcp__${troupe.name}__${t}`) ?? []),
          ...servers.flatMap((s) => (s.tools === undefined ? [`mcp__${s.name}`] : s.tools.map((t) => `mcp__${s.name}__${t}`))),
          ...own.allowed,
        ];
        // --tools limits the built-in tools offered (MCP tools are not built-in; "" offers none); --allowedTools only permits.
        if (own.offered) args.push('--tools', unique(own.offered).join(','));
        if (allowed.length > 0) args.push('--allowedTools', unique(allowed).join(','));
        args.push('--disallowedTools', unique(['Task', 'Agent', ...own.disallowed]).join(','));
        const mode = systemPrompt ?? options.systemPrompt ?? 'append';
        if (system || mode === 'replace') {
          const file = join(dir, 'system-prompt.md');
          await writeFile(file, system ?? '', { mode: 0o600 });
          args.push(mode === 'replace' ? '--system-prompt-file' : '--append-system-prompt-file', file);
        }
        return { args, env: { MCP_CONNECTION_NONBLOCKING: '0', MCP_TIMEOUT: String(Math.ceil(startupMs)) }, system: true, warnings: unknownTools(agent, 'Claude Code', CLAUDE_CODE_VERSION, own.unknown) };
      },
    },
  };
}

/** The warning for names a CLI does not have. */
function unknownTools(agent: string | undefined, cli: string, version: string, names: readonly string[]): CliLaunchWarning[] {
  if (names.length === 0) return [];
  const many = names.length > 1;
  return [
    {
      code: 'unknown_cli_tool',
      message: `Agent "${agent ?? '?'}" names ${many ? 'tools' : 'a tool'} ${names.map((n) => `"${n}"`).join(', ')} that ${cli} ${version} does not have (nor is ${many ? 'any' : 'it'} one of the aliases read, edit, search, execute, web); passed on as written, so ${cli} ignores ${many ? 'them' : 'it'}`,
      data: { tools: [...names], cli },
    },
  ];
}

/** An agent's MCP server as Claude Code's `--mcp-config` writes it. */
function claudeServer(server: McpServerSpec): Record<string, unknown> {
  if (server.type === 'stdio') return { type: 'stdio', command: server.command, args: server.args ?? [], ...(server.env ? { env: server.env } : {}) };
  return { type: server.type, url: server.url, ...(server.headers ? { headers: server.headers } : {}) };
}

/**
 * Codex (`codex exec --json`, written against {@link CODEX_VERSION}): resume
 * by thread id, the prompt on stdin; its usage is the thread's total so far
 * (`usageReport: 'cumulative'`), which the adapter turns into each turn's.
 * The MCP servers given as `-c mcp_servers.<server>.*` overrides (nothing
 * is written to the user's `config.toml`), each with its tools approved (`exec` never asks, so a
 * tool that needs approval fails) and each `required`, so Codex waits for
 * it to start before the first request (without it, a server slower than
 * Codex is left out of the turn) and fails the call when it cannot start:
 * troupe's, with a tool time-out of a day
 * (Codex's default of 60 s would cut a worker short; troupe's own time
 * limits apply) and parallel calls allowed, and the agent's own (stdio or
 * streamable HTTP; Codex has no SSE client). Sub-agents off
 * (`agents.enabled=false`). The tools the agent names turn Codex's tool
 * switches on and every other one off: its shell (`exec_command`, through
 * which Codex 0.169 also reads, searches and edits files: `read`, `edit`,
 * `search` and `execute` all mean it, and its sandbox decides what
 * commands may do), `web_search`, `view_image`, its goals and
 * `request_user_input`. The agent's system prompt as
 * `developer_instructions` (append) or as the model's instructions
 * (`model_instructions_file`, replace: without Codex's own instructions,
 * skills, permissions and environment context).
 * Outside a Git repository Codex also wants `args: ['--skip-git-repo-check']`.
 *
 * @example
 * ```ts
 * const codex = processAdapter({ ...codexProfile({ args: ['--sandbox', 'workspace-write'] }), passEnv: [...DEFAULT_PASS_ENV, 'OPENAI_API_KEY'] });
 * ```
 */
export function codexProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  checked(options, 'codexProfile');
  const program = programOf(options, 'codex');
  const startupSec = String(Math.ceil((options.mcpStartupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS) / 1000));
  const rest = ['--json', ...(options.args ?? [])];
  const defaultAll = options.defaultCliTools === 'all';
  return {
    id: 'codex',
    command: [...program, 'exec', '{mcp}', ...rest, '-'],
    resume: { command: [...program, 'exec', 'resume', '{mcp}', ...rest, '{sessionId}', '-'] },
    output: 'jsonl',
    prompt: 'stdin',
    usageReport: 'cumulative',
    mcp: {
      ...defined({ serverName: options.serverName }),
      async configure({ agent, troupe, servers, cliTools, system, systemPrompt, dir }: McpLaunch) {
        const args: string[] = [];
        const set = (server: string, key: string, value: string) => args.push('-c', `mcp_servers.${server}.${key}=${value}`);
        if (troupe) {
          set(troupe.name, 'command', tomlString(troupe.command));
          set(troupe.name, 'args', tomlArray(troupe.args));
          set(troupe.name, 'default_tools_approval_mode', '"approve"');
          set(troupe.name, 'tool_timeout_sec', '86400');
          set(troupe.name, 'supports_parallel_tool_calls', 'true');
          set(troupe.name, 'startup_timeout_sec', startupSec);
          set(troupe.name, 'required', 'true');
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
          set(server.name, 'required', 'true');
        }
        args.push('-c', 'agents.enabled=false');
        const own = codexToolArgs(cliTools, defaultAll);
        for (const override of own.overrides) args.push('-c', override);
        const replace = (systemPrompt ?? options.systemPrompt ?? 'append') === 'replace';
        // Without a shell, the skills Codex lists (read from SKILL.md files) and its sandbox's permissions are of no use;
        // replacing its prompt leaves them out too.
        if (!own.on.includes('shell') || replace) args.push('-c', 'skills.bundled.enabled=false', '-c', 'include_permissions_instructions=false');
        if (replace) {
          args.push('-c', 'include_environment_context=false');
          // Codex refuses an empty instructions file.
          if (system) {
            const file = join(dir, 'codex-instructions.md');
            await writeFile(file, system, { mode: 0o600 });
            args.push('-c', `model_instructions_file=${tomlString(file)}`);
          } else args.push('-c', 'instructions=""');
        } else if (system) args.push('-c', `developer_instructions=${tomlString(system)}`);
        return { args, system: true, warnings: unknownTools(agent, 'Codex', CODEX_VERSION, own.unknown) };
      },
    },
  };
}

/**
 * GitHub Copilot CLI (`copilot -p`, written against {@link COPILOT_VERSION}):
 * plain text output (`-s`), the earlier turns in the prompt. The MCP
 * servers (troupe's and the agent's own) in `--additional-mcp-config
 * @<file>` (added to the user's MCP servers for this run), each allowed
 * (`--allow-tool <server>`); exactly the tools the agent names, by the
 * names and aliases Copilot's files use (`read`, `edit`, `search`,
 * `execute`, `read/readFile`, `<server>/<tool>`), offered with the MCP
 * servers (`--available-tools view grep glob troupe ...`; only the MCP
 * servers when it names none) and allowed where Copilot asks (`shell`,
 * `write`); the built-in sub-agent tool `task` excluded, with the tools
 * that manage the background agents it starts (`read_agent`,
 * `list_agents`, `write_agent`). The agent's system prompt as a custom
 * agent's instructions (`--agent`, from a private folder given with
 * `--add-dir`), which Copilot appends to its own prompt: Copilot CLI has
 * no switch that replaces it, so `systemPrompt: 'replace'` is refused here
 * and, asked by an agent, appends with a warning.
 *
 * @example
 * ```ts
 * const copilot = processAdapter({ ...copilotProfile(), passEnv: [...DEFAULT_PASS_ENV, 'COPILOT_GITHUB_TOKEN'] });
 * ```
 */
export function copilotProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  checked(options, 'copilotProfile');
  if (options.systemPrompt === 'replace') {
    throw new ConfigurationError('Copilot CLI has no switch that replaces its system prompt: copilotProfile takes `systemPrompt: "append"` (the default) only', {
      code: 'invalid_option',
      details: { option: 'systemPrompt' },
    });
  }
  const program = programOf(options, 'copilot');
  const defaultAll = options.defaultCliTools === 'all';
  return {
    id: 'copilot',
    command: [...program, '{mcp}', '-s', '--no-auto-update', ...(options.args ?? []), '-p', '{prompt}'],
    mcp: {
      ...defined({ serverName: options.serverName }),
      async configure({ agent, troupe, servers, cliTools, system, systemPrompt, dir }: McpLaunch) {
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
        const own = copilotToolArgs(cliTools, defaultAll);
        // --available-tools limits every tool offered, MCP tools too (a server's name stands for all of its tools);
        // with nothing to offer, troupe's server name (declared or not) keeps the list from being empty.
        if (own.available) {
          const available = unique([...own.available, ...names]);
          args.push('--available-tools', ...(available.length > 0 ? available : [options.serverName ?? 'troupe']));
        }
        const allowed = unique([...names, ...own.allow]);
        if (allowed.length > 0) args.push('--allow-tool', ...allowed);
        args.push('--excluded-tools', ...unique(['task', 'read_agent', 'list_agents', 'write_agent', ...own.excluded]));
        const warnings = unknownTools(agent, 'Copilot CLI', COPILOT_VERSION, own.unknown);
        if (systemPrompt === 'replace') {
          warnings.push({
            code: 'system_prompt_not_replaced',
            message: `Agent "${agent ?? '?'}" asks for its system prompt to replace Copilot CLI's, which has no switch for it: appended instead`,
            data: { cli: 'Copilot CLI' },
          });
        }
        if (system) {
          // A custom agent of a private folder: Copilot appends its instructions to its own system prompt.
          const folder = join(dir, 'copilot-agent');
          await mkdir(join(folder, '.github', 'agents'), { recursive: true, mode: 0o700 });
          const file = [`---`, `name: ${COPILOT_AGENT}`, `description: The agent troupe runs`, `---`, system, ''].join('\n');
          await writeFile(join(folder, '.github', 'agents', `${COPILOT_AGENT}.agent.md`), file, { mode: 0o600 });
          args.push('--add-dir', folder, '--agent', COPILOT_AGENT);
        }
        return { args, system: true, warnings };
      },
    },
  };
}

/** The name of the custom agent that carries a session's system prompt to Copilot CLI. */
const COPILOT_AGENT = 'troupe-session';

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

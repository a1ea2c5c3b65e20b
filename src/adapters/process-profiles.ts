/**
 * Built-in profiles of the process adapter: the command lines of Claude
 * Code, Codex and GitHub Copilot, each serving a session's tools to the CLI
 * over MCP and switching off the CLI's own sub-agent tool, so that an
 * orchestrator CLI dispatches through troupe.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessAdapterOptions } from './process.js';
import type { McpServerLaunch } from './process-tools.js';

/** Options of the built-in CLI profiles. */
export interface CliProfileOptions {
  /** The program (a name on `PATH` or a path), or a program and its first arguments (`['npx', 'claude']`). Default: `claude`, `codex` or `copilot`. */
  command?: string | readonly string[];
  /** More arguments for every turn (a model, permissions for the CLI's own tools, ...), placed after the profile's own. */
  args?: readonly string[];
  /** The MCP server's name, as the CLI shows it. Default: `troupe`. */
  serverName?: string;
}

/** The Claude Code version {@link claudeCodeProfile} was written and tested against. */
export const CLAUDE_CODE_VERSION = '2.1.197';
/** The Codex CLI version {@link codexProfile} was written and tested against. */
export const CODEX_VERSION = '0.169.0';
/** The GitHub Copilot CLI version {@link copilotProfile} was written against. */
export const COPILOT_VERSION = '1.0.102';

/**
 * Claude Code (`claude -p`, written against {@link CLAUDE_CODE_VERSION}):
 * JSON output, resume by session id, the prompt on stdin. With tools, an
 * MCP config file (`--mcp-config`, and `--strict-mcp-config` so no other
 * MCP server of the user or the project is loaded), the tools allowed
 * (`--allowedTools mcp__<server>__<tool>`: `-p` mode denies what is not
 * allowed) and the built-in sub-agent tool disallowed (`Task`, named
 * `Agent` in API requests).
 *
 * @example
 * ```ts
 * const claude = processAdapter({ ...claudeCodeProfile({ args: ['--model', 'sonnet'] }), passEnv: [...DEFAULT_PASS_ENV, 'ANTHROPIC_API_KEY'] });
 * ```
 */
export function claudeCodeProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  const program = programOf(options, 'claude');
  const rest = ['--output-format', 'json', ...(options.args ?? [])];
  return {
    id: 'claude',
    command: [...program, '-p', '{mcp}', ...rest],
    resume: { command: [...program, '-p', '--resume', '{sessionId}', '{mcp}', ...rest] },
    output: 'jsonl',
    prompt: 'stdin',
    mcp: {
      ...(options.serverName === undefined ? {} : { serverName: options.serverName }),
      async configure(server) {
        const file = join(server.dir, 'claude-mcp.json');
        const config = { mcpServers: { [server.name]: { type: 'stdio', command: server.command, args: server.args } } };
        await writeFile(file, JSON.stringify(config), { mode: 0o600 });
        return {
          args: [
            '--mcp-config', file,
            '--strict-mcp-config',
            '--allowedTools', server.tools.map((t) => `mcp__${server.name}__${t}`).join(','),
            '--disallowedTools', 'Task,Agent',
          ],
        };
      },
    },
  };
}

/**
 * Codex (`codex exec --json`, written against {@link CODEX_VERSION}): resume
 * by thread id, the prompt on stdin. With tools, the MCP server given as
 * `-c mcp_servers.<server>.*` overrides (nothing is written to the user's
 * `config.toml`): its tools approved (`exec` never asks, so a tool that
 * needs approval fails), a tool time-out of a day (Codex's default of 60 s
 * would cut a worker short; troupe's own time limits apply), parallel calls
 * allowed, and sub-agents off (`agents.enabled=false`). Outside a Git
 * repository Codex also wants `args: ['--skip-git-repo-check']`.
 *
 * @example
 * ```ts
 * const codex = processAdapter({ ...codexProfile({ args: ['--sandbox', 'workspace-write'] }), passEnv: [...DEFAULT_PASS_ENV, 'OPENAI_API_KEY'] });
 * ```
 */
export function codexProfile(options: CliProfileOptions = {}): ProcessAdapterOptions {
  const program = programOf(options, 'codex');
  const rest = ['--json', ...(options.args ?? [])];
  return {
    id: 'codex',
    command: [...program, 'exec', '{mcp}', ...rest, '-'],
    resume: { command: [...program, 'exec', 'resume', '{mcp}', ...rest, '{sessionId}', '-'] },
    output: 'jsonl',
    prompt: 'stdin',
    mcp: {
      ...(options.serverName === undefined ? {} : { serverName: options.serverName }),
      configure(server) {
        const key = `mcp_servers.${server.name}`;
        return {
          args: [
            '-c', `${key}.command=${tomlString(server.command)}`,
            '-c', `${key}.args=[${server.args.map(tomlString).join(',')}]`,
            '-c', `${key}.default_tools_approval_mode="approve"`,
            '-c', `${key}.tool_timeout_sec=86400`,
            '-c', `${key}.supports_parallel_tool_calls=true`,
            '-c', 'agents.enabled=false',
          ],
        };
      },
    },
  };
}

/**
 * GitHub Copilot CLI (`copilot -p`, written against {@link COPILOT_VERSION}):
 * plain text output (`-s`), the earlier turns in the prompt. With tools,
 * `--additional-mcp-config @<file>` (added to the user's MCP servers for
 * this run), the server's tools allowed (`--allow-tool <server>`) and the
 * built-in sub-agent tool `task` excluded, with the tools that manage the
 * background agents it starts (`read_agent`, `list_agents`, `write_agent`).
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
      ...(options.serverName === undefined ? {} : { serverName: options.serverName }),
      async configure(server: McpServerLaunch) {
        const file = join(server.dir, 'copilot-mcp.json');
        const config = {
          mcpServers: { [server.name]: { type: 'local', command: server.command, args: server.args, tools: ['*'], timeout: 86_400_000 } },
        };
        await writeFile(file, JSON.stringify(config), { mode: 0o600 });
        return {
          args: ['--additional-mcp-config', `@${file}`, '--allow-tool', server.name, '--excluded-tools', 'task', 'read_agent', 'list_agents', 'write_agent'],
        };
      },
    },
  };
}

function programOf(options: CliProfileOptions, fallback: string): string[] {
  const command = options.command ?? fallback;
  return typeof command === 'string' ? [command] : [...command];
}

/** A TOML basic string: JSON's escapes are valid TOML. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

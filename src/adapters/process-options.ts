/**
 * The options of the process adapter, in a module of their own so that the
 * CLI profiles and the adapter both import them.
 * @module
 */
import type { CliToolList } from '../core/adapter.js';
import type { Clock } from '../core/clock.js';
import type { Usage } from '../core/usage.js';
import type { ProcessMcpOptions } from './process-launch.js';

/** What one run of the command produced. */
export interface ProcessOutput {
  /** Everything the command wrote to stdout. */
  stdout: string;
  /** The last `stderrTailChars` characters of stderr. */
  stderr: string;
  /** The stdout lines that parsed as JSON, in order (only with `output: 'jsonl'`). */
  events: unknown[];
}

/** What a prompt formatter receives. */
export interface ProcessPromptContext {
  /** The new input as text. */
  input: string;
  /** The session's system prompt; undefined when the CLI gets it as its own (a profile's `--system-prompt-file`, ...). */
  system: string | undefined;
  /** Earlier turns of the session (only in transcript continuity; empty otherwise). */
  history: ReadonlyArray<{ role: 'user' | 'assistant'; text: string }>;
  /** 1-based turn number. */
  turn: number;
  /** True when the command resumes the tool's own session (it remembers the earlier turns). */
  resumed: boolean;
}

/** Options of `processAdapter`. */
export interface ProcessAdapterOptions {
  /**
   * The command line of a turn, as an argument vector (never run through a
   * shell). Placeholders inside arguments: `{prompt}`, `{model}` (the agent's
   * model, or empty), `{sessionId}` (in the resume command).
   */
  command: readonly string[];
  /** The adapter's id. Default: `process`. */
  id?: string;
  /** How the prompt reaches the command. Default: `argument` when the command has a `{prompt}` placeholder, else `stdin`. */
  prompt?: 'argument' | 'stdin';
  /** How to read stdout: plain text, or JSON lines. Default: `text`. */
  output?: 'text' | 'jsonl';
  /** The turn's text from the output. Default: trimmed stdout for `text`; for `jsonl`, see `defaultExtractText`. */
  extractText?: (output: ProcessOutput) => string;
  /** The turn's usage from the output. Default: the last `usage` object among the JSON events (`defaultExtractUsage`). */
  extractUsage?: (output: ProcessOutput) => Partial<Usage> | undefined;
  /**
   * What the usage in a turn's output counts: `per-turn`, that turn alone;
   * `cumulative`, everything the tool's session has used so far (as
   * `codex exec resume` reports it). For `cumulative` the adapter reports
   * each turn's difference from the previous turn of the same tool session
   * (a turn that starts a new tool session, or whose totals went down,
   * counts as it is). Default: `per-turn`; `codexProfile` sets
   * `cumulative`.
   */
  usageReport?: 'per-turn' | 'cumulative';
  /**
   * How later turns know the earlier ones: `resume` runs `resume.command`
   * with the tool's session id; `transcript` sends the earlier turns in the
   * prompt; `none` sends only the new input. Default: `resume` when
   * `resume` is set, else `transcript`.
   */
  continuity?: 'resume' | 'transcript' | 'none';
  /** The tool's resume option. */
  resume?: {
    /** The command line of a resumed turn, with a `{sessionId}` placeholder, e.g. `['claude', '-p', '--resume', '{sessionId}', '{prompt}']`. */
    command: readonly string[];
    /** The tool's session id from a turn's output. Default: the last `session_id`, `sessionId` or `thread_id` among the JSON events. */
    sessionId?: (output: ProcessOutput) => string | undefined;
  };
  /** Build the prompt of a turn. Default: `defaultFormatPrompt`. */
  formatPrompt?: (context: ProcessPromptContext) => string;
  /** The working directory. Default: the session's `workspace`, else the current directory. */
  cwd?: string;
  /** Environment variables set for the command (they win over `passEnv`). */
  env?: Record<string, string>;
  /** Names of variables copied from this process's environment. Default: `DEFAULT_PASS_ENV`. */
  passEnv?: readonly string[];
  /** Time limit of one turn in ms; the whole process group is killed when it passes. Default: none. */
  timeoutMs?: number;
  /** The clock of `timeoutMs`. Default: the real clock. */
  clock?: Clock;
  /** How much of stderr to keep for errors. Default: 2000 characters. */
  stderrTailChars?: number;
  /**
   * Most bytes a turn may write to stdout, and to stderr (each). Past it the
   * command's process group is killed and the turn fails with an
   * `AdapterError` (`details.stream`, `details.limit`). Default:
   * `DEFAULT_MAX_OUTPUT_BYTES` (64 MiB).
   */
  maxOutputBytes?: number;
  /**
   * How a prompt that starts with `-` is kept from being read as an option
   * when `{prompt}` is a whole argument: `separator` puts `--` before it
   * (every common argument parser ends options there); `stdin` sends the
   * prompt on stdin instead and leaves the argument out (for CLIs that read
   * the prompt from stdin when none is given, as `claude -p` and
   * `codex exec` do). Default: `auto`, which is `stdin` when the argument
   * before `{prompt}` is an option (`-p {prompt}`: the prompt may be that
   * option's value, where `--` would be taken as the value), else
   * `separator`. A prompt written inside an argument (`--prompt={prompt}`)
   * is never read as an option and is left as it is.
   */
  dashPrompt?: 'auto' | 'separator' | 'stdin';
  /**
   * Serve a session's tools to the CLI over the Model Context Protocol, so
   * that `capabilities.tools` is true: the CLI's call of a tool becomes a
   * tool call of the turn, and the next `send` of tool results answers it
   * while the CLI waits (one CLI process per user message, across its tool
   * calls). The agent's own MCP servers (`metadata.mcpServers`) are
   * declared beside troupe's, and the CLI's own tools it may use
   * (`metadata.cliTools`) allowed, so `capabilities.mcpServers` is true.
   * `configure` says how the CLI learns of all of them; its arguments
   * replace the whole-argument placeholder `{mcp}`, which the command (and
   * the resume command) must contain. Needs `@modelcontextprotocol/sdk`.
   * The built-in profiles (`claudeCodeProfile`, `codexProfile`,
   * `copilotProfile`) set it. Default: none (`capabilities.tools` and
   * `capabilities.mcpServers` are false, and `{mcp}` is left out).
   */
  mcp?: ProcessMcpOptions;
  /**
   * The CLI's own tools an agent may use, as the CLI's arguments: given the
   * session's `metadata.cliTools` (a `CliToolList`, which
   * `compileAgents` sets for an agent file run on its vendor's CLI), the
   * arguments that replace the whole-argument placeholder `{tools}` of the
   * command (and of the resume command), which must then contain it. A
   * session without a list gets no arguments there. Default: none.
   *
   * @example
   * ```ts
   * // Claude Code: --allowedTools Read,Grep --disallowedTools Bash
   * toolArgs: ({ allowed, disallowed }) => [
   *   ...(allowed ? ['--allowedTools', allowed.join(',')] : []),
   *   ...(disallowed.length ? ['--disallowedTools', disallowed.join(',')] : []),
   * ],
   * ```
   */
  toolArgs?: (tools: CliToolList) => readonly string[];
}

/**
 * The process adapter: runs a coding-agent command-line tool (`claude -p`,
 * `codex exec`, `copilot -p`, ...) once per turn, in the session's
 * workspace directory. Never through a shell. With `mcp`, a session's
 * tools are served to the CLI over the Model Context Protocol.
 * @module troupe/adapters/process
 * @category Adapters
 */
import type { ChildProcess } from 'node:child_process';
import { CLI_TOOLS_KEY, type CliToolList, type ModelAdapter, type ModelSession, type ModelTurn, type OpenSessionOptions, type SendOptions, type SessionSpec, type ToolResult } from '../core/adapter.js';
import { combineSignals, throwIfAborted, timeoutSignal } from '../core/abort.js';
import { realClock } from '../core/clock.js';
import { AdapterError, ConfigurationError, describeValue } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import {
  check,
  clock,
  defineOptions,
  func,
  listOf,
  nonNegativeInteger,
  nonNegativeNumber,
  object,
  oneOf,
  positiveInteger,
  positiveNumber,
  required,
  string,
  type OptionCheck,
  type OptionsShape,
} from '../core/options.js';
import { runCommand, startCommand, type CommandResult } from './process-command.js';
import { killGroup } from './process-group.js';
import { launchCli, type CliLaunch, type CliLaunchWarning, type ProcessMcpOptions } from './process-launch.js';
import { supersededError, type CliToolCalls } from './process-tools.js';
import { CumulativeUsage } from './process-usage.js';
import { inputText } from './scripted.js';
import type { ProcessAdapterOptions, ProcessOutput, ProcessPromptContext } from './process-options.js';

export type { ProcessAdapterOptions, ProcessOutput, ProcessPromptContext } from './process-options.js';
export type { CliToolList } from '../core/adapter.js';
export { DEFAULT_TOOL_CALL_GATHER_MS } from './process-tools.js';
export { DEFAULT_MCP_SERVER_NAME, type CliLaunchWarning, type McpLaunch, type McpLaunchConfig, type McpServerLaunch, type ProcessMcpOptions } from './process-launch.js';

/** The whole-argument placeholder of the CLI's tool arguments (see `toolArgs`). */
const TOOLS_PLACEHOLDER = '{tools}';
export {
  CLAUDE_CODE_VERSION,
  CODEX_VERSION,
  COPILOT_VERSION,
  DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  claudeCodeProfile,
  codexProfile,
  copilotProfile,
  type CliProfileOptions,
} from './process-profiles.js';

/** The default of `maxOutputBytes`: 64 MiB of stdout (and of stderr) per turn. */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * The variables passed through by default: what a command needs to find
 * programs, its home directory, its locale and its temporary directory.
 * API keys are not among them: name them in `passEnv` or set them in `env`.
 */
export const DEFAULT_PASS_ENV: readonly string[] = Object.freeze([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'TZ',
  'SYSTEMROOT', 'COMSPEC', 'PATHEXT', 'TEMP', 'TMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA',
]);

const PLACEHOLDER = /\{(prompt|model|sessionId)\}/g;
/** The whole-argument placeholder of the CLI's MCP arguments. */
const MCP_PLACEHOLDER = '{mcp}';

/**
 * An adapter that runs a coding-agent CLI once per turn. With `mcp` (the
 * built-in profiles set it), a session's tools are served to the CLI over
 * MCP and `capabilities.tools` is true.
 *
 * @example
 * ```ts
 * // Claude Code, with the session's tools (delegate_to_worker, ...) over MCP:
 * const lead = processAdapter({ ...claudeCodeProfile(), passEnv: [...DEFAULT_PASS_ENV, 'ANTHROPIC_API_KEY'] });
 * ```
 *
 * @example
 * ```ts
 * const claude = processAdapter({
 *   command: ['claude', '-p', '--output-format', 'json', '{prompt}'],
 *   output: 'jsonl',
 *   resume: { command: ['claude', '-p', '--output-format', 'json', '--resume', '{sessionId}', '{prompt}'] },
 *   passEnv: [...DEFAULT_PASS_ENV, 'ANTHROPIC_API_KEY'],
 * });
 * ```
 */
export function processAdapter(options: ProcessAdapterOptions): ModelAdapter {
  validate(options);
  const settings = resolveSettings(options);
  let nextSession = 1;
  return {
    id: options.id ?? 'process',
    capabilities: { tools: options.mcp !== undefined, streaming: false, mcpServers: options.mcp !== undefined },
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      throwIfAborted(signal);
      const cwd = options.cwd ?? spec.workspace ?? process.cwd();
      // The CLI's own tools (checked before anything is started for the session).
      const toolArgs = cliToolArgs(options, spec);
      // The profile declares the session's MCP servers (troupe's, serving its tools for as long as it is open, and the agent's own) and allow-lists.
      const launch = options.mcp ? await launchCli(options.mcp, spec, signal) : undefined;
      const env = { ...buildEnv(options.passEnv ?? DEFAULT_PASS_ENV, options.env), ...launch?.config.env };
      return new ProcessSession(`process-${nextSession++}`, settings, spec, { cwd, env, toolArgs, launch });
    },
  };
}

/** The options of a process adapter with their defaults. */
type ProcessSettings = ReturnType<typeof resolveSettings>;

function resolveSettings(options: ProcessAdapterOptions) {
  const output = options.output ?? 'text';
  return {
    options,
    output,
    continuity: options.continuity ?? (options.resume ? 'resume' : 'transcript'),
    promptMode: options.prompt ?? (options.command.some((a) => a.includes('{prompt}')) ? 'argument' : 'stdin'),
    extractText: options.extractText ?? ((o: ProcessOutput) => (output === 'text' ? o.stdout.trim() : defaultExtractText(o))),
    extractUsage: options.extractUsage ?? defaultExtractUsage,
    extractSessionId: options.resume?.sessionId ?? defaultExtractSessionId,
    formatPrompt: options.formatPrompt ?? defaultFormatPrompt,
    tailChars: options.stderrTailChars ?? 2000,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    dashPrompt: options.dashPrompt ?? 'auto',
  } as const;
}

/** Where a session's commands run, and with what. */
interface ProcessPlace {
  cwd: string;
  env: Record<string, string>;
  /** The `{tools}` arguments. */
  toolArgs: readonly string[];
  /** What the profile declared to the CLI (MCP servers, the tools served, the CLI's own tools, the system prompt), with `mcp`. */
  launch: CliLaunch | undefined;
}

/** A session of the process adapter: one command per turn (or per user message, with tools over MCP). */
class ProcessSession implements ModelSession {
  readonly #s: ProcessSettings;
  readonly #spec: SessionSpec;
  readonly #place: ProcessPlace;
  readonly #history: Array<{ role: 'user' | 'assistant'; text: string }> = [];
  /** Turns' usage when the CLI reports its session's totals (`usageReport: 'cumulative'`). */
  readonly #totals: CumulativeUsage | undefined;
  #toolSessionId: string | undefined;
  #resumedTurn = false;
  #turn = 0;
  #running: ChildProcess | undefined;
  #asked = '';
  /** What the profile could not declare as asked, told (as `warning` session events) on the first send. */
  #warnings: readonly CliLaunchWarning[];

  constructor(
    readonly id: string,
    settings: ProcessSettings,
    spec: SessionSpec,
    place: ProcessPlace,
  ) {
    this.#s = settings;
    this.#spec = spec;
    this.#place = place;
    this.#totals = settings.options.usageReport === 'cumulative' ? new CumulativeUsage() : undefined;
    this.#warnings = place.launch?.config.warnings ?? [];
    // A conversation continued from earlier runs (a thread): its messages open the transcript.
    for (const m of spec.history ?? []) this.#history.push({ role: m.role, text: m.text });
  }

  async send(input: string | ToolResult[], sendOptions: SendOptions = {}): Promise<ModelTurn> {
    throwIfAborted(sendOptions.signal);
    if (this.#warnings.length > 0) {
      for (const w of this.#warnings) sendOptions.onEvent?.({ type: 'warning', message: w.message, code: w.code, ...(w.data === undefined ? {} : { data: w.data }) });
      this.#warnings = [];
    }
    const { options, tailChars, maxOutputBytes } = this.#s;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : timeoutSignal(options.timeoutMs, options.clock ?? realClock, `Command "${options.command[0]}" timed out after ${options.timeoutMs} ms`);
    const turnSignal = combineSignals(sendOptions.signal, timer?.signal);
    try {
      const { cwd, env, launch } = this.#place;
      if (launch?.calls) return await this.#sendWithTools(launch.calls, input, turnSignal);
      const text = inputText(input);
      const { argv, stdin } = this.#prepare(text);
      const result = await runCommand(argv, { cwd, env, stdin, signal: turnSignal, tailChars, maxOutputBytes, onSpawn: (child) => (this.#running = child) });
      return this.#finish(text, result);
    } finally {
      this.#running = undefined;
      timer?.clear();
    }
  }

  async close(): Promise<void> {
    if (this.#running) killGroup(this.#running);
    this.#history.length = 0;
    await this.#place.launch?.close();
  }

  /** The command line and stdin of a new turn on `text`. */
  #prepare(text: string): { argv: string[]; stdin: string | undefined } {
    const { options, continuity, formatPrompt, dashPrompt, promptMode } = this.#s;
    const spec = this.#spec;
    this.#turn++;
    const resumed = continuity === 'resume' && this.#toolSessionId !== undefined;
    this.#resumedTurn = resumed;
    // A profile that gives the CLI the system prompt as its own leaves it out of the prompt.
    const system = this.#place.launch?.config.system === true ? undefined : spec.system;
    // The first prompt carries a continued conversation's history whatever the continuity; later ones, a transcript's.
    const history = continuity === 'transcript' || this.#turn === 1 ? this.#history : [];
    const prompt = formatPrompt({ input: text, system, history, turn: this.#turn, resumed });
    const template = resumed ? options.resume!.command : options.command;
    const values: Record<string, string> = { prompt, model: spec.model ?? '', sessionId: this.#toolSessionId ?? '' };
    const placed = placePrompt(template, prompt, dashPrompt);
    const mcpArgs = this.#place.launch?.config.args ?? [];
    const argv = placed.template.flatMap((arg) =>
      arg === MCP_PLACEHOLDER ? mcpArgs : arg === TOOLS_PLACEHOLDER ? this.#place.toolArgs : [arg.replace(PLACEHOLDER, (_m, name: string) => values[name] ?? '')],
    );
    const stdin = promptMode === 'stdin' || placed.stdin ? prompt : undefined;
    return { argv, stdin };
  }

  /** The final turn of a command that has ended. */
  #finish(text: string, result: CommandResult): ModelTurn {
    const { output, extractText, extractUsage, extractSessionId, continuity } = this.#s;
    const out: ProcessOutput = { ...result, events: output === 'jsonl' ? outputEvents(result.stdout) : [] };
    const reply = extractText(out);
    if (continuity === 'resume') this.#toolSessionId = extractSessionId(out) ?? this.#toolSessionId;
    this.#history.push({ role: 'user', text }, { role: 'assistant', text: reply });
    const reported = extractUsage(out);
    const usage = this.#totals ? this.#totals.turn(reported, { session: this.#toolSessionId, resumed: this.#resumedTurn }) : reported;
    return { text: reply, toolCalls: [], ...(usage && { usage }) };
  }

  /** A turn with MCP: a message starts the command; tool results answer its waiting calls; either way, on to its next calls or its end. */
  async #sendWithTools(calls: CliToolCalls, input: string | ToolResult[], turnSignal: AbortSignal): Promise<ModelTurn> {
    const { tailChars, maxOutputBytes } = this.#s;
    if (typeof input === 'string') {
      if (calls.running) await calls.stop(supersededError());
      this.#asked = input;
      const { argv, stdin } = this.#prepare(input);
      throwIfAborted(turnSignal);
      calls.attach(startCommand(argv, { cwd: this.#place.cwd, env: this.#place.env, stdin, tailChars, maxOutputBytes }));
    } else {
      if (!calls.running) {
        throw new AdapterError(`Tool results were sent to the session of agent "${this.#spec.agent}", but no command of it waits for any`, {
          details: { agent: this.#spec.agent },
        });
      }
      calls.answer(input);
    }
    const event = await calls.next(turnSignal);
    return 'calls' in event ? { text: '', toolCalls: event.calls } : this.#finish(this.#asked, event.result);
  }
}

/** The `{tools}` arguments of a session: `toolArgs` of its `metadata.cliTools`, checked. */
function cliToolArgs(options: ProcessAdapterOptions, spec: SessionSpec): readonly string[] {
  const list = spec.metadata?.[CLI_TOOLS_KEY] as CliToolList | undefined;
  if (options.toolArgs === undefined || list === undefined) return [];
  const args = options.toolArgs(list);
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    throw new ConfigurationError(`Expected \`toolArgs\` to return an array of strings, got ${describeValue(args)}`);
  }
  return args;
}

/** A command line: a non-empty array of strings, the program not empty; `undefined` refused too. */
const commandLine: OptionCheck = (name, value) => {
  const ok = Array.isArray(value) && value.length > 0 && value.every((a) => typeof a === 'string') && value[0] !== '';
  if (!ok) throw new ConfigurationError(`Expected \`${name}\` to be a non-empty array of strings, got ${describeValue(value)}`);
};

const resumeOptions = defineOptions<NonNullable<ProcessAdapterOptions['resume']>>('processAdapter', { command: commandLine, sessionId: func });

const mcpOptions = defineOptions<ProcessMcpOptions>('processAdapter', {
  serverName: (name, value) => {
    if (value !== undefined && !(typeof value === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(value))) {
      throw new ConfigurationError(`Expected \`${name}\` to match /^[a-zA-Z0-9_-]{1,64}$/, got ${describeValue(value)}`);
    }
  },
  gatherMs: nonNegativeNumber,
  configure: required(func),
});

/** The checks of every option but `command`. */
const processShape: Omit<OptionsShape<ProcessAdapterOptions>, 'command'> = {
  id: string,
  prompt: oneOf(['argument', 'stdin']),
  output: oneOf(['text', 'jsonl']),
  extractText: func,
  extractUsage: func,
  usageReport: check('"per-turn" or "cumulative"', (v) => v === 'per-turn' || v === 'cumulative'),
  continuity: oneOf(['resume', 'transcript', 'none']),
  resume: resumeOptions,
  formatPrompt: func,
  cwd: string,
  env: object,
  passEnv: listOf(string),
  timeoutMs: positiveNumber,
  clock,
  stderrTailChars: nonNegativeInteger,
  maxOutputBytes: positiveInteger,
  dashPrompt: check('"auto", "separator" or "stdin"', (v) => v === 'auto' || v === 'separator' || v === 'stdin'),
  mcp: mcpOptions,
  toolArgs: func,
};

/** The description {@link ProcessAdapterOptions} are checked against. */
const processAdapterOptions = defineOptions<ProcessAdapterOptions>('processAdapter', { ...processShape, command: commandLine });

/** Some of the options of a process adapter, to merge into others (`adapterFromEnv`'s `process`): each checked, `command` optional. */
export const processSettings = defineOptions<Partial<ProcessAdapterOptions>>('processAdapter', {
  ...processShape,
  command: (name, value) => void (value === undefined || commandLine(name, value)),
});

/** The options, and what depends on several of them: placeholders for `toolArgs` and `mcp`, a `resume.command` for `continuity: "resume"`. */
function validate(options: ProcessAdapterOptions): void {
  // Left out, the options still need a command.
  processAdapterOptions.check(options ?? ({} as ProcessAdapterOptions));
  if (options.continuity === 'resume' && !options.resume) {
    throw new ConfigurationError('`continuity: "resume"` needs a `resume.command`');
  }
  if (options.toolArgs !== undefined) {
    for (const [name, argv] of [['command', options.command], ['resume.command', options.resume?.command]] as const) {
      if (argv && !argv.includes(TOOLS_PLACEHOLDER)) throw new ConfigurationError(`\`${name}\` needs the argument "${TOOLS_PLACEHOLDER}" where the CLI's tool arguments go, since \`toolArgs\` is set`);
    }
  }
  if (options.mcp !== undefined) {
    for (const [name, argv] of [['command', options.command], ['resume.command', options.resume?.command]] as const) {
      if (argv && !argv.includes(MCP_PLACEHOLDER)) {
        throw new ConfigurationError(`\`${name}\` needs the argument "${MCP_PLACEHOLDER}" where the CLI's MCP arguments go, since \`mcp\` is set`);
      }
    }
  }
}

/** An argument that reads as an option, and may take the next argument as its value: `-p`, `--prompt` (not `--x=y`, `-` or `--`). */
function isOption(arg: string | undefined): boolean {
  return arg !== undefined && arg.startsWith('-') && arg !== '-' && arg !== '--' && !arg.includes('=');
}

/**
 * The command template for a prompt: unchanged unless the prompt starts
 * with `-` and `{prompt}` is a whole argument (not after a `--`); then `--`
 * goes before that argument, or (for `stdin`) the argument is left out and
 * the prompt goes on stdin. See `dashPrompt`.
 */
function placePrompt(
  template: readonly string[],
  prompt: string,
  mode: 'auto' | 'separator' | 'stdin',
): { template: readonly string[]; stdin: boolean } {
  if (!prompt.startsWith('-')) return { template, stdin: false };
  const at = template.indexOf('{prompt}', 1);
  const ended = template.indexOf('--', 1);
  if (at < 0 || (ended >= 0 && ended < at)) return { template, stdin: false };
  const how = mode === 'auto' ? (isOption(template[at - 1]) ? 'stdin' : 'separator') : mode;
  if (how === 'stdin') return { template: template.filter((arg, i) => i === 0 || arg !== '{prompt}'), stdin: true };
  return { template: [...template.slice(0, at), '--', ...template.slice(at)], stdin: false };
}

function buildEnv(passEnv: readonly string[], extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of passEnv) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * The default prompt: the system prompt (on the first turn, and on every
 * turn that does not resume the tool's session), the earlier turns of a
 * transcript, then the new input.
 */
export function defaultFormatPrompt(context: ProcessPromptContext): string {
  const parts: string[] = [];
  if (context.system && !context.resumed) parts.push(context.system);
  if (context.history.length > 0) {
    const lines = context.history.map((h) => `${h.role === 'user' ? 'User' : 'Assistant'}: ${h.text}`);
    parts.push(`The conversation so far:\n\n${lines.join('\n\n')}`);
    parts.push(`User: ${context.input}`);
  } else {
    parts.push(context.input);
  }
  return parts.join('\n\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON values among a command's stdout lines (`output: 'jsonl'`); the other lines are its log, passed over. Not a run log (those are read by the kernel's run-log reader). */
export function outputEvents(stdout: string): unknown[] {
  const events: unknown[] = [];
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) continue;
    try {
      events.push(JSON.parse(trimmed));
    } catch {
      // Not JSON after all: a log line.
    }
  }
  return events;
}

/**
 * The default text of a JSON-lines turn: the last `result` string (Claude
 * Code's `json` and `stream-json` formats); else the `text` of every
 * `agent_message` item (Codex's `--json`); else every top-level `text` or
 * `content` string; else the lines of stdout that are not JSON.
 */
export function defaultExtractText(output: ProcessOutput): string {
  let result: string | undefined;
  const items: string[] = [];
  const texts: string[] = [];
  for (const e of output.events) {
    if (!isRecord(e)) continue;
    if (typeof e['result'] === 'string') result = e['result'];
    const item = e['item'];
    if (isRecord(item) && item['type'] === 'agent_message' && typeof item['text'] === 'string') items.push(item['text']);
    if (typeof e['text'] === 'string') texts.push(e['text']);
    else if (typeof e['content'] === 'string') texts.push(e['content']);
  }
  if (result !== undefined) return result.trim();
  if (items.length > 0) return items.join('\n\n').trim();
  if (texts.length > 0) return texts.join('').trim();
  return output.stdout
    .split('\n')
    .filter((l) => !/^\s*[[{]/.test(l))
    .join('\n')
    .trim();
}

/** The default session id: the last `session_id`, `sessionId` or `thread_id` string among the JSON events. */
export function defaultExtractSessionId(output: ProcessOutput): string | undefined {
  let id: string | undefined;
  for (const e of output.events) {
    if (!isRecord(e)) continue;
    for (const key of ['session_id', 'sessionId', 'thread_id']) {
      if (typeof e[key] === 'string' && e[key]) id = e[key];
    }
  }
  return id;
}

/**
 * The default usage: the last `usage` object among the JSON events, read as
 * `input_tokens`/`output_tokens` (or `prompt_tokens`/`completion_tokens`),
 * cached tokens from `cache_read_input_tokens` or `cached_input_tokens`, and
 * the cost from a `total_cost_usd` or `cost_usd` beside it.
 */
export function defaultExtractUsage(output: ProcessOutput): Partial<Usage> | undefined {
  let usage: Partial<Usage> | undefined;
  const num = (r: Record<string, unknown>, ...keys: string[]) => {
    for (const k of keys) if (typeof r[k] === 'number') return r[k];
    return undefined;
  };
  for (const e of output.events) {
    if (!isRecord(e) || !isRecord(e['usage'])) continue;
    const u = e['usage'];
    const found: Partial<Usage> = {
      inputTokens: num(u, 'input_tokens', 'prompt_tokens', 'inputTokens') ?? 0,
      outputTokens: num(u, 'output_tokens', 'completion_tokens', 'outputTokens') ?? 0,
      cachedTokens: num(u, 'cache_read_input_tokens', 'cached_input_tokens', 'cachedTokens') ?? 0,
    };
    const cost = num(e, 'total_cost_usd', 'cost_usd');
    if (cost !== undefined) found.costUsd = cost;
    usage = found;
  }
  return usage;
}

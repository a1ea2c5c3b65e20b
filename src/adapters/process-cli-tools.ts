/**
 * The CLI tools an agent names, as Claude Code's and Codex's own switches.
 * An agent names them by the CLI's names (`Read`, `Bash(git *)`,
 * `exec_command`) or by the aliases GitHub's custom-agent reference gives
 * every coding agent (`read`, `edit`, `search`, `execute`, `web`, and
 * their compatible aliases `Read`, `Grep`, `Bash`, ..., in any case), so
 * an agent written for one CLI runs on another. A name that is neither is
 * reported (`unknown`), for a warning; it is passed on as it is (a newer
 * CLI may have it).
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { CliToolList } from '../core/adapter.js';

/** The alias groups of GitHub's custom-agent reference. */
export type ToolGroup = 'read' | 'edit' | 'search' | 'execute' | 'web' | 'agent' | 'todo';

const GROUPS: ReadonlySet<string> = new Set<ToolGroup>(['read', 'edit', 'search', 'execute', 'web', 'agent', 'todo']);

/** The compatible aliases of each group (lower case). */
const ALIASES = new Map<string, ToolGroup>([
  ['shell', 'execute'], ['bash', 'execute'], ['powershell', 'execute'],
  ['notebookread', 'read'],
  ['multiedit', 'edit'], ['write', 'edit'], ['notebookedit', 'edit'],
  ['grep', 'search'], ['glob', 'search'],
  ['custom-agent', 'agent'], ['task', 'agent'],
  ['websearch', 'web'], ['webfetch', 'web'],
  ['todowrite', 'todo'],
]);

/** The alias group `name` (before any `/` or `(`) stands for, in any case; undefined when it is none. */
export function toolGroup(name: string): ToolGroup | undefined {
  const key = toolName(name).toLowerCase();
  const group = ALIASES.get(key) ?? key;
  return GROUPS.has(group) ? (group as ToolGroup) : undefined;
}

/** `Bash(git *)` → `Bash`, `read/readFile` → `read`: the tool a name or a permission rule is about. */
export function toolName(rule: string): string {
  let end = rule.length;
  for (const mark of ['(', '/']) {
    const at = rule.indexOf(mark);
    if (at >= 0 && at < end) end = at;
  }
  return rule.slice(0, end).trim();
}

/** True when `list` gives the agent every tool of the CLI: `*` among `allowed`, or no list with `defaultAll`. */
export function allTools(list: CliToolList | undefined, defaultAll: boolean): boolean {
  return list?.allowed === undefined ? defaultAll : list.allowed.includes('*');
}

/**
 * Claude Code's built-in tools (as of `CLAUDE_CODE_VERSION`, 2.1.197, with
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`): what `--tools` can offer.
 * `Task`, `KillShell` and `BashOutput` are earlier names it still takes.
 */
const CLAUDE_TOOLS: ReadonlySet<string> = new Set([
  'Agent', 'Bash', 'CronCreate', 'CronDelete', 'CronList', 'Edit', 'EnterWorktree', 'ExitWorktree', 'Glob', 'Grep',
  'NotebookEdit', 'Read', 'ReportFindings', 'ScheduleWakeup', 'SendMessage', 'Skill', 'TaskCreate', 'TaskGet', 'TaskList',
  'TaskOutput', 'TaskStop', 'TaskUpdate', 'WebFetch', 'WebSearch', 'Workflow', 'Write',
  'Task', 'KillShell', 'BashOutput',
]);

/** Claude Code's tools for each alias group (sub-agents are troupe's: the profile refuses `Task`). */
const CLAUDE_GROUPS: Record<ToolGroup, readonly string[]> = {
  read: ['Read'],
  edit: ['Edit', 'Write'],
  search: ['Grep', 'Glob'],
  execute: ['Bash'],
  web: ['WebFetch', 'WebSearch'],
  agent: [],
  todo: ['TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate'],
};

/** What Claude Code is given for an agent's own tools. */
export interface ClaudeToolArgs {
  /** The built-in tools offered (`--tools`; `[]`: none); undefined: every tool (the flag is left out). */
  offered: string[] | undefined;
  /** Permissions (`--allowedTools`): the rules as the agent wrote them, an alias as the tools it stands for. */
  allowed: string[];
  /** `--disallowedTools`. */
  disallowed: string[];
  /** Names Claude Code does not have (passed on as they are). */
  unknown: string[];
}

/** A name as Claude Code's tools: itself when Claude Code has it (or it is an MCP tool), else the tools of its alias group. */
function claudeTools(name: string): { tools: readonly string[]; known: boolean } {
  const base = toolName(name);
  if (CLAUDE_TOOLS.has(base) || base.startsWith('mcp__')) return { tools: [base], known: true };
  const group = toolGroup(name);
  if (group !== undefined) return { tools: CLAUDE_GROUPS[group], known: true };
  return { tools: [base], known: false };
}

/**
 * Claude Code's switches for an agent's tools: exactly the built-in tools it
 * names (`--tools Read,Grep`; `--tools ""` for none), allowed in
 * `--allowedTools` (a rule such as `Bash(git *)` kept as it is); every tool
 * when it names `*`, or names none and `defaultAll`; its disallowed tools
 * refused.
 *
 * @example
 * ```ts
 * claudeToolArgs({ allowed: ['read', 'Bash(git *)'], disallowed: [] }, false);
 * // { offered: ['Read', 'Bash'], allowed: ['Read', 'Bash(git *)'], disallowed: [], unknown: [] }
 * ```
 */
export function claudeToolArgs(list: CliToolList | undefined, defaultAll: boolean): ClaudeToolArgs {
  const unknown = new Set<string>();
  const disallowed = new Set<string>();
  for (const name of list?.disallowed ?? []) {
    const { tools, known } = claudeTools(name);
    if (!known) unknown.add(name);
    // A rule (`Bash(rm *)`) refuses what it says; a name refuses its tools.
    if (name.includes('(') && known && CLAUDE_TOOLS.has(toolName(name))) disallowed.add(name);
    else for (const t of tools) disallowed.add(t);
  }
  if (allTools(list, defaultAll)) {
    const named = (list?.allowed ?? []).filter((n) => n !== '*');
    for (const name of named) if (!claudeTools(name).known) unknown.add(name);
    return { offered: undefined, allowed: named.flatMap((n) => (CLAUDE_TOOLS.has(toolName(n)) || n.startsWith('mcp__') ? [n] : claudeTools(n).tools)), disallowed: [...disallowed], unknown: [...unknown] };
  }
  const offered = new Set<string>();
  const allowed = new Set<string>();
  for (const name of list?.allowed ?? []) {
    const { tools, known } = claudeTools(name);
    if (!known) unknown.add(name);
    const own = CLAUDE_TOOLS.has(toolName(name)) || name.startsWith('mcp__') || !known;
    // MCP tools are not built-in: `--tools` does not limit them, `--allowedTools` permits them.
    for (const t of tools) if (!t.startsWith('mcp__')) offered.add(t);
    if (own) allowed.add(name);
    else for (const t of tools) allowed.add(t);
  }
  return { offered: [...offered], allowed: [...allowed], disallowed: [...disallowed], unknown: [...unknown] };
}

/** Codex's tool switches (as of `CODEX_VERSION`, 0.169.0): each a group of tools and the `-c` override that turns it off. */
const CODEX_FEATURES = {
  /** `exec_command` and `write_stdin`: Codex reads, searches and edits files (`apply_patch`) through its shell. */
  shell: 'features.shell_tool=false',
  web: 'web_search="disabled"',
  image: 'features.view_image=false',
  goals: 'features.goals=false',
  ask: 'tools.experimental_request_user_input.enabled=false',
} as const;

/** Codex's name of each of its tools, with the switch it belongs to. */
const CODEX_TOOLS = new Map<string, CodexFeature>([
  ['exec_command', 'shell'], ['write_stdin', 'shell'], ['shell', 'shell'], ['apply_patch', 'shell'],
  ['web_search', 'web'],
  ['view_image', 'image'],
  ['get_goal', 'goals'], ['create_goal', 'goals'], ['update_goal', 'goals'],
  ['request_user_input', 'ask'],
]);

/** Codex's switch of each alias group (none: Codex has no such tool, or it is troupe's). */
const CODEX_GROUPS: Record<ToolGroup, CodexFeature | undefined> = {
  read: 'shell',
  edit: 'shell',
  search: 'shell',
  execute: 'shell',
  web: 'web',
  agent: undefined,
  todo: undefined,
};

/** One of Codex's tool switches. */
export type CodexFeature = keyof typeof CODEX_FEATURES;

function codexFeature(name: string): { feature: CodexFeature | undefined; known: boolean } {
  const base = toolName(name);
  const own = CODEX_TOOLS.get(base);
  if (own !== undefined) return { feature: own, known: true };
  const group = toolGroup(name);
  if (group !== undefined) return { feature: CODEX_GROUPS[group], known: true };
  return { feature: undefined, known: false };
}

/** What Codex is given for an agent's own tools. */
export interface CodexToolArgs {
  /** The switches on (`shell` also when only files are to be read: Codex reads through its shell, within its sandbox). */
  on: CodexFeature[];
  /** The `-c` overrides that turn the other switches off. */
  overrides: string[];
  /** Names Codex does not have. */
  unknown: string[];
}

/**
 * Codex's switches for an agent's tools. Codex 0.169 reads, searches and
 * edits files through its shell (`exec_command`; edits as `apply_patch`),
 * so `read`, `edit`, `search` and `execute` all turn the shell on, and its
 * sandbox (`--sandbox`; `read-only` unless configured) decides what
 * commands may do. Every switch the agent does not name is turned off;
 * every one stays on when it names `*`, or names none and `defaultAll`.
 */
export function codexToolArgs(list: CliToolList | undefined, defaultAll: boolean): CodexToolArgs {
  const unknown = new Set<string>();
  const on = new Set<CodexFeature>();
  if (allTools(list, defaultAll)) for (const f of Object.keys(CODEX_FEATURES) as CodexFeature[]) on.add(f);
  for (const name of list?.allowed ?? []) {
    if (name === '*') continue;
    const { feature, known } = codexFeature(name);
    if (!known) unknown.add(name);
    if (feature !== undefined) on.add(feature);
  }
  for (const name of list?.disallowed ?? []) {
    const { feature, known } = codexFeature(name);
    if (!known) unknown.add(name);
    // A rule about some commands (`Bash(rm *)`) cannot be expressed: only a whole tool is refused.
    if (feature !== undefined && !name.includes('(')) on.delete(feature);
  }
  const overrides = (Object.keys(CODEX_FEATURES) as CodexFeature[]).filter((f) => !on.has(f)).map((f) => CODEX_FEATURES[f]);
  return { on: [...on], overrides, unknown: [...unknown] };
}

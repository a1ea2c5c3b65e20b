/**
 * The tool names of GitHub Copilot agent files as the Copilot CLI's own
 * tools and permissions. Files name tools by alias (`read`, `edit`,
 * `search`, `execute`, and their compatible aliases `Read`, `Grep`,
 * `Bash`, ... of GitHub's custom-agent reference, in any case), by VS Code
 * tool set (`read/readFile`, `search/codebase`), or as an MCP server's
 * tool (`github/issue_read`, `tickets/*`); the CLI offers `view`, `grep`,
 * `bash`, `<server>-<tool>`, and asks before `shell` commands and `write`s.
 * @module
 * @internal
 */
import type { CliToolList } from '../core/adapter.js';

/** Copilot CLI's tools (as of `COPILOT_VERSION`) for each alias, and the permission it asks for them. */
const GROUPS = new Map<string, { tools: readonly string[]; allow?: string }>([
  ['execute', { tools: ['bash', 'read_bash', 'write_bash', 'stop_bash', 'list_bash', 'powershell', 'read_powershell', 'write_powershell', 'stop_powershell', 'list_powershell'], allow: 'shell' }],
  ['read', { tools: ['view'] }],
  ['edit', { tools: ['edit', 'create'], allow: 'write' }],
  ['search', { tools: ['grep', 'glob'] }],
  ['web', { tools: ['web_fetch'] }],
  // Sub-agents are troupe's (the profile excludes `task`); the CLI has no to-do tool.
  ['agent', { tools: [] }],
  ['todo', { tools: [] }],
]);

/** The compatible aliases of each alias (lower case). */
const ALIASES = new Map<string, string>([
  ['shell', 'execute'], ['bash', 'execute'], ['powershell', 'execute'],
  ['notebookread', 'read'],
  ['multiedit', 'edit'], ['write', 'edit'], ['notebookedit', 'edit'],
  ['grep', 'search'], ['glob', 'search'],
  ['custom-agent', 'agent'], ['task', 'agent'],
  ['websearch', 'web'], ['webfetch', 'web'],
  ['todowrite', 'todo'],
]);

/** What Copilot CLI is given for an agent's tools. */
export interface CopilotToolArgs {
  /** The tools offered, besides the MCP servers (`--available-tools`); absent: every tool. */
  available?: string[];
  /** Permissions (`--allow-tool`): `shell`, `write`, `<server>`, `<server>(<tool>)`. */
  allow: string[];
  /** Tools not offered (`--excluded-tools`). */
  excluded: string[];
}

/** One name of a file as Copilot CLI tools and permissions. */
function copilotTool(name: string): { tools: readonly string[]; allow: readonly string[] } {
  const slash = name.indexOf('/');
  const head = (slash < 0 ? name : name.slice(0, slash)).trim();
  const key = head.toLowerCase();
  const group = GROUPS.get(ALIASES.get(key) ?? key);
  if (group) return { tools: group.tools, allow: group.allow === undefined ? [] : [group.allow] };
  if (slash < 0) return { tools: [head], allow: [] };
  const tool = name.slice(slash + 1).trim();
  return tool === '*' || tool === '' ? { tools: [head], allow: [head] } : { tools: [`${head}-${tool}`], allow: [`${head}(${tool})`] };
}

/**
 * The Copilot CLI arguments for an agent's own tools: the tools it names
 * offered (and nothing else of the CLI's), with the permissions the CLI
 * would ask for; its disallowed tools excluded. Names the CLI does not know
 * are passed as they are (Copilot ignores them).
 *
 * @example
 * ```ts
 * copilotToolArgs({ allowed: ['read/readFile', 'search', 'execute'], disallowed: [] });
 * // { available: ['view', 'grep', 'glob', 'bash', ...], allow: ['shell'], excluded: [] }
 * ```
 */
export function copilotToolArgs(list: CliToolList): CopilotToolArgs {
  const out: CopilotToolArgs = { allow: [], excluded: [] };
  if (list.allowed !== undefined) {
    const available = new Set<string>();
    const allow = new Set<string>();
    for (const name of list.allowed) {
      const mapped = copilotTool(name);
      for (const t of mapped.tools) available.add(t);
      for (const a of mapped.allow) allow.add(a);
    }
    out.available = [...available];
    out.allow = [...allow];
  }
  out.excluded = [...new Set(list.disallowed.flatMap((name) => copilotTool(name).tools))];
  return out;
}

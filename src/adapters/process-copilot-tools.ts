/**
 * The tool names of GitHub Copilot agent files as the Copilot CLI's own
 * tools and permissions. Files name tools by alias (`read`, `edit`,
 * `search`, `execute`, and their compatible aliases `Read`, `Grep`,
 * `Bash`, ... of GitHub's custom-agent reference, in any case), by VS Code
 * tool set (`read/readFile`, `search/codebase`), or as an MCP server's
 * tool (`github/issue_read`, `tickets/*`); the CLI offers `view`, `grep`,
 * `bash`, `<server>-<tool>`, and asks before `shell` commands and `write`s.
 * The aliases are shared with the other profiles (`process-cli-tools.ts`).
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { CliToolList } from '../core/adapter.js';
import { allTools, toolGroup, type ToolGroup } from './process-cli-tools.js';

/** Copilot CLI's tools (as of `COPILOT_VERSION`) for each alias group, and the permission it asks for them. */
const GROUPS: Record<ToolGroup, { tools: readonly string[]; allow?: string }> = {
  execute: { tools: ['bash', 'read_bash', 'write_bash', 'stop_bash', 'list_bash', 'powershell', 'read_powershell', 'write_powershell', 'stop_powershell', 'list_powershell'], allow: 'shell' },
  read: { tools: ['view'] },
  edit: { tools: ['edit', 'create'], allow: 'write' },
  search: { tools: ['grep', 'glob'] },
  web: { tools: ['web_fetch'] },
  // Sub-agents are troupe's (the profile excludes `task`); the CLI has no to-do tool.
  agent: { tools: [] },
  todo: { tools: [] },
};

/** Copilot CLI's own tools (1.0.102, `-p`, offline), besides those of the groups. */
const OWN: ReadonlySet<string> = new Set([
  'fetch_copilot_cli_documentation', 'skill', 'sql', 'session_store_sql', 'read_agent', 'list_agents', 'write_agent', 'task', 'ask_user',
  ...Object.values(GROUPS).flatMap((g) => g.tools),
]);

/** What Copilot CLI is given for an agent's tools. */
export interface CopilotToolArgs {
  /** The tools offered, besides the MCP servers (`--available-tools`; `[]`: none); absent: every tool. */
  available?: string[];
  /** Permissions (`--allow-tool`): `shell`, `write`, `<server>`, `<server>(<tool>)`. */
  allow: string[];
  /** Tools not offered (`--excluded-tools`). */
  excluded: string[];
  /** Names Copilot CLI does not have (passed on as they are; Copilot ignores them). */
  unknown: string[];
}

/** One name of a file as Copilot CLI tools and permissions. */
function copilotTool(name: string): { tools: readonly string[]; allow: readonly string[]; known: boolean } {
  const slash = name.indexOf('/');
  const head = (slash < 0 ? name : name.slice(0, slash)).trim();
  const group = toolGroup(head);
  if (group !== undefined) {
    const { tools, allow } = GROUPS[group];
    return { tools, allow: allow === undefined ? [] : [allow], known: true };
  }
  if (OWN.has(head) && slash < 0) {
    const of = Object.values(GROUPS).find((g) => g.tools.includes(head));
    return { tools: [head], allow: of?.allow === undefined ? [] : [of.allow], known: true };
  }
  // Without a `/`, a name Copilot does not have; with one, a tool of an MCP server (`tickets/*`, `github/issue_read`).
  if (slash < 0) return { tools: [head], allow: [], known: false };
  const tool = name.slice(slash + 1).trim();
  return tool === '*' || tool === '' ? { tools: [head], allow: [head], known: true } : { tools: [`${head}-${tool}`], allow: [`${head}(${tool})`], known: true };
}

/**
 * The Copilot CLI arguments for an agent's own tools: the tools it names
 * offered (and nothing else of the CLI's; `[]` when it names none), with
 * the permissions the CLI would ask for; every tool when it names `*`, or
 * names none and `defaultAll`; its disallowed tools excluded. Names the
 * CLI does not know are passed as they are (Copilot ignores them) and
 * listed in `unknown`.
 *
 * @example
 * ```ts
 * copilotToolArgs({ allowed: ['read/readFile', 'search', 'execute'], disallowed: [] });
 * // { available: ['view', 'grep', 'glob', 'bash', ...], allow: ['shell'], excluded: [], unknown: [] }
 * ```
 */
export function copilotToolArgs(list: CliToolList | undefined, defaultAll = false): CopilotToolArgs {
  const out: CopilotToolArgs = { allow: [], excluded: [], unknown: [] };
  const unknown = new Set<string>();
  const available = new Set<string>();
  const allow = new Set<string>();
  for (const name of list?.allowed ?? []) {
    if (name === '*') continue;
    const mapped = copilotTool(name);
    if (!mapped.known) unknown.add(name);
    for (const t of mapped.tools) available.add(t);
    for (const a of mapped.allow) allow.add(a);
  }
  if (!allTools(list, defaultAll)) out.available = [...available];
  out.allow = [...allow];
  out.excluded = [
    ...new Set(
      (list?.disallowed ?? []).flatMap((name) => {
        const mapped = copilotTool(name);
        if (!mapped.known) unknown.add(name);
        return mapped.tools;
      }),
    ),
  ];
  out.unknown = [...unknown];
  return out;
}

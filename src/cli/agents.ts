/**
 * `troupe agents inspect <dir>`: what troupe understood of each agent file
 * (format, name, tools resolved or not, model, sub-agents, hand-offs,
 * warnings), and the options every agent command shares (`--as`,
 * `--models`).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { AGENT_FORMATS, type AgentFormat, type AgentIssue } from '../agents/definition.js';
import { inspectAgents, type AgentInspection } from '../agents/inspect.js';
import { loadAgentFolder, type LoadedAgents } from '../agents/load.js';
import { ConfigurationError, errorMessage } from '../core/errors.js';
import type { CliIo } from './io.js';
import { formatTable } from './squad.js';
import { defined } from '../core/defined.js';

/** The help text of `troupe agents`. */
export const AGENTS_HELP = `Usage: troupe agents inspect <dir> [--as <format>] [--models <map.json>] [--json]

Read every agent file under <dir> (troupe's own, ai-agent .ai, Claude Code,
GitHub Copilot and OpenCode files, each recognised from its place, extension
and fields) and print one row per file: its format, the agent's name, its
tools (how many resolve: to a tool troupe has, to the vendor's CLI, or to
nothing), its model, its sub-agents, its hand-offs and how many warnings it
has; then every warning by file.

  --as <format>       read every file as ${AGENT_FORMATS.join(', ')}
  --models <file>     a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }
  --json              print the rows as JSON`;

/** The flags every agent-folder command reads. */
export interface AgentFolderFlags {
  as?: string | undefined;
  models?: string | undefined;
}

/** `--as`, checked. */
export function formatFlag(value: string | undefined): AgentFormat | undefined {
  if (value === undefined) return undefined;
  if (!(AGENT_FORMATS as readonly string[]).includes(value)) {
    throw new ConfigurationError(`Expected --as to be one of ${AGENT_FORMATS.join(', ')}, got "${value}"`, { code: 'invalid_option' });
  }
  return value as AgentFormat;
}

/** The model map of `--models <file.json>`. */
export async function readModelMap(file: string | undefined): Promise<Record<string, string> | undefined> {
  if (file === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigurationError(`Cannot read the model map ${file}: ${errorMessage(error)}`, { code: 'invalid_option', cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new ConfigurationError(`The model map ${file} must be a JSON object of names to model names`, { code: 'invalid_option' });
  }
  return value as Record<string, string>;
}

/** Load an agent folder as the flags say. */
export async function loadFolder(dir: string, flags: AgentFolderFlags, io: CliIo): Promise<LoadedAgents> {
  const format = formatFlag(flags.as);
  return loadAgentFolder(dir, { ...defined({ signal: io.signal, format }) });
}

/** Where an issue is, for a line of output. */
export function where(issue: AgentIssue): string {
  return issue.file ? `${issue.file}: ` : issue.agent ? `${issue.agent}: ` : '';
}

/** Run `troupe agents inspect <dir>`; resolves with the exit code. */
export async function agentsInspect(dir: string, flags: AgentFolderFlags & { json?: boolean | undefined }, io: CliIo): Promise<number> {
  const loaded = await loadFolder(dir, flags, io);
  const modelMap = await readModelMap(flags.models);
  const rows = inspectAgents(loaded.agents, { unknownTools: 'warn', ...defined({ modelMap }) });
  if (flags.json) {
    io.out(JSON.stringify({ agents: rows, warnings: loaded.warnings }, null, 2));
    return 0;
  }
  io.out(rows.length === 0 ? '(no agent files)' : formatTable(['file', 'format', 'name', 'tools', 'model', 'sub-agents', 'hand-offs', 'warnings'], rows.map(cells)));
  const lines = [
    ...rows.flatMap((r) => r.errors.map((e) => `error    ${where(e)}${e.message}`)),
    ...[...loaded.warnings, ...rows.flatMap((r) => r.warnings)].map((w) => `warning  ${where(w)}${w.message}`),
  ];
  if (lines.length > 0) io.out(['', ...lines].join('\n'));
  return 0;
}

/** At most `max` characters of `text` (an ellipsis marks a cut). */
const cut = (text: string, max = 48): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** One row of the table. */
function cells(row: AgentInspection): string[] {
  const { tools } = row;
  const all = tools.listed.includes('*');
  const named = tools.listed.filter((t) => t !== '*').length;
  // Tools that `*` brought in are not counted among the named ones.
  const resolvedNamed = tools.resolved.filter((t) => !t.startsWith('* → ')).length;
  const counts = [
    resolvedNamed > 0 ? `${resolvedNamed} resolved` : '',
    tools.cli.length > 0 && tools.cli[0] !== '*' ? `${tools.cli.length} on its CLI` : '',
    tools.unresolved.length > 0 ? `${tools.unresolved.length} not` : '',
  ].filter((s) => s !== '');
  const toolCell = named === 0 ? (all ? 'all' : '-') : `${all ? 'all, ' : ''}${named}: ${counts.join(', ')}`;
  const model = row.models[0] ?? (row.unresolvedModels.length > 0 ? `${row.unresolvedModels[0]} (unresolved)` : '-');
  const handoffs = row.handoffs.map((h) => `${h.label ?? h.to} → ${h.to}${h.send ? '' : ' (asks)'}`).join('; ');
  return [
    row.file ?? '-',
    row.format,
    `${row.name}${row.mode === 'subagent' ? ' (sub-agent)' : row.mode === 'primary' ? ' (primary)' : ''}`,
    toolCell,
    cut(model, 32),
    row.subAgents.length === 0 ? '-' : cut(`${row.subAgents.length}: ${row.subAgents.join(', ')}`),
    handoffs === '' ? '-' : cut(handoffs),
    `${row.warnings.length}${row.errors.length > 0 ? ` (+${row.errors.length} error${row.errors.length === 1 ? '' : 's'})` : ''}`,
  ];
}

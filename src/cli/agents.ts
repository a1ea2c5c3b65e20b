/**
 * `troupe agents inspect <dir>`: what troupe understood of each agent file
 * (format, name, tools resolved or not, model, sub-agents, hand-offs,
 * warnings), and the options every agent command shares (`--as`,
 * `--models`).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { AGENT_FORMATS, type AgentDefinition, type AgentFormat, type AgentIssue } from '../agents/definition.js';
import { inspectAgents, type AgentInspection } from '../agents/inspect.js';
import { loadAgentFolder, type LoadedAgents } from '../agents/load.js';
import { ConfigurationError, errorMessage } from '../core/errors.js';
import type { CliIo } from './io.js';
import { formatTable } from './squad.js';
import { someNames } from './graph.js';
import { defined } from '../core/defined.js';

/** The help text of `troupe agents`. */
export const AGENTS_HELP = `Usage: troupe agents inspect <dir> [--as <format>] [--models <map.json>] [--tool-map <map.json>] [--json]

Read every agent file under <dir> (troupe's own, ai-agent .ai, Claude Code,
GitHub Copilot and OpenCode files, each recognised from its place, extension
and fields) and print one row per file: its format, the agent's name, its
tools (how many resolve: to a tool troupe has, to the vendor's CLI, or to
nothing), its model, its sub-agents, its hand-offs and how many warnings it
has; then every warning by file.

  --as <format>       read every file as ${AGENT_FORMATS.join(', ')}
  --models <file>     a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }
  --tool-map <file>   a JSON tool map: { "read/readFile": null, ... } (see troupe validate --help)
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

/** A JSON object of names read from `file` (`what` names it in errors), each value passing `valid`; undefined without a file. */
async function readNameMap<V>(file: string | undefined, what: string, shape: string, valid: (v: unknown) => v is V): Promise<Record<string, V> | undefined> {
  if (file === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigurationError(`Cannot read the ${what} ${file}: ${errorMessage(error)}`, { code: 'invalid_option', cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every(valid)) {
    throw new ConfigurationError(`The ${what} ${file} must be a JSON object of ${shape}`, { code: 'invalid_option' });
  }
  return value as Record<string, V>;
}

/** The model map of `--models <file.json>`. */
export function readModelMap(file: string | undefined): Promise<Record<string, string> | undefined> {
  return readNameMap(file, 'model map', 'names to model names', (v): v is string => typeof v === 'string');
}

/** The tool map of `--tool-map <file.json>`: tool names as agent files write them, mapped to the names of troupe tools, or to `null`. */
export function readToolMap(file: string | undefined): Promise<Record<string, string | null> | undefined> {
  return readNameMap(file, 'tool map', 'tool names to troupe tool names (or null)', (v): v is string | null => v === null || typeof v === 'string');
}

/**
 * The `toolAliases` of `--tool-map <file>` for a command that has `tools`:
 * a name mapped to a tool the command does not have is an error that says
 * which tools it has.
 */
export async function toolMapFor(file: string | undefined, tools: Readonly<Record<string, unknown>>, command: string): Promise<Record<string, string | null> | undefined> {
  const map = await readToolMap(file);
  for (const [name, target] of Object.entries(map ?? {})) {
    if (target === null || Object.hasOwn(tools, target)) continue;
    const have = Object.keys(tools);
    throw new ConfigurationError(
      `--tool-map maps "${name}" to "${target}", which troupe ${command} does not have (${have.length === 0 ? 'it has no tools of its own' : `its tools: ${have.join(', ')}`}); map a name to null to leave it out without a warning`,
      { code: 'invalid_option', details: { name, target } },
    );
  }
  return map;
}

/** How each format's vendor is named in a warning. */
const VENDORS: Record<AgentFormat, string> = { troupe: '', 'ai-agent': 'ai-agent', 'claude-code': 'Claude Code', copilot: 'Copilot', opencode: 'OpenCode' };

/** The room the names of a grouped warning get on its line, in characters. */
const NAMES_ROOM = 64;

/** As many of `names` as fit in `room` characters (at least one), then "and K more". */
function namesIn(names: readonly string[], room: number): string {
  let shown = 1;
  while (shown < names.length && names.slice(0, shown + 1).join(', ').length <= room) shown++;
  return someNames(names, shown);
}

/** Names by how many agents give them, most first (then in the order first given). */
function byUse(lists: ReadonlyArray<readonly string[]>): string[] {
  const counts = new Map<string, number>();
  for (const list of lists) for (const name of new Set(list)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)!);
}

/** What the hint of a grouped warning may offer, besides `--tool-map` and `--models`. */
export interface WarningHints {
  /** The command fails on unresolved tools with `--strict` (`troupe run`). */
  strict?: boolean;
}

/**
 * The warnings of a folder as lines a person can act on: the tools that
 * resolve to nothing in one line per vendor (the names most agents give
 * first, as many as fit, then how many more), with how to map them; the
 * model aliases not in the model map in one line; every other warning as
 * it is. `issues` are `validateAgents`' warnings or `compileAgents`'
 * `onWarning` issues.
 */
export function groupedWarnings(defs: readonly AgentDefinition[], issues: readonly AgentIssue[], hints: WarningHints = {}): string[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  const tools = new Map<string, { lists: string[][]; where: string[] }>();
  const models: string[][] = [];
  const lines: string[] = [];
  for (const issue of issues) {
    const names = (issue.path ?? []).slice(1).filter((p): p is string => typeof p === 'string');
    if (issue.code === 'unresolved_tool' && names.length > 0) {
      const vendor = VENDORS[byName.get(issue.agent ?? '')?.format ?? 'troupe'];
      const group = tools.get(vendor) ?? { lists: [], where: [] };
      group.lists.push(names);
      group.where.push(issue.file ?? issue.agent ?? '');
      tools.set(vendor, group);
    } else if (issue.code === 'unresolved_model' && names.length > 0) models.push(names);
    else lines.push(`warning  ${where(issue)}${issue.message}`);
  }
  const grouped: string[] = [];
  for (const [vendor, { lists, where: at }] of tools) {
    const names = byUse(lists);
    const counts = `(${names.length} name${names.length === 1 ? '' : 's'} in ${lists.length === 1 ? at[0] : `${lists.length} agents`})`;
    grouped.push(`warning  ${vendor === '' ? 'Tools' : `${vendor} tools`} with no troupe tool, left out: ${namesIn(names, NAMES_ROOM)} ${counts}`);
    grouped.push(`         map them with --tool-map <file.json> ({ "<name>": "<troupe tool>" or null })${hints.strict ? ', or fail on them with --strict' : ''}; troupe agents inspect lists each agent's`);
  }
  if (models.length > 0) {
    const names = byUse(models);
    grouped.push(`warning  models not in the model map, the adapter's default used instead: ${namesIn(names, NAMES_ROOM)} (in ${models.length} agent${models.length === 1 ? '' : 's'})`);
    grouped.push('         map them with --models <file.json> ({ "<name>": "<model>" })');
  }
  return [...grouped, ...lines];
}

/** How many warnings {@link groupedWarnings} makes of `lines` (a grouped warning's hint line is not one). */
export function warningCount(lines: readonly string[]): number {
  return lines.filter((l) => l.startsWith('warning')).length;
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
export async function agentsInspect(dir: string, flags: AgentFolderFlags & { json?: boolean | undefined; 'tool-map'?: string | undefined }, io: CliIo): Promise<number> {
  const loaded = await loadFolder(dir, flags, io);
  const modelMap = await readModelMap(flags.models);
  const toolAliases = await toolMapFor(flags['tool-map'], {}, 'agents inspect');
  const rows = inspectAgents(loaded.agents, { unknownTools: 'warn', ...defined({ modelMap, toolAliases }) });
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
    (tools.ignored?.length ?? 0) > 0 ? `${tools.ignored!.length} mapped to none` : '',
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

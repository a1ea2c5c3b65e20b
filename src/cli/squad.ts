/**
 * `troupe squad show <repo>`, `troupe squad init <repo> --preset <name>` and
 * `troupe squad run <repo> "<input>"`: a repository's squad team as a table,
 * a preset written as a squad folder, and the team run on a request.
 * @module
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileStore } from '../persistence/file-store.js';
import { readSquadFile } from '../squad/files.js';
import { findSquadDir } from '../squad/find.js';
import { discoverSquad } from '../squad/parse.js';
import type { SquadPreset, TeamPreset } from '../squad/preset.js';
import { builtInPresets, loadUserPresets, mergePresets, presetKey } from '../squad/presets.js';
import { fromPreset } from '../squad/from-preset.js';
import { writeSquad } from '../squad/write.js';
import type { ScriptedRequest } from '../adapters/scripted.js';
import { GROUP_REFLECT_COMPLETE } from '../reflection/sentinels.js';
import { executeRun, type RunFlags } from './execute.js';
import type { CliIo } from './io.js';
import { usageError } from './usage.js';
import { PROMPT_HEADINGS } from '../text/headings.js';
import { defined } from '../core/defined.js';

/** The help texts of `troupe squad`, by subcommand (`''` for `troupe squad` itself). */
export const SQUAD_HELP: Readonly<Record<'' | 'show' | 'init' | 'run', string>> = {
  '': `Usage:
  troupe squad show <repo>                             print the repository's squad team as a table
  troupe squad init <repo> --preset <name> [--force] [--store <dir>]
                                                       write a preset as the repository's squad folder
  troupe squad run <repo> "<input>" [--adapter <name>] [--script <file.json>] [--store <dir> [--thread <id>]] [--history] [--scribe] [--json] [--quiet] [--trace]
                                                       run the repository's squad team on a request

Run \`troupe squad <command> --help\` for details.`,
  show: `Usage: troupe squad show <repo>

Read the squad folder of <repo> (.squad, else the legacy .ai-team) and print
the team: its name and mode, one row per roster member (name, slug, role,
worker or infrastructure, whether a charter was found), the sizes of the
routing and shared context, and every warning. Exits 1 when <repo> has no
squad team.`,
  init: `Usage: troupe squad init <repo> --preset <name> [--force] [--store <dir>]

Write the preset <name> as the squad folder of <repo> (its existing .squad or
.ai-team, else a new .squad): team.md, agents/<slug>/charter.md per worker,
routing.md and decisions.md when the preset has them.

  --preset <name>   a built-in preset (${builtInPresets().map((p) => p.name).join(', ')})
                    or a user preset from the store
  --store <dir>     a file store holding user presets (default: $TROUPE_STORE;
                    without one, only the built-in presets)
  --force           overwrite an existing team.md (refused otherwise)`,
  run: `Usage: troupe squad run <repo> "<input>" [--adapter <name>] [--script <file.json>] [--store <dir> [--thread <id>]] [--history] [--scribe] [--json] [--quiet] [--trace] [--verbose]

Read the squad folder of <repo> (as \`troupe squad show\` does) and run its
team on <input> with \`fromPreset\`: an orchestrator plans with the team's
routing notes and gives tasks to the workers (each with its charter and the
decision log), in the team's mode. Prints the answer, the terminal agent and
the usage; progress goes to standard error. Exits 1 when <repo> has no squad
team.

  --adapter <name>   as for \`troupe run\` (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter: JSON { "replies": { "orchestrator": [...], "<worker>": [...] }, "fallback": ... }
  --store <dir>      log the run in this file store (default: $TROUPE_STORE)
  --thread <id>      continue the conversation <id> kept in the store (as for \`troupe run\`)
  --history          after the run, add what each worker did to its agents/<name>/history.md
                     (in the file's own dated style; past 12 KB the oldest entries move to history-archive.md)
  --scribe           after the run, record its decisions (answer lines "DECISION: ...", else the answer) in decisions.md
  --json             print every event as one JSON line on standard output, and nothing else
  --quiet            no progress
  --trace            also print the op tree with usage
  --verbose          on a failure, also print the failed command's stderr`,
};

/** The flags `troupe squad` reads. */
export interface SquadFlags {
  help?: boolean | undefined;
  preset?: string | undefined;
  force?: boolean | undefined;
  store?: string | undefined;
}

/** The repository folder, or `undefined` after saying that it is not one. */
async function repoFolder(repo: string, io: CliIo): Promise<string | undefined> {
  if ((await stat(repo).catch(() => undefined))?.isDirectory()) return repo;
  io.err(`No folder ${repo}`);
  return undefined;
}

/** `troupe squad show <repo>`; resolves with the exit code. */
export async function squadShow(repo: string, io: CliIo): Promise<number> {
  if ((await repoFolder(repo, io)) === undefined) return 1;
  const team = await discoverSquad(repo, defined({ signal: io.signal }));
  if (team === null) {
    io.err(noTeam(repo));
    return 1;
  }
  io.out(`${team.name} (${team.mode}), read from ${team.sourcePath}`);
  if (team.description !== undefined) io.out(team.description);
  io.out('');
  const rows = await rosterRows(team);
  io.out(rows.length === 0 ? '(empty roster)' : formatTable(['name', 'slug', 'role', 'kind', 'charter'], rows));
  const infra = team.roster.filter((m) => m.infrastructure).length;
  const chars = (text: string | undefined) => `${text?.length ?? 0} chars`;
  io.out('');
  io.out(`${team.workers.length} worker${team.workers.length === 1 ? '' : 's'}, ${infra} infrastructure; routing context ${chars(team.routingContext)}, shared context ${chars(team.sharedContext)}`);
  if (team.warnings.length > 0) {
    io.out('');
    io.out(`warnings (${team.warnings.length}):`);
    for (const warning of team.warnings) io.out(`  - ${warning}`);
  }
  return 0;
}

/** `troupe squad run <repo> "<input>"`; resolves with the exit code. */
export async function squadRun(repo: string, input: string, flags: RunFlags & { history?: boolean | undefined; scribe?: boolean | undefined }, io: CliIo): Promise<number> {
  if ((await repoFolder(repo, io)) === undefined) return 1;
  const team = await discoverSquad(repo, defined({ signal: io.signal }));
  if (team === null) {
    io.err(noTeam(repo));
    return 1;
  }
  if (team.workers.length === 0) {
    io.err(`The squad team in ${team.sourcePath} has no workers to run`);
    return 1;
  }
  if (!flags.json && !flags.quiet) for (const warning of team.warnings) io.err(`warning  ${warning}`);
  const remember = { ...(flags.history ? { history: true } : {}), ...(flags.scribe ? { scribe: true } : {}) };
  return executeRun(fromPreset(team, remember), input, [], flags, io, offlineTeam(team.workers.map((w) => w.name)));
}

/**
 * The scripted adapter's replies for a squad team without `--script`: the
 * orchestrator gives every worker the request (in the text form of an
 * assignment) and accepts their results at once; the workers and an
 * evaluator echo what they were asked.
 */
export function offlineTeam(workers: readonly string[]): (request: ScriptedRequest) => string {
  return ({ agent, text }) => {
    const after = (heading: string) => text.split(`${heading}\n`)[1]?.split('\n')[0];
    const request = after(PROMPT_HEADINGS.task) ?? after(PROMPT_HEADINGS.request) ?? text.split('\n')[0] ?? '';
    if (agent === 'orchestrator' && text.includes(PROMPT_HEADINGS.workerResults)) return `The workers answered: ${workers.join(', ')}.\n${GROUP_REFLECT_COMPLETE}`;
    if (agent === 'orchestrator') return workers.map((name) => `@worker:${name}\n${request.slice(0, 200)}\n@end`).join('\n');
    if (agent === 'evaluator') return 'SCORE: 10\nPASS';
    return `${agent} handled: ${request.slice(0, 200)}`;
  };
}

const noTeam = (repo: string) => `No squad team in ${repo} (no .squad/team.md or .ai-team/team.md)`;

/** One row per roster member; the charters of infrastructure members (not read by parseSquad) are looked up without reading them. */
async function rosterRows(team: SquadPreset): Promise<string[][]> {
  const base = await realpath(team.sourcePath);
  const rows: string[][] = [];
  for (const m of team.roster) {
    let charter = m.charterPath !== undefined ? 'yes' : 'no';
    if (m.infrastructure && m.charterPath === undefined) {
      const found = await readSquadFile(base, join(base, 'agents', m.slug, 'charter.md'), { maxBytes: 0 });
      charter = found.status === 'ok' ? 'yes' : found.status === 'refused' ? 'refused' : 'no';
    }
    rows.push([m.name, m.slug, m.role, m.infrastructure ? 'infrastructure' : 'worker', charter]);
  }
  return rows;
}

/** `troupe squad init <repo> --preset <name>`; resolves with the exit code. */
export async function squadInit(repo: string, flags: SquadFlags, io: CliIo): Promise<number> {
  const name = flags.preset;
  if (name === undefined || name === '') return usageError(io, 'squad init', SQUAD_HELP.init, 'expected --preset <name>');
  if ((await repoFolder(repo, io)) === undefined) return 1;
  const signalOption = defined({ signal: io.signal });
  const storeDir = flags.store ?? (io.env.TROUPE_STORE || undefined);
  const user = storeDir === undefined ? [] : await loadUserPresets(fileStore(storeDir), signalOption);
  const presets = mergePresets(builtInPresets(), user, []);
  const preset: TeamPreset | undefined = presets.find((p) => presetKey(p.name) === presetKey(name));
  if (preset === undefined) {
    io.err(`Unknown preset "${name}" (presets: ${presets.map((p) => p.name).join(', ')})`);
    return 1;
  }
  const existing = await findSquadDir(repo);
  if (existing !== null && !flags.force && (await lstat(join(existing, 'team.md')).catch(() => undefined)) !== undefined) {
    io.err(`${join(existing, 'team.md')} exists: pass --force to overwrite it`);
    return 1;
  }
  const dir = await writeSquad(repo, preset, signalOption);
  io.out(`Wrote the ${preset.name} preset (${preset.source}, ${preset.mode}) to ${dir}`);
  io.out(`  team.md`);
  const written = await discoverSquad(repo, signalOption);
  for (const m of written?.roster ?? []) if (m.charterPath !== undefined) io.out(`  ${m.charterPath}`);
  if (preset.routingContext) io.out('  routing.md');
  if (preset.sharedContext) io.out('  decisions.md');
  return 0;
}

/** Left-aligned columns separated by two spaces, with a rule under the header. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

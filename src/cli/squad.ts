/**
 * `troupe squad show <repo>` and `troupe squad init <repo> --preset <name>`:
 * a repository's squad team as a table, and a preset written as a squad
 * folder.
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
import { writeSquad } from '../squad/write.js';
import type { CliIo } from './io.js';
import { defined } from '../core/defined.js';

/** The help texts of `troupe squad`, by subcommand (`''` for `troupe squad` itself). */
export const SQUAD_HELP: Readonly<Record<'' | 'show' | 'init', string>> = {
  '': `Usage:
  troupe squad show <repo>                             print the repository's squad team as a table
  troupe squad init <repo> --preset <name> [--force] [--store <dir>]
                                                       write a preset as the repository's squad folder

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
};

/** The flags `troupe squad` reads. */
export interface SquadFlags {
  help?: boolean | undefined;
  preset?: string | undefined;
  force?: boolean | undefined;
  store?: string | undefined;
}

/** Run `troupe squad <args>`; resolves with the exit code. */
export async function squadCommand(args: readonly string[], flags: SquadFlags, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === 'help') {
    (flags.help || sub === 'help' ? io.out : io.err)(SQUAD_HELP['']);
    return flags.help || sub === 'help' ? 0 : 2;
  }
  if (sub !== 'show' && sub !== 'init') {
    io.err(`Unknown squad command "${sub}".\n\n${SQUAD_HELP['']}`);
    return 2;
  }
  const help = SQUAD_HELP[sub];
  if (flags.help) {
    io.out(help);
    return 0;
  }
  if (rest.length !== 1) {
    io.err(`Expected 1 argument, got ${rest.length}.\n\n${help}`);
    return 2;
  }
  if (sub === 'init' && (flags.preset === undefined || flags.preset === '')) {
    io.err(`Expected --preset <name>.\n\n${help}`);
    return 2;
  }
  const repo = rest[0]!;
  if (!(await stat(repo).catch(() => undefined))?.isDirectory()) {
    io.err(`No folder ${repo}`);
    return 1;
  }
  return sub === 'show' ? show(repo, io) : init(repo, flags.preset!, flags, io);
}

async function show(repo: string, io: CliIo): Promise<number> {
  const team = await discoverSquad(repo, defined({ signal: io.signal }));
  if (team === null) {
    io.err(`No squad team in ${repo} (no .squad/team.md or .ai-team/team.md)`);
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

async function init(repo: string, name: string, flags: SquadFlags, io: CliIo): Promise<number> {
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

/**
 * Reading a squad folder into a {@link SquadPreset}: the roster from
 * `team.md`, a worker per non-infrastructure member with its charter as the
 * system prompt and its `history.md` as what it remembers, `routing.md` as
 * routing context and `decisions.md` as shared context. Only those files are read, each at most 1 MB, never
 * through a symbolic link that leaves the folder; nothing is executed.
 * @module
 */
import { readdir, realpath } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError } from '../core/errors.js';
import { abortSignal, defineOptions, listOf, string } from '../core/options.js';
import { CHARTER_CAP, CONTEXT_CAP, capAtLine, capEntries } from './caps.js';
import { HISTORY_CAP, historyContext } from './history.js';
import { readSquadFile } from './files.js';
import { SQUAD_DIR_NAMES, findSquadDir } from './find.js';
import type { PresetWorker, RosterMember, SquadPreset } from './preset.js';
import { DEFAULT_INFRASTRUCTURE, isInfrastructure, isSlug, squadSlug } from './slug.js';
import { parseTeamMd, type TeamMdMember } from './team-md.js';

/** The first line of a charter troupe wrote; its folder may be removed when the agent leaves the team. */
export const TROUPE_CHARTER_MARKER = '<!-- troupe:charter (written by troupe; this folder is removed when the agent leaves the team) -->';

/** Options of {@link parseSquad} and {@link discoverSquad}. */
export interface ParseSquadOptions {
  /**
   * Members that are not workers, by name or slug, case-insensitive; a
   * trailing `*` matches a prefix. Default: {@link DEFAULT_INFRASTRUCTURE}
   * (Scribe, Ralph, the coordinator, `@` coding agents).
   */
  infrastructure?: readonly string[];
  /** Cancels the reading. */
  signal?: AbortSignal;
}

const parseSquadOptions = defineOptions<ParseSquadOptions>('parseSquad', { infrastructure: listOf(string), signal: abortSignal });

/** The system prompt of a worker whose charter is missing or unreadable. */
export function genericCharter(name: string, role: string, team: string): string {
  const what = role !== '' ? `the ${role}` : 'a member';
  return `You are ${name}, ${what} of the ${team} team. Do the part of the task that falls to you, and say clearly what you did and what is left.`;
}

/**
 * The agent folder a Charter cell names, as written (`Rai` for
 * `.squad/agents/Rai/charter.md`, `agents/rai/charter.md` or
 * `./agents/rai/charter.md`), if it names one; a folder that would leave
 * `agents/` is not one.
 */
function folderFromCharter(cell: string | undefined, dirName: string): string | undefined {
  let path = cell?.trim().replaceAll('\\', '/');
  if (path === undefined || path === '') return undefined;
  if (path.startsWith('./')) path = path.slice(2);
  for (const prefix of new Set([dirName, ...SQUAD_DIR_NAMES])) if (path.startsWith(`${prefix}/`)) path = path.slice(prefix.length + 1);
  const parts = path.split('/');
  if (parts.length !== 3 || parts[0]!.toLowerCase() !== 'agents' || parts[2]!.toLowerCase() !== 'charter.md') return undefined;
  const folder = parts[1]!;
  return isSlug(folder.normalize('NFC').toLowerCase()) ? folder : undefined;
}

/** A folder name compared the way roster names are matched: Unicode-normalised, any case. */
const folderKey = (name: string): string => name.normalize('NFC').toLowerCase();

/** The folders of `agents/`, by {@link folderKey} (the first of two that differ only in case wins). */
async function agentFolders(base: string): Promise<Map<string, string>> {
  const entries = await readdir(join(base, 'agents'), { withFileTypes: true }).catch(() => []);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const folders = new Map<string, string>();
  for (const entry of entries) {
    if (!(entry.isDirectory() || entry.isSymbolicLink())) continue;
    const key = folderKey(entry.name);
    if (!folders.has(key)) folders.set(key, entry.name);
  }
  return folders;
}

/** The charter text without troupe's marker line, trimmed. */
export function charterBody(text: string): string {
  const body = text.startsWith(TROUPE_CHARTER_MARKER) ? text.slice(TROUPE_CHARTER_MARKER.length) : text;
  return body.trim();
}

/**
 * Read the squad folder `dir` (a `.squad` or `.ai-team` folder). `null` when
 * it has no `team.md`. Problems with single members or files become
 * `warnings`; a `team.md` that links out of the folder is refused with a
 * `ConfigurationError` (code `unsafe_path`).
 *
 * @example
 * ```ts
 * const team = await parseSquad('/repo/.squad');
 * team?.workers.map((w) => w.name); // ['Ripley', 'Hicks', ...]
 * ```
 */
export async function parseSquad(dir: string, options: ParseSquadOptions = {}): Promise<SquadPreset | null> {
  const { signal } = parseSquadOptions.check(options);
  const patterns = options.infrastructure ?? DEFAULT_INFRASTRUCTURE;
  throwIfAborted(signal);
  const base = await realpath(dir).catch(() => undefined);
  if (base === undefined) return null;
  const teamFile = await readSquadFile(base, join(base, 'team.md'));
  if (teamFile.status === 'missing') return null;
  if (teamFile.status === 'refused') {
    throw new ConfigurationError(`Refused ${join(dir, 'team.md')}: ${teamFile.reason}`, {
      code: 'unsafe_path',
      details: { path: join(dir, 'team.md') },
    });
  }
  const teamMd = parseTeamMd(teamFile.text);
  const warnings = [...teamMd.warnings];
  if (teamFile.truncated) warnings.push('team.md is larger than 1 MB: only its start was read');

  const roster: RosterMember[] = [];
  const workers: PresetWorker[] = [];
  const seen = new Set<string>();
  const folders = await agentFolders(base);
  for (const member of teamMd.members) {
    throwIfAborted(signal);
    const named = folderFromCharter(member.charter, basename(dir));
    const slug = named === undefined ? squadSlug(member.name) : folderKey(named);
    if (slug === '' || seen.has(slug)) {
      warnings.push(
        slug === ''
          ? `Roster member "${member.name}" has no usable folder name: skipped`
          : `Roster member "${member.name}" maps to the folder "${slug}" of an earlier member: skipped`,
      );
      continue;
    }
    seen.add(slug);
    const entry: RosterMember = { name: member.name, slug, role: member.role, infrastructure: isInfrastructure(member.name, slug, patterns) };
    if (member.status !== undefined) entry.status = member.status;
    roster.push(entry);
    // The charter: the Charter column's folder, else the name's; each looked up in any case.
    const folder = (named === undefined ? undefined : folders.get(folderKey(named))) ?? folders.get(folderKey(squadSlug(member.name)));
    if (named !== undefined && folder !== undefined && folderKey(folder) !== folderKey(named)) {
      warnings.push(`${member.name}: the Charter column names agents/${named}/charter.md, which is not there; read agents/${folder}/charter.md`);
    }
    if (entry.infrastructure) {
      const found = folder === undefined ? undefined : await readSquadFile(base, join(base, 'agents', folder, 'charter.md'), { maxBytes: 0 });
      if (found?.status === 'ok') entry.charterPath = `agents/${folder}/charter.md`;
      else if (found?.status === 'refused') warnings.push(`agents/${folder}/charter.md refused (${found.reason})`);
      else warnings.push(`${member.name} has no charter (agents/${folder ?? slug}/charter.md)`);
      continue;
    }
    const worker = await readWorker(base, member, entry, folder ?? slug, teamMd.name, warnings);
    workers.push(worker);
  }

  const preset: SquadPreset = { name: teamMd.name, mode: teamMd.mode, roster, workers, source: 'repo', sourcePath: dir, warnings };
  if (teamMd.description !== undefined && teamMd.description !== '') preset.description = teamMd.description;
  for (const [file, key] of [
    ['routing.md', 'routingContext'],
    ['decisions.md', 'sharedContext'],
  ] as const) {
    throwIfAborted(signal);
    const text = await readContext(base, file, warnings);
    if (text !== undefined) preset[key] = text;
  }
  return preset;
}

async function readWorker(base: string, member: TeamMdMember, entry: RosterMember, folder: string, team: string, warnings: string[]): Promise<PresetWorker> {
  const charterPath = `agents/${folder}/charter.md`;
  const read = await readSquadFile(base, join(base, 'agents', folder, 'charter.md'));
  let systemPrompt = '';
  if (read.status === 'ok') {
    entry.charterPath = charterPath;
    const body = charterBody(read.text);
    systemPrompt = capAtLine(body, CHARTER_CAP);
    if (read.truncated || systemPrompt.length < body.length) {
      warnings.push(`${charterPath}: cut to ${CHARTER_CAP} characters`);
    }
    if (systemPrompt === '') warnings.push(`${charterPath} is empty: using a generic prompt`);
  } else if (read.status === 'refused') {
    warnings.push(`${charterPath} refused (${read.reason}): using a generic prompt`);
  } else {
    warnings.push(`${member.name} has no charter (${charterPath}): using a generic prompt`);
  }
  if (systemPrompt === '') systemPrompt = genericCharter(member.name, member.role, team);
  const worker: PresetWorker = { name: member.name, systemPrompt };
  if (member.role !== '') worker.role = member.role;
  const history = await readHistory(base, folder, warnings);
  if (history !== undefined) worker.history = history;
  return worker;
}

/** A worker's `history.md`, bounded and newest first (see {@link historyContext}), or undefined. */
async function readHistory(base: string, folder: string, warnings: string[]): Promise<string | undefined> {
  const path = `agents/${folder}/history.md`;
  const read = await readSquadFile(base, join(base, 'agents', folder, 'history.md'));
  if (read.status === 'missing') return undefined;
  if (read.status === 'refused') {
    warnings.push(`${path} refused (${read.reason})`);
    return undefined;
  }
  const { text } = historyContext(read.text, HISTORY_CAP);
  return text === '' ? undefined : text;
}

async function readContext(base: string, file: string, warnings: string[]): Promise<string | undefined> {
  const read = await readSquadFile(base, join(base, file), { tail: true });
  if (read.status === 'missing') return undefined;
  if (read.status === 'refused') {
    warnings.push(`${file} refused (${read.reason})`);
    return undefined;
  }
  const capped = capEntries(read.text.trim(), CONTEXT_CAP);
  if (capped.cut) {
    const omitted = capped.omitted > 0 ? ` (${capped.omitted} earlier entries left out)` : '';
    warnings.push(`${file}: cut to the most recent ${CONTEXT_CAP} characters${omitted}`);
  }
  const text = capped.text.trim();
  return text === '' ? undefined : text;
}

/**
 * Find and read a repository's squad folder (`.squad`, else `.ai-team`).
 * `null` when there is none or it has no `team.md`. A squad folder that is
 * a symbolic link leading out of the repository is refused with a
 * `ConfigurationError` (code `unsafe_path`), as `writeSquad` refuses it; one
 * that leads to a folder inside the repository is read.
 *
 * @example
 * ```ts
 * const team = await discoverSquad(process.cwd());
 * if (team) console.table(team.roster);
 * ```
 */
export async function discoverSquad(root: string, options: ParseSquadOptions = {}): Promise<SquadPreset | null> {
  parseSquadOptions.check(options, '', 'discoverSquad');
  throwIfAborted(options.signal);
  const dir = await findSquadDir(root, options.signal ? { signal: options.signal } : {});
  if (dir === null) return null;
  await refuseLinkOut(root, dir);
  return parseSquad(dir, options);
}

/** Throw `unsafe_path` when `dir` (a folder found in `root`) really lives outside `root`. */
async function refuseLinkOut(root: string, dir: string): Promise<void> {
  const [realRoot, realDir] = await Promise.all([realpath(resolve(root)), realpath(dir)]);
  const inside = relative(realRoot, realDir);
  if (inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside)) return;
  throw new ConfigurationError(`Refused to read ${dir}: it is a symbolic link that leads out of the repository (to ${realDir})`, {
    code: 'unsafe_path',
    details: { path: dir, target: realDir },
  });
}

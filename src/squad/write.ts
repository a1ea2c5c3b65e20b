/**
 * Writing a team as a squad folder: `team.md`, one `agents/<slug>/charter.md`
 * per worker, `routing.md` and `decisions.md`. Every file is written
 * atomically; agent folders troupe wrote earlier for members who left are
 * removed, and no other folder is touched.
 * @module
 */
import { lstat, mkdir, readdir, realpath, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError } from '../core/errors.js';
import { abortSignal, defineOptions } from '../core/options.js';
import { writeFileAtomic } from '../core/fs.js';
import { readableText } from '../text/lines.js';
import { guardWrite, isSymlink, readSquadFile } from './files.js';
import { findSquadDir } from './find.js';
import { TROUPE_CHARTER_MARKER, charterBody, genericCharter } from './parse.js';
import { formatPresetIssues, safeParseTeamPreset, type PresetWorker, type TeamPreset, type RosterMember, type TeamPresetInput } from './preset.js';
import { squadSlug } from './slug.js';

/** Options of {@link writeSquad}. */
export interface WriteSquadOptions {
  /** Cancels the writing between files. */
  signal?: AbortSignal;
}

const writeSquadOptions = defineOptions<WriteSquadOptions>('writeSquad', { signal: abortSignal });

/**
 * The role of a worker from its prompt: the first sentence without a leading
 * "You are a/an/the", capitalised, at most 80 characters.
 *
 * @example
 * ```ts
 * roleFromPrompt('You are a security auditor. Focus on OWASP.'); // 'Security auditor'
 * ```
 */
export function roleFromPrompt(prompt: string): string {
  const line = readableText(prompt, 'the prompt of roleFromPrompt')
    .split('\n')
    .map((l) => l.replace(/^\s*(?:#+|[-*>]|<!--.*?-->)\s*/, '').trim())
    .find((l) => l !== '');
  if (line === undefined) return '';
  const sentence = (/^(.*?[.!?])(?:\s|$)/.exec(line)?.[1] ?? line).replace(/[.!?]$/, '');
  let role = sentence.replace(/^you\s+are\s+(?:an?|the)\s+/i, '').replace(/\*\*|__|`/g, '').trim();
  if (role.length > 80) role = `${role.slice(0, 80).replace(/\s+\S*$/, '')}…`;
  return role.charAt(0).toUpperCase() + role.slice(1);
}

/** The folder name of a worker: its kebab-case slug, without a leading team-name prefix. */
export function workerSlug(name: string, team: string): string {
  const slug = squadSlug(name);
  const prefix = `${squadSlug(team)}-`;
  return prefix.length > 1 && slug.startsWith(prefix) && slug.length > prefix.length ? slug.slice(prefix.length) : slug;
}

const cell = (text: string) => text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function unsafe(path: string, reason: string): ConfigurationError {
  return new ConfigurationError(`Refused to write ${path}: ${reason}`, { code: 'unsafe_path', details: { path } });
}

/**
 * Write `preset` as the squad folder of the repository `root` (its existing
 * `.squad` or `.ai-team`, else a new `.squad`) and return the folder's path.
 * Throws a `ConfigurationError` for an invalid preset, two workers with the
 * same folder name, or a symbolic link where a folder would be written.
 *
 * @example
 * ```ts
 * const dir = await writeSquad('/repo', preset);
 * const again = await parseSquad(dir); // same name, mode, workers and contexts
 * ```
 */
export async function writeSquad(root: string, preset: TeamPresetInput, options: WriteSquadOptions = {}): Promise<string> {
  const { signal } = writeSquadOptions.check(options);
  const parsed = safeParseTeamPreset(preset, preset.source ?? 'user');
  if (!parsed.success) {
    throw new ConfigurationError(`Invalid team preset: ${formatPresetIssues(parsed.issues)}`, { details: { issues: parsed.issues } });
  }
  const team = parsed.data;
  const teamName = oneLine(team.name);
  const planned = planFolders(team.workers, team.roster ?? [], teamName);
  throwIfAborted(signal);

  const dir = (await findSquadDir(root, signal ? { signal } : {})) ?? join(resolve(root), '.squad');
  await guardWrite(dir, () => writeFolder(dir, team, teamName, planned, signal));
  return dir;
}

async function writeFolder(dir: string, team: TeamPreset, teamName: string, planned: Planned, signal: AbortSignal | undefined): Promise<void> {
  if (await isSymlink(dir)) throw unsafe(dir, 'the squad folder is a symbolic link');
  const agentsDir = join(dir, 'agents');
  await mkdir(agentsDir, { recursive: true });
  if (await isSymlink(agentsDir)) throw unsafe(agentsDir, 'it is a symbolic link');
  const base = await realpath(dir);

  for (const { worker, slug } of planned.workers) {
    throwIfAborted(signal);
    const folder = join(agentsDir, slug);
    const before = await lstat(folder).catch(() => undefined);
    if (before?.isSymbolicLink()) throw unsafe(folder, 'it is a symbolic link');
    if (before !== undefined && !before.isDirectory()) throw unsafe(folder, 'it is not a folder');
    let owned = before === undefined;
    if (!owned) {
      const existing = await readSquadFile(base, join(folder, 'charter.md'));
      owned = existing.status === 'ok' && existing.text.startsWith(TROUPE_CHARTER_MARKER);
    }
    await mkdir(folder, { recursive: true });
    const prompt = charterBody(worker.systemPrompt);
    const body = prompt !== '' ? prompt : genericCharter(worker.name, worker.role ?? '', teamName);
    await writeFileAtomic(join(folder, 'charter.md'), `${owned ? `${TROUPE_CHARTER_MARKER}\n\n` : ''}${body}\n`);
  }
  for (const [file, text] of [
    ['routing.md', team.routingContext],
    ['decisions.md', team.sharedContext],
  ] as const) {
    throwIfAborted(signal);
    if (text !== undefined && text.trim() !== '') await writeFileAtomic(join(dir, file), `${text.trim()}\n`);
  }
  for (const infra of planned.infrastructure) {
    const found = await readSquadFile(base, join(agentsDir, infra.slug, 'charter.md'), { maxBytes: 0 });
    infra.charter = found.status === 'ok';
  }
  throwIfAborted(signal);
  await writeFileAtomic(join(dir, 'team.md'), teamMd(teamName, team.mode, team.description, basename(dir), planned));
  await removeStale(base, agentsDir, new Set([...planned.workers, ...planned.infrastructure].map((p) => p.slug)));
}

interface Planned {
  workers: { worker: PresetWorker; slug: string; status: string }[];
  infrastructure: { member: RosterMember; slug: string; charter?: boolean }[];
}

function planFolders(workers: PresetWorker[], roster: RosterMember[], team: string): Planned {
  const taken = new Map<string, string>();
  const planned: Planned = { workers: [], infrastructure: [] };
  for (const worker of workers) {
    const slug = workerSlug(worker.name, team);
    if (slug === '') throw new ConfigurationError(`Worker name ${JSON.stringify(worker.name)} has no letter or digit to name its folder`);
    const other = taken.get(slug);
    if (other !== undefined) {
      throw new ConfigurationError(`Workers ${JSON.stringify(other)} and ${JSON.stringify(worker.name)} would share the folder agents/${slug}`);
    }
    taken.set(slug, worker.name);
    const status = roster.find((m) => m.name === worker.name)?.status ?? 'Active';
    planned.workers.push({ worker, slug, status });
  }
  for (const member of roster) {
    if (!member.infrastructure || taken.has(member.slug)) continue;
    taken.set(member.slug, member.name);
    planned.infrastructure.push({ member, slug: member.slug });
  }
  return planned;
}

function teamMd(name: string, mode: string, description: string | undefined, dirName: string, planned: Planned): string {
  const rows = [
    ...planned.workers.map(({ worker, slug, status }) => [
      worker.name,
      worker.role ?? roleFromPrompt(worker.systemPrompt),
      `${dirName}/agents/${slug}/charter.md`,
      status,
    ]),
    ...planned.infrastructure.map(({ member, slug, charter }) => [
      member.name,
      member.role,
      charter === true ? `${dirName}/agents/${slug}/charter.md` : '—',
      member.status ?? 'Active',
    ]),
  ];
  return [
    `# ${name}`,
    '',
    ...(description !== undefined && description.trim() !== '' ? [`> ${oneLine(description)}`, ''] : []),
    `mode: ${mode}`,
    '',
    '## Members',
    '',
    '| Name | Role | Charter | Status |',
    '|------|------|---------|--------|',
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
    '',
  ].join('\n');
}

/** Remove agent folders troupe wrote (their charter starts with the marker) that are no longer members. */
async function removeStale(base: string, agentsDir: string, keep: Set<string>): Promise<void> {
  for (const entry of await readdir(agentsDir, { withFileTypes: true })) {
    if (keep.has(entry.name) || !entry.isDirectory()) continue;
    const folder = join(agentsDir, entry.name);
    const charter = await readSquadFile(base, join(folder, 'charter.md'), { maxBytes: TROUPE_CHARTER_MARKER.length });
    if (charter.status === 'ok' && charter.text.startsWith(TROUPE_CHARTER_MARKER)) await rm(folder, { recursive: true, force: true });
  }
}

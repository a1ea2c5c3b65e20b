/**
 * A squad team's memory in its folder: after a run, what each worker did is
 * added to its `agents/<folder>/history.md` (in the file's own dated style,
 * the oldest entries moved to `history-archive.md` once the file passes a
 * size), and with a scribe the run's decisions to `decisions.md`. Every
 * file is written atomically (a temporary file, then a rename), never
 * through a symbolic link that leaves the folder.
 * @module
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue, errorMessage } from '../core/errors.js';
import { abortSignal, defineOptions, nonEmptyString, positiveInteger } from '../core/options.js';
import type { TroupeEvent } from '../core/events.js';
import { writeFileAtomic } from '../core/fs.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { guardWrite, isSymlink, readSquadFile } from './files.js';
import { HISTORY_MAX_BYTES, addDecisionEntry, addHistoryEntry, archiveHistory, oneLine, parseHistory, type NewEntry } from './history.js';
import type { TeamPreset } from './preset.js';
import { isSlug, squadSlug } from './slug.js';
import './events.js';

/** How a squad team keeps its history (`fromPreset(preset, { history })`). */
export interface SquadHistoryOptions {
  /** Past this size (UTF-8 bytes), the oldest entries of a `history.md` move to `history-archive.md`. Default: 12 KiB. */
  maxBytes?: number;
}

/** Options of {@link recordHistoryEntry}. */
export interface RecordHistoryOptions {
  /** Past this size (UTF-8 bytes), the oldest entries move to `history-archive.md`. Default: 12 KiB. */
  maxBytes?: number;
  /** The agent's name, for the title of a history the entry starts. Default: the folder's name. */
  name?: string;
  /** Cancels the writes (checked before each rename). */
  signal?: AbortSignal;
}

/** Options of {@link recordDecision}. */
export interface RecordDecisionOptions {
  /** Cancels the write (checked before the rename). */
  signal?: AbortSignal;
}

const recordHistoryOptions = defineOptions<RecordHistoryOptions>('recordHistoryEntry', { maxBytes: positiveInteger, name: nonEmptyString, signal: abortSignal });
const recordDecisionOptions = defineOptions<RecordDecisionOptions>('recordDecision', { signal: abortSignal });

/** What a run did, per agent: its (last) task and answer. */
interface AgentWork {
  task?: string;
  outcome?: string;
}

/** Read a squad file for a write: its text, `''` when missing; refused when it leaves the folder or is a link. */
async function readForWrite(base: string, path: string): Promise<string> {
  if (await isSymlink(path)) throw new ConfigurationError(`Refused to write ${path}: it is a symbolic link`, { code: 'unsafe_path', details: { path } });
  const read = await readSquadFile(base, path);
  if (read.status === 'refused') throw new ConfigurationError(`Refused to write ${path}: ${read.reason}`, { code: 'unsafe_path', details: { path } });
  return read.status === 'ok' ? read.text : '';
}

/**
 * Add `entry` to `agents/<folder>/history.md` of the squad folder `dir`
 * (`folder`: an agent folder name, never a path)
 * (created when missing), in the file's own dated style, and move the
 * oldest entries to `history-archive.md` when the file passes `maxBytes`.
 * The archive is written first, so an entry is never lost between the two
 * writes. Returns the heading written and how many entries moved.
 *
 * @example
 * ```ts
 * await recordHistoryEntry('/repo/.squad', 'ripley', { title: 'Reviewed the cart', at: Date.now(), fields: [{ key: 'Outcome', value: 'Two fixes asked.' }] });
 * ```
 */
export async function recordHistoryEntry(dir: string, folder: string, entry: NewEntry, options: RecordHistoryOptions = {}): Promise<{ path: string; heading: string; archived: number }> {
  recordHistoryOptions.check(options);
  if (!isSlug(folder.normalize('NFC').toLowerCase())) throw new ConfigurationError(`Expected \`folder\` to be an agent folder name, got ${describeValue(folder)}`, { code: 'unsafe_path' });
  const base = await realpath(dir);
  const folderPath = join(base, 'agents', folder);
  return guardWrite(folderPath, async () => {
    throwIfAborted(options.signal);
    if (await isSymlink(folderPath)) throw new ConfigurationError(`Refused to write ${folderPath}: it is a symbolic link`, { code: 'unsafe_path', details: { path: folderPath } });
    const historyPath = join(folderPath, 'history.md');
    const archivePath = join(folderPath, 'history-archive.md');
    const current = await readForWrite(base, historyPath);
    const start = current.trim() === '' ? `# ${options.name ?? folder} — History\n\n## Learnings\n` : current;
    const added = addHistoryEntry(start, entry);
    const heading = added.split('\n').find((l) => l.includes(entry.title) && l.startsWith('#')) ?? entry.title;
    const archived = archiveHistory(added, undefined, options.maxBytes ?? HISTORY_MAX_BYTES);
    if (archived.moved.length > 0) {
      const archive = await readForWrite(base, archivePath);
      const merged = archiveHistory(added, archive, options.maxBytes ?? HISTORY_MAX_BYTES);
      await writeFileAtomic(archivePath, merged.archive, options.signal ? { signal: options.signal } : {});
    }
    await writeFileAtomic(historyPath, archived.history, options.signal ? { signal: options.signal } : {});
    return { path: `agents/${folder}/history.md`, heading, archived: archived.moved.length };
  });
}

/**
 * Add `entry` to the squad folder's `decisions.md` (created when missing),
 * at its end, in its style (see {@link addDecisionEntry}), atomically.
 *
 * @example
 * ```ts
 * await recordDecision('/repo/.squad', { title: 'Use PostgreSQL', at: Date.now(), fields: [{ key: 'By', value: 'Ripley' }, { key: 'What', value: 'PostgreSQL for orders.' }] });
 * ```
 */
export async function recordDecision(dir: string, entry: NewEntry, options: RecordDecisionOptions = {}): Promise<{ path: string; heading: string }> {
  recordDecisionOptions.check(options);
  const base = await realpath(dir);
  const path = join(base, 'decisions.md');
  return guardWrite(base, async () => {
    throwIfAborted(options.signal);
    const current = await readForWrite(base, path);
    const next = addDecisionEntry(current.trim() === '' ? '# Decisions\n' : current, entry);
    await writeFileAtomic(path, next, options.signal ? { signal: options.signal } : {});
    const blocks = parseHistory(next).blocks;
    return { path: 'decisions.md', heading: blocks[blocks.length - 1]?.heading ?? entry.title };
  });
}

/** The agent folder of a worker of a preset read from a squad folder: its charter's folder, else its name's slug. */
function folderOf(team: TeamPreset, worker: string): string {
  const member = team.roster?.find((m) => m.name === worker);
  const charter = member?.charterPath;
  if (charter !== undefined) return charter.split('/')[1]!;
  return member?.slug ?? squadSlug(worker);
}

/** Collect what each agent of the run was asked and answered, from the run's events. */
function watchWork(ctx: RunContext): { work: Map<string, AgentWork>; stop(): void } {
  const work = new Map<string, AgentWork>();
  const of = (agent: string) => {
    let w = work.get(agent);
    if (!w) work.set(agent, (w = {}));
    return w;
  };
  const listener = (e: TroupeEvent) => {
    if (e.runId !== ctx.runId) return;
    if (e.type === 'agent.started') of(e.agent).task = e.input;
    else if (e.type === 'reflect.dispatched') for (const a of e.assignments) of(a.worker).task = a.task;
    else if (e.type === 'agent.completed') of(e.agent).outcome = e.output;
    else if (e.type === 'agent.turn' && e.toolCalls === 0 && e.text !== '') of(e.agent).outcome = e.text;
  };
  ctx.emitter.on('*', listener);
  return { work, stop: () => ctx.emitter.off('*', listener) };
}

/** The decisions an answer states: its lines that start with `DECISION:`. */
export function statedDecisions(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim().replace(/^[-*]\s+/, '');
    if (trimmed.slice(0, 9).toUpperCase() === 'DECISION:' && trimmed.length > 9) out.push(trimmed.slice(9).trim());
  }
  return out;
}

/**
 * A team that, after a run that completed, writes what each worker did to
 * its history (`history`) and, with `scribe`, the run's decisions to
 * `decisions.md`: the lines of the answers that start with `DECISION:`,
 * else the run's answer as one decision. A failure to write is a `warning`
 * (`squad_memory_failed`), never the run's.
 */
export function rememberingTeam<O extends Outcome>(
  inner: Runnable<O>,
  team: TeamPreset,
  options: { history: SquadHistoryOptions | undefined; scribe: boolean },
): Runnable<O> {
  const dir = team.sourcePath;
  if (dir === undefined) {
    throw new ConfigurationError(`Preset "${team.name}" was not read from a squad folder: \`history\` and \`scribe\` write to one (read it with discoverSquad or parseSquad)`);
  }
  return {
    name: inner.name,
    kind: inner.kind,
    async run(input, ctx) {
      const watch = watchWork(ctx);
      let outcome: O;
      try {
        outcome = await inner.run(input, ctx);
      } finally {
        watch.stop();
      }
      if (outcome.status !== 'completed') return outcome;
      try {
        await remember(ctx, team, dir, input, outcome, watch.work, options);
      } catch (error) {
        ctx.emit('warning', { message: `The squad folder ${dir} could not be written: ${errorMessage(error)}`, code: 'squad_memory_failed', data: { dir } });
      }
      return outcome;
    },
  };
}

async function remember(
  ctx: RunContext,
  team: TeamPreset,
  dir: string,
  input: string,
  outcome: Outcome,
  work: ReadonlyMap<string, AgentWork>,
  options: { history: SquadHistoryOptions | undefined; scribe: boolean },
): Promise<void> {
  const at = ctx.clock.now();
  const call = { signal: ctx.signal };
  if (options.history) {
    for (const worker of team.workers) {
      const did = work.get(worker.name);
      if (did?.outcome === undefined) continue;
      const task = did.task ?? input;
      const entry: NewEntry = {
        title: oneLine(task.split('\n').find((l) => l.trim() !== '') ?? task, 70),
        at,
        fields: [
          { key: 'Task', value: oneLine(task, 400) },
          { key: 'Outcome', value: oneLine(did.outcome, 600) },
          { key: 'Run', value: ctx.runId },
        ],
      };
      const written = await recordHistoryEntry(dir, folderOf(team, worker.name), entry, { ...call, name: worker.name, ...(options.history.maxBytes ? { maxBytes: options.history.maxBytes } : {}) });
      ctx.emit('squad.history', { worker: worker.name, path: written.path, heading: written.heading, archived: written.archived });
    }
  }
  if (options.scribe) {
    const stated = [...work.entries()].flatMap(([agent, w]) => statedDecisions(w.outcome ?? '').map((text) => ({ agent, text })));
    const decisions = stated.length > 0 ? stated : [{ agent: outcome.agent, text: outcome.output }];
    for (const d of decisions) {
      const entry: NewEntry = {
        title: oneLine(stated.length > 0 ? d.text : input, 70),
        at,
        fields: [
          { key: 'By', value: d.agent },
          { key: 'What', value: oneLine(d.text, 800) },
          { key: 'Why', value: oneLine(`Run ${ctx.runId}: ${input}`, 400) },
        ],
      };
      const written = await recordDecision(dir, entry, call);
      ctx.emit('squad.decision', written);
    }
  }
}

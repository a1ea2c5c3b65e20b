/**
 * Load every agent file under a folder: each read by its format's module,
 * then the references between them (sub-agents, hand-offs, advisors,
 * router destinations, team members) resolved to names.
 * @module
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, ParseError, errorMessage } from '../core/errors.js';
import { abortSignal, defineOptions, oneOf } from '../core/options.js';
import { AGENT_FORMATS, type AgentDefinition, type AgentFormat, type AgentIssue } from './definition.js';
import { detectFormatByPlace, nameFromFileName } from './formats/index.js';
import { MAX_AGENT_FILE_BYTES, agentFileError, safeParseAgentFile } from './parse.js';
import { resolveReferences } from './references.js';
import { defined } from '../core/defined.js';

/** The extensions of agent files (`.agent.md` and `.chatmode.md` end in `.md`). */
export const AGENT_FILE_EXTENSIONS = ['.md', '.ai'] as const;

/** Options of {@link loadAgents}. */
export interface LoadAgentsOptions {
  /** Cancels the walk. */
  signal?: AbortSignal;
  /** Read every file as this format instead of recognising each file's format. */
  format?: AgentFormat;
}

const loadAgentsOptions = defineOptions<LoadAgentsOptions>('loadAgentFolder', { signal: abortSignal, format: oneOf(AGENT_FORMATS) });

/** What {@link loadAgentFolder} returns. */
export interface LoadedAgents {
  /** The definitions, in the order of their files. */
  agents: AgentDefinition[];
  /** What the walk skipped and why (a link out of the repository, a file that is not an agent). */
  warnings: AgentIssue[];
  /** The folder symbolic links may lead into: the repository holding the folder, else the folder itself. */
  boundary: string;
}

/**
 * Read every agent file under `dir` (recursively, in a deterministic
 * order; of the hidden folders only the places coding tools keep agents
 * in: `.claude/agents`, `.github/agents`, `.github/chatmodes`,
 * `.opencode/agents`, `.opencode/agent`), each in its own format, and
 * resolve the references between them.
 * The name of an agent defaults to its file's name. Throws an error naming
 * every file that failed.
 *
 * @example
 * ```ts
 * const defs = await loadAgents('./agents');
 * const { errors } = validateAgents(defs);
 * ```
 */
export async function loadAgents(dir: string, options: LoadAgentsOptions = {}): Promise<AgentDefinition[]> {
  loadAgentsOptions.check(options, '', 'loadAgents');
  return (await loadAgentFolder(dir, options)).agents;
}

/**
 * {@link loadAgents}, with what the walk skipped. Symbolic links (the
 * folder itself, its files and its subfolders) are followed only when they
 * lead to a place inside the repository that holds the folder (the nearest
 * folder above it with a `.git`), else inside the folder; others are
 * skipped with a warning. In a place a coding tool reads (`.claude/agents`,
 * `.github/agents`, `.opencode/agents`), a Markdown file without a front
 * matter (a README) is not an agent and is skipped.
 *
 * @example
 * ```ts
 * const { agents, warnings } = await loadAgentFolder('.claude/agents');
 * ```
 */
export async function loadAgentFolder(dir: string, options: LoadAgentsOptions = {}): Promise<LoadedAgents> {
  const { signal } = loadAgentsOptions.check(options);
  const root = resolve(dir);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    if (!(await stat(realRoot)).isDirectory()) throw new Error('not a folder');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file or folder' : error instanceof Error && error.message === 'not a folder' ? 'it is a file, not a folder' : errorMessage(error);
    throw new ConfigurationError(`Cannot read the agent folder ${dir}: ${why}`, { code: 'invalid_argument', cause: error, details: { dir } });
  }
  const boundary = (await repositoryOf(root)) ?? realRoot;
  const warnings: AgentIssue[] = [];
  if (!isInside(boundary, realRoot)) {
    throw new ConfigurationError(`Refused to read the agent folder ${dir}: it is a symbolic link that leads out of its repository (to ${realRoot})`, {
      code: 'unsafe_path',
      details: { dir, target: realRoot },
    });
  }
  const files = await listAgentFiles(root, realRoot, { boundary, signal, warnings, visited: new Set([realRoot]) });
  const defs: AgentDefinition[] = [];
  const failures: AgentIssue[] = [];
  let unreadable = false;
  for (const { path, real, linked } of files) {
    throwIfAborted(signal);
    const file = relative(root, path) || path;
    const size = (await stat(real)).size;
    if (size > MAX_AGENT_FILE_BYTES) {
      unreadable = true;
      failures.push({ code: 'too_large', message: `${file}: larger than 1 MB (${size} bytes); refusing to read it`, file });
      continue;
    }
    const text = await readFile(real, 'utf8');
    // The format of a file comes from where it really lives (a linked `.opencode/agents` may hold Claude Code
    // files), else from where its link is (a file linked into `.claude/agents` is read as Claude Code reads it).
    const firstLine = firstLineOf(text);
    const placed = options.format ?? (detectFormatByPlace({ path: real, firstLine }) ?? detectFormatByPlace({ path: linked, firstLine }))?.format;
    if (placed !== undefined && placed !== 'troupe' && placed !== 'ai-agent' && !startsWithFrontMatter(text)) {
      warnings.push({ code: 'not_an_agent', message: `${file} has no front matter: not an agent file, skipped`, file });
      continue;
    }
    const result = safeParseAgentFile(text, {
      name: nameFromFileName(path),
      file,
      path: real,
      ...defined({ format: placed }),
    });
    if (result.success) defs.push(result.data);
    else {
      unreadable ||= agentFileError(result.issues) instanceof ParseError;
      failures.push(...result.issues.map((i) => ({ ...i, message: `${file}: ${i.message}` })));
    }
  }
  if (failures.length > 0) {
    const message = `Could not load the agents in ${dir}:\n${failures.map((f) => `  ${f.message}`).join('\n')}`;
    const details = { issues: failures, files: [...new Set(failures.map((f) => f.file))] };
    throw unreadable ? new ParseError(message, { details }) : new ConfigurationError(message, { code: 'invalid_agent', details });
  }
  return { agents: resolveReferences(defs), warnings, boundary };
}

/** The first line of a text when it is a `#!` line, else `''`. */
function firstLineOf(text: string): string {
  if (!text.startsWith('#!')) return '';
  const nl = text.indexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
}

/** A text whose first line (after a BOM and a `#!` line) opens a front matter. */
function startsWithFrontMatter(text: string): boolean {
  let source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (source.startsWith('#!')) source = source.slice(source.indexOf('\n') + 1);
  return source.startsWith('---') && source[3] !== '-';
}

/** The real path of the repository holding `path`: the nearest folder at or above it with a `.git` entry. */
async function repositoryOf(path: string): Promise<string | undefined> {
  for (let at = path; ; at = dirname(at)) {
    if ((await lstat(join(at, '.git')).catch(() => undefined)) !== undefined) return realpath(at);
    if (dirname(at) === at) return undefined;
  }
}

function isInside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

interface Walk {
  boundary: string;
  signal: AbortSignal | undefined;
  warnings: AgentIssue[];
  /** Real paths of the folders entered, so that a link back up is not walked twice. */
  visited: Set<string>;
}

/** An agent file: as reached from the folder, its real path, and where it (or its link) sits in a real folder. */
interface AgentFileEntry {
  path: string;
  real: string;
  linked: string;
}

/**
 * The hidden folders the walk enters, and the one folder inside each where
 * a coding tool keeps its agents; every other hidden folder (`.git`, ...)
 * is left out.
 */
const TOOL_AGENT_FOLDERS: Readonly<Record<string, readonly string[]>> = {
  '.claude': ['agents'],
  '.github': ['agents', 'chatmodes'],
  '.opencode': ['agents', 'agent'],
};

/** The agent files under `dir`, sorted by name at every level. */
async function listAgentFiles(dir: string, realDir: string, walk: Walk): Promise<AgentFileEntry[]> {
  const entries = await readdir(realDir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: AgentFileEntry[] = [];
  for (const entry of entries) {
    throwIfAborted(walk.signal);
    const path = join(dir, entry.name);
    const linked = join(realDir, entry.name);
    let real = linked;
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      const target = await realpath(real).catch(() => undefined);
      const info = target === undefined ? undefined : await stat(target).catch(() => undefined);
      if (target === undefined || info === undefined) continue;
      if (!isInside(walk.boundary, target)) {
        walk.warnings.push({ code: 'link_outside', message: `${path} is a symbolic link that leads out of the repository (to ${target}): skipped`, file: path });
        continue;
      }
      real = target;
      isDir = info.isDirectory();
      isFile = info.isFile();
    }
    if (isDir && entry.name.startsWith('.')) {
      // A hidden folder is read only where a coding tool keeps its agents (`.claude/agents`, ...).
      for (const sub of TOOL_AGENT_FOLDERS[entry.name] ?? []) {
        const inner = await realpath(join(real, sub)).catch(() => undefined);
        if (inner === undefined || walk.visited.has(inner) || !isInside(walk.boundary, inner)) continue;
        if (!(await stat(inner).catch(() => undefined))?.isDirectory()) continue;
        walk.visited.add(inner);
        out.push(...(await listAgentFiles(join(path, sub), inner, walk)));
      }
    } else if (isDir && entry.name !== 'node_modules') {
      if (walk.visited.has(real)) continue;
      walk.visited.add(real);
      out.push(...(await listAgentFiles(path, real, walk)));
    } else if (isFile && AGENT_FILE_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) out.push({ path, real, linked });
  }
  return out;
}

/**
 * Load every agent file under a folder.
 * @module
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, ParseError, errorMessage } from '../core/errors.js';
import type { AgentDefinition, AgentIssue } from './definition.js';
import { MAX_AGENT_FILE_BYTES, agentFileError, safeParseAgentFile } from './parse.js';

/** The extensions of agent files. */
export const AGENT_FILE_EXTENSIONS = ['.md', '.ai'] as const;

/** Options of {@link loadAgents}. */
export interface LoadAgentsOptions {
  /** Cancels the walk. */
  signal?: AbortSignal;
}

/**
 * Read every `.md` and `.ai` file under `dir` (recursively, in a
 * deterministic order). The name of an agent defaults to its file name.
 * Throws an error naming every file that failed.
 *
 * @example
 * ```ts
 * const defs = await loadAgents('./agents');
 * const { errors } = validateAgents(defs);
 * ```
 */
export async function loadAgents(dir: string, options: LoadAgentsOptions = {}): Promise<AgentDefinition[]> {
  const files = await listAgentFiles(dir, options.signal);
  const defs: AgentDefinition[] = [];
  const failures: AgentIssue[] = [];
  let unreadable = false;
  for (const path of files) {
    throwIfAborted(options.signal);
    const file = relative(dir, path) || basename(path);
    const size = (await stat(path)).size;
    if (size > MAX_AGENT_FILE_BYTES) {
      unreadable = true;
      failures.push({ code: 'too_large', message: `${file}: larger than 1 MB (${size} bytes); refusing to read it`, file });
      continue;
    }
    const result = safeParseAgentFile(await readFile(path, 'utf8'), { name: basename(path, extname(path)), file });
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
  return defs;
}

async function listAgentFiles(dir: string, signal: AbortSignal | undefined): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw new ConfigurationError(`Cannot read the agent folder ${dir}: ${errorMessage(error)}`, { cause: error, details: { dir } });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: string[] = [];
  for (const entry of entries) {
    throwIfAborted(signal);
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') out.push(...(await listAgentFiles(path, signal)));
    else if (entry.isFile() && (AGENT_FILE_EXTENSIONS as readonly string[]).includes(extname(entry.name))) out.push(path);
  }
  return out;
}

/**
 * Agent files: markdown (`.md`, or `.ai` with a `#!` first line) whose YAML
 * frontmatter configures the agent and whose body is its system prompt.
 * Agent files are data: only YAML (or JSON) front matter is read, never code.
 * @module
 */
import { ConfigurationError, ParseError, type TroupeError } from '../core/errors.js';
import { expectText, normalizeText } from '../text/lines.js';
import { definitionFrom, type AgentDefinition, type AgentIssue, type AgentParseResult } from './definition.js';
import { readFrontMatterData, splitFrontMatter } from './front-matter.js';

export { MAX_YAML_ALIASES } from './front-matter.js';

/** The largest agent file accepted, in bytes (1 MB). */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

/** Options of {@link parseAgentFile}. */
export interface ParseAgentFileOptions {
  /** The name when the frontmatter has none (a loader passes the file name). */
  name?: string;
  /** The file, for messages. */
  file?: string;
}

/** Issue codes that mean the text could not be read at all (a `ParseError`), not that it broke the schema. */
const UNREADABLE = new Set(['too_large', 'code_frontmatter', 'invalid_yaml', 'unclosed_front_matter', 'front_matter_too_large']);

/**
 * Parse an agent file without throwing: `{ success: true, data }` or
 * `{ success: false, issues }`, each issue with a `code`. LF, CRLF, CR and a
 * BOM read the same. A non-string is a programming error and throws a
 * `ConfigurationError` (`invalid_argument`), as in every reader.
 */
export function safeParseAgentFile(text: string, options: ParseAgentFileOptions = {}): AgentParseResult<AgentDefinition> {
  const fail = (code: string, message: string): AgentParseResult<AgentDefinition> => ({
    success: false,
    issues: [{ code, message, ...(options.file === undefined ? {} : { file: options.file }) }],
  });
  expectText(text, 'the agent file');
  if (Buffer.byteLength(text, 'utf8') > MAX_AGENT_FILE_BYTES) {
    return fail('too_large', `Agent file is larger than ${MAX_AGENT_FILE_BYTES} bytes (1 MB); refusing to read it`);
  }
  let source = normalizeText(text);
  if (source.startsWith('#!')) {
    // `.ai` files start with a shebang line before the front matter.
    const eol = source.indexOf('\n');
    source = eol === -1 ? '' : source.slice(eol + 1);
  }
  const split = splitFrontMatter(source);
  if (!split.success) return fail(split.issues[0]!.code, split.issues[0]!.message);
  const read = readFrontMatterData(split.data);
  if (!read.success) return fail(read.issues[0]!.code, read.issues[0]!.message);
  const data = read.data;
  const body = split.data.body;
  const result = definitionFrom(data, body, options.name);
  if (!result.success) {
    return { success: false, issues: result.issues.map((i) => withFile(i, options.file)) };
  }
  if (options.file !== undefined) {
    result.data.file = options.file;
    result.data.warnings = (result.data.warnings ?? []).map((w) => withFile(w, options.file));
  }
  return result;
}

/**
 * Parse an agent file. Throws a `ParseError` (`parse_error`) for text that
 * cannot be read (too large, code front matter, bad YAML) and a
 * `ConfigurationError` (`invalid_agent`) for frontmatter that breaks the schema.
 *
 * @example
 * ```ts
 * const def = parseAgentFile('---\nhandoff: reviewer\n---\nYou draft replies.', { name: 'drafter' });
 * ```
 */
export function parseAgentFile(text: string, options: ParseAgentFileOptions = {}): AgentDefinition {
  const result = safeParseAgentFile(text, options);
  if (result.success) return result.data;
  throw agentFileError(result.issues, options.file);
}

/** The error thrown for the issues of one file. */
export function agentFileError(issues: readonly AgentIssue[], file?: string): TroupeError {
  const where = file === undefined ? 'Agent file' : `Agent file ${file}`;
  const message = `${where}: ${issues.map((i) => i.message).join('; ')}`;
  const details = { issues, ...(file === undefined ? {} : { file }) };
  const unreadable = issues.some((i) => UNREADABLE.has(i.code));
  return unreadable ? new ParseError(message, { details }) : new ConfigurationError(message, { code: 'invalid_agent', details });
}

function withFile(issue: AgentIssue, file: string | undefined): AgentIssue {
  return file === undefined ? issue : { ...issue, file };
}

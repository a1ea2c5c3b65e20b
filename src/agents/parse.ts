/**
 * Agent files: markdown (`.md`, or `.ai` with a `#!` first line) whose YAML
 * frontmatter configures the agent and whose body is its system prompt.
 * Agent files are data: only YAML (or JSON) front matter is read, never code.
 * @module
 */
import matter from 'gray-matter';
import { parse as parseYaml } from 'yaml';
import { ConfigurationError, ParseError, errorMessage, type TroupeError } from '../core/errors.js';
import { definitionFrom, type AgentDefinition, type AgentIssue, type AgentParseResult } from './definition.js';

/** The largest agent file accepted, in bytes (1 MB). */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

/** The most YAML aliases one file may expand (bounds "billion laughs" files). */
export const MAX_YAML_ALIASES = 100;

/** Options of {@link parseAgentFile}. */
export interface ParseAgentFileOptions {
  /** The name when the frontmatter has none (a loader passes the file name). */
  name?: string;
  /** The file, for messages. */
  file?: string;
}

const FENCE = /^---([^\r\n]*)\r?\n/;
const DATA_LANGUAGES = new Set(['', 'yaml', 'yml', 'json']);

const refuse = (language: string) => () => {
  throw new ParseError(`Front matter in "${language}" is not allowed: agent files are data and are never evaluated`);
};

/** gray-matter with every code engine replaced by a refusal, and YAML read as data with bounded aliases. */
const MATTER_OPTIONS = {
  engines: {
    yaml: (text: string): object => (parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, prettyErrors: true, logLevel: 'error' }) ?? {}) as object,
    javascript: refuse('javascript'),
    js: refuse('js'),
    coffee: refuse('coffee'),
    coffeescript: refuse('coffeescript'),
    cson: refuse('cson'),
  },
};

/**
 * Parse an agent file without throwing: `{ success: true, data }` or
 * `{ success: false, issues }`, each issue with a `code`.
 */
export function safeParseAgentFile(text: string, options: ParseAgentFileOptions = {}): AgentParseResult<AgentDefinition> {
  const fail = (code: string, message: string): AgentParseResult<AgentDefinition> => ({
    success: false,
    issues: [{ code, message, ...(options.file === undefined ? {} : { file: options.file }) }],
  });
  if (typeof text !== 'string') return fail('invalid_input', `Expected the agent file to be a string, got ${typeof text}`);
  if (Buffer.byteLength(text, 'utf8') > MAX_AGENT_FILE_BYTES) {
    return fail('too_large', `Agent file is larger than ${MAX_AGENT_FILE_BYTES} bytes (1 MB); refusing to read it`);
  }
  let source = text.replace(/^\uFEFF/, '');
  if (source.startsWith('#!')) {
    const eol = source.indexOf('\n');
    source = eol === -1 ? '' : source.slice(eol + 1);
  }
  const fence = FENCE.exec(source);
  if (fence) {
    const language = fence[1]!.trim().toLowerCase();
    if (!DATA_LANGUAGES.has(language)) {
      return fail('code_frontmatter', `Front matter in "${language}" is not allowed: agent files are data and are never evaluated`);
    }
  }
  let data: Record<string, unknown>;
  let body: string;
  try {
    const parsed = matter(source, MATTER_OPTIONS as unknown as Parameters<typeof matter>[1]);
    data = parsed.data as Record<string, unknown>;
    body = parsed.content;
  } catch (error) {
    return fail('invalid_yaml', `Front matter is not valid YAML: ${errorMessage(error)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return fail('invalid_yaml', 'Front matter must be a YAML mapping of keys to values');
  }
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
  const unreadable = issues.some((i) => ['too_large', 'code_frontmatter', 'invalid_yaml', 'invalid_input'].includes(i.code));
  return unreadable ? new ParseError(message, { details }) : new ConfigurationError(message, { code: 'invalid_agent', details });
}

function withFile(issue: AgentIssue, file: string | undefined): AgentIssue {
  return file === undefined ? issue : { ...issue, file };
}

/**
 * Agent files: markdown (`.md`, `.agent.md`, or `.ai` with a `#!` first
 * line) whose front matter configures the agent and whose body is its
 * system prompt, in any of the formats of `formats/`. Agent files are data:
 * only YAML (or JSON) front matter is read, never code.
 * @module
 */
import { ConfigurationError, ParseError, type TroupeError } from '../core/errors.js';
import { defineOptions, oneOf, string } from '../core/options.js';
import { expectText, normalizeText } from '../text/lines.js';
import { AGENT_FORMATS, type AgentDefinition, type AgentFormat, type AgentIssue, type AgentParseResult } from './definition.js';
import { agentFormats, detectFormatByFields, detectFormatByPlace, nameFromFileName } from './formats/index.js';
import { readFrontMatterData, readFrontMatterLeniently, reopenDoubledFence, splitFrontMatter, startsWithYamlKey, type FrontMatter, type LenientFrontMatter } from './front-matter.js';
import { defined } from '../core/defined.js';

export { MAX_YAML_ALIASES } from './front-matter.js';

/** The largest agent file accepted, in bytes (1 MB). */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

/** Options of {@link parseAgentFile}. */
export interface ParseAgentFileOptions {
  /** The name when the front matter has none. Default: the name of `file` without its extensions. */
  name?: string;
  /** The file, for messages (a loader passes its path inside the folder). */
  file?: string;
  /** The file's format; default: recognised from `path`, the first line and the fields (see `FORMAT_DETECTION`). */
  format?: AgentFormat;
  /** The path the format is recognised from (its extension and folders, such as `.claude/agents/`). Default: `file`. */
  path?: string;
}

/** Issue codes that mean the text could not be read at all (a `ParseError`), not that it broke the schema. */
const parseAgentFileOptions = defineOptions<ParseAgentFileOptions>('safeParseAgentFile', { name: string, file: string, format: oneOf(AGENT_FORMATS), path: string });

const UNREADABLE = new Set(['too_large', 'code_frontmatter', 'invalid_yaml', 'unclosed_front_matter', 'front_matter_too_large']);

/**
 * Parse an agent file without throwing: `{ success: true, data }` or
 * `{ success: false, issues }`, each issue with a `code`. The format is
 * `options.format`, else recognised from the path, the first line and the
 * fields; its module maps the front matter onto the definition. LF, CRLF,
 * CR and a BOM read the same. A non-string is a programming error and
 * throws a `ConfigurationError` (`invalid_argument`), as in every reader.
 *
 * @example
 * ```ts
 * const result = safeParseAgentFile(text, { file: '.claude/agents/reviewer.md', name: 'reviewer' });
 * if (result.success) result.data.tools; // ['Read', 'Grep', 'Glob']
 * ```
 */
export function safeParseAgentFile(text: string, options: ParseAgentFileOptions = {}): AgentParseResult<AgentDefinition> {
  const fail = (code: string, message: string): AgentParseResult<AgentDefinition> => ({
    success: false,
    issues: [{ code, message, ...defined({ file: options.file }) }],
  });
  expectText(text, 'the agent file');
  parseAgentFileOptions.check(options);
  if (Buffer.byteLength(text, 'utf8') > MAX_AGENT_FILE_BYTES) {
    return fail('too_large', `Agent file is larger than ${MAX_AGENT_FILE_BYTES} bytes (1 MB); refusing to read it`);
  }
  let source = normalizeText(text);
  let firstLine: string | undefined;
  if (source.startsWith('#!')) {
    // `.ai` files start with a shebang line before the front matter.
    const eol = source.indexOf('\n');
    firstLine = eol === -1 ? source : source.slice(0, eol);
    source = eol === -1 ? '' : source.slice(eol + 1);
  }
  const path = options.path ?? options.file;
  const placed = options.format ?? detectFormatByPlace({ ...defined({ path, firstLine }) })?.format;
  const split = splitFrontMatter(source);
  if (!split.success) return fail(split.issues[0]!.code, split.issues[0]!.message);
  const notes: AgentIssue[] = [];
  let frontMatter = split.data;
  // Lines before the front matter's first line: a shebang, the opening `---`.
  let lineOffset = (firstLine === undefined ? 0 : 1) + 1;
  const reopened = placed === 'ai-agent' ? reopenDoubledFence(frontMatter) : undefined;
  if (reopened !== undefined) {
    frontMatter = reopened;
    lineOffset++;
    notes.push({ code: 'doubled_fence', message: 'The front matter opens with `---` twice; read as one block, as ai-agent reads it', path: [] });
  }
  const lenientRead = readFrontMatterLeniently(frontMatter);
  if (!lenientRead.success) return fail(lenientRead.issues[0]!.code, lenientRead.issues[0]!.message);
  const read: LenientFrontMatter = lenientRead.data;
  // Only a format whose tool reads such lines may (its own detection by fields included).
  if (read.lenient.length > 0 && placed !== undefined && !agentFormats[placed].lenient) return strictFailure(frontMatter, fail);
  const format = placed ?? detectFormatByFields(read.data)?.format ?? 'troupe';
  const module = agentFormats[format];
  if (read.lenient.length > 0 && !module.lenient) return strictFailure(frontMatter, fail);
  for (const { line, key } of read.lenient) {
    notes.push({
      code: 'lenient_yaml',
      message: `Line ${line + lineOffset}: the value of \`${key}\` holds an unquoted ": "; read as one string, as ${module.label} reads it (quote it to silence this)`,
      path: [key],
    });
  }
  if (reopened === undefined && frontMatter.present && Object.keys(read.data).length === 0 && startsWithYamlKey(frontMatter.body)) {
    notes.push({
      code: 'yaml_in_body',
      message: 'The front matter is empty but the text after it starts like YAML (`key: value`): is a `---` line misplaced?',
      path: [],
    });
  }
  const name = options.name ?? (options.file === undefined ? undefined : nameFromFileName(options.file));
  const result = module.read({
    data: read.data,
    body: frontMatter.body,
    ...defined({ name, file: options.file }),
  });
  if (!result.success) return result;
  const def = result.data;
  def.warnings = [
    ...notes.map((n) => ({ ...n, agent: def.name, ...defined({ file: options.file }) })),
    ...(def.warnings ?? []),
  ];
  return result;
}

/** The strict YAML error of a front matter that only a lenient reading accepts. */
function strictFailure(frontMatter: FrontMatter, fail: (code: string, message: string) => AgentParseResult<AgentDefinition>): AgentParseResult<AgentDefinition> {
  const strict = readFrontMatterData(frontMatter);
  const issue = strict.success ? { code: 'invalid_yaml', message: 'Front matter is not valid YAML' } : strict.issues[0]!;
  return fail(issue.code, issue.message);
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
  parseAgentFileOptions.check(options, '', 'parseAgentFile');
  const result = safeParseAgentFile(text, options);
  if (result.success) return result.data;
  throw agentFileError(result.issues, options.file);
}

/** The error thrown for the issues of one file. */
export function agentFileError(issues: readonly AgentIssue[], file?: string): TroupeError {
  const where = file === undefined ? 'Agent file' : `Agent file ${file}`;
  const message = `${where}: ${issues.map((i) => i.message).join('; ')}`;
  const details = { issues, ...defined({ file }) };
  const unreadable = issues.some((i) => UNREADABLE.has(i.code));
  return unreadable ? new ParseError(message, { details }) : new ConfigurationError(message, { code: 'invalid_agent', details });
}

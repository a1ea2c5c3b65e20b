/**
 * Front matter: the one splitter under every agent-file reader. It finds
 * the block between a first line `---` (optionally `---yaml`, `---json`...)
 * and the next line `---`, in one pass and within a size bound, and reads
 * it as data: YAML through the `yaml` package with aliases bounded, or
 * JSON. A code front matter (`---js`) is refused and never evaluated.
 * Format readers (one module per format in `formats/`) map the data they
 * get onto an agent definition. Two readings go past strict YAML, each only
 * where the tool that owns a format does the same, and each reported: a
 * single-line plain value holding an unquoted `: ` (Claude Code, OpenCode),
 * and a front matter opened by `---` twice (netdata ai-agent).
 * @module
 */
import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../core/errors.js';
import { defineOptions, positiveInteger } from '../core/options.js';
import type { ParseIssue, SafeParseResult } from '../core/parse-result.js';
import { readableText } from '../text/lines.js';

/** The longest front matter read, in characters (64 K); real agent files have a few hundred. */
export const MAX_FRONT_MATTER_CHARS = 64 * 1024;

/** The most YAML aliases one file may expand (bounds "billion laughs" files). */
export const MAX_YAML_ALIASES = 100;

/** A text split into its front matter and its body. */
export interface FrontMatter {
  /** Whether the text opens with a front matter block. */
  present: boolean;
  /** The language after the opening `---`, trimmed and lower-cased (`''` when none). */
  language: string;
  /** The text between the fences (`''` when there is no block). */
  matter: string;
  /** The text after the closing fence (the whole text when there is no block). */
  body: string;
}

/** Options of {@link splitFrontMatter}. */
export interface SplitFrontMatterOptions {
  /** The longest front matter accepted, in characters. Default: {@link MAX_FRONT_MATTER_CHARS}. */
  maxChars?: number;
}

const splitFrontMatterOptions = defineOptions<SplitFrontMatterOptions>('splitFrontMatter', { maxChars: positiveInteger });

/**
 * Split `text` (a BOM dropped, CRLF and CR read as LF) into front matter
 * and body. A block opens with a first line `---` followed by nothing or a
 * language (`----` is a rule, not a fence) and closes at the next line that
 * is `---` (trailing white space allowed). Fails with `unclosed_front_matter`
 * when no closing line comes, and `front_matter_too_large` when none comes
 * within `maxChars`. Linear; reads no further than the closing line.
 *
 * @example
 * ```ts
 * splitFrontMatter('---\nmodel: gpt-4.1\n---\nYou review code.');
 * // { success: true, data: { present: true, language: '', matter: 'model: gpt-4.1', body: 'You review code.' } }
 * ```
 */
export function splitFrontMatter(text: string, options: SplitFrontMatterOptions = {}): SafeParseResult<FrontMatter> {
  const source = readableText(text, 'the text of splitFrontMatter');
  const max = splitFrontMatterOptions.check(options).maxChars ?? MAX_FRONT_MATTER_CHARS;
  if (!source.startsWith('---') || source[3] === '-') return { success: true, data: { present: false, language: '', matter: '', body: source } };
  const firstEnd = source.indexOf('\n');
  if (firstEnd < 0) return fail('unclosed_front_matter', 'The front matter opened by the first line `---` is never closed');
  const language = source.slice(3, firstEnd).trim().toLowerCase();
  const start = firstEnd + 1;
  let lineStart = start;
  for (;;) {
    if (lineStart - start > max) {
      return fail('front_matter_too_large', `The front matter is longer than ${max} characters (or its closing \`---\` is missing)`);
    }
    const nl = source.indexOf('\n', lineStart);
    const lineEnd = nl < 0 ? source.length : nl;
    if (isClosing(source, lineStart, lineEnd)) {
      const matter = source.slice(start, Math.max(start, lineStart - 1));
      return { success: true, data: { present: true, language, matter, body: nl < 0 ? '' : source.slice(nl + 1) } };
    }
    if (nl < 0) return fail('unclosed_front_matter', 'The front matter opened by the first line `---` is never closed');
    lineStart = nl + 1;
  }
}

/** True when the line from `start` to `end` is `---` with only white space after it. */
function isClosing(text: string, start: number, end: number): boolean {
  if (!text.startsWith('---', start)) return false;
  for (let i = start + 3; i < end; i++) if (text[i] !== ' ' && text[i] !== '\t') return false;
  return true;
}

const fail = (code: string, message: string): { success: false; issues: ParseIssue[] } => ({ success: false, issues: [{ code, message }] });

const DATA_LANGUAGES = new Set(['', 'yaml', 'yml', 'json']);

/**
 * Read a front matter block as data: YAML (aliases bounded by
 * {@link MAX_YAML_ALIASES}) or JSON, which must give a mapping. Any other
 * language (`js`, `javascript`, `coffee`...) fails with `code_frontmatter`
 * and is never evaluated; bad YAML or JSON fails with `invalid_yaml`.
 */
export function readFrontMatterData(frontMatter: FrontMatter): SafeParseResult<Record<string, unknown>> {
  if (!frontMatter.present) return { success: true, data: {} };
  const { language, matter } = frontMatter;
  if (!DATA_LANGUAGES.has(language)) {
    return fail('code_frontmatter', `Front matter in "${language}" is not allowed: agent files are data and are never evaluated`);
  }
  if (matter.trim() === '') return { success: true, data: {} };
  let data: unknown;
  try {
    data = language === 'json' ? JSON.parse(matter) : parseYaml(matter, { maxAliasCount: MAX_YAML_ALIASES, prettyErrors: true, logLevel: 'error' });
  } catch (error) {
    return fail('invalid_yaml', `Front matter is not valid ${language === 'json' ? 'JSON' : 'YAML'}: ${errorMessage(error)}`);
  }
  if (data === null || data === undefined) return { success: true, data: {} };
  if (typeof data !== 'object' || Array.isArray(data)) return fail('invalid_yaml', 'Front matter must be a YAML mapping of keys to values');
  return { success: true, data: data as Record<string, unknown> };
}

/** One line that {@link readFrontMatterLeniently} read as a single string. */
export interface LenientLine {
  /** The line's number within the front matter (1 is the line after the opening `---`). */
  line: number;
  /** The key whose value it is. */
  key: string;
}

/** What {@link readFrontMatterLeniently} reads: the data, and the lines it read past strict YAML. */
export interface LenientFrontMatter {
  data: Record<string, unknown>;
  /** The lines whose value held an unquoted `: `; empty when strict YAML read the block. */
  lenient: LenientLine[];
}

/**
 * Read a front matter as {@link readFrontMatterData} does, and when strict
 * YAML refuses it, once more the way Claude Code and OpenCode read their
 * agent files: a top-level line `key: value` whose value is a single-line
 * plain scalar holding an unquoted `: ` (`description: Use it: always`) is
 * read as one string (also when it starts with `*` or `&`, as
 * `**Role**: ...` does). Nothing else is relaxed: a value that starts with
 * a quote, a bracket, a brace, a block indicator or `#`, a value continued
 * on an indented line, and every other error stay errors (the strict error
 * is reported). One pass over the lines and one
 * more parse: linear, and data only.
 *
 * @example
 * ```ts
 * const split = splitFrontMatter('---\ndescription: Reviewer: finds bugs\n---\nBody');
 * if (split.success) readFrontMatterLeniently(split.data);
 * // { success: true, data: { data: { description: 'Reviewer: finds bugs' }, lenient: [{ line: 1, key: 'description' }] } }
 * ```
 */
export function readFrontMatterLeniently(frontMatter: FrontMatter): SafeParseResult<LenientFrontMatter> {
  const strict = readFrontMatterData(frontMatter);
  if (strict.success) return { success: true, data: { data: strict.data, lenient: [] } };
  if (strict.issues[0]?.code !== 'invalid_yaml' || frontMatter.language === 'json') return strict;
  const lines = frontMatter.matter.split('\n');
  const lenient: LenientLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const entry = plainEntry(line);
    if (entry === undefined || !entry.value.includes(': ') || continues(lines[i + 1])) continue;
    lines[i] = `${entry.key}: ${JSON.stringify(entry.value)}`;
    lenient.push({ line: i + 1, key: entry.key });
  }
  if (lenient.length === 0) return strict;
  const again = readFrontMatterData({ ...frontMatter, matter: lines.join('\n') });
  return again.success ? { success: true, data: { data: again.data, lenient } } : strict;
}

/**
 * Characters that open a value the owning tools read as YAML too (a quoted
 * scalar, a block scalar, a flow collection, a comment): such a value is
 * never read leniently.
 */
const NOT_PLAIN = new Set(['"', "'", '|', '>', '[', '{', '#']);

/** A top-level `key: value` line with a plain value: its key and its trimmed value. Linear; no regular expression. */
function plainEntry(line: string): { key: string; value: string } | undefined {
  const first = line.charCodeAt(0);
  if (!(isLetter(first) || first === 0x5f)) return undefined;
  let at = 1;
  while (at < line.length && (isLetter(line.charCodeAt(at)) || isDigit(line.charCodeAt(at)) || line[at] === '_' || line[at] === '-')) at++;
  const key = line.slice(0, at);
  while (line[at] === ' ' || line[at] === '\t') at++;
  if (line[at] !== ':' || (line[at + 1] !== ' ' && line[at + 1] !== '\t')) return undefined;
  const value = line.slice(at + 1).trim();
  if (value === '' || NOT_PLAIN.has(value[0]!)) return undefined;
  return { key, value };
}

/** True when `next` continues the line before it (an indented, non-blank line). */
function continues(next: string | undefined): boolean {
  return next !== undefined && (next[0] === ' ' || next[0] === '\t') && next.trim() !== '';
}

const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * True when the first non-blank line of `body` is a YAML `key:` line
 * (`model: x`, `tools:`): the sign of a front matter that closed too
 * early. Reads only up to that line.
 */
export function startsWithYamlKey(body: string): boolean {
  let at = 0;
  for (;;) {
    const nl = body.indexOf('\n', at);
    const end = nl < 0 ? body.length : nl;
    let first = at;
    while (first < end && (body[first] === ' ' || body[first] === '\t')) first++;
    if (first < end) {
      if (first !== at) return false;
      const line = body.slice(at, end);
      const c = line.charCodeAt(0);
      if (!(isLetter(c) || c === 0x5f)) return false;
      let i = 1;
      while (i < line.length && (isLetter(line.charCodeAt(i)) || isDigit(line.charCodeAt(i)) || line[i] === '_' || line[i] === '-')) i++;
      return line[i] === ':' && (i + 1 === line.length || line[i + 1] === ' ' || line[i + 1] === '\t');
    }
    if (nl < 0) return false;
    at = nl + 1;
  }
}

/**
 * A front matter opened by `---` twice (`---`, `---`, the YAML, `---`), read
 * the way netdata ai-agent reads it: YAML takes the second `---` as the
 * start of its document, so the block runs to the next `---` line. Returns
 * the re-split front matter when `split` is such a block (empty, followed by
 * a YAML `key:` line and a closing `---`), else `undefined`.
 */
export function reopenDoubledFence(split: FrontMatter, options: SplitFrontMatterOptions = {}): FrontMatter | undefined {
  splitFrontMatterOptions.check(options, '', 'reopenDoubledFence');
  if (!split.present || split.matter.trim() !== '' || !startsWithYamlKey(split.body)) return undefined;
  const again = splitFrontMatter(`---${split.language}\n${split.body}`, options);
  return again.success && again.data.present ? again.data : undefined;
}

/**
 * Front matter: the one splitter under every agent-file reader. It finds
 * the block between a first line `---` (optionally `---yaml`, `---json`...)
 * and the next line `---`, in one pass and within a size bound, and reads
 * it as data: YAML through the `yaml` package with aliases bounded, or
 * JSON. A code front matter (`---js`) is refused and never evaluated.
 * Format readers (troupe's own in `parse.ts`) map the data they get onto an
 * agent definition.
 * @module
 */
import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../core/errors.js';
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
  const max = options.maxChars ?? MAX_FRONT_MATTER_CHARS;
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

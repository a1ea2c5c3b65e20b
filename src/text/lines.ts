/**
 * Text as it really comes: every reader of model output and of files first
 * passes its input through {@link normalizeText} (a leading byte order mark
 * dropped; `\r\n` and a lone `\r` read as `\n`), so LF, CRLF, CR and a BOM
 * give the same result. {@link expectText} is the one argument check of
 * every public parser.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';

const BOM = 0xfeff;

/**
 * `text` with a leading byte order mark removed and every line end (`\r\n`,
 * a lone `\r`) written as `\n`. Linear; returns `text` itself when there is
 * nothing to change. A non-string throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * normalizeText('\uFEFFa\r\nb\rc'); // 'a\nb\nc'
 * ```
 */
export function normalizeText(text: string): string {
  expectText(text, 'the text of normalizeText');
  const body = text.charCodeAt(0) === BOM ? text.slice(1) : text;
  if (!body.includes('\r')) return body;
  // split and join beat a regular expression or replaceAll on text with many line ends
  const lf = body.split('\r\n').join('\n');
  return lf.includes('\r') ? lf.split('\r').join('\n') : lf;
}

/**
 * The argument check of the public parsers: `value` itself when it is a
 * string, else a `ConfigurationError` with code `invalid_argument` naming
 * the parser and the value.
 */
export function expectText(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  throw new ConfigurationError(`Expected ${what} to be a string, got ${describeValue(value)}`, { code: 'invalid_argument', details: { argument: what } });
}

/** {@link expectText} then {@link normalizeText}: the first line of every public reader. */
export function readableText(value: unknown, what: string): string {
  return normalizeText(expectText(value, what));
}

/** True for the characters `String.prototype.trim` removes (white space and line terminators). */
export function isWhiteSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === BOM
  );
}

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
  return body.includes('\r') ? withLineFeeds(body) : body;
}

/**
 * `\r\n` and `\r` written as `\n`, on the UTF-16 code units: about 4 ms a
 * megabyte however many line ends there are (a regular expression, or
 * split and join, take 20 to 80 ms on a megabyte of them), and every other
 * code unit (a lone surrogate too) is kept as it is.
 */
function withLineFeeds(text: string): string {
  let bytes = Buffer.from(text, 'utf16le');
  if (bytes.byteOffset % 2 !== 0) bytes = Buffer.from(bytes);
  const units = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  let write = 0;
  for (let read = 0; read < units.length; read++) {
    const unit = units[read]!;
    if (unit === 0x0d) {
      units[write++] = 0x0a;
      if (units[read + 1] === 0x0a) read++;
    } else units[write++] = unit;
  }
  return bytes.toString('utf16le', 0, write * 2);
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

/**
 * The inline markdown of squad files, read in one pass each: headings,
 * `key: value` lines with optional bullets and emphasis, table rows, and
 * stripping inline markup from a cell. No regular expression here can
 * backtrack over a line.
 * @module
 */
import { isWhiteSpace } from '../text/lines.js';

/** An ATX heading: its level (1-6) and its text, or undefined. */
export function readHeading(line: string): { level: number; text: string } | undefined {
  let level = 0;
  while (line.charCodeAt(level) === 0x23 /* # */) level++;
  if (level < 1 || level > 6) return undefined;
  const next = line[level];
  if (next !== ' ' && next !== '\t') return undefined;
  return { level, text: headingText(line.slice(level + 1).trim()) };
}

/** A heading's text without an optional closing run of `#`. */
function headingText(trimmed: string): string {
  let end = trimmed.length;
  while (end > 0 && trimmed.charCodeAt(end - 1) === 0x23) end--;
  return end < trimmed.length && (end === 0 || isWhiteSpace(trimmed.charCodeAt(end - 1))) ? trimmed.slice(0, end).trimEnd() : trimmed;
}

const startsWithEmphasis = (text: string): boolean => text.startsWith('**') || text.startsWith('__');

/**
 * A `key: value` line: an optional `-` or `*` bullet, the key in any case
 * (optionally in `**` or `__`, with the colon inside or outside), then the
 * value. Returns the key as listed in `keys` and the value, untrimmed at
 * its end.
 *
 * @example
 * ```ts
 * readLabelled('- **Role:** Tester', ['role']); // { key: 'role', value: 'Tester' }
 * ```
 */
export function readLabelled(line: string, keys: readonly string[]): { key: string; value: string } | undefined {
  let rest = line.trimStart();
  if ((rest[0] === '-' || rest[0] === '*') && rest.length > 1 && isWhiteSpace(rest.charCodeAt(1))) rest = rest.slice(1).trimStart();
  if (startsWithEmphasis(rest)) rest = rest.slice(2);
  let key: string | undefined;
  for (const k of keys) {
    if (rest.slice(0, k.length).toLowerCase() === k) {
      key = k;
      break;
    }
  }
  if (key === undefined) return undefined;
  rest = rest.slice(key.length);
  if (rest.startsWith(':**') || rest.startsWith(':__')) rest = rest.slice(3);
  else {
    if (startsWithEmphasis(rest)) rest = rest.slice(2);
    rest = rest.trimStart();
    if (rest[0] !== ':') return undefined;
    rest = rest.slice(1);
  }
  return { key, value: rest.trimStart() };
}

/** The cells of a table row; `\|` is a literal bar. */
export function splitRow(line: string): string[] {
  let body = line.trim();
  if (body.startsWith('|')) body = body.slice(1);
  if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1);
  const cells: string[] = [];
  let from = 0;
  for (let bar = body.indexOf('|'); bar >= 0; bar = body.indexOf('|', bar + 1)) {
    if (bar > 0 && body[bar - 1] === '\\') continue;
    cells.push(cell(body.slice(from, bar)));
    from = bar + 1;
  }
  cells.push(cell(body.slice(from)));
  return cells;
}

const cell = (raw: string): string => (raw.includes('\\|') ? raw.replaceAll('\\|', '|') : raw).trim();

/**
 * Finds the first index at or after a position where `hit(text, i)` holds
 * (or `text.length`). Positions asked for must not decrease, which lets each
 * answer be reused until it is passed: linear over all calls.
 */
class Seeker {
  #found = -1;
  constructor(
    readonly text: string,
    readonly hit: (text: string, i: number) => boolean,
  ) {}

  next(from: number): number {
    if (this.#found >= from) return this.#found;
    const { text, hit } = this;
    let i = from;
    while (i < text.length && !hit(text, i)) i++;
    this.#found = i;
    return i;
  }
}

const closeBracketOrEol = (t: string, i: number) => t[i] === ']' || t[i] === '\n';
const closeParenOrEol = (t: string, i: number) => t[i] === ')' || t[i] === '\n';
const angleOrEol = (t: string, i: number) => t[i] === '<' || t[i] === '>' || t[i] === '\n';
const PAIR_HITS: Record<string, (t: string, i: number) => boolean> = {
  '**': (t, i) => (t[i] === '*' && t[i + 1] === '*') || t[i] === '\n',
  __: (t, i) => (t[i] === '_' && t[i + 1] === '_') || t[i] === '\n',
  '~~': (t, i) => (t[i] === '~' && t[i + 1] === '~') || t[i] === '\n',
};

/** The links `!?[text](target)` of a text (text up to 200, target up to 300 characters, no line end), in order, not overlapping. */
function* links(text: string): Generator<{ from: number; text: string; target: string; to: number }> {
  if (!text.includes('](')) return;
  const close = new Seeker(text, closeBracketOrEol);
  const paren = new Seeker(text, closeParenOrEol);
  for (let i = 0; i < text.length; i++) {
    const at = text[i] === '!' && text[i + 1] === '[' ? i + 1 : text[i] === '[' ? i : -1;
    if (at < 0) continue;
    const end = close.next(at + 1);
    if (text[end] !== ']' || end - at - 1 > 200 || text[end + 1] !== '(') continue;
    const target = paren.next(end + 2);
    if (text[target] !== ')' || target - end - 2 > 300) continue;
    yield { from: i, text: text.slice(at + 1, end), target: text.slice(end + 2, target), to: target + 1 };
    i = target;
  }
}

/** Links and images keep their text. */
function stripLinks(text: string): string {
  let out = '';
  let from = 0;
  for (const link of links(text)) {
    out += text.slice(from, link.from) + link.text;
    from = link.to;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** HTML tags go: `<...>` up to 300 characters, without `<`, `>` or a line end inside. */
function stripTags(text: string): string {
  if (!text.includes('<')) return text;
  const angle = new Seeker(text, angleOrEol);
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '<') continue;
    const end = angle.next(i + 1);
    if (text[end] !== '>' || end - i - 1 > 300) continue;
    out += text.slice(from, i);
    from = end + 1;
    i = end;
  }
  return out + text.slice(from);
}

const PAIR_MARKS = ['**', '__', '~~'];

/** `**x**`, `__x__` and `~~x~~` keep `x` (up to 300 characters, the nearest closing pair of the same mark). */
function stripPairs(text: string): string {
  // A pair needs two occurrences of its mark, two characters apart at least.
  const marks: string[] = [];
  for (const mark of PAIR_MARKS) if (text.lastIndexOf(mark) - text.indexOf(mark) >= 2) marks.push(mark);
  if (marks.length === 0) return text;
  const seekers = marks.map((mark) => new Seeker(text, PAIR_HITS[mark]!));
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    let k = 0;
    while (k < marks.length && !text.startsWith(marks[k]!, i)) k++;
    const mark = marks[k];
    if (mark === undefined) continue;
    const end = seekers[k]!.next(i + 2);
    if (!text.startsWith(mark, end) || end - i - 2 > 300) continue;
    out += text.slice(from, i) + text.slice(i + 2, end);
    from = end + 2;
    i = end + 1;
  }
  return out + text.slice(from);
}

const isEmphasis = (c: string | undefined): boolean => c === '*' || c === '_';
const AFTER_EMPHASIS = new Set(['.', ',', ';', ':', '!', '?', ')']);
const nonSpace = (t: string, i: number): boolean => i >= 0 && i < t.length && t[i] !== '\n' && !isWhiteSpace(t.charCodeAt(i));
/** A closing `*` or `_` at `p`: after a non-space, before the end, white space or punctuation. */
const closesEmphasis = (t: string, p: number): boolean =>
  isEmphasis(t[p]) && nonSpace(t, p - 1) && (p + 1 === t.length || isWhiteSpace(t.charCodeAt(p + 1)) || AFTER_EMPHASIS.has(t[p + 1]!));
const closesEmphasisOrEol = (t: string, p: number): boolean => closesEmphasis(t, p) || t[p] === '\n';

/**
 * `*x*` and `_x_` keep `x`: an opening `*` or `_` at the start or after
 * white space or `(`, content that starts and ends with a non-space (up to
 * 302 characters), and a closing `*` or `_` followed by the end, white space
 * or punctuation. Content of two or more characters is preferred, then one.
 */
function stripEmphasis(text: string): string {
  // An opening and a closing mark, with content between them, or nothing to do.
  const stars = text.indexOf('*');
  const unders = text.indexOf('_');
  const first = stars < 0 ? unders : unders < 0 ? stars : Math.min(stars, unders);
  if (first < 0 || Math.max(text.lastIndexOf('*'), text.lastIndexOf('_')) < first + 2) return text;
  const close = new Seeker(text, closesEmphasisOrEol);
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isEmphasis(text[i]) || !(i === 0 || isWhiteSpace(text.charCodeAt(i - 1)) || text[i - 1] === '(') || i < from) continue;
    if (!nonSpace(text, i + 1)) continue;
    let end = text[i + 2] === '\n' ? text.length : close.next(i + 3);
    if (!(end < text.length && text[end] !== '\n' && end <= i + 303)) end = closesEmphasis(text, i + 2) ? i + 2 : -1;
    if (end < 0) continue;
    out += text.slice(from, i) + text.slice(i + 1, end);
    from = end + 1;
    i = end;
  }
  return out + text.slice(from);
}

/**
 * Strip inline markdown from a cell: links and images keep their text;
 * bold, italics, strike-through, backticks and HTML tags go; runs of white
 * space become one space. Linear in the text.
 */
export function stripMarkdown(text: string): string {
  // One look at the characters decides which passes can change anything (most cells need none).
  let marks = 0;
  let spaces = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b) marks |= LINK;
    else if (c === 0x3c) marks |= TAG;
    else if (c === 0x60) marks |= TICK;
    else if (c === 0x2a || c === 0x5f || c === 0x7e) marks |= EMPHASIS;
    else if (!spaces && isWhiteSpace(c) && (c !== 0x20 || i === 0 || i === text.length - 1 || text.charCodeAt(i + 1) === 0x20)) spaces = true;
  }
  let out = text;
  if (marks & LINK) out = stripLinks(out);
  if (marks & TAG) out = stripTags(out);
  if (marks & TICK) out = out.replaceAll('`', '');
  if (marks & EMPHASIS) out = stripEmphasis(stripPairs(out));
  return spaces || out !== text ? out.replace(/\s+/g, ' ').trim() : out;
}

const LINK = 1;
const TAG = 2;
const TICK = 4;
const EMPHASIS = 8;

/** The link target of a markdown link cell (its first word, without `<>`), else the cell's stripped text. */
export function charterCell(cell: string): string {
  for (const link of links(cell)) {
    const target = link.target.trim();
    let first = target;
    for (let i = 0; i < target.length; i++) {
      if (isWhiteSpace(target.charCodeAt(i))) {
        first = target.slice(0, i);
        break;
      }
    }
    if (first.startsWith('<')) first = first.slice(1);
    if (first.endsWith('>')) first = first.slice(0, -1);
    return first;
  }
  return stripMarkdown(cell);
}

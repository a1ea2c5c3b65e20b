/**
 * Size caps for what a squad folder feeds into prompts. A charter is cut at
 * a line boundary; a log such as `decisions.md` keeps whole entries, the most
 * recent ones (squad appends new entries at the end).
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';

/** The longest system prompt taken from a charter. */
export const CHARTER_CAP = 4000;

/** The longest routing or shared context taken from `routing.md` / `decisions.md`. */
export const CONTEXT_CAP = 8000;

/**
 * `text` cut to at most `max` characters at a line boundary (a single line
 * longer than `max` is cut inside it).
 */
export function capAtLine(text: string, max: number): string {
  text = readableText(text, 'the text of capAtLine');
  expectLimit(max, 'capAtLine');
  if (text.length <= max) return text;
  if (text.charAt(max) === '\n') return text.slice(0, max).trimEnd();
  const head = text.slice(0, max);
  const cut = head.lastIndexOf('\n');
  return (cut > 0 ? head.slice(0, cut) : head).trimEnd();
}

/** A log split into what comes before the first entry and the entries. */
export interface SplitEntries {
  /** Text before the first entry heading (a title, an intro). */
  head: string;
  /** Each entry: a `## ` or `### ` heading line and everything up to the next one. */
  entries: string[];
}

/** `max` must be a non-negative integer. */
function expectLimit(max: number, fn: string): void {
  if (!(Number.isInteger(max) && max >= 0)) {
    throw new ConfigurationError(`Expected \`max\` of ${fn} to be a non-negative integer, got ${describeValue(max)}`, { code: 'invalid_argument' });
  }
}

/** The line from `start` to `end` is `## ` or `### ` (any white space after the hashes). */
function isEntryHeading(text: string, start: number, end: number): boolean {
  let at = start;
  while (at < end && text.charCodeAt(at) === 0x23) at++;
  const level = at - start;
  return (level === 2 || level === 3) && at < end && isWhiteSpace(text.charCodeAt(at));
}

/** A thematic break: three or more of one of `-`, `*`, `_` (up to three spaces before, white space between). */
function isRule(line: string): boolean {
  let i = 0;
  while (i < 3 && line[i] === ' ') i++;
  const mark = line[i];
  if (mark !== '-' && mark !== '*' && mark !== '_') return false;
  let count = 0;
  for (; i < line.length; i++) {
    if (line[i] === mark) count++;
    else if (!isWhiteSpace(line.charCodeAt(i))) return false;
  }
  return count >= 3;
}

/**
 * Split a markdown log into entries. An entry starts at a `## ` or `### `
 * heading outside a code fence; deeper headings and `# ` headings (which
 * squad keeps inside merged entries) stay inside the current entry. When
 * the log separates entries with `---` rules (squad's merged decisions do),
 * only the first heading and headings right after a rule start an entry, so
 * an entry's own `## Why` stays with it.
 */
export function splitEntries(text: string): SplitEntries {
  const source = readableText(text, 'the text of splitEntries');
  // Lines as offsets: a log of many short lines costs no string per line.
  const lineStart: number[] = [];
  const lineEnd: number[] = [];
  let starts: number[] = [];
  scanSpans(source, (start, end, kind) => {
    if (kind === 'text' && isEntryHeading(source, start, end)) starts.push(lineStart.length);
    lineStart.push(start);
    lineEnd.push(end);
  });
  const lineText = (i: number) => source.slice(lineStart[i], lineEnd[i]);
  // Logs that separate entries with `---` rules have sub-headings inside
  // entries: there, only a heading right after a rule starts an entry.
  const ruled = starts.filter((start) => {
    let i = start - 1;
    while (i >= 0 && lineText(i).trim() === '') i--;
    return i >= 0 && isRule(lineText(i));
  });
  if (ruled.length >= 2) starts = [...new Set([starts[0] ?? 0, ...ruled])];
  const lines = lineStart.length;
  /** The text of lines `from` (inclusive) to `to` (exclusive), joined by their line ends. */
  const span = (from: number, to: number) => (from >= to ? '' : source.slice(lineStart[from], lineEnd[to - 1]));
  const first = starts[0] ?? lines;
  const entries = starts.map((start, k) => span(start, starts[k + 1] ?? lines));
  return { head: span(0, first), entries };
}

/** What {@link capEntries} returns. */
export interface CappedText {
  /** The text, at most `max` characters. */
  text: string;
  /** Whether anything was left out. */
  cut: boolean;
  /** How many whole entries were left out. */
  omitted: number;
}

/**
 * A markdown log cut to at most `max` characters: the most recent (last)
 * whole entries that fit, after a note saying how many earlier ones were
 * left out. When even the last entry is too long, its beginning is kept; a
 * text without entry headings keeps its last lines.
 *
 * @example
 * ```ts
 * const { text, omitted } = capEntries(decisionsMd, 8000);
 * ```
 */
export function capEntries(text: string, max: number): CappedText {
  text = readableText(text, 'the text of capEntries');
  expectLimit(max, 'capEntries');
  if (text.length <= max) return { text, cut: false, omitted: 0 };
  const { entries } = splitEntries(text);
  const note = (n: number) =>
    n === 0 ? '(earlier text omitted)\n\n' : `(${n} earlier ${n === 1 ? 'entry' : 'entries'} omitted)\n\n`;
  const budget = max - note(entries.length).length;
  if (entries.length === 0) {
    const tail = text.slice(text.length - budget);
    const nl = tail.indexOf('\n');
    const body = (nl >= 0 && nl < tail.length - 1 ? tail.slice(nl + 1) : tail).trimStart();
    return { text: `${note(0)}${body}`, cut: true, omitted: 0 };
  }
  let used = 0;
  let kept = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const size = (entries[i] ?? '').length + (kept > 0 ? 1 : 0);
    if (used + size > budget) break;
    used += size;
    kept++;
  }
  if (kept === 0) {
    const last = capAtLine(entries[entries.length - 1] ?? '', budget);
    const omitted = entries.length - 1;
    return { text: `${note(omitted)}${last}`, cut: true, omitted };
  }
  const omitted = entries.length - kept;
  const body = entries.slice(omitted).join('\n').trimEnd();
  return { text: `${note(omitted)}${body}`, cut: true, omitted };
}

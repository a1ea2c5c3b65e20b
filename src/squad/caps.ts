/**
 * Size caps for what a squad folder feeds into prompts. A charter is cut at
 * a line boundary; a log such as `decisions.md` keeps whole entries, the most
 * recent ones (by the date their heading starts with, else by place: squad
 * appends new entries at the end).
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

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * The date a heading line starts with (`### 2026-03-14: ...`,
 * `## [2026-03-14] ...`, `### 2026-06-06T11:28:43: ...`), as ISO text that
 * sorts by time (`2026-03-14`, `2026-06-06T11:28:43`); `undefined` when it
 * starts with none. Reads at most a few characters past the hashes.
 */
export function headingDate(line: string): string | undefined {
  let at = 0;
  while (line.charCodeAt(at) === 0x23) at++;
  if (at < 2 || at > 3) return undefined;
  while (at < line.length && (isWhiteSpace(line.charCodeAt(at)) || '[(*_`'.includes(line[at]!))) at++;
  const date = line.slice(at, at + 10);
  const shape = [4, 7].every((i) => date[i] === '-') && [0, 1, 2, 3, 5, 6, 8, 9].every((i) => isDigit(date.charCodeAt(i)));
  if (!shape || isDigit(line.charCodeAt(at + 10))) return undefined;
  const time = line.slice(at + 10, at + 19);
  return /^T\d\d:\d\d:\d\d$/.test(time) ? `${date}${time}` : /^T\d\d:\d\d/.test(time) ? `${date}${time.slice(0, 6)}` : date;
}

/**
 * Split a markdown log into entries. An entry starts at a `## ` or `### `
 * heading outside a code fence; deeper headings and `# ` headings (which
 * squad keeps inside merged entries) stay inside the current entry. When
 * the log separates entries with `---` rules (squad's merged decisions do),
 * only the first heading, headings right after a rule and headings that
 * start with a date (`### 2026-03-14: ...`, squad's dated decisions, which
 * an appendix after the last rule may list without rules) start an entry,
 * so an entry's own `## Why` stays with it.
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
  if (ruled.length >= 2) {
    const first = starts[0] ?? 0;
    const kept = new Set(ruled);
    starts = starts.filter((start) => start === first || kept.has(start) || headingDate(lineText(start)) !== undefined);
  }
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
 * The order of recency of entries, newest first: by the date each heading
 * starts with (an undated entry takes the date of the dated entry before
 * it, none before the first), then by place (later is newer).
 */
function newestFirst(entries: readonly string[]): number[] {
  let date = '';
  const keys = entries.map((entry) => {
    const nl = entry.indexOf('\n');
    date = headingDate(nl < 0 ? entry : entry.slice(0, nl)) ?? date;
    return date;
  });
  return entries.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? 1 : keys[a]! > keys[b]! ? -1 : b - a));
}

/** The heading line of an entry and as many of its last lines as fit in `max` (an entry too long to keep whole: its newest part). */
function entryTail(entry: string, max: number): string {
  const nl = entry.indexOf('\n');
  const marker = '\n(…)\n';
  if (nl < 0 || nl + marker.length >= max) return capAtLine(entry, max);
  const room = max - nl - marker.length;
  const tail = entry.slice(entry.length - room);
  const cut = tail.indexOf('\n');
  const body = (cut >= 0 && cut < tail.length - 1 ? tail.slice(cut + 1) : tail).trimStart();
  return `${entry.slice(0, nl)}${marker}${body}`.slice(0, max);
}

/**
 * A markdown log cut to at most `max` characters: the most recent whole
 * entries that fit (by date, see {@link headingDate}, else the last ones),
 * in the order of the file, after a note saying how many older ones were
 * left out. When even the newest entry is too long, its heading and its
 * last lines are kept; a text without entry headings keeps its last lines.
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
  const order = newestFirst(entries);
  let used = 0;
  const kept: number[] = [];
  for (const i of order) {
    const size = (entries[i] ?? '').length + (kept.length > 0 ? 1 : 0);
    if (used + size > budget) break;
    used += size;
    kept.push(i);
  }
  if (kept.length === 0) {
    const omitted = entries.length - 1;
    const newest = entryTail(entries[order[0]!] ?? '', max - note(omitted).length);
    return { text: `${note(omitted)}${newest}`, cut: true, omitted };
  }
  const omitted = entries.length - kept.length;
  const body = kept
    .sort((a, b) => a - b)
    .map((i) => entries[i])
    .join('\n')
    .trimEnd();
  return { text: `${note(omitted)}${body}`, cut: true, omitted };
}

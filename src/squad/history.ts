/**
 * A squad agent's `history.md`: what the agent did and learnt, in dated
 * entries (`### 2026-03-10: SDK Version Alignment Fix`, `## 2026-06-06 —
 * Docs`, `### Status Indicators Parked (2026-02-23)`), with undated
 * sections around them (`## Project Context`, `## Learnings`). Pure
 * functions over the text, each one pass over it (fences as in
 * `src/text/fences.ts`):
 *
 * - {@link parseHistory}: the file as blocks, dated or not;
 * - {@link historyContext}: what the agent is given, bounded, newest first;
 * - {@link addHistoryEntry}: a new entry in the file's own dated style and
 *   place;
 * - {@link archiveHistory}: the oldest entries moved to `history-archive.md`
 *   once the file passes a size, as squad's scribe does.
 * @module
 */
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import { capAtLine } from './caps.js';

/** The most of a history an agent is given. */
export const HISTORY_CAP = 6000;

/** The size past which the oldest entries of a `history.md` go to `history-archive.md` (squad's scribe summarises at about 12 KB). */
export const HISTORY_MAX_BYTES = 12 * 1024;

/** One block of a history: a `## ` or `### ` heading and what follows it, up to the next heading of its level or above. */
export interface HistoryBlock {
  /** The heading line. */
  heading: string;
  /** 2 or 3. */
  level: number;
  /** The date its heading holds (`2026-03-10`, or with its time `2026-06-06T14:33:22`), for a dated entry. */
  date?: string;
  /** The whole block, heading included, as in the file (its line ends kept). */
  text: string;
}

/** A history split into what comes before the first heading and its blocks. */
export interface ParsedHistory {
  head: string;
  blocks: HistoryBlock[];
  /** The line that closes a code fence the text leaves open at its end (```` ``` ````), when it does: what follows it would be code. */
  unclosedFence?: string;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** The heading level of a line (`## x`: 2), or 0 when it is not a heading. */
function headingLevel(line: string): number {
  let at = 0;
  while (line.charCodeAt(at) === 0x23) at++;
  return at > 0 && at <= 6 && at < line.length && isWhiteSpace(line.charCodeAt(at)) ? at : 0;
}

/** Where the first date of a line is (`YYYY-MM-DD`, with `THH:MM[:SS]` after it when there), or undefined. One pass. */
export function findDate(line: string): { at: number; length: number; date: string } | undefined {
  for (let i = 0; i + 10 <= line.length; i++) {
    if (!isDigit(line.charCodeAt(i)) || (i > 0 && isDigit(line.charCodeAt(i - 1)))) continue;
    const ok = line[i + 4] === '-' && line[i + 7] === '-' && [0, 1, 2, 3, 5, 6, 8, 9].every((k) => isDigit(line.charCodeAt(i + k)));
    if (!ok || isDigit(line.charCodeAt(i + 10))) continue;
    let length = 10;
    const time = line.slice(i + 10, i + 19);
    if (/^T\d\d:\d\d:\d\d$/.test(time)) length = 19;
    else if (/^T\d\d:\d\d/.test(time)) length = 16;
    // The rest of a time stamp (fractions, an offset) belongs to it.
    if (length > 10) while (i + length < line.length && /[0-9.:+\-Z]/.test(line[i + length]!)) length++;
    return { at: i, length, date: line.slice(i, i + Math.min(length, 19)) };
  }
  return undefined;
}

/**
 * A history as blocks. A block starts at a `## ` or `### ` heading outside a
 * code fence; inside a dated entry, deeper headings (its `### Summary`)
 * stay in it. A block is dated when its heading holds a date.
 */
export function parseHistory(text: string): ParsedHistory {
  const source = readableText(text, 'the text of a history');
  const starts: Array<{ offset: number; level: number; heading: string }> = [];
  let open: { level: number; dated: boolean } | undefined;
  let fence: string | undefined;
  scanSpans(source, (start, end, kind, f) => {
    fence = (kind === 'open' || kind === 'code') && f ? f.marker.repeat(f.length) : undefined;
    if (kind !== 'text') return;
    const line = source.slice(start, end);
    const level = headingLevel(line);
    if (level !== 2 && level !== 3) return;
    if (open?.dated && level > open.level) return;
    const dated = findDate(line) !== undefined;
    starts.push({ offset: start, level, heading: line.trimEnd() });
    open = { level, dated };
  });
  const blocks = starts.map((s, i): HistoryBlock => {
    const block: HistoryBlock = { heading: s.heading, level: s.level, text: source.slice(s.offset, starts[i + 1]?.offset ?? source.length) };
    const date = findDate(s.heading);
    if (date) block.date = date.date;
    return block;
  });
  const parsed: ParsedHistory = { head: source.slice(0, starts[0]?.offset ?? source.length), blocks };
  if (fence !== undefined) parsed.unclosedFence = fence;
  return parsed;
}

/** The dated blocks of a history, newest first: by date, then (for one date) by place, as the file is ordered. */
function newestFirst(parsed: ParsedHistory): HistoryBlock[] {
  const dated = parsed.blocks.map((b, i) => ({ b, i })).filter((x) => x.b.date !== undefined);
  const descending = isNewestFirst(dated.map((x) => x.b));
  return dated
    .sort((x, y) => (x.b.date! < y.b.date! ? 1 : x.b.date! > y.b.date! ? -1 : descending ? x.i - y.i : y.i - x.i))
    .map((x) => x.b);
}

/** True when a file lists its dated entries newest first (its first entry is dated after its last). */
function isNewestFirst(dated: readonly HistoryBlock[]): boolean {
  return dated.length >= 2 && dated[0]!.date!.slice(0, 10) > dated[dated.length - 1]!.date!.slice(0, 10);
}

/** What {@link historyContext} gives an agent. */
export interface HistoryContext {
  /** At most `max` characters: the undated sections (cut), then whole dated entries, newest first. */
  text: string;
  /** How many dated entries were left out. */
  omitted: number;
}

/**
 * What an agent is given of its history: the undated sections (what it
 * knows of the project, its learnings; at most a third of `max`, cut at a
 * line), then the dated entries newest first, whole, as many as fit, and a
 * line saying how many older ones were left out.
 */
export function historyContext(text: string, max = HISTORY_CAP): HistoryContext {
  const parsed = parseHistory(text);
  const undated = [parsed.head, ...parsed.blocks.filter((b) => b.date === undefined).map((b) => b.text)].join('').trim();
  const entries = newestFirst(parsed);
  const about = undated === '' ? '' : capAtLine(undated, Math.floor(max / 3));
  let used = about.length;
  const kept: string[] = [];
  for (const entry of entries) {
    const body = entry.text.trim();
    if (used + body.length + 2 > max - 40) break;
    kept.push(body);
    used += body.length + 2;
  }
  const omitted = entries.length - kept.length;
  const parts = [about, ...kept];
  if (omitted > 0) parts.push(`(${omitted} earlier ${omitted === 1 ? 'entry' : 'entries'} omitted)`);
  return { text: parts.filter((p) => p !== '').join('\n\n'), omitted };
}

/** A new entry of a history or a decision log. */
export interface NewEntry {
  /** A short title. */
  title: string;
  /** When (ms since the epoch): its date in the heading. */
  at: number;
  /** What it says: `Key: value` lines, written in the file's style (`- **Task:** ...`). */
  fields: ReadonlyArray<{ key: string; value: string }>;
}

/** How a dated heading is made: its level, whether its words follow the date, and the words before a date they follow (a label: `Session Log Entry: `). */
function shapeOf(heading: string): { level: number; titleAfter: boolean; label: string } {
  const level = headingLevel(heading);
  const text = heading.slice(level).trim();
  const found = findDate(text)!;
  const before = text.slice(0, found.at);
  const after = text.slice(found.at + found.length);
  const titleAfter = letters(after) > letters(before);
  return { level, titleAfter, label: titleAfter ? before : '' };
}

/** How many ASCII letters a text has. */
function letters(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) | 0x20;
    if (c >= 0x61 && c <= 0x7a) n++;
  }
  return n;
}

/**
 * The dated heading a new entry is made like: of the file's most common
 * heading shape (level, date before or after the words), its newest.
 */
export function templateHeading(newestFirstBlocks: readonly HistoryBlock[]): HistoryBlock | undefined {
  const counts = new Map<string, number>();
  const keyOf = (b: HistoryBlock) => {
    const shape = shapeOf(b.heading);
    return `${shape.level}|${shape.titleAfter}|${shape.label === '' ? '' : 'label'}`;
  };
  for (const b of newestFirstBlocks) counts.set(keyOf(b), (counts.get(keyOf(b)) ?? 0) + 1);
  let best: HistoryBlock | undefined;
  let bestCount = 0;
  for (const b of newestFirstBlocks) {
    const count = counts.get(keyOf(b))!;
    if (count > bestCount) [best, bestCount] = [b, count];
  }
  return best;
}

/** The heading of a new entry made like `template` (a dated heading of the file): its level, its label, where the date goes. */
export function headingLike(template: string | undefined, title: string, at: number, fallback: 'history' | 'decisions'): string {
  const iso = new Date(at).toISOString();
  if (template === undefined) return fallback === 'history' ? `### ${title} (${iso.slice(0, 10)})` : `### ${iso.slice(0, 10)}: ${title}`;
  const level = headingLevel(template);
  const text = template.slice(level).trim();
  const found = findDate(text)!;
  const date = found.length > 10 ? `${iso.slice(0, 19)}Z` : iso.slice(0, 10);
  const before = text.slice(0, found.at);
  const after = text.slice(found.at + found.length);
  const hashes = '#'.repeat(level);
  // The words are after the date (`2026-03-10: Title`, `Session Log Entry: 2026-06-06 — Title`) or before it (`Title (2026-02-23)`).
  if (shapeOf(template).titleAfter) {
    const sep = after.slice(0, prefixLength(after, SEPARATOR));
    return `${hashes} ${before}${date}${sep === '' ? ' ' : sep}${title}`.trimEnd();
  }
  const lead = before.slice(before.length - suffixLength(before, SEPARATOR));
  const close = lead.includes('(') ? ')' : lead.includes('[') ? ']' : '';
  return `${hashes} ${title}${lead === '' ? ' ' : lead}${date}${close}`.trimEnd();
}

/** Characters that separate a heading's date from its words (`: `, ` — `, ` - `, ` (`). */
const SEPARATOR = (c: string): boolean => c === ' ' || c === ':' || c === '-' || c === '—' || c === '–' || c === '(' || c === '[' || c === ',' || c === '|';

/** How many of the first characters of `text` satisfy `ok`. */
function prefixLength(text: string, ok: (c: string) => boolean): number {
  let n = 0;
  while (n < text.length && ok(text[n]!)) n++;
  return n;
}

/** How many of the last characters of `text` satisfy `ok`. */
function suffixLength(text: string, ok: (c: string) => boolean): number {
  let n = 0;
  while (n < text.length && ok(text[text.length - 1 - n]!)) n++;
  return n;
}

/** True when a line is `<prefix>**Key:** ...`. */
function isKeyLine(line: string, prefix: string): boolean {
  if (!line.startsWith(`${prefix}**`)) return false;
  const close = line.indexOf(':**', prefix.length + 2);
  return close > prefix.length + 2 && !line.slice(prefix.length + 2, close).includes('*');
}

/** The body of a new entry in the style of `template`'s body: `- **Key:** value`, `**Key:** value`, or `- Key: value`. */
function bodyLike(template: string | undefined, fields: NewEntry['fields']): string {
  const lines = (template ?? '').split('\n');
  if (template === undefined || lines.some((l) => isKeyLine(l, '- '))) return fields.map((f) => `- **${f.key}:** ${f.value}`).join('\n');
  if (lines.some((l) => isKeyLine(l, ''))) return fields.map((f) => `**${f.key}:** ${f.value}`).join('  \n');
  return fields.map((f) => `- ${f.key}: ${f.value}`).join('\n');
}

/** One line of at most `max` characters: white space runs as one space. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/**
 * `text` (a history) with `entry` added in the file's own dated style: its
 * heading made like the file's newest dated heading (level, words, where
 * the date goes), its body like that entry's body. It goes where the file
 * puts new entries: first, before the newest, in a file whose entries run
 * newest first; else right after the newest one (squad appends). A file
 * without dated entries gets `### <title> (<date>)` at the end of its
 * `## Learnings` section, else at its end.
 */
export function addHistoryEntry(text: string, entry: NewEntry): string {
  const source = readableText(text, 'the text of a history');
  const parsed = parseHistory(source);
  const dated = parsed.blocks.filter((b) => b.date !== undefined);
  const ordered = newestFirst(parsed);
  const newest = ordered[0];
  const template = templateHeading(ordered);
  const heading = headingLike(template?.heading, entry.title, entry.at, 'history');
  const block = `${heading}\n${bodyLike(template?.text.slice(template.heading.length), entry.fields)}\n`;
  const offsets = blockOffsets(parsed);
  if (newest === undefined) {
    const learnings = parsed.blocks.findIndex((b) => /^##\s+learnings/i.test(b.heading));
    const at = learnings < 0 ? source.length : endOfSection(parsed, offsets, learnings);
    return insertAt(source, at, block, parsed.unclosedFence);
  }
  if (isNewestFirst(dated)) return insertAt(source, offsets[parsed.blocks.indexOf(dated[0]!)]!, block);
  const index = parsed.blocks.indexOf(newest);
  return insertAt(source, offsets[index]! + newest.text.length, block, parsed.unclosedFence);
}

/** Where each block starts in the text. */
function blockOffsets(parsed: ParsedHistory): number[] {
  const offsets: number[] = [];
  let at = parsed.head.length;
  for (const b of parsed.blocks) {
    offsets.push(at);
    at += b.text.length;
  }
  return offsets;
}

/** Where the section of block `index` ends: at the next block of its level or above. */
function endOfSection(parsed: ParsedHistory, offsets: readonly number[], index: number): number {
  const level = parsed.blocks[index]!.level;
  for (let i = index + 1; i < parsed.blocks.length; i++) if (parsed.blocks[i]!.level <= level) return offsets[i]!;
  return offsets[index]! + parsed.blocks.slice(index).reduce((n, b) => n + b.text.length, 0);
}

/**
 * `block` inserted at `at` as a paragraph of its own: a blank line before
 * and after it. At the end of a text that leaves a code fence open (a real
 * history does), the fence is closed first, so the block is read as markdown.
 */
function insertAt(source: string, at: number, block: string, unclosedFence?: string): string {
  let before = source.slice(0, at);
  if (at === source.length && unclosedFence !== undefined) before = `${before}${before.endsWith('\n') ? '' : '\n'}${unclosedFence}\n`;
  let after = source.slice(at);
  if (before !== '' && !before.endsWith('\n')) before += '\n';
  if (before !== '' && !before.endsWith('\n\n')) before += '\n';
  if (after !== '' && !after.startsWith('\n')) after = `\n${after}`;
  return `${before}${block}${after}`;
}

/** What {@link archiveHistory} made. */
export interface ArchivedHistory {
  /** The history without the entries moved. */
  history: string;
  /** The archive with them added at its end (a new archive starts with a title). */
  archive: string;
  /** The entries moved, oldest first. */
  moved: HistoryBlock[];
}

/**
 * Once `history` is larger than `maxBytes` (UTF-8), move its oldest dated
 * entries (by date, then place) to the end of `archive` until it fits; the
 * newest entry always stays. Entries move whole and unchanged, in the
 * order they had, so reading both files back gives every entry.
 */
export function archiveHistory(history: string, archive: string | undefined, maxBytes = HISTORY_MAX_BYTES): ArchivedHistory {
  const source = readableText(history, 'the text of a history');
  let size = Buffer.byteLength(source, 'utf8');
  if (size <= maxBytes) return { history: source, archive: archive ?? '', moved: [] };
  const parsed = parseHistory(source);
  const oldestFirst = newestFirst(parsed).slice(1).reverse();
  const moving = new Set<HistoryBlock>();
  for (const block of oldestFirst) {
    if (size <= maxBytes) break;
    moving.add(block);
    size -= Buffer.byteLength(block.text, 'utf8');
  }
  const kept = parsed.head + parsed.blocks.filter((b) => !moving.has(b)).map((b) => b.text).join('');
  const moved = parsed.blocks.filter((b) => moving.has(b));
  let out = archive ?? '';
  if (out.trim() === '') out = `${archiveTitle(parsed.head)}\n\n> Older entries of history.md, moved here when it passed ${Math.round(maxBytes / 1024)} KB.\n`;
  for (const block of moved) out = insertAt(out, out.length, block.text.trimEnd() + '\n', parseHistory(out).unclosedFence);
  return { history: kept, archive: out, moved };
}

/** The title of a new archive: the history's own `# ` title with ` — Archive`, else `# History — Archive`. */
function archiveTitle(head: string): string {
  const title = head.split('\n').find((l) => headingLevel(l) === 1);
  return `${title === undefined ? '# History' : title.trimEnd()} — Archive`;
}

/**
 * `text` (a decision log) with `entry` added at its end, where squad
 * appends: a heading like the log's last dated heading (default `###
 * <date>: <title>`), a `---` rule before it when the log separates entries
 * with rules, and the body as `**Key:** value` lines.
 */
export function addDecisionEntry(text: string, entry: NewEntry): string {
  const source = readableText(text, 'the text of a decision log');
  const parsed = parseHistory(source);
  const index = parsed.blocks.findLastIndex((b) => b.date !== undefined);
  const last = index < 0 ? undefined : parsed.blocks[index]!;
  const heading = headingLike(last?.heading, entry.title, entry.at, 'decisions');
  // A log whose entries are separated by `---` rules gets one before the new entry.
  const ruled = index >= 0 && source.slice(0, blockOffsets(parsed)[index]).trimEnd().endsWith('\n---');
  const body = entry.fields.map((f) => `**${f.key}:** ${f.value}`).join('  \n');
  const block = `${ruled ? '---\n\n' : ''}${heading}\n${body}\n`;
  return insertAt(source, source.length, block, parsed.unclosedFence);
}

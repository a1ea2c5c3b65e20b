/**
 * The one fence scanner of every reader (see docs/reading.md). Fenced code
 * blocks follow CommonMark: a fence is a run of three or more backticks or
 * tildes, optionally followed by an info string (which, for backticks, holds
 * no backtick); the block ends at a line holding only a run of the same
 * character at least as long, or runs to the end of the text when no such
 * line comes. Unlike CommonMark, a fence may be indented by any amount of
 * white space (container blocks such as list items are not modelled, and a
 * fence inside a nested list item is indented by four spaces or more).
 *
 * What is inside a fence is quoted text: the line protocols never read it.
 * @module
 */
import { normalizeText } from './lines.js';

/** An opening fence. */
export interface Fence {
  /** The fence character. */
  marker: '`' | '~';
  /** How many of them (3 or more); the closing fence has at least as many. */
  length: number;
  /** The info string, trimmed (`ts`, `json title="plan"`, or empty). */
  info: string;
}

/**
 * How the scanner sees a line: `text` outside any fence, `open` and `close`
 * the fence lines themselves, `code` a line inside a fenced block.
 */
export type LineKind = 'text' | 'open' | 'close' | 'code';

/** One line of a text, as {@link scanLines} visits it. */
export interface ScannedLine {
  /** The line without its line end. */
  text: string;
  /** Offset of its first character in the (normalised) text. */
  start: number;
  /** Offset just past its last character. */
  end: number;
  /** Where the line stands. */
  kind: LineKind;
  /** For `open`, `code` and `close` lines: the fence of their block. */
  fence?: Fence;
}

/** A fenced block found by {@link fencedBlocks}. */
export interface FencedBlock {
  /** Its opening fence. */
  fence: Fence;
  /** The first word of the info string, lower-cased (`json`, `ts`, or empty). */
  language: string;
  /** The lines between the fences, joined with `\n`. */
  content: string;
  /** Offset of the content in the (normalised) text. */
  start: number;
  /** Offset just past the content. */
  end: number;
  /** Whether a closing fence was found (an unclosed block runs to the end of the text). */
  closed: boolean;
}

const SPACE = 0x20;
const TAB = 0x09;

/** Index of the first character of `line` after spaces and tabs. */
function indentEnd(line: string): number {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === SPACE || line.charCodeAt(i) === TAB)) i++;
  return i;
}

/** The fence `line` opens, if it is an opening fence. */
export function openingFence(line: string): Fence | undefined {
  const at = indentEnd(line);
  const marker = line[at];
  if (marker !== '`' && marker !== '~') return undefined;
  let end = at;
  while (line[end] === marker) end++;
  const length = end - at;
  if (length < 3) return undefined;
  const info = line.slice(end).trim();
  if (marker === '`' && info.includes('`')) return undefined;
  return { marker, length, info };
}

/** True when `line` closes a block opened by `fence`. */
export function closesFence(line: string, fence: Fence): boolean {
  const at = indentEnd(line);
  let end = at;
  while (line[end] === fence.marker) end++;
  if (end - at < fence.length) return false;
  return indentEnd(line.slice(end)) === line.length - end;
}

/** The first word of an info string, lower-cased. */
export function fenceLanguage(info: string): string {
  let end = 0;
  while (end < info.length && info[end] !== ' ' && info[end] !== '\t' && info[end] !== '{') end++;
  return info.slice(0, end).toLowerCase();
}

/**
 * Visit every line of `text` (normalised first, see {@link normalizeText};
 * offsets refer to the normalised text) with where it stands relative to
 * fenced code blocks. Linear in the text.
 *
 * @example
 * ```ts
 * scanLines('a\n````\n```\nb\n````\nc', (l) => console.log(l.kind, l.text));
 * // text a / open ```` / code ``` / code b / close ```` / text c
 * ```
 */
export function scanLines(text: string, visit: (line: ScannedLine) => void): void {
  const source = normalizeText(text);
  scanSpans(source, (start, end, kind, fence) => {
    const line = source.slice(start, end);
    visit(fence === undefined ? { text: line, start, end, kind } : { text: line, start, end, kind, fence });
  });
}

/**
 * {@link scanLines} without a line object: `visit(start, end, kind, fence)`
 * for every line of an already normalised text. For readers that look at
 * few of the lines.
 */
export function scanSpans(source: string, visit: (start: number, end: number, kind: LineKind, fence: Fence | undefined) => void): void {
  let fence: Fence | undefined;
  let start = 0;
  for (;;) {
    const nl = source.indexOf('\n', start);
    const end = nl < 0 ? source.length : nl;
    let at = start;
    while (at < end && (source.charCodeAt(at) === SPACE || source.charCodeAt(at) === TAB)) at++;
    const c = source[at];
    if (fence === undefined) {
      const opened = c === '`' || c === '~' ? openingFence(source.slice(start, end)) : undefined;
      if (opened) {
        fence = opened;
        visit(start, end, 'open', fence);
      } else visit(start, end, 'text', undefined);
    } else if (c === fence.marker && closesFence(source.slice(start, end), fence)) {
      visit(start, end, 'close', fence);
      fence = undefined;
    } else visit(start, end, 'code', fence);
    if (nl < 0) return;
    start = nl + 1;
  }
}

/**
 * Every fenced block of `text`, in order (normalised first; offsets refer to
 * the normalised text). Linear in the text.
 *
 * @example
 * ```ts
 * fencedBlocks('Plan:\n```json\n{"a": 1}\n```')[0]; // { language: 'json', content: '{"a": 1}', closed: true, ... }
 * ```
 */
export function fencedBlocks(text: string): FencedBlock[] {
  const source = normalizeText(text);
  const blocks: FencedBlock[] = [];
  let open: { fence: Fence; start: number; end: number } | undefined;
  const finish = (closed: boolean) => {
    if (!open) return;
    const { fence } = open;
    const start = Math.min(open.start, source.length);
    const end = Math.max(start, open.end);
    blocks.push({ fence, language: fenceLanguage(fence.info), content: source.slice(start, end), start, end, closed });
    open = undefined;
  };
  scanSpans(source, (_start, end, kind, fence) => {
    if (kind === 'open') open = { fence: fence!, start: end + 1, end: end + 1 };
    else if (kind === 'code' && open) open.end = end;
    else if (kind === 'close') finish(true);
  });
  finish(false); // an unclosed block runs to the end of the text
  return blocks;
}

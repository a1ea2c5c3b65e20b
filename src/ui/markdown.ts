/**
 * Markdown of model output, read into a small tree the team chat renders
 * with DOM calls (never as HTML). A subset sized for chat: paragraphs with
 * line breaks, ATX headings, fenced code, block quotes, ordered and
 * unordered lists, tables, rules; code spans, emphasis, strong, strike,
 * links, images and bare URLs. Raw HTML is text.
 *
 * Linear in its input: every line is looked at a bounded number of times
 * per nesting level, nesting is capped ({@link MAX_MARKDOWN_DEPTH}), and
 * the inline scanner visits each character once (code spans and link
 * destinations are found through tables built in one pass, so no search
 * is ever repeated from many starting points). No regular expressions.
 * @module
 */

/** A block of Markdown. */
export type MarkdownBlock =
  | { type: 'paragraph'; children: MarkdownInline[] }
  | { type: 'heading'; level: number; children: MarkdownInline[] }
  | { type: 'code'; lang: string; text: string }
  | { type: 'quote'; children: MarkdownBlock[] }
  | { type: 'list'; ordered: boolean; start: number; items: MarkdownBlock[][] }
  | { type: 'table'; align: Array<'left' | 'center' | 'right' | null>; head: MarkdownInline[][]; rows: MarkdownInline[][][] }
  | { type: 'rule' };

/** Inline content. `href` and `src` are as written: the renderer decides which it follows or loads. */
export type MarkdownInline =
  | { type: 'text'; text: string }
  | { type: 'code'; text: string }
  | { type: 'em' | 'strong' | 'del'; children: MarkdownInline[] }
  | { type: 'link'; href: string; children: MarkdownInline[] }
  | { type: 'image'; src: string; alt: string }
  | { type: 'break' };

/** How deep quotes and lists nest before deeper markers are read as text. */
export const MAX_MARKDOWN_DEPTH = 8;
/** How deep brackets nest before a `[` is read as text. */
const MAX_BRACKETS = 32;
/** The longest link destination. */
const MAX_URL = 2048;

/**
 * Read Markdown into blocks. Never throws; any text reads as something.
 *
 * @example
 * ```ts
 * parseMarkdown('**Done.** See `src/a.ts`.'); // [{ type: 'paragraph', children: [...] }]
 * ```
 */
export function parseMarkdown(text: string): MarkdownBlock[] {
  return parseBlocks(splitLines(String(text)), 0);
}

function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) {
      lines.push(expandTabs(text.slice(start, i)));
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
  }
  lines.push(expandTabs(text.slice(start)));
  return lines;
}

/** Leading tabs as four spaces (indentation is all that tabs mean here). */
function expandTabs(line: string): string {
  if (line.charCodeAt(0) !== 9) return line;
  let i = 0;
  while (line.charCodeAt(i) === 9) i++;
  return '    '.repeat(i) + line.slice(i);
}

const isBlank = (line: string): boolean => indentOf(line) === line.length;

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** The fence of a code block opening on `line` (up to 3 spaces in): its character, length and info word. */
function fenceOf(line: string): { char: number; length: number; lang: string } | undefined {
  const at = indentOf(line);
  if (at > 3) return undefined;
  const char = line.charCodeAt(at);
  if (char !== 96 && char !== 126) return undefined;
  let end = at;
  while (line.charCodeAt(end) === char) end++;
  if (end - at < 3) return undefined;
  const info = line.slice(end).trim();
  if (char === 96 && info.includes('`')) return undefined;
  let word = 0;
  while (word < info.length && info.charCodeAt(word) > 32) word++;
  return { char, length: end - at, lang: info.slice(0, word) };
}

function isClosingFence(line: string, fence: { char: number; length: number }): boolean {
  const at = indentOf(line);
  if (at > 3) return false;
  let end = at;
  while (line.charCodeAt(end) === fence.char) end++;
  return end - at >= fence.length && isBlank(line.slice(end));
}

function headingOf(line: string): { level: number; text: string } | undefined {
  const at = indentOf(line);
  if (at > 3) return undefined;
  let end = at;
  while (line.charCodeAt(end) === 35) end++;
  const level = end - at;
  if (level === 0 || level > 6) return undefined;
  if (end < line.length && line.charCodeAt(end) !== 32) return undefined;
  let text = line.slice(end).trim();
  let close = text.length;
  while (close > 0 && text.charCodeAt(close - 1) === 35) close--;
  if (close === 0 || text.charCodeAt(close - 1) === 32) text = text.slice(0, close).trim();
  return { level, text };
}

function isRule(line: string): boolean {
  const at = indentOf(line);
  if (at > 3) return false;
  const char = line.charCodeAt(at);
  if (char !== 45 && char !== 42 && char !== 95) return false;
  let count = 0;
  for (let i = at; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === char) count++;
    else if (c !== 32) return false;
  }
  return count >= 3;
}

/** A list item's marker on `line`: ordered or not, its number, the marker's character and where its content starts. */
function listMarkerOf(line: string): { ordered: boolean; start: number; marker: number; content: number } | undefined {
  const at = indentOf(line);
  if (at > 3) return undefined;
  const c = line.charCodeAt(at);
  let end = at;
  let ordered = false;
  let start = 1;
  if (c === 45 || c === 42 || c === 43) end = at + 1;
  else {
    while (end - at < 9 && line.charCodeAt(end) >= 48 && line.charCodeAt(end) <= 57) end++;
    const d = line.charCodeAt(end);
    if (end === at || (d !== 46 && d !== 41)) return undefined;
    ordered = true;
    start = Number(line.slice(at, end));
    end++;
  }
  if (end < line.length && line.charCodeAt(end) !== 32) return undefined;
  const spaces = indentOf(line.slice(end));
  const content = end + (spaces === 0 || spaces > 4 ? 1 : spaces);
  return { ordered, start, marker: ordered ? line.charCodeAt(end - 1) : c, content: Math.min(content, line.length) };
}

const isQuote = (line: string): boolean => indentOf(line) <= 3 && line.charCodeAt(indentOf(line)) === 62;

/** True when `line` starts a block other than a paragraph (so it ends a paragraph). */
function startsBlock(line: string, depth: number): boolean {
  return fenceOf(line) !== undefined || headingOf(line) !== undefined || isRule(line) || (depth < MAX_MARKDOWN_DEPTH && (isQuote(line) || (listMarkerOf(line) !== undefined && !isBlank(line.slice(listMarkerOf(line)!.content)))));
}

function parseBlocks(lines: readonly string[], depth: number): MarkdownBlock[] {
  const blocks: MarkdownBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = fenceOf(line);
    if (fence) {
      const body: string[] = [];
      const indent = indentOf(line);
      i++;
      while (i < lines.length && !isClosingFence(lines[i]!, fence)) body.push(dedent(lines[i++]!, indent));
      i++;
      blocks.push({ type: 'code', lang: fence.lang, text: body.join('\n') });
      continue;
    }
    const heading = headingOf(line);
    if (heading) {
      blocks.push({ type: 'heading', level: heading.level, children: parseInline(heading.text) });
      i++;
      continue;
    }
    if (isRule(line)) {
      blocks.push({ type: 'rule' });
      i++;
      continue;
    }
    const next = depth < MAX_MARKDOWN_DEPTH ? nestedBlock(lines, i, depth) : undefined;
    if (next) {
      blocks.push(next.block);
      i = next.end;
      continue;
    }
    const table = tableAt(lines, i);
    if (table) {
      blocks.push(table.block);
      i = table.end;
      continue;
    }
    const start = i;
    i++;
    while (i < lines.length && !isBlank(lines[i]!) && !startsBlock(lines[i]!, depth)) i++;
    blocks.push({ type: 'paragraph', children: parseInline(lines.slice(start, i).map((l) => l.trim()).join('\n')) });
  }
  return blocks;
}

/** Remove up to `n` leading spaces. */
function dedent(line: string, n: number): string {
  const at = Math.min(indentOf(line), n);
  return line.slice(at);
}

/** A quote or a list starting at line `i`, with the line after it. */
function nestedBlock(lines: readonly string[], i: number, depth: number): { block: MarkdownBlock; end: number } | undefined {
  const line = lines[i]!;
  if (isQuote(line)) {
    const inner: string[] = [];
    let end = i;
    while (end < lines.length && isQuote(lines[end]!)) {
      const l = lines[end]!;
      const after = indentOf(l) + 1;
      inner.push(l.slice(l.charCodeAt(after) === 32 ? after + 1 : after));
      end++;
    }
    return { block: { type: 'quote', children: parseBlocks(inner, depth + 1) }, end };
  }
  const first = listMarkerOf(line);
  if (!first) return undefined;
  const items: MarkdownBlock[][] = [];
  let end = i;
  let marker: ReturnType<typeof listMarkerOf> = first;
  while (end < lines.length && marker && marker.ordered === first.ordered && marker.marker === first.marker) {
    const item = [lines[end]!.slice(marker.content)];
    end++;
    let lazy = true;
    while (end < lines.length) {
      const l = lines[end]!;
      if (isBlank(l)) {
        // A blank line stays in the item only when the item goes on, indented, after it.
        let k = end;
        while (k < lines.length && isBlank(lines[k]!)) k++;
        if (k < lines.length && indentOf(lines[k]!) >= marker.content) {
          while (end < k) (item.push(''), end++);
          lazy = false;
          continue;
        }
        break;
      }
      if (indentOf(l) >= marker.content) item.push(l.slice(marker.content));
      else if (lazy && !startsBlock(l, depth) && listMarkerOf(l) === undefined) item.push(l);
      else break;
      end++;
    }
    items.push(parseBlocks(item, depth + 1));
    while (end < lines.length && isBlank(lines[end]!) && end + 1 < lines.length && sameList(lines[end + 1]!, first)) end++;
    marker = end < lines.length ? listMarkerOf(lines[end]!) : undefined;
  }
  return { block: { type: 'list', ordered: first.ordered, start: first.start, items }, end };
}

function sameList(line: string, first: { ordered: boolean; marker: number }): boolean {
  const m = listMarkerOf(line);
  return m !== undefined && m.ordered === first.ordered && m.marker === first.marker;
}

/** The cells of a table row: split on `|` outside code spans, `\|` kept as a bar; outer bars dropped. */
function cellsOf(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      inCode = !inCode;
      cell += c;
    } else if (c === '|' && !inCode) {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  if (cells.length > 1 && cells[0]!.trim() === '') cells.shift();
  if (cells.length > 1 && cells[cells.length - 1]!.trim() === '') cells.pop();
  return cells.slice(0, 64).map((c) => c.trim());
}

function alignOf(cell: string): 'left' | 'center' | 'right' | null | undefined {
  if (cell.length === 0) return undefined;
  const left = cell.charCodeAt(0) === 58;
  const right = cell.charCodeAt(cell.length - 1) === 58;
  for (let i = left ? 1 : 0; i < cell.length - (right ? 1 : 0); i++) if (cell.charCodeAt(i) !== 45) return undefined;
  if (cell.length - (left ? 1 : 0) - (right ? 1 : 0) < 1) return undefined;
  return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
}

/** A table at line `i`: a row with `|`, then a row of `---` cells. */
function tableAt(lines: readonly string[], i: number): { block: MarkdownBlock; end: number } | undefined {
  const header = lines[i]!;
  const delimiter = lines[i + 1];
  if (delimiter === undefined || !header.includes('|') || !delimiter.includes('-')) return undefined;
  const head = cellsOf(header);
  const align = cellsOf(delimiter).map(alignOf);
  if (align.length !== head.length || align.some((a) => a === undefined)) return undefined;
  const rows: MarkdownInline[][][] = [];
  let end = i + 2;
  while (end < lines.length && !isBlank(lines[end]!) && lines[end]!.includes('|')) {
    const cells = cellsOf(lines[end]!);
    rows.push(head.map((_, k) => parseInline(cells[k] ?? '')));
    end++;
  }
  return { block: { type: 'table', align: align as Array<'left' | 'center' | 'right' | null>, head: head.map(parseInline), rows }, end };
}

// ---------------------------------------------------------------- inline

/** A run of `*`, `_` or `~` in the output, waiting to be matched. */
interface Delimiter {
  type: 'delim';
  char: string;
  count: number;
}
/** Where a `[` or `![` opened in the output. */
interface Bracket {
  type: 'bracket';
  image: boolean;
}
type Item = MarkdownInline | Delimiter | Bracket;

/** An emphasis opener: its delimiter and where its content starts in the output. */
interface Opener {
  delim: Delimiter;
  at: number;
}

const isSpace = (c: string | undefined): boolean => c === undefined || c === ' ' || c === '\n' || c === '\t';
const isWordChar = (c: string | undefined): boolean => c !== undefined && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c > '\u007f');
const isPunctuation = (c: string | undefined): boolean => c !== undefined && !isSpace(c) && !isWordChar(c);

/**
 * For each position, the next position holding one of `stops` (or the
 * text's length): built once, so a scan from anywhere is one lookup.
 */
function nextOf(text: string, stops: string): Int32Array {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let i = text.length - 1; i >= 0; i--) next[i] = stops.includes(text[i]!) ? i : next[i + 1]!;
  return next;
}

/**
 * Code spans: for each backtick run that opens one, the index of the run
 * that closes it (the next run of the same length). One pass over the
 * runs, one forward pointer per length.
 */
function codeSpans(text: string): Map<number, number> {
  const runs: Array<{ at: number; length: number }> = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '`' || text[i - 1] === '\\') continue;
    let end = i;
    while (text[end] === '`') end++;
    runs.push({ at: i, length: end - i });
    i = end - 1;
  }
  const byLength = new Map<number, number[]>();
  runs.forEach((run, k) => {
    const same = byLength.get(run.length);
    if (same) same.push(k);
    else byLength.set(run.length, [k]);
  });
  const pointer = new Map<number, number>();
  const spans = new Map<number, number>();
  for (let k = 0; k < runs.length; k++) {
    const { at, length } = runs[k]!;
    const same = byLength.get(length)!;
    let p = pointer.get(length) ?? 0;
    while (p < same.length && same[p]! <= k) p++;
    pointer.set(length, p);
    if (p === same.length) continue;
    const close = same[p]!;
    spans.set(at, runs[close]!.at);
    k = close;
  }
  return spans;
}

/** The inside of a code span: line ends as spaces, one space trimmed from each side when both have one. */
function codeText(raw: string): string {
  let text = raw.split('\n').join(' ');
  if (text.length > 2 && text[0] === ' ' && text[text.length - 1] === ' ' && text.trim() !== '') text = text.slice(1, -1);
  return text;
}

const SCHEMES = ['http://', 'https://', 'mailto:'];
const startsWithScheme = (text: string, at: number): boolean => SCHEMES.some((s) => text.startsWith(s, at));

/** Tables of next positions for the inline scanner, built once per text. */
interface Scan {
  text: string;
  spans: Map<number, number>;
  /** Where a link destination stops: `)`, a space or a line end. */
  stop: Int32Array;
  /** Where an angle destination or autolink stops. */
  angle: Int32Array;
  dquote: Int32Array;
  squote: Int32Array;
  /** Where a bare URL stops. */
  url: Int32Array;
}

/** A link destination `(url "title")` at `i`: the URL and the position after the `)`. */
function destinationAt(scan: Scan, i: number): { href: string; end: number } | undefined {
  const { text } = scan;
  if (text[i] !== '(') return undefined;
  let p = i + 1;
  while (text[p] === ' ') p++;
  let href: string;
  if (text[p] === '<') {
    const close = scan.angle[p + 1]!;
    if (text[close] !== '>' || close - p > MAX_URL) return undefined;
    href = text.slice(p + 1, close);
    p = close + 1;
  } else {
    const end = scan.stop[p]!;
    if (end - p > MAX_URL) return undefined;
    href = text.slice(p, end);
    p = end;
  }
  while (text[p] === ' ') p++;
  const quote = text[p];
  if (quote === '"' || quote === "'") {
    const close = (quote === '"' ? scan.dquote : scan.squote)[p + 1]!;
    if (close >= text.length) return undefined;
    p = close + 1;
    while (text[p] === ' ') p++;
  }
  return text[p] === ')' ? { href, end: p + 1 } : undefined;
}

/** A bare URL at `i` (after no word character): where it ends, trailing punctuation left out. */
function bareUrlAt(scan: Scan, i: number): number | undefined {
  const { text } = scan;
  if ((!text.startsWith('http://', i) && !text.startsWith('https://', i)) || isWordChar(text[i - 1])) return undefined;
  let end = scan.url[i]!;
  while (end > i && '.,:;!?\'")*_'.includes(text[end - 1]!)) end--;
  const host = text.indexOf('//', i) + 2;
  return end > host && end - i <= MAX_URL ? end : undefined;
}

/**
 * Read inline Markdown. One pass: code spans and link ends come from the
 * tables of {@link Scan}; emphasis is matched as each closing run is met,
 * against the nearest open run of the same character, and wraps what was
 * read since (taken off the end of the output, never shifted).
 */
export function parseInline(text: string): MarkdownInline[] {
  const scan: Scan = {
    text,
    spans: codeSpans(text),
    stop: nextOf(text, ') \n\t'),
    angle: nextOf(text, '<> \n\t'),
    dquote: nextOf(text, '"'),
    squote: nextOf(text, "'"),
    url: nextOf(text, ' \n\t<>"'),
  };
  const state: InlineState = { out: [], buffer: '', from: 0, brackets: [], scopes: [], openers: newOpeners() };
  for (let i = 0; i < text.length; i++) {
    if (!SPECIAL.includes(text[i]!)) continue; // a literal: read with its run
    state.buffer += text.slice(state.from, i);
    state.from = i;
    i = step(scan, state, i);
  }
  state.buffer += text.slice(state.from);
  flush(state);
  return resolve(state.out);
}

type Openers = Record<string, Opener[]>;
const newOpeners = (): Openers => ({ '*': [], _: [], '~': [] });

/** The characters that may start something other than literal text. */
const SPECIAL = '\\\n`*_~[!]<h';

interface InlineState {
  out: Item[];
  /** Literal text read before `from`, not yet in `out`. */
  buffer: string;
  /** Where the current run of literal text starts: `text.slice(from, i)` is read but not yet in `buffer`. */
  from: number;
  /** Indexes in `out` of the brackets still open. */
  brackets: number[];
  /** The emphasis openers outside each open bracket. */
  scopes: Openers[];
  openers: Openers;
}

function flush(state: InlineState): void {
  if (state.buffer !== '') state.out.push({ type: 'text', text: state.buffer });
  state.buffer = '';
}

/**
 * Read what starts at `i` (a special character, with `text.slice(from, i)`
 * already in the buffer); returns the last position read. What turns out
 * to be literal leaves `from` at `i`, so it stays in the literal run.
 */
function step(scan: Scan, state: InlineState, i: number): number {
  const { text } = scan;
  const c = text[i]!;
  if (c === '\\' && isPunctuation(text[i + 1])) {
    state.buffer += text[i + 1];
    return took(state, i + 1);
  }
  if (c === '\n' || (c === '\\' && text[i + 1] === '\n')) {
    flush(state);
    state.out.push({ type: 'break' });
    return took(state, c === '\n' ? i : i + 1);
  }
  if (c === '`') {
    let end = i;
    while (text[end] === '`') end++;
    const close = scan.spans.get(i);
    if (close === undefined) return end - 1;
    flush(state);
    state.out.push({ type: 'code', text: codeText(text.slice(end, close)) });
    return took(state, close + (end - i) - 1);
  }
  if (c === '*' || c === '_' || c === '~') return delimiterRun(scan, state, i);
  if ((c === '[' || (c === '!' && text[i + 1] === '[')) && state.brackets.length < MAX_BRACKETS) {
    flush(state);
    state.out.push({ type: 'bracket', image: c === '!' });
    state.brackets.push(state.out.length - 1);
    state.scopes.push(state.openers);
    state.openers = newOpeners();
    return took(state, c === '!' ? i + 1 : i);
  }
  if (c === ']' && state.brackets.length > 0) return closeBracket(scan, state, i);
  if (c === '<') {
    const close = scan.angle[i + 1]!;
    if (text[close] === '>' && close - i <= MAX_URL && startsWithScheme(text, i + 1)) {
      flush(state);
      const href = text.slice(i + 1, close);
      state.out.push({ type: 'link', href, children: [{ type: 'text', text: href }] });
      return took(state, close);
    }
  }
  if (c === 'h') {
    const end = bareUrlAt(scan, i);
    if (end !== undefined) {
      flush(state);
      const href = text.slice(i, end);
      state.out.push({ type: 'link', href, children: [{ type: 'text', text: href }] });
      return took(state, end - 1);
    }
  }
  return i;
}

/** What was read up to `last` was not literal: the next literal run starts after it. */
function took(state: InlineState, last: number): number {
  state.from = last + 1;
  return last;
}

/** `]`: a link or an image when a destination follows, else the bracket was text. */
function closeBracket(scan: Scan, state: InlineState, i: number): number {
  const at = state.brackets.pop()!;
  const bracket = state.out[at] as Bracket;
  flush(state);
  state.openers = state.scopes.pop()!;
  const link = destinationAt(scan, i + 1);
  if (!link) {
    state.out[at] = { type: 'text', text: bracket.image ? '![' : '[' };
    return i;
  }
  const children = resolve(state.out.splice(at + 1));
  state.out.pop();
  state.out.push(bracket.image ? { type: 'image', src: link.href, alt: plainText(children) } : { type: 'link', href: link.href, children });
  state.from = link.end;
  return link.end - 1;
}

/** A run of `*`, `_` or `~`: it closes what it can (nearest opener of its character first), and may open. */
function delimiterRun(scan: Scan, state: InlineState, i: number): number {
  const { text } = scan;
  const c = text[i]!;
  let end = i;
  while (text[end] === c) end++;
  let count = end - i;
  if (c === '~' && count !== 2) return end - 1;
  const before = text[i - 1];
  const after = text[end];
  const left = !isSpace(after) && (!isPunctuation(after) || isSpace(before) || isPunctuation(before));
  const right = !isSpace(before) && (!isPunctuation(before) || isSpace(after) || isPunctuation(after));
  const canOpen = left && (c !== '_' || !right || isPunctuation(before));
  const canClose = right && (c !== '_' || !left || isPunctuation(after));
  flush(state);
  const stack = state.openers[c]!;
  while (canClose && count > 0 && stack.length > 0) {
    const opener = stack[stack.length - 1]!;
    const use = c === '~' ? 2 : Math.min(2, opener.delim.count, count);
    if (c === '~' && opener.delim.count !== 2) break;
    // Openers of other characters inside the wrapped text cannot close any more.
    for (const other of Object.values(state.openers)) while (other !== stack && other.length > 0 && other[other.length - 1]!.at >= opener.at) other.pop();
    const children = resolve(state.out.splice(opener.at));
    state.out.push({ type: c === '~' ? 'del' : use === 2 ? 'strong' : 'em', children });
    opener.delim.count -= use;
    count -= use;
    if (opener.delim.count === 0) stack.pop();
  }
  if (count > 0) {
    const delim: Delimiter = { type: 'delim', char: c, count };
    state.out.push(delim);
    if (canOpen) stack.push({ delim, at: state.out.length });
  }
  state.from = end;
  return end - 1;
}

/** Items as inline nodes: runs and brackets left unmatched are text; neighbouring texts are joined. */
function resolve(items: readonly Item[]): MarkdownInline[] {
  const out: MarkdownInline[] = [];
  for (const item of items) {
    let node: MarkdownInline;
    if (item.type === 'delim') {
      if (item.count === 0) continue;
      node = { type: 'text', text: item.char.repeat(item.count) };
    } else if (item.type === 'bracket') node = { type: 'text', text: item.image ? '![' : '[' };
    else node = item;
    const last = out[out.length - 1];
    if (node.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + node.text };
    else out.push(node);
  }
  return out;
}

/** The text of inline nodes, without their marks (iterative: emphasis may nest deeply). */
export function plainText(nodes: readonly MarkdownInline[]): string {
  let text = '';
  const stack: MarkdownInline[] = [...nodes].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text' || node.type === 'code') text += node.text;
    else if (node.type === 'break') text += '\n';
    else if (node.type === 'image') text += node.alt;
    else for (let k = node.children.length - 1; k >= 0; k--) stack.push(node.children[k]!);
  }
  return text;
}

/**
 * The sentinel protocol: markers an agent puts on a line of their own to say
 * that a reflection loop may stop (`[[REFLECTION_COMPLETE]]`,
 * `[[GROUP_REFLECT_COMPLETE]]`) or must go on (`[[NEEDS_ITERATION]]`).
 * @module
 */
import { scanLines } from '../text/fences.js';
import { expectText } from '../text/lines.js';

/** The single-agent completion sentinel (matched exactly). */
export const REFLECTION_COMPLETE = '[[REFLECTION_COMPLETE]]';
/** The group completion sentinel (matched case-insensitively). */
export const GROUP_REFLECT_COMPLETE = '[[GROUP_REFLECT_COMPLETE]]';
/** The "another iteration is needed" sentinel (matched case-insensitively). */
export const NEEDS_ITERATION = '[[NEEDS_ITERATION]]';

/** Which sentinels a text carries. */
export interface Sentinels {
  /** `[[REFLECTION_COMPLETE]]` stands on a line of its own. */
  reflectionComplete: boolean;
  /** `[[GROUP_REFLECT_COMPLETE]]` stands on a line of its own. */
  groupComplete: boolean;
  /** `[[NEEDS_ITERATION]]` stands on a line of its own. */
  needsIteration: boolean;
}

type SentinelKind = keyof Sentinels;

const GROUP_UPPER = GROUP_REFLECT_COMPLETE.toUpperCase();
const NEEDS_UPPER = NEEDS_ITERATION.toUpperCase();
const LONGEST = Math.max(REFLECTION_COMPLETE.length, GROUP_REFLECT_COMPLETE.length, NEEDS_ITERATION.length);

/** The sentinel a trimmed line is, if any. */
function sentinelOf(trimmed: string): SentinelKind | undefined {
  if (trimmed.length > LONGEST || !trimmed.startsWith('[[')) return undefined;
  if (trimmed === REFLECTION_COMPLETE) return 'reflectionComplete';
  const upper = trimmed.toUpperCase();
  if (upper === GROUP_UPPER) return 'groupComplete';
  if (upper === NEEDS_UPPER) return 'needsIteration';
  return undefined;
}

/**
 * Visit each line of `text` (line ends `\n`, `\r\n` or `\r`, a leading BOM
 * dropped) with the marker `classify` finds on it: a marker counts only
 * when it is the whole line (white space around it allowed) and outside a
 * fenced code block (the one fence scanner, `src/text/fences.ts`). The
 * shared scanner of every line protocol (sentinels, team votes). Linear in
 * the text; a non-string throws a `ConfigurationError` (`invalid_argument`).
 */
export function scanMarkerLines<K>(
  text: string,
  classify: (trimmed: string) => K | undefined,
  visit: (line: string, marker: K | undefined) => void,
): void {
  scanLines(expectText(text, 'the text'), (line) => {
    visit(line.text, line.kind === 'text' ? classify(line.text.trim()) : undefined);
  });
}

/** The sentinel `line` ends with (after trailing white space), and where it starts, if any. */
function sentinelAtEnd(line: string, end: number): { kind: SentinelKind; start: number } | undefined {
  for (const [kind, sentinel] of ENDINGS) {
    const start = end - sentinel.length;
    if (start < 0) continue;
    const found = line.slice(start, end);
    if (kind === 'reflectionComplete' ? found === sentinel : found.toUpperCase() === sentinel) return { kind, start };
  }
  return undefined;
}

const ENDINGS: ReadonlyArray<readonly [SentinelKind, string]> = [
  ['reflectionComplete', REFLECTION_COMPLETE],
  ['groupComplete', GROUP_UPPER],
  ['needsIteration', NEEDS_UPPER],
];

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** What {@link scanSentinels} found. */
interface SentinelScan {
  /** Sentinels on lines of their own, and those that close the answer. */
  found: Sentinels;
  /** With `keep`: the text without the counted sentinels, line by line. */
  kept: string[];
}

/**
 * The one pass of {@link parseSentinels} and {@link stripSentinels}.
 * Standalone sentinel lines count anywhere outside fences. The answer's
 * closing sentinels are the run of sentinels, separated by white space,
 * that ends the text outside fences, the first of them at the start of a
 * line or after white space, on a line that is not a block quote (`>`):
 * the candidate run is kept while scanning and starts over at every line
 * with other text, and at every fence line. Linear in the text.
 */
function scanSentinels(text: string, keep: boolean): SentinelScan {
  const found: Sentinels = { reflectionComplete: false, groupComplete: false, needsIteration: false };
  const kept: string[] = [];
  let closing: SentinelKind[] = [];
  // Where the text before the closing run ends: the index in `kept` of its line, and the length kept of it.
  let cut: { index: number; to: number } | undefined;
  scanLines(expectText(text, 'the text'), (line) => {
    const standalone = line.kind === 'text' ? sentinelOf(line.text.trim()) : undefined;
    if (standalone) {
      found[standalone] = true;
      return; // a line of only a sentinel: counted, never kept, and a closing run goes on through it
    }
    if (keep) kept.push(line.text);
    if (line.kind !== 'text') {
      closing = [];
      cut = keep ? { index: kept.length - 1, to: line.text.length } : undefined;
      return;
    }
    let last = line.text.length - 1;
    while (last >= 0 && isBlank(line.text[last])) last--;
    if (last >= 0 && line.text[last] !== ']') {
      // Most lines: no sentinel at their end, so the run starts over after them.
      closing = [];
      cut = keep ? { index: kept.length - 1, to: line.text.length } : undefined;
      return;
    }
    const tail = closingTail(line.text);
    if (tail.end === 0) closing.push(...tail.found); // blank, or only sentinels: the run goes on
    else {
      closing = tail.quoted ? [] : tail.found;
      cut = keep ? { index: kept.length - 1, to: tail.quoted ? line.text.length : tail.end } : undefined;
    }
  });
  for (const kind of closing) found[kind] = true;
  if (keep) {
    if (cut === undefined) kept.length = 0;
    else {
      kept.length = cut.index + 1;
      kept[cut.index] = kept[cut.index]!.slice(0, cut.to);
    }
  }
  return { found, kept };
}

/** The sentinels that end `line` (each at its start or after white space), where the text before them ends, and whether the line is a block quote. */
function closingTail(line: string): { found: SentinelKind[]; end: number; quoted: boolean } {
  let end = line.length;
  while (end > 0 && isBlank(line[end - 1])) end--;
  const found: SentinelKind[] = [];
  for (;;) {
    const at = sentinelAtEnd(line, end);
    if (!at || (at.start > 0 && !isBlank(line[at.start - 1]))) break;
    found.push(at.kind);
    end = at.start;
    while (end > 0 && isBlank(line[end - 1])) end--;
  }
  let first = 0;
  while (first < end && isBlank(line[first])) first++;
  return { found, end, quoted: end > 0 && line[first] === '>' };
}

/**
 * Find the sentinels in an agent's reply. A sentinel counts on a line of
 * its own (white space around it is fine), and at the very end of the
 * answer after its text (`All done. [[GROUP_REFLECT_COMPLETE]]`, the one
 * habit of models worth tolerating), always outside fenced code blocks of
 * any fence length. One in the middle of a sentence, in quotes or
 * backticks, or in a block quote does not count. Linear in the length of
 * the text; a non-string throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * parseSentinels('Some work done.\n[[REFLECTION_COMPLETE]]\n').reflectionComplete; // true
 * parseSentinels('All done. [[GROUP_REFLECT_COMPLETE]]').groupComplete;            // true
 * parseSentinels('I said [[REFLECTION_COMPLETE]] mid-sentence').reflectionComplete; // false
 * ```
 */
export function parseSentinels(text: string): Sentinels {
  return scanSentinels(text, false).found;
}

/**
 * Remove the sentinels that {@link parseSentinels} would count (their
 * lines, and the sentinels that close the answer), and trailing white
 * space. Everything else (sentinels inside sentences or code blocks
 * included) is kept as it is; line ends come back as `\n`.
 *
 * @example
 * ```ts
 * stripSentinels('All done. [[GROUP_REFLECT_COMPLETE]]'); // 'All done.'
 * ```
 */
export function stripSentinels(text: string): string {
  return scanSentinels(text, true).kept.join('\n').trimEnd();
}

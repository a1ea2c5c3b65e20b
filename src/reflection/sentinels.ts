/**
 * The sentinel protocol: markers an agent puts on a line of their own to say
 * that a reflection loop may stop (`[[REFLECTION_COMPLETE]]`,
 * `[[GROUP_REFLECT_COMPLETE]]`) or must go on (`[[NEEDS_ITERATION]]`).
 * @module
 */
import { scanLines, type LineKind } from '../text/fences.js';
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

/** Where the sentinels of a text are: on lines of their own, and closing the answer. */
interface SentinelMap {
  /** The lines of the (normalised) text. */
  lines: Array<{ text: string; kind: LineKind; marker: SentinelKind | undefined }>;
  /** The sentinels that close the answer (outside the standalone lines). */
  closing: SentinelKind[];
  /** The last line that keeps text: lines after it are dropped by `stripSentinels`, and it is cut to `keepTo`. */
  lastKept: number;
  keepTo: number;
}

/**
 * The one scan of {@link parseSentinels} and {@link stripSentinels}.
 * Standalone sentinel lines count anywhere outside fences. Then, from the
 * end: the answer's closing sentinels are the run of sentinels, separated
 * by white space, that ends the text, outside fences, the first of them at
 * the start of a line or after white space, on a line that is not a block
 * quote (`>`). Linear in the text.
 */
function mapSentinels(text: string): SentinelMap {
  const lines: SentinelMap['lines'] = [];
  scanLines(expectText(text, 'the text'), (line) => {
    lines.push({ text: line.text, kind: line.kind, marker: line.kind === 'text' ? sentinelOf(line.text.trim()) : undefined });
  });
  const closing: SentinelKind[] = [];
  let lastKept = lines.length - 1;
  let keepTo = lines[lastKept]?.text.length ?? 0;
  // Walk back over the closing run: every line of it is text; each loses its sentinels from the end.
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line.kind !== 'text') break;
    let end = line.text.length;
    while (end > 0 && isBlank(line.text[end - 1])) end--;
    const found: SentinelKind[] = [];
    for (;;) {
      const at = sentinelAtEnd(line.text, end);
      if (!at || (at.start > 0 && !isBlank(line.text[at.start - 1]))) break;
      found.push(at.kind);
      end = at.start;
      while (end > 0 && isBlank(line.text[end - 1])) end--;
    }
    if (end > 0 && line.text.slice(0, end).trimStart().startsWith('>')) break; // quoted
    closing.push(...found);
    lastKept = i;
    keepTo = end;
    if (end > 0) break; // the run ends on this line, after its text
    lastKept = i - 1;
    keepTo = lines[i - 1]?.text.length ?? 0;
  }
  return { lines, closing, lastKept, keepTo };
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
  const found: Sentinels = { reflectionComplete: false, groupComplete: false, needsIteration: false };
  const map = mapSentinels(text);
  for (const line of map.lines) if (line.marker) found[line.marker] = true;
  for (const kind of map.closing) found[kind] = true;
  return found;
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
  const map = mapSentinels(text);
  const kept: string[] = [];
  for (let i = 0; i <= map.lastKept; i++) {
    const line = map.lines[i]!;
    if (line.marker) continue;
    kept.push(i === map.lastKept ? line.text.slice(0, map.keepTo) : line.text);
  }
  return kept.join('\n').trimEnd();
}

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

/**
 * Find the sentinels in an agent's reply. A sentinel counts only on a line
 * of its own (white space around it is fine) and outside fenced code blocks
 * of any fence length. Linear in the length of the text; a non-string
 * throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * parseSentinels('Some work done.\n[[REFLECTION_COMPLETE]]\n').reflectionComplete; // true
 * parseSentinels('I said [[REFLECTION_COMPLETE]] mid-sentence').reflectionComplete; // false
 * ```
 */
export function parseSentinels(text: string): Sentinels {
  const found: Sentinels = { reflectionComplete: false, groupComplete: false, needsIteration: false };
  scanMarkerLines(text, sentinelOf, (_line, sentinel) => {
    if (sentinel) found[sentinel] = true;
  });
  return found;
}

/**
 * Remove the sentinel lines that {@link parseSentinels} would count, and
 * trailing white space. Everything else (sentinels inside sentences or code
 * blocks included) is kept as it is; line ends come back as `\n`.
 */
export function stripSentinels(text: string): string {
  const kept: string[] = [];
  scanMarkerLines(text, sentinelOf, (line, sentinel) => {
    if (!sentinel) kept.push(line);
  });
  return kept.join('\n').trimEnd();
}

/**
 * The sentinel protocol: markers an agent puts on a line of their own to say
 * that a reflection loop may stop (`[[REFLECTION_COMPLETE]]`,
 * `[[GROUP_REFLECT_COMPLETE]]`) or must go on (`[[NEEDS_ITERATION]]`).
 * @module
 */

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

/** True when a trimmed line opens or closes a fenced code block. */
export function isFence(trimmed: string): boolean {
  return trimmed.startsWith('```') || trimmed.startsWith('~~~');
}

/**
 * Visit each line of `text` (without its `\r\n` / `\n` end) with the marker
 * `classify` finds on it: a marker counts only when it is the whole line
 * (white space around it allowed) and outside a fenced code block. The
 * shared scanner of every line protocol (sentinels, team votes). Linear in
 * the text.
 */
export function scanMarkerLines<K>(
  text: string,
  classify: (trimmed: string) => K | undefined,
  visit: (line: string, marker: K | undefined) => void,
): void {
  let inFence = false;
  let fence = '';
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (isFence(trimmed)) {
      const marker = trimmed.slice(0, 3);
      if (!inFence) {
        inFence = true;
        fence = marker;
      } else if (marker === fence && trimmed.slice(3).trim() === '') {
        inFence = false;
      }
      visit(line, undefined);
      continue;
    }
    visit(line, inFence ? undefined : classify(trimmed));
  }
}

/**
 * Find the sentinels in an agent's reply. A sentinel counts only on a line
 * of its own (white space around it is fine) and outside fenced code blocks.
 * Never throws; linear in the length of the text.
 *
 * @example
 * ```ts
 * parseSentinels('Some work done.\n[[REFLECTION_COMPLETE]]\n').reflectionComplete; // true
 * parseSentinels('I said [[REFLECTION_COMPLETE]] mid-sentence').reflectionComplete; // false
 * ```
 */
export function parseSentinels(text: string): Sentinels {
  const found: Sentinels = { reflectionComplete: false, groupComplete: false, needsIteration: false };
  if (typeof text !== 'string') return found;
  scanMarkerLines(text, sentinelOf, (_line, sentinel) => {
    if (sentinel) found[sentinel] = true;
  });
  return found;
}

/**
 * Remove the sentinel lines that {@link parseSentinels} would count, and
 * trailing white space. Everything else (sentinels inside sentences or code
 * blocks included) is kept as it is.
 */
export function stripSentinels(text: string): string {
  if (typeof text !== 'string') return '';
  const kept: string[] = [];
  scanMarkerLines(text, sentinelOf, (line, sentinel) => {
    if (!sentinel) kept.push(line);
  });
  return kept.join('\n').trimEnd();
}

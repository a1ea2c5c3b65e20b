/**
 * Evaluator replies: scores (`SCORE:` / `RATIONALE:` lines) and verdicts
 * (`PASS` / `FAIL: reason`).
 * @module
 */
import { ParseError } from '../core/errors.js';
import type { SafeParseResult } from '../core/parse-result.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import { stripSentinels } from './sentinels.js';

/** A scored evaluation. */
export interface Evaluation {
  /** The score in [0, 1] (0.5 when the reply held none). */
  score: number;
  /** The evaluator's reasons. */
  rationale: string;
  /** Whether a `SCORE:` line with a number was found. */
  scoreFound: boolean;
}

/** A pass/fail verdict. */
export interface Verdict {
  /** The work passed. */
  pass: boolean;
  /** Why it failed (or what the evaluator added after `PASS`). */
  feedback?: string;
}

/** The score when a reply holds none. */
export const DEFAULT_SCORE = 0.5;

/** The score an orchestrator that judges itself gets for a synthesis without a sentinel (neither complete nor needing another iteration). */
export const SELF_EVALUATION_SCORE = 0.7;

/** The score an orchestrator that judges itself gets for a synthesis ending with `[[NEEDS_ITERATION]]`. */
export const NEEDS_ITERATION_SCORE = 0.4;

const NUMBER = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))[ \t]*(%|\/[ \t]*(\d+(?:\.\d+)?))?/;

/** The value after `label:` on a line (markdown emphasis and bullets allowed), or undefined. */
function labelled(line: string, label: string): string | undefined {
  let i = 0;
  while (i < line.length && ' \t*#>-_'.includes(line[i]!)) i++;
  if (line.slice(i, i + label.length).toLowerCase() !== label) return undefined;
  i += label.length;
  while (i < line.length && ' \t*_'.includes(line[i]!)) i++;
  if (line[i] !== ':' && line[i] !== '=') return undefined;
  i++;
  while (i < line.length && ' \t*_'.includes(line[i]!)) i++;
  return line.slice(i).trimEnd();
}

/**
 * A score from the text after `SCORE:`, normalised to [0, 1]; undefined
 * when it does not start with one number (`0.9.1`, `0.9e2`, `1,5` and
 * `high` are not scores).
 */
export function normaliseScore(raw: string): number | undefined {
  const text = readableText(raw, 'the score of normaliseScore');
  const m = NUMBER.exec(text);
  if (!m || runsOn(text, m[0].length)) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  let value: number;
  if (m[3] !== undefined) {
    const d = Number(m[3]);
    if (!(d > 0)) return undefined;
    value = n / d;
  } else if (m[2] === '%') value = n / 100;
  else if (Number.isInteger(n) && n > 1 && n <= 100 && !m[1]!.includes('.')) value = n / 100;
  else value = n;
  return Math.min(1, Math.max(0, value));
}

/** True when the number that ends at `end` goes on: a letter, digit or `_` next, or `.` or `,` and a digit (`0.9.1`, `1,5`). */
function runsOn(text: string, end: number): boolean {
  const next = text[end];
  if (next === undefined) return false;
  if (/[\p{L}\p{N}_]/u.test(next)) return true;
  return (next === '.' || next === ',') && /\d/.test(text[end + 1] ?? '');
}

/** Longest `[[NAME]]` marker dropped from the end of a rationale. */
const MAX_MARKER = 64;

/**
 * `text` without the sentinels {@link stripSentinels} removes and without
 * trailing `[[NAME]]` markers (letters, digits and `_`), trimmed.
 */
function withoutMarkers(text: string): string {
  if (!text.includes('[[')) return text;
  const rest = stripSentinels(text);
  let end = rest.length;
  for (;;) {
    if (end < 4 || rest[end - 1] !== ']' || rest[end - 2] !== ']') break;
    let open = end - 3;
    while (open >= 0 && end - open - 2 <= MAX_MARKER && isMarkerChar(rest.charCodeAt(open))) open--;
    // `open` is at the second `[` of `[[` when the marker is well formed.
    if (open < 1 || open === end - 3 || rest[open] !== '[' || rest[open - 1] !== '[') break;
    end = open - 1;
    while (end > 0 && isWhiteSpace(rest.charCodeAt(end - 1))) end--;
  }
  return rest.slice(0, end);
}

/** Letters, digits and `_` (ASCII), what a `[[NAME]]` marker is made of. */
function isMarkerChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}

/**
 * Read an evaluator's `SCORE:` and `RATIONALE:` lines. `0.75` is taken as
 * it is, `7/10` as a fraction, `75%` or a whole number in (1, 100] as a
 * percentage; a decimal above 1 clamps to 1 and a negative number to 0. A
 * score that is not one number (`SCORE: 0.9.1`) is no score. No score
 * gives 0.5 ({@link DEFAULT_SCORE}) with `scoreFound: false`. The rationale
 * is the `RATIONALE:` text (or, without one, the rest of the text), up to
 * the next `SCORE:` line and without sentinels or a trailing `[[...]]`
 * marker. Linear time; line ends (`\n`, `\r\n`, `\r`) and a BOM read the same; a
 * non-string throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * parseEvaluation('SCORE: 0.75\nRATIONALE: Good progress.'); // { score: 0.75, rationale: 'Good progress.', scoreFound: true }
 * ```
 */
export function parseEvaluation(text: string): Evaluation {
  const source = readableText(text, 'the text of parseEvaluation');
  const lines = source.split('\n');
  let score: number | undefined;
  let scoreLine = -1;
  let rationale: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const s = labelled(line, 'score');
    if (s !== undefined) {
      if (score === undefined) {
        score = normaliseScore(s);
        if (score !== undefined) scoreLine = i;
      }
      if (rationale !== undefined) break;
      continue;
    }
    const r = labelled(line, 'rationale');
    if (r !== undefined && rationale === undefined) {
      rationale = [r];
      continue;
    }
    rationale?.push(line);
  }
  if (score === undefined) return { score: DEFAULT_SCORE, rationale: withoutMarkers(rationale ? rationale.join('\n') : source).trim(), scoreFound: false };
  const why = rationale ? rationale.join('\n') : lines.filter((_, i) => i !== scoreLine).join('\n');
  return { score, rationale: withoutMarkers(why).trim(), scoreFound: true };
}

/** {@link parseEvaluation} that fails (`no_score`) when the reply holds no score. */
export function safeParseScore(text: string): SafeParseResult<Evaluation> {
  const evaluation = parseEvaluation(text);
  if (evaluation.scoreFound) return { success: true, data: evaluation };
  return { success: false, issues: [{ code: 'no_score', message: 'The evaluator reply has no `SCORE:` line with a number' }] };
}

/** {@link parseEvaluation} that throws a `ParseError` when the reply holds no score. */
export function parseScore(text: string): Evaluation {
  const result = safeParseScore(text);
  if (result.success) return result.data;
  throw new ParseError(result.issues[0]!.message, { details: { code: result.issues[0]!.code } });
}

/** The leading word of a text (letters only) and where it ends. */
function leadingWord(text: string): { word: string; end: number } {
  let end = 0;
  while (end < text.length && /[A-Za-z]/.test(text[end]!)) end++;
  return { word: text.slice(0, end).toUpperCase(), end };
}

/**
 * Read a PASS/FAIL verdict. `PASS` as a whole word at the start passes (any
 * case); `FAIL: reason`, `FAIL - reason` or `FAIL` with the reason on the
 * next lines fails with that reason; an empty reply fails with "empty
 * evaluator response"; anything else fails with the text as feedback.
 *
 * @example
 * ```ts
 * parseVerdict('FAIL: Missing error handling'); // { pass: false, feedback: 'Missing error handling' }
 * ```
 */
export function parseVerdict(text: string): Verdict {
  const trimmed = readableText(text, 'the text of parseVerdict').trim();
  if (trimmed === '') return { pass: false, feedback: 'empty evaluator response' };
  const { word, end } = leadingWord(trimmed);
  const rest = trimmed.slice(end);
  if (word === 'PASS') {
    const extra = rest.replace(/^[\s:.!\-–—]+/, '').trim();
    return extra === '' ? { pass: true } : { pass: true, feedback: extra };
  }
  if (word === 'FAIL') {
    const reason = rest.replace(/^[\s:.\-–—]+/, '').trim();
    return { pass: false, feedback: reason === '' ? 'no reason given' : reason };
  }
  return { pass: false, feedback: trimmed };
}

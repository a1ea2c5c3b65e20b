/**
 * Evaluator replies: scores (`SCORE:` / `RATIONALE:` lines) and verdicts
 * (`PASS` / `FAIL: reason`).
 * @module
 */
import { ParseError } from '../core/errors.js';
import type { SafeParseResult } from '../core/parse-result.js';
import { readableText } from '../text/lines.js';

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

/** A score from the text after `SCORE:`, normalised to [0, 1]. */
export function normaliseScore(raw: string): number | undefined {
  const m = NUMBER.exec(readableText(raw, 'the score of normaliseScore'));
  if (!m) return undefined;
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

/**
 * Read an evaluator's `SCORE:` and `RATIONALE:` lines. `0.75` is taken as
 * it is, `7/10` as a fraction, `75%` or a whole number in (1, 100] as a
 * percentage; a decimal above 1 clamps to 1 and a negative number to 0. No
 * score gives 0.5 with `scoreFound: false` and the whole text as rationale.
 * Linear time; line ends (`\n`, `\r\n`, `\r`) and a BOM read the same; a
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
  if (score === undefined) return { score: DEFAULT_SCORE, rationale: source.trim(), scoreFound: false };
  const why = rationale ? rationale.join('\n').trim() : lines.filter((_, i) => i !== scoreLine).join('\n').trim();
  return { score, rationale: why, scoreFound: true };
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

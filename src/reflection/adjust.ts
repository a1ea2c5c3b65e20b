/**
 * Automatic adjustment from feedback: after an evaluation, what the next
 * iteration of a loop should change — a worker that failed, a worker whose
 * answer was too short, a score that dropped. Pure: the loop puts the
 * adjustments into its next planning prompt and emits them as events.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { qualityTrend } from './quality.js';

/** What an adjustment is about. */
export type AdjustmentKind = 'worker-failed' | 'short-answer' | 'score-drop';

/** One adjustment for the next iteration; `message` is the line the orchestrator reads. */
export type LoopAdjustment =
  | { kind: 'worker-failed'; worker: string; error: string; message: string }
  | { kind: 'short-answer'; worker: string; chars: number; message: string }
  | { kind: 'score-drop'; score: number; previous: number; message: string };

/** One worker's result, as {@link feedbackAdjustments} reads it. */
export interface AdjustmentWorkerResult {
  worker: string;
  success: boolean;
  output: string;
  error?: string | undefined;
}

/** What {@link feedbackAdjustments} looks at. */
export interface FeedbackInput {
  /** The iteration just evaluated (1-based). */
  iteration: number;
  /** Its worker results. */
  results: readonly AdjustmentWorkerResult[];
  /** Its score, and the score of the iteration before it, if any. */
  score?: number | undefined;
  previous?: number | undefined;
  /** A successful answer shorter than this (trimmed, in characters) is too short. Default: {@link DEFAULT_MIN_ANSWER_CHARS}. */
  minAnswerChars?: number;
}

/** The default shortest worker answer that is not "too short": 100 characters. */
export const DEFAULT_MIN_ANSWER_CHARS = 100;

/**
 * The adjustments an evaluated iteration calls for, in this order:
 *
 * - every worker that failed (`worker-failed`): its task is to be given to
 *   another worker or tried again;
 * - from iteration 2 on, every worker whose successful answer is shorter
 *   than `minAnswerChars` (`short-answer`): its task is to be made more
 *   precise, or given to another worker (a first iteration's short answers
 *   are not flagged: a first pass may be a sketch);
 * - a score that dropped by more than `QUALITY_STEP` (0.1) from the
 *   previous one, the quality trend's "degrading" (`score-drop`).
 *
 * @example
 * ```ts
 * feedbackAdjustments({ iteration: 2, results: [{ worker: 'coder', success: false, output: '', error: 'timed out' }], score: 0.4, previous: 0.7 });
 * // [{ kind: 'worker-failed', worker: 'coder', ... }, { kind: 'score-drop', score: 0.4, previous: 0.7, ... }]
 * ```
 */
export function feedbackAdjustments(input: FeedbackInput): LoopAdjustment[] {
  const min = input.minAnswerChars ?? DEFAULT_MIN_ANSWER_CHARS;
  if (!(Number.isInteger(min) && min >= 0)) throw new ConfigurationError(`Expected \`minAnswerChars\` to be a non-negative integer, got ${describeValue(min)}`);
  const adjustments: LoopAdjustment[] = [];
  const succeeded = input.results.filter((r) => r.success).map((r) => r.worker);
  for (const r of input.results) {
    if (r.success) continue;
    const error = r.error ?? 'unknown error';
    const others = succeeded.filter((w) => w !== r.worker);
    const instead = others.length > 0 ? `give its task to ${others.map((w) => `"${w}"`).join(' or ')}, or try it again` : 'try its task again, smaller or clearer';
    adjustments.push({ kind: 'worker-failed', worker: r.worker, error, message: `Worker "${r.worker}" failed (${oneLine(error)}): ${instead}.` });
  }
  if (input.iteration > 1) {
    for (const r of input.results) {
      if (!r.success) continue;
      const chars = r.output.trim().length;
      if (chars >= min) continue;
      adjustments.push({
        kind: 'short-answer', worker: r.worker, chars,
        message: `Worker "${r.worker}" gave a brief answer (${chars} characters): make its task more precise, or give it to another worker.`,
      });
    }
  }
  const { score, previous } = input;
  if (score !== undefined && previous !== undefined && qualityTrend(previous, score) === 'degrading') {
    adjustments.push({
      kind: 'score-drop', score, previous,
      message: `The score dropped from ${previous.toFixed(2)} to ${score.toFixed(2)}: review what changed since the previous iteration, and the tasks or the workers.`,
    });
  }
  return adjustments;
}

/** The first line of an error, at most 200 characters. */
function oneLine(text: string): string {
  const nl = text.indexOf('\n');
  const line = (nl < 0 ? text : text.slice(0, nl)).trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * `troupe/reflection`: the pure functions the loops are made of, for
 * building loops of your own: sentinel, assignment and evaluation parsers,
 * stall detection and the quality trend.
 * @module troupe/reflection
 * @category Primitives
 */
export { GROUP_REFLECT_COMPLETE, NEEDS_ITERATION, REFLECTION_COMPLETE, parseSentinels, scanMarkerLines, stripSentinels, type Sentinels } from './sentinels.js';
export { parseAssignments, requireAssignments, safeParseAssignments, type Assignment, type ParsedAssignments } from './assignments.js';
export { StallDetector, jaccard, tokenSet, type StallCheck, type StallDetectorOptions } from './stall.js';
export { QualityTracker, qualityTrend, type QualityRecord, type QualityScore, type QualityTrend } from './quality.js';
export {
  NEEDS_ITERATION_SCORE,
  SELF_EVALUATION_SCORE,
  normaliseScore,
  parseEvaluation,
  parseScore,
  parseVerdict,
  safeParseScore,
  type Evaluation,
  type Verdict,
} from './evaluation.js';
export {
  DEFAULT_MIN_ANSWER_CHARS,
  feedbackAdjustments,
  type AdjustmentKind,
  type AdjustmentWorkerResult,
  type FeedbackInput,
  type LoopAdjustment,
} from './adjust.js';
export type { ParseIssue, SafeParseResult } from '../core/parse-result.js';

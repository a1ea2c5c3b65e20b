/**
 * Quality trend: is a loop's score going up, flat, or down?
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';

/** The direction of a score compared with the previous one. */
export type QualityTrend = 'improving' | 'stable' | 'degrading';

/** One scored iteration. */
export interface QualityScore {
  /** A score in [0, 1]. */
  score: number;
  /** Why the evaluator gave it. */
  rationale?: string;
  /** Who scored it (an evaluator agent, or the orchestrator itself). */
  evaluator?: string;
}

/** A recorded score with its trend. */
export interface QualityRecord extends QualityScore {
  /** The trend this score set. */
  trend: QualityTrend;
}

/** The smallest change that counts as a move (exclusive). */
export const QUALITY_STEP = 0.1;

/** The trend from `previous` to `score`: a change of exactly 0.1 is stable, whatever floating point says. */
export function qualityTrend(previous: number | undefined, score: number): QualityTrend {
  if (previous === undefined) return 'stable';
  const delta = Math.round((score - previous) * 1e9) / 1e9;
  if (delta > QUALITY_STEP) return 'improving';
  if (delta < -QUALITY_STEP) return 'degrading';
  return 'stable';
}

/**
 * Records scores and reports the trend of each against the previous one.
 *
 * @example
 * ```ts
 * const q = new QualityTracker();
 * q.record({ score: 0.5 }); // 'stable'
 * q.record({ score: 0.8 }); // 'improving'
 * ```
 */
export class QualityTracker {
  #history: QualityRecord[] = [];

  constructor(history: readonly QualityRecord[] = []) {
    this.#history = history.map((r) => ({ ...r }));
  }

  /** Every score recorded, oldest first. */
  get history(): readonly QualityRecord[] {
    return this.#history;
  }

  /** The trend of the last score (stable when there is none). */
  get trend(): QualityTrend {
    return this.#history.at(-1)?.trend ?? 'stable';
  }

  /** Record a score and return its trend. */
  record(entry: QualityScore): QualityTrend {
    if (!(typeof entry?.score === 'number' && Number.isFinite(entry.score))) {
      throw new ConfigurationError(`Expected \`score\` to be a finite number, got ${describeValue(entry?.score)}`);
    }
    const trend = qualityTrend(this.#history.at(-1)?.score, entry.score);
    this.#history.push({ ...entry, trend });
    return trend;
  }
}

/**
 * Usage of a CLI that reports the total of its session so far (as
 * `codex exec resume` does) turned into the usage of each turn.
 * @module
 */
import type { Usage } from '../core/usage.js';

/** The usage fields a CLI reports. */
const FIELDS = ['inputTokens', 'outputTokens', 'cachedTokens', 'costUsd'] as const;

/**
 * The totals a CLI reported for its session, and the per-turn difference
 * of each new report. A report is a difference from the previous one only
 * when the turn resumed the same session of the tool and no total went
 * down; otherwise (a first turn, a new session, totals that started over)
 * the report is the turn's usage as it is.
 *
 * @example
 * ```ts
 * const totals = new CumulativeUsage();
 * totals.turn({ inputTokens: 42, outputTokens: 7 }, { session: 't1', resumed: false }); // 42 / 7
 * totals.turn({ inputTokens: 84, outputTokens: 14 }, { session: 't1', resumed: true });  // 42 / 7
 * ```
 */
export class CumulativeUsage {
  #last: { session: string | undefined; usage: Partial<Usage> } | undefined;

  /** The usage of the turn whose output reported `reported`; `session` is the tool's session id after the turn. */
  turn(reported: Partial<Usage> | undefined, where: { session: string | undefined; resumed: boolean }): Partial<Usage> | undefined {
    if (reported === undefined) return undefined;
    const last = this.#last;
    this.#last = { session: where.session, usage: reported };
    if (!last || !where.resumed || where.session === undefined || last.session !== where.session) return reported;
    const delta: Partial<Usage> = {};
    for (const field of FIELDS) {
      const now = reported[field];
      if (now === undefined) continue;
      const diff = now - (last.usage[field] ?? 0);
      if (diff < 0) return reported; // the tool's totals started over
      delta[field] = diff;
    }
    return delta;
  }
}

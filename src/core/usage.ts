/**
 * Usage accounting: tokens and cost, added up over a run.
 * @module
 */

/** Tokens and cost of one or more model turns. */
export interface Usage {
  /** Prompt tokens sent to the model. */
  inputTokens: number;
  /** Completion tokens produced by the model. */
  outputTokens: number;
  /** Prompt tokens served from the provider's cache (a subset of `inputTokens`). */
  cachedTokens: number;
  /** Cost in US dollars, when the adapter knows it. */
  costUsd: number;
  /** Number of model turns counted. */
  turns: number;
}

/** A fresh, zero usage record. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, turns: 0 };
}

/** Sum of usage records; missing fields count as zero. */
export function addUsage(...items: Array<Partial<Usage> | undefined>): Usage {
  const total = emptyUsage();
  for (const u of items) {
    if (!u) continue;
    total.inputTokens += u.inputTokens ?? 0;
    total.outputTokens += u.outputTokens ?? 0;
    total.cachedTokens += u.cachedTokens ?? 0;
    total.costUsd += u.costUsd ?? 0;
    total.turns += u.turns ?? 0;
  }
  return total;
}

/** Total tokens (input + output). */
export function totalTokens(u: Usage): number {
  return u.inputTokens + u.outputTokens;
}

/**
 * Stall detection: notice when a loop keeps producing the same answer.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { check, defineOptions, positiveInteger } from '../core/options.js';
import { expectText, readableText } from '../text/lines.js';

/** Options of {@link StallDetector}. */
export interface StallDetectorOptions {
  /** A response more similar than this (Jaccard, strictly greater) to the previous one is a repeat. Default: 0.9. */
  threshold?: number;
  /** How many earlier responses an exact repeat is looked for in. Default: 5. */
  window?: number;
  /** Repeats in a row that make a stall. Default: 2. */
  tolerance?: number;
}

/** The description {@link StallDetectorOptions} are checked against (a pattern's `stall` option too). */
export const stallDetectorOptions = defineOptions<StallDetectorOptions>('StallDetector', {
  threshold: check('a number in [0, 1]', (v) => typeof v === 'number' && v >= 0 && v <= 1),
  window: positiveInteger,
  tolerance: positiveInteger,
});

/** What {@link StallDetector.check} says about one response. */
export interface StallCheck {
  /** Jaccard similarity with the previous response (0 for the first one). */
  similarity: number;
  /** The response repeats an earlier one (or is blank). */
  repeated: boolean;
  /** Repeats in a row, this one included. */
  consecutive: number;
  /** This is the first repeat of a run of repeats. */
  warn: boolean;
  /** `consecutive` reached the tolerance. */
  stalled: boolean;
}

/**
 * The set of white-space separated tokens of a text (case-sensitive; a BOM
 * and every line end are white space). Linear; a non-string throws a
 * `ConfigurationError` (`invalid_argument`).
 */
export function tokenSet(text: string): Set<string> {
  return new Set(expectText(text, 'the text of tokenSet').match(/\S+/g));
}

function tokensOf(value: string | ReadonlySet<string>, what: string): ReadonlySet<string> {
  if (typeof value === 'string') return tokenSet(value);
  const set = value as Partial<ReadonlySet<string>> | null;
  if (set !== null && typeof set === 'object' && typeof set.has === 'function' && typeof set.size === 'number' && typeof set[Symbol.iterator] === 'function') return value;
  throw new ConfigurationError(`Expected ${what} to be a string or a set of tokens, got ${describeValue(value)}`, { code: 'invalid_argument' });
}

/**
 * Jaccard similarity of two texts' token sets: |A ∩ B| / |A ∪ B|, in [0, 1].
 * Two texts without tokens are identical (1). Linear in the texts.
 */
export function jaccard(a: string | ReadonlySet<string>, b: string | ReadonlySet<string>): number {
  const x = tokensOf(a, 'the first argument of jaccard');
  const y = tokensOf(b, 'the second argument of jaccard');
  if (x.size === 0 && y.size === 0) return 1;
  const [small, large] = x.size <= y.size ? [x, y] : [y, x];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (x.size + y.size - shared);
}

/**
 * Watches a loop's responses and says when they repeat. A response is
 * repeated when it is blank, equals one of the last `window` responses, or
 * its Jaccard similarity with the previous one is above `threshold`.
 *
 * @example
 * ```ts
 * const stall = new StallDetector();
 * stall.check('same'); stall.check('same'); // warn
 * stall.check('same').stalled; // true
 * ```
 */
export class StallDetector {
  /** The options in force. */
  readonly options: Readonly<Required<StallDetectorOptions>>;
  #recent: string[] = [];
  #previous: Set<string> | undefined;
  #consecutive = 0;

  constructor(options: StallDetectorOptions = {}) {
    const { threshold = 0.9, window = 5, tolerance = 2 } = stallDetectorOptions.check(options);
    this.options = Object.freeze({ threshold, window, tolerance });
  }

  /** Repeats in a row so far. */
  get consecutive(): number {
    return this.#consecutive;
  }

  /**
   * Check the next response. Linear in its length; CRLF, CR and a BOM read
   * as LF; a non-string throws a `ConfigurationError` (`invalid_argument`).
   */
  check(text: string): StallCheck {
    const value = readableText(text, 'the response given to StallDetector.check');
    const tokens = tokenSet(value);
    const similarity = this.#previous === undefined ? 0 : jaccard(tokens, this.#previous);
    const repeated =
      tokens.size === 0 ||
      this.#recent.includes(value) ||
      (this.#previous !== undefined && similarity > this.options.threshold);
    this.#consecutive = repeated ? this.#consecutive + 1 : 0;
    this.#recent.push(value);
    if (this.#recent.length > this.options.window) this.#recent.shift();
    this.#previous = tokens;
    return {
      similarity,
      repeated,
      consecutive: this.#consecutive,
      warn: this.#consecutive === 1,
      stalled: this.#consecutive >= this.options.tolerance,
    };
  }

  /** Forget every response seen. */
  reset(): void {
    this.#recent = [];
    this.#previous = undefined;
    this.#consecutive = 0;
  }

  /** The recent responses and the repeat count, for a checkpoint. */
  snapshot(): { recent: string[]; consecutive: number } {
    return { recent: [...this.#recent], consecutive: this.#consecutive };
  }

  /** Restore what {@link StallDetector.snapshot} returned. */
  restore(snapshot: { recent: readonly string[]; consecutive: number }): void {
    this.#recent = snapshot.recent.slice(-this.options.window);
    const last = this.#recent.at(-1);
    this.#previous = last === undefined ? undefined : tokenSet(last);
    this.#consecutive = snapshot.consecutive;
  }
}

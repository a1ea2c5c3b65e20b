/**
 * The last durations of some attempts, kept sorted, for the expected
 * duration of an attempt that has already run for some time.
 * @module
 */

/** A window of the last `size` durations. */
export class DurationWindow {
  /** In arrival order (a ring). */
  readonly #ring: number[] = [];
  #next = 0;
  /** The same durations, ascending. */
  readonly #sorted: number[] = [];
  /** `#suffix[i]`: the sum of `#sorted[i..]` (and 0 past the end). */
  readonly #suffix: number[] = [0];

  constructor(readonly size = 64) {}

  get count(): number {
    return this.#ring.length;
  }

  /** Add a duration; the oldest leaves once there are `size`. */
  add(ms: number): void {
    if (this.#ring.length < this.size) this.#ring.push(ms);
    else {
      const old = this.#ring[this.#next]!;
      this.#ring[this.#next] = ms;
      this.#next = (this.#next + 1) % this.size;
      this.#sorted.splice(this.#above(old, true), 1);
    }
    this.#sorted.splice(this.#above(ms, true), 0, ms);
    const sorted = this.#sorted;
    const suffix = this.#suffix;
    suffix[sorted.length] = 0;
    for (let i = sorted.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + sorted[i]!;
  }

  /**
   * The expected duration of an attempt that has run `elapsed` ms so far:
   * the mean of the durations longer than that, or `elapsed` when none is.
   */
  expected(elapsed: number): number {
    const i = this.#above(elapsed, false);
    const n = this.#sorted.length - i;
    return n === 0 ? elapsed : this.#suffix[i]! / n;
  }

  /** The first index whose duration is at least (`inclusive`) or above `ms`. */
  #above(ms: number, inclusive: boolean): number {
    let lo = 0;
    let hi = this.#sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const v = this.#sorted[mid]!;
      if (v < ms || (!inclusive && v === ms)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

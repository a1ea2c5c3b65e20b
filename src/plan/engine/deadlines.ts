/**
 * Per-attempt time-outs with one clock timer. Every attempt of a plan has
 * the same limit, so deadlines arrive in start order: a FIFO whose head is
 * the earliest, and a single timer set for it (no timer per chunk).
 * @module
 */
import type { Clock } from '../../core/clock.js';

/** Deadlines of running attempts, watched by one timer on `clock`. */
export class Deadlines {
  readonly #of: number[] = [];
  readonly #attempt: number[] = [];
  readonly #at: number[] = [];
  #head = 0;
  #cancel: (() => void) | undefined;

  /**
   * @param clock the clock the timer runs on
   * @param isCurrent whether attempt `attempt` of chunk `id` still runs
   * @param expire called for each attempt still running at its deadline
   */
  constructor(
    readonly clock: Clock,
    readonly isCurrent: (id: number, attempt: number) => boolean,
    readonly expire: (id: number) => void,
  ) {}

  /** Watch attempt `attempt` of chunk `id` until `at` (not before any deadline added earlier). */
  add(id: number, attempt: number, at: number): void {
    // Attempts that ended before their deadline need no watching: drop them from the head.
    while (this.#head < this.#at.length && !this.isCurrent(this.#of[this.#head]!, this.#attempt[this.#head]!)) this.#head++;
    this.#compact();
    this.#of.push(id);
    this.#attempt.push(attempt);
    this.#at.push(at);
    this.#arm();
  }

  /** Stop the timer. */
  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #arm(): void {
    if (this.#cancel || this.#head >= this.#at.length) return;
    this.#cancel = this.clock.setTimer(() => this.#fire(), this.#at[this.#head]! - this.clock.now());
  }

  #fire(): void {
    this.#cancel = undefined;
    const now = this.clock.now();
    while (this.#head < this.#at.length) {
      const h = this.#head;
      const id = this.#of[h]!;
      const running = this.isCurrent(id, this.#attempt[h]!);
      if (running && this.#at[h]! > now) break;
      this.#head++;
      if (running) this.expire(id);
    }
    this.#compact();
    this.#arm();
  }

  /** Drop the entries before the head once they are most of the queue. */
  #compact(): void {
    if (this.#head <= 1024 || this.#head * 2 <= this.#at.length) return;
    this.#of.splice(0, this.#head);
    this.#attempt.splice(0, this.#head);
    this.#at.splice(0, this.#head);
    this.#head = 0;
  }
}

/**
 * One share of a shared pool (`pool.ts`): its waiting attempts, its
 * running ones, and what it is charged for the worker time it had.
 * @module
 */
import type { ChunkAttemptResult, ChunkJob } from './executor.js';
import { DurationWindow } from './durations.js';

/** An attempt waiting for a slot. */
export interface Waiting {
  readonly job: ChunkJob;
  readonly share: Share;
  resolve(out: string | ChunkAttemptResult): void;
  reject(error: unknown): void;
  /** `queued` until it starts or is rejected. */
  state: 'queued' | 'started' | 'rejected';
  /** Removes its abort listener (set once it listens: only attempts still waiting after the admission that follows their dispatch do). */
  forget: (() => void) | undefined;
}

/** A share's expectations come from its own durations once it has this many. */
const OWN_DURATIONS = 8;

/** One share's state. */
export class Share {
  readonly queue: Waiting[] = [];
  /** Start times of its running attempts. */
  readonly starts: number[] = [];
  /** Its recent attempts' durations. */
  readonly durations = new DurationWindow();
  settled = 0;
  /** Worker time of its settled attempts. */
  served = 0;
  /** Worker time it is counted as having had beyond its own: the lift when it rejoins (see `Pool.#rejoin` in `pool.ts`). */
  lifted = 0;
  closed: Error | undefined;

  constructor(
    readonly name: string,
    readonly weight: number,
    readonly max: number,
  ) {}

  get running(): number {
    return this.starts.length;
  }

  get eligible(): boolean {
    return this.queue.length > 0 && this.starts.length < this.max;
  }

  /** Worker time so far: settled attempts, and running ones until now. */
  workerMs(now: number): number {
    let ms = this.served;
    for (const start of this.starts) ms += now - start;
    return ms;
  }

  /**
   * What it is charged per unit of weight; the next slot goes to the lowest.
   * A running attempt counts as what it is expected to take in all, from
   * how long it has run and how long its share's recent attempts took (the
   * pool's, until the share has a few of its own): a slot is charged when it
   * is given, and an attempt that runs long is charged more as it goes on.
   */
  key(now: number, pool: DurationWindow): number {
    const durations = this.durations.count >= OWN_DURATIONS ? this.durations : pool;
    let ms = this.served + this.lifted;
    for (const start of this.starts) ms += durations.count === 0 ? Math.max(now - start, 1) : durations.expected(now - start);
    return ms / this.weight;
  }
}

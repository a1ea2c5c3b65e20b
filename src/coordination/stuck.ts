/**
 * Stuck detection: time in state per worker on the injected clock; a worker
 * working too long without a message gets a status check, and one that does
 * not answer in time is stuck.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import { check, defineOptions, positiveNumber, required } from '../core/options.js';

/** Options of {@link StuckDetector}. */
export interface StuckOptions {
  /** The expected duration of a task, used until a task has completed. */
  expectedTaskMs: number;
  /** How long a worker has to answer a status check. Default: 60000. */
  statusTimeoutMs?: number;
  /** A worker is checked after `factor` × the average (or expected) task time without a message. Default: 2. */
  factor?: number;
}

/** What a worker is doing. */
export type WorkerState = 'idle' | 'working' | 'checking' | 'stopped';

/** A worker's state and since when. */
export interface WorkerTiming {
  worker: string;
  state: WorkerState;
  /** Clock time the state began. */
  since: number;
  /** The task it works on. */
  task?: string;
  /** Clock time of its last message (or of the start of its work). */
  lastHeard: number;
  /** Clock time of the status check sent, while `checking`. */
  checkedAt?: number;
}

/** What {@link StuckDetector.check} asks the caller to do. */
export type StuckAction =
  | { type: 'status-check'; worker: string; task: string; silentMs: number }
  | { type: 'stuck'; worker: string; task: string; silentMs: number };

/**
 * Tracks the time in state of every worker. Pure bookkeeping: the caller
 * says what happened (`working`, `heard`, `finished`, ...) and asks
 * {@link StuckDetector.check} what is due at a time.
 *
 * @example
 * ```ts
 * const stuck = new StuckDetector({ expectedTaskMs: 1000, statusTimeoutMs: 500 });
 * stuck.working('w1', 't1', 0);
 * stuck.check(2001); // [{ type: 'status-check', worker: 'w1', ... }]
 * stuck.check(2502); // [{ type: 'stuck', worker: 'w1', ... }]
 * ```
 */
/** The description {@link StuckDetector} (and `coordinate`'s `stuck`) checks its options against. */
export const stuckOptions = defineOptions<StuckOptions>('StuckDetector', {
  expectedTaskMs: required(positiveNumber),
  statusTimeoutMs: positiveNumber,
  factor: check('a number ≥ 1', (v) => typeof v === 'number' && Number.isFinite(v) && v >= 1),
});

export class StuckDetector {
  readonly expectedTaskMs: number;
  readonly statusTimeoutMs: number;
  readonly factor: number;
  readonly #workers = new Map<string, WorkerTiming>();
  readonly #durations: number[] = [];

  constructor(options: StuckOptions) {
    if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected \`stuck\` to be an object with \`expectedTaskMs\`, got ${describeValue(options)}`);
    stuckOptions.check(options, 'stuck.', 'StuckDetector');
    const statusTimeoutMs = options.statusTimeoutMs ?? 60_000;
    const factor = options.factor ?? 2;
    this.expectedTaskMs = options.expectedTaskMs;
    this.statusTimeoutMs = statusTimeoutMs;
    this.factor = factor;
  }

  /** Average duration of completed tasks, or undefined before the first. */
  get averageMs(): number | undefined {
    return this.#durations.length === 0 ? undefined : this.#durations.reduce((a, b) => a + b, 0) / this.#durations.length;
  }

  /** Silence after which a working worker gets a status check. */
  get thresholdMs(): number {
    return this.factor * (this.averageMs ?? this.expectedTaskMs);
  }

  /** Every worker's timing (copies). */
  timings(): WorkerTiming[] {
    return [...this.#workers.values()].map((t) => ({ ...t }));
  }

  /** One worker's state. */
  state(worker: string): WorkerState | undefined {
    return this.#workers.get(worker)?.state;
  }

  /** The worker is idle (waiting for a task). */
  idle(worker: string, now: number): void {
    this.#set(worker, { worker, state: 'idle', since: now, lastHeard: now });
  }

  /** The worker started work on `task`. */
  working(worker: string, task: string, now: number): void {
    this.#set(worker, { worker, state: 'working', since: now, task, lastHeard: now });
  }

  /** A message arrived from the worker: it is alive. */
  heard(worker: string, now: number): void {
    const t = this.#workers.get(worker);
    if (!t || t.state === 'stopped') return;
    t.lastHeard = now;
    if (t.state === 'checking') {
      t.state = 'working';
      t.since = now;
      delete t.checkedAt;
    }
  }

  /** The worker finished a task that took `durationMs` (it joins the average). */
  finished(worker: string, durationMs: number, now: number): void {
    this.#durations.push(Math.max(0, durationMs));
    this.idle(worker, now);
  }

  /** The worker was stopped. */
  stopped(worker: string, now: number): void {
    const t = this.#workers.get(worker);
    this.#set(worker, { worker, state: 'stopped', since: now, lastHeard: t?.lastHeard ?? now });
  }

  /** What is due at `now`: status checks to send, stuck workers to stop. Marks checks as sent. */
  check(now: number): StuckAction[] {
    const actions: StuckAction[] = [];
    for (const t of this.#workers.values()) {
      if (t.task === undefined || !this.#due(t, now)) continue;
      const silentMs = now - t.lastHeard;
      if (t.state === 'working') {
        t.state = 'checking';
        t.since = now;
        t.checkedAt = now;
        actions.push({ type: 'status-check', worker: t.worker, task: t.task, silentMs });
      } else {
        actions.push({ type: 'stuck', worker: t.worker, task: t.task, silentMs });
      }
    }
    return actions;
  }

  /**
   * The earliest time at which {@link StuckDetector.check} has something to
   * do, or undefined. `check` at that time always acts, whatever the
   * clock's resolution.
   */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const t of this.#workers.values()) {
      if (t.task === undefined) continue;
      let at: number | undefined;
      if (t.state === 'working') at = this.#silenceLimit(t) + 1;
      else if (t.state === 'checking') at = this.#answerBy(t);
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  // Deadlines are compared as sums, never as differences (`now - since >= limit`):
  // with fractional times the two can round apart, and a deadline computed one
  // way would never be reached the other way.

  /** A working worker silent past this time gets a status check. */
  #silenceLimit(t: WorkerTiming): number {
    return t.lastHeard + this.thresholdMs;
  }

  /** A worker that has not answered its status check by this time is stuck. */
  #answerBy(t: WorkerTiming): number {
    return (t.checkedAt ?? t.since) + this.statusTimeoutMs;
  }

  #due(t: WorkerTiming, now: number): boolean {
    if (t.state === 'working') return now > this.#silenceLimit(t);
    if (t.state === 'checking') return now >= this.#answerBy(t);
    return false;
  }

  /** Restore the task durations of an earlier run (for resume). */
  restoreDurations(durations: readonly number[]): void {
    this.#durations.push(...durations);
  }

  /** The recorded task durations. */
  durations(): number[] {
    return [...this.#durations];
  }

  #set(worker: string, timing: WorkerTiming): void {
    this.#workers.set(worker, timing);
  }
}

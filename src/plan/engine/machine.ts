/**
 * The plan's state machine: one {@link ChunkRecord} per chunk and one
 * transition per event.
 *
 * | event | transition | status |
 * | --- | --- | --- |
 * | ready | `#ready` | pending, waiting-for-dependencies or retrying → queued |
 * | dispatched | `#dispatch` | queued → running |
 * | finished | `#finished` | running → completed; dependents whose last dependency this was become ready |
 * | failed | `#failed` | running → retrying (ready again after the delay), or failed |
 * | timed out | `#timedOut` | running → the attempt is aborted and counts as failed |
 * | skipped | `#skipped` | the dependents of a failed chunk → skipped |
 * | cancelled | `#cancelled` | anything not finished → cancelled (a running attempt is aborted) |
 * | plan changed | `replan` | removed chunks → cancelled; new chunks → queued or waiting-for-dependencies; rewired chunks → queued or waiting-for-dependencies |
 *
 * Each change of status emits one `chunk.status` event (built only when
 * someone listens); each chunk that completes is appended to the plan's
 * checkpoint. `pump` starts the highest-priority ready chunks while slots
 * are free; the machine is done when nothing runs, waits for a retry or is
 * being written to the checkpoint.
 * @module
 */
import { defined } from '../../core/defined.js';
import { abortError } from '../../core/clock.js';
import { budgetExhaustion, type BudgetExhaustedError } from '../../core/budget.js';
import type { RunContext } from '../../core/context.js';
import { CancelledError, ConfigurationError, TimeoutError, describeValue, errorMessage } from '../../core/errors.js';
import type { Attempt } from './attempt.js';
import { Deadlines } from './deadlines.js';
import type { DurationEstimates } from './estimates.js';
import type { ChunkAttemptResult, Executor } from './executor.js';
import type { PlanCheckpoints } from './checkpoint.js';
import { ReadyQueue } from './ready-queue.js';
import { addSpent, type ChunkRecord } from './record.js';
import { MergeConflictError } from '../../workspaces/conflict.js';
import type { ChunkStatus } from './state.js';
import type { PlanSettings } from './types.js';
import type { Plan, PlanChunk } from '../model/plan.js';
import { chunkRecord } from './record.js';

/**
 * Why a plan stopped before every chunk ran: too many failures, the run
 * cancelled, or the plan's budget (or an enclosing one) ran out.
 */
export type StopReason = 'abort-threshold' | 'cancelled' | 'budget';

/** What the machine works with. */
export interface MachineSetup {
  ctx: RunContext;
  planId: string;
  /** One record per position; a change of the plan appends records (never removes or moves one). */
  records: ChunkRecord[];
  settings: PlanSettings;
  /** At the abort threshold, let running chunks finish. */
  finishRunning: boolean;
  executor: Executor;
  estimates: DurationEstimates;
  /** Present when the run has a store: every chunk that completes is appended to the plan's checkpoint. */
  checkpoints: PlanCheckpoints | undefined;
  /** A new attempt of `record` (its `attempts` already counts it). */
  attempt(record: ChunkRecord): Attempt;
  /** Called when a chunk completed (after its checkpoint entry, before its dependents are released). */
  completed?: (() => void) | undefined;
}

/** A change of the plan as the machine applies it: the new index and chunks by position, the positions removed and the chunks appended. */
export interface MachineChange {
  index: PlanSettings['index'];
  /** Every chunk by position (removed ones included, with no dependencies). */
  chunks: readonly PlanChunk[];
  removed: readonly number[];
  /** Why removed chunks were removed. */
  reason: string;
  plan: Plan;
}

/** The scheduling state machine of one plan execution. */
export class PlanMachine {
  /** Set once the plan stops early. */
  stopping: StopReason | undefined;
  /** Chunks that ended failed. */
  failures = 0;
  /** Settles when every chunk has settled (and the last checkpoint is saved). */
  readonly done: Promise<void>;
  readonly #m: MachineSetup;
  readonly #queue: ReadyQueue;
  readonly #deadlines: Deadlines;
  #running = 0;
  #retrying = 0;
  /** Changes of the plan applied so far. */
  #generation = 0;
  #listening = false;
  #ended = false;
  #flushing = false;
  #end!: () => void;
  /** Records keep times relative to this (small integers on a millisecond clock). */
  readonly #t0: number;

  constructor(setup: MachineSetup) {
    this.#m = setup;
    this.#t0 = setup.ctx.clock.now();
    this.#queue = new ReadyQueue(setup.estimates.priority);
    const records = setup.records;
    this.#deadlines = new Deadlines(
      setup.ctx.clock,
      (i, attempt) => records[i]!.attempt?.attempt === attempt,
      (i) => this.#timedOut(records[i]!),
    );
    this.done = new Promise<void>((resolve) => (this.#end = resolve));
  }

  /** Queue every chunk whose dependencies have completed, mark the others waiting, and start what fits. */
  start(): void {
    this.#listening = this.#listens();
    const now = this.#m.ctx.clock.now();
    for (const r of this.#m.records) {
      if (r.status === 'completed' || this.stopping !== undefined) continue;
      if (r.unmet === 0) this.#ready(r, now);
      else this.#set(r, 'waiting-for-dependencies', now);
    }
    this.pump();
  }

  /** Start ready chunks, highest priority first, while slots are free; settle `done` once everything has. */
  pump(): void {
    const { records, settings, checkpoints } = this.#m;
    this.#listening = this.#listens();
    while (this.stopping === undefined && this.#running < settings.maxParallel && this.#queue.size > 0) {
      // The plan's budget (or an enclosing one) could not pay for the chunk's first call: nothing more starts.
      const refused = this.#m.ctx.budgets.refusal(0);
      if (refused) {
        this.stop('budget', refused);
        break;
      }
      this.#dispatch(records[this.#queue.pop()!]!);
    }
    if (this.#ended || this.#running > 0 || this.#retrying > 0) return;
    if (this.#queue.size > 0 && this.stopping === undefined) return;
    if (checkpoints !== undefined && !checkpoints.idle) return this.#flush(checkpoints);
    this.#ended = true;
    this.#deadlines.stop();
    this.#end();
  }

  /** True once every chunk settled and the machine ended. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Stop the deadline timer (the machine ends it itself; this is for an execution that failed). */
  close(): void {
    this.#deadlines.stop();
  }

  /** The run was cancelled: stop, and abort what runs. */
  cancel(): void {
    this.stop('cancelled');
    this.#settled();
  }

  /**
   * The plan's budget (or an enclosing one) ran out: nothing new starts, and
   * running attempts finish what they do (a call in flight was paid for: its
   * answer is kept; their next model call is refused), except at a
   * deadline, which aborts them.
   */
  budgetRanOut(error: BudgetExhaustedError): void {
    this.stop('budget', error);
    this.#settled();
  }

  /**
   * Stop early: nothing new starts, chunks not started become cancelled
   * (with `error`, when given, as their error), running attempts are
   * aborted unless they may finish.
   */
  stop(why: StopReason, error?: BudgetExhaustedError): void {
    if (this.stopping !== undefined) return;
    this.stopping = why;
    this.#queue.drain();
    const { records, ctx, settings } = this.#m;
    const now = ctx.clock.now();
    const message = error === undefined ? undefined : errorMessage(error);
    for (const r of records) {
      if (r.status !== 'queued' && r.status !== 'waiting-for-dependencies' && r.status !== 'pending') continue;
      if (message !== undefined) r.error = message;
      this.#cancelled(r, now);
    }
    for (const r of records) r.cancelRetry?.();
    if (why === 'abort-threshold' && this.#m.finishRunning) return;
    if (why === 'budget' && error?.info.reason !== 'deadline') return;
    if (why === 'budget') {
      for (const r of records) if (r.attempt) this.#cancelled(r, now, error);
      return;
    }
    const reason = why === 'cancelled' ? abortError(ctx.signal) : new CancelledError(`Plan stopped: ${this.failures} chunks failed (abortThreshold ${settings.abortThreshold})`);
    for (const r of records) if (r.attempt) this.#cancelled(r, now, reason);
  }

  /**
   * Apply a change of the plan that was validated against the live graph:
   * abort and remove what it removed, append records for new chunks, count
   * every waiting chunk's unmet dependencies again, recompute the
   * priorities, and start what is ready. Synchronous, so no attempt starts
   * or ends in the middle of a change.
   */
  replan(change: MachineChange): void {
    const { records, ctx, settings, estimates } = this.#m;
    const now = ctx.clock.now();
    this.#generation++;
    settings.index = change.index;
    const retries: Array<() => void> = [];
    for (const p of change.removed) {
      const r = records[p]!;
      r.removed = true;
      r.error = change.reason;
      if (r.cancelRetry) retries.push(r.cancelRetry);
      this.#cancelled(r, now, new CancelledError(change.reason));
    }
    const chunks = change.chunks;
    for (let p = records.length; p < chunks.length; p++) records.push(chunkRecord(p, chunks[p]!, 0));
    for (let p = 0; p < chunks.length; p++) {
      const r = records[p]!;
      if (r.removed) continue;
      r.chunk = chunks[p]!;
      const s = r.status;
      if (s !== 'pending' && s !== 'waiting-for-dependencies' && s !== 'queued') continue;
      let unmet = 0;
      let failed: ChunkRecord | undefined;
      for (const d of change.index.deps[p]!) {
        const dep = records[d]!;
        if (dep.status === 'completed') continue;
        unmet++;
        if (dep.status === 'failed' || dep.status === 'skipped' || dep.status === 'cancelled') failed = dep;
      }
      r.unmet = unmet;
      if (failed) {
        r.error = `Skipped: dependency ${failed.chunk.sequenceIndex} ("${failed.chunk.title}") ${failed.status === 'failed' ? 'failed' : `is ${failed.status}`}`;
        this.#terminal(r, 'skipped', now);
      } else if (unmet > 0 && s !== 'waiting-for-dependencies') this.#set(r, 'waiting-for-dependencies', now);
      else if (unmet === 0 && s !== 'queued') this.#set(r, 'queued', now);
    }
    estimates.replan(change.plan, change.index);
    const queued: number[] = [];
    for (const r of records) if (r.status === 'queued') queued.push(r.position);
    this.#queue.reset(estimates.priority, queued);
    for (const cancel of retries) cancel();
    this.pump();
  }

  #ready(r: ChunkRecord, now: number): void {
    this.#set(r, 'queued', now);
    this.#queue.push(r.position);
  }

  #dispatch(r: ChunkRecord): void {
    const { ctx, executor, settings } = this.#m;
    this.#running++;
    const now = ctx.clock.now();
    const at = now - this.#t0;
    if (r.firstStart < 0) r.firstStart = at;
    r.attemptStart = at;
    r.attempts++;
    const a = this.#m.attempt(r);
    r.attempt = a;
    this.#set(r, 'running', now);
    if (r.attempt !== a) return; // a listener cancelled the plan
    this.#deadlines.add(r.position, a.attempt, now + settings.chunkTimeoutMs);
    let settled: Promise<string | ChunkAttemptResult>;
    try {
      settled = Promise.resolve(executor.dispatch(a));
    } catch (error) {
      settled = Promise.reject(error);
    }
    settled.then(
      (out) => {
        if (r.attempt === a) this.#finished(r, out);
      },
      (error: unknown) => {
        if (r.attempt === a) this.#failed(r, error);
      },
    );
  }

  #finished(r: ChunkRecord, out: unknown): void {
    let recorded = false;
    if (typeof out === 'string') r.output = out;
    else if (isAttemptResult(out)) {
      r.output = out.output;
      if (out.files) r.files = out.files;
      addSpent(r, out);
      recorded = out.recorded === true;
    } else {
      const c = r.chunk;
      return this.#failed(r, new ConfigurationError(`Expected the attempt of chunk ${c.sequenceIndex} to give a string or { output: string, files?: string[] }, got ${describeValue(out)}`));
    }
    const conflict = r.mergeConflicts?.at(-1);
    if (conflict && !conflict.resolved) {
      conflict.resolved = true;
      this.#conflict(r, r.attempts, 'resolved');
    }
    this.#release(r);
    r.error = undefined;
    const { records, settings, estimates, ctx } = this.#m;
    const now = ctx.clock.now();
    if (estimates.observe(r.position, now - this.#t0 - r.attemptStart)) this.#queue.rebuild();
    const generation = this.#generation;
    // Its checkpoint entry first, then the event: what a listener does in answer (a change of the plan) is logged after it.
    const previous = r.status;
    r.status = 'completed';
    r.end = now - this.#t0;
    this.#m.checkpoints?.completed(r, recorded);
    if (this.#listening) this.#emit(r, previous, now);
    this.#m.completed?.();
    // A change of the plan applied meanwhile (by a listener) counted every dependency again.
    if (generation === this.#generation) {
      for (const d of settings.index.dependents[r.position]!) {
        const next = records[d]!;
        if (--next.unmet === 0 && next.status === 'waiting-for-dependencies' && this.stopping === undefined) this.#ready(next, now);
      }
    }
    this.#settled();
  }

  #failed(r: ChunkRecord, error: unknown): void {
    const { settings, ctx } = this.#m;
    addSpent(r, r.attempt?.spent);
    this.#release(r);
    r.error = errorMessage(error);
    // A budget that ran out is not retried: the chunk keeps its last answer.
    const exhausted = budgetExhaustion(error);
    if (exhausted?.partial !== undefined) r.output = exhausted.partial;
    const now = ctx.clock.now();
    // The plan's budget (or an enclosing one) refused the chunk's call: the plan stops, and the chunk counts as stopped, not failed.
    if (exhausted && ctx.budgets.meters.some((m) => m.id === exhausted.info.budgetId)) {
      this.#terminal(r, 'cancelled', now);
      this.stop('budget', exhausted);
      return this.#settled();
    }
    const again = this.stopping === undefined && r.attempts <= settings.maxRetries && !exhausted;
    if (error instanceof MergeConflictError) {
      const records = this.#m.records;
      const index = settings.index;
      const others = error.conflictsWith.map((w) => {
        const at = index.position(Number(w.id));
        const title = at === undefined ? w.title : records[at]!.chunk.title;
        return { sequenceIndex: Number(w.id), title, paths: [...w.paths], ...defined({ patch: w.patch }) };
      });
      (r.mergeConflicts ??= []).push({ attempt: r.attempts, paths: [...error.paths], with: others, resolved: false });
      this.#conflict(r, r.attempts, again ? 'retrying' : 'failed');
    }
    if (again) return this.#retry(r, now);
    this.#terminal(r, 'failed', now);
    this.failures++;
    this.#skipped(r, now);
    if (this.failures >= settings.abortThreshold) this.stop('abort-threshold');
    this.#settled();
  }

  /** Retrying, then ready again after the delay (or cancelled when the plan stopped meanwhile). */
  #retry(r: ChunkRecord, now: number): void {
    const { ctx, settings } = this.#m;
    this.#set(r, 'retrying', now);
    this.#retrying++;
    const again = (): void => {
      r.cancelRetry = undefined;
      this.#retrying--;
      if (r.removed) return this.#settled();
      if (this.stopping !== undefined) {
        this.#cancelled(r, ctx.clock.now());
        return this.#settled();
      }
      this.#ready(r, ctx.clock.now());
      this.pump();
    };
    if (settings.delayMs === 0) queueMicrotask(again);
    else {
      const cancel = ctx.clock.setTimer(again, settings.delayMs);
      r.cancelRetry = () => {
        cancel();
        again();
      };
    }
    this.pump();
  }

  #timedOut(r: ChunkRecord): void {
    const c = r.chunk;
    const ms = this.#m.settings.chunkTimeoutMs;
    const error = new TimeoutError(`Chunk ${c.sequenceIndex} ("${c.title}") timed out after ${ms} ms`, { details: { timeoutMs: ms } });
    if (this.stopping !== undefined) {
      this.#cancelled(r, this.#m.ctx.clock.now(), error);
      return this.#settled();
    }
    r.attempt!.abort(error);
    this.#failed(r, error);
  }

  /** Skip every chunk that depends, directly or not, on the failed chunk `from`. */
  #skipped(from: ChunkRecord, now: number): void {
    const { records, settings } = this.#m;
    const why = `Skipped: dependency ${from.chunk.sequenceIndex} ("${from.chunk.title}") failed`;
    const stack = [from.position];
    while (stack.length > 0) {
      for (const d of settings.index.dependents[stack.pop()!]!) {
        const r = records[d]!;
        if (r.status !== 'waiting-for-dependencies' && r.status !== 'pending') continue;
        r.error = why;
        this.#terminal(r, 'skipped', now);
        stack.push(d);
      }
    }
  }

  /** Cancelled; a running attempt is aborted with `reason` first. */
  #cancelled(r: ChunkRecord, now: number, reason?: Error): void {
    const running = r.attempt;
    if (running) {
      const error = reason ?? new CancelledError();
      running.abort(error);
      this.#release(r);
      r.error = errorMessage(error);
    }
    this.#terminal(r, 'cancelled', now);
  }

  /** A chunk reached a terminal status: start what is ready now. */
  #settled(): void {
    this.pump();
  }

  /** Everything settled but checkpoint entries still being written: end once they are. */
  #flush(checkpoints: PlanCheckpoints): void {
    if (this.#flushing) return;
    this.#flushing = true;
    void checkpoints.flush().then(() => {
      this.#flushing = false;
      this.pump();
    });
  }

  #release(r: ChunkRecord): void {
    r.attempt?.settle();
    r.attempt = undefined;
    this.#running--;
  }

  #terminal(r: ChunkRecord, status: ChunkStatus, now: number): void {
    r.end = now - this.#t0;
    this.#set(r, status, now);
  }

  #set(r: ChunkRecord, status: ChunkStatus, now: number): void {
    const previous = r.status;
    r.status = status;
    if (this.#listening) this.#emit(r, previous, now);
  }

  /** One `chunk.status` event, built as one object (the context's stamp included). */
  #emit(r: ChunkRecord, previous: ChunkStatus, time: number): void {
    const c = r.chunk;
    const status = r.status;
    const error = r.error;
    const { ctx, planId } = this.#m;
    const type = 'chunk.status';
    const runId = ctx.runId;
    const opId = ctx.op.id;
    const sequenceIndex = c.sequenceIndex;
    const title = c.title;
    const role = c.role;
    const attempt = r.attempts;
    const chunkId = String(sequenceIndex);
    if (error !== undefined && (status === 'failed' || status === 'retrying' || status === 'skipped' || status === 'cancelled')) {
      ctx.emitEvent({ type, runId, time, opId, planId, chunkId, sequenceIndex, title, role, attempt, status, previous, error });
    } else {
      ctx.emitEvent({ type, runId, time, opId, planId, chunkId, sequenceIndex, title, role, attempt, status, previous });
    }
  }

  /** One `chunk.conflict` event about the record's last merge conflict. */
  #conflict(r: ChunkRecord, attempt: number, outcome: 'retrying' | 'failed' | 'resolved'): void {
    const conflict = r.mergeConflicts!.at(-1)!;
    const c = r.chunk;
    this.#m.ctx.emit('chunk.conflict', {
      planId: this.#m.planId,
      chunkId: String(c.sequenceIndex),
      sequenceIndex: c.sequenceIndex,
      title: c.title,
      attempt,
      paths: [...conflict.paths],
      with: conflict.with.map((w) => ({ chunkId: String(w.sequenceIndex), sequenceIndex: w.sequenceIndex, title: w.title, paths: [...w.paths] })),
      outcome,
    });
  }

  #listens(): boolean {
    const emitter = this.#m.ctx.emitter;
    return emitter.listenerCount('chunk.status') > 0 || emitter.listenerCount('*') > 0;
  }
}

function isAttemptResult(out: unknown): out is ChunkAttemptResult {
  if (typeof out !== 'object' || out === null) return false;
  const { output, files, toolCalls, usage } = out as { output?: unknown; files?: unknown; toolCalls?: unknown; usage?: unknown };
  return (
    typeof output === 'string' &&
    (files === undefined || (Array.isArray(files) && files.every((f) => typeof f === 'string'))) &&
    (toolCalls === undefined || (Array.isArray(toolCalls) && toolCalls.every((t) => typeof (t as { name?: unknown })?.name === 'string'))) &&
    (usage === undefined || (typeof usage === 'object' && usage !== null))
  );
}

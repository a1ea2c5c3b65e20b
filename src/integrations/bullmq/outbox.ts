/**
 * A worker's outbox: the events of one job's run, sent to the coordinator in
 * batches, without waiting for the batch before (one connection keeps them
 * in order).
 *
 * - An op's start is sent at once, with the events queued before it, so the
 *   coordinator knows what runs before the worker waits on it (a model call,
 *   a tool): a worker killed during that wait leaves the op in the
 *   coordinator's trace, closed as failed.
 * - Other events wait for the end of the turn of the event loop, so events
 *   emitted together go in one batch, and, within {@link BATCH_INTERVAL_MS}
 *   of the batch before, for the end of that interval: a stream of text
 *   deltas costs about one command per interval, not one per delta.
 * - A job's start (`begin`) is owed by the end of the turn it starts in: the
 *   batch that carries its first op start tells the coordinator, or, when the
 *   turn ends before the run starts an op (a workspace being prepared), an
 *   empty batch.
 * - What is still queued when the job completes travels in its result
 *   (`takeTail`), so a short job's last events and its result reach Redis in
 *   one command; the job's end never waits for batches in flight, since
 *   BullMQ completes (or fails) the job on the same connection, after them.
 * @module
 */
import { realClock, type Clock } from '../../core/clock.js';
import type { TroupeEvent } from '../../core/events.js';
import { errorMessage } from '../../core/errors.js';
import type { JobFailureWire } from './wire.js';

/** Largest batch, in characters of JSON (a larger single event goes alone). */
const MAX_BATCH_CHARS = 256 * 1024;

/** After a batch, how long events other than op starts wait before the next, at most, in ms. */
export const BATCH_INTERVAL_MS = 50;

/** Sends the events of one job execution. */
export class EventOutbox {
  readonly #send: (data: string) => Promise<void>;
  readonly #warn: (message: string) => void;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  #texts: string[] = [];
  #chars = 0;
  /** The pending send: at the end of this turn, or at the end of the interval. */
  #scheduled: { cancel(): void } | undefined;
  /** When the last batch was sent (on the clock). */
  #sentAt = Number.NEGATIVE_INFINITY;
  /** The job started and no batch has told the coordinator yet. */
  #owed = false;
  readonly #inFlight = new Set<Promise<void>>();

  /**
   * @param send Publishes one batch (its JSON text); batches must reach the coordinator in call order.
   * @param warn Told when an event is not JSON or a batch could not be sent (the job goes on).
   * @param options.clock The clock of the interval. Default: the real clock.
   * @param options.intervalMs After a batch, how long other events wait before the next, at most (op starts never wait). Default: {@link BATCH_INTERVAL_MS}.
   */
  constructor(send: (data: string) => Promise<void>, warn: (message: string) => void, options: { clock?: Clock; intervalMs?: number } = {}) {
    this.#send = send;
    this.#warn = warn;
    this.#clock = options.clock ?? realClock;
    this.#intervalMs = options.intervalMs ?? BATCH_INTERVAL_MS;
  }

  /** The job starts here: tell the coordinator by the end of this turn (with the events of the turn, if any). */
  begin(): void {
    this.#owed = true;
    this.#schedule();
  }

  /** Queue one event of the run. */
  push(event: TroupeEvent): void {
    let text: string;
    try {
      text = JSON.stringify(event);
    } catch (error) {
      this.#warn(`Event "${event.type}" is not JSON and was not sent: ${errorMessage(error)}`);
      return;
    }
    this.#texts.push(text);
    this.#chars += text.length + 1;
    // The op's work (a model call, a tool) may keep the worker busy for long, or be where it dies: its start goes now.
    if (event.type === 'op.started') return this.#sendQueued();
    this.#schedule();
  }

  /**
   * The job completed: the events still queued, to travel in its result,
   * when they come to at most `maxChars` characters of JSON (else they are
   * sent as batches, and the result carries none). Batches in flight are
   * not waited for.
   */
  takeTail(maxChars: number): Array<{ type: string } & Record<string, unknown>> | undefined {
    this.#unschedule();
    // The result tells the coordinator the job ran here, if no batch did.
    this.#owed = false;
    if (this.#texts.length === 0) return undefined;
    if (this.#chars > maxChars) {
      this.#sendQueued();
      return undefined;
    }
    const texts = this.#texts;
    this.#texts = [];
    this.#chars = 0;
    return JSON.parse(`[${texts.join(',')}]`) as Array<{ type: string } & Record<string, unknown>>;
  }

  /** The job failed: send what is queued and, last, why it failed. Batches in flight are not waited for. */
  fail(failure: JobFailureWire): void {
    this.#sendQueued(failure);
  }

  /** Send everything queued (and, for a failed job, why it failed); resolves once all of it is sent or given up on. */
  async flush(failure?: JobFailureWire): Promise<void> {
    this.#sendQueued(failure);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /** Send what is queued at the end of this turn, or at the end of the interval after the last batch. */
  #schedule(): void {
    if (this.#scheduled) return;
    const wait = this.#owed ? 0 : this.#sentAt + this.#intervalMs - this.#clock.now();
    const send = () => {
      this.#scheduled = undefined;
      this.#sendQueued();
    };
    if (wait <= 0) {
      // After the other callbacks of this turn of the event loop, so events emitted together go in one batch.
      const immediate = setImmediate(send);
      this.#scheduled = { cancel: () => clearImmediate(immediate) };
    } else {
      this.#scheduled = { cancel: this.#clock.setTimer(send, wait) };
    }
  }

  #unschedule(): void {
    this.#scheduled?.cancel();
    this.#scheduled = undefined;
  }

  #sendQueued(failure?: JobFailureWire): void {
    this.#unschedule();
    while (this.#texts.length > 0) {
      let size = 0;
      let count = 0;
      while (count < this.#texts.length && (count === 0 || size + this.#texts[count]!.length <= MAX_BATCH_CHARS)) size += this.#texts[count++]!.length + 1;
      const texts = this.#texts.splice(0, count);
      this.#chars -= size;
      const last = this.#texts.length === 0 ? failure : undefined;
      this.#post(`{"events":[${texts.join(',')}]${last ? `,"failure":${JSON.stringify(last)}` : ''}}`, texts.length);
      if (last) return;
    }
    this.#chars = 0;
    if (failure) this.#post(`{"events":[],"failure":${JSON.stringify(failure)}}`, 0);
    else if (this.#owed) this.#post('{"events":[]}', 0);
  }

  #post(data: string, events: number): void {
    this.#owed = false;
    this.#sentAt = this.#clock.now();
    const sent = this.#send(data).catch((error: unknown) => {
      this.#warn(`${events} events of the job could not be sent to the coordinator: ${errorMessage(error)}`);
    });
    this.#inFlight.add(sent);
    void sent.finally(() => this.#inFlight.delete(sent));
  }
}

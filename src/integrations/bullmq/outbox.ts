/**
 * A worker's outbox: the events of one job's run, sent to the coordinator in
 * batches, one batch at a time and in order. Events that arrive while a batch
 * is on its way go in the next one, so a burst of text deltas costs a few
 * Redis calls, not one each. A job's result is returned only after
 * `flush()`, so the coordinator has every event before the result.
 * @module
 */
import type { TroupeEvent } from '../../core/events.js';
import { errorMessage } from '../../core/errors.js';
import type { JobFailureWire } from './wire.js';

/** Largest batch, in characters of JSON (a larger single event goes alone). */
const MAX_BATCH_CHARS = 256 * 1024;

/** Sends the events of one job execution. */
export class EventOutbox {
  readonly #send: (data: string) => Promise<void>;
  readonly #warn: (message: string) => void;
  #texts: string[] = [];
  #failure: JobFailureWire | undefined;
  #announce = true;
  #sending: Promise<void> | undefined;

  /**
   * @param send Publishes one batch (its JSON text).
   * @param warn Told when an event is not JSON or a batch could not be sent (the job goes on).
   */
  constructor(send: (data: string) => Promise<void>, warn: (message: string) => void) {
    this.#send = send;
    this.#warn = warn;
    this.#kick(); // the first, empty batch tells the coordinator which worker took the job
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
    this.#kick();
  }

  /** Send everything queued (and, for a failed job, why it failed); resolves once it is sent or given up on. */
  async flush(failure?: JobFailureWire): Promise<void> {
    if (failure) {
      this.#failure = failure;
      this.#kick();
    }
    while (this.#sending) await this.#sending;
  }

  #kick(): void {
    // One microtask later, so events emitted together go in one batch.
    this.#sending ??= Promise.resolve().then(() => this.#drain());
  }

  async #drain(): Promise<void> {
    while (this.#texts.length > 0 || this.#failure !== undefined || this.#announce) {
      let size = 0;
      let count = 0;
      while (count < this.#texts.length && (count === 0 || size + this.#texts[count]!.length <= MAX_BATCH_CHARS)) size += this.#texts[count++]!.length + 1;
      const texts = this.#texts.splice(0, count);
      const failure = this.#texts.length === 0 ? this.#failure : undefined;
      if (failure) this.#failure = undefined;
      this.#announce = false;
      const data = `{"events":[${texts.join(',')}]${failure ? `,"failure":${JSON.stringify(failure)}` : ''}}`;
      try {
        await this.#send(data);
      } catch (error) {
        this.#warn(`${texts.length} events of the job could not be sent to the coordinator: ${errorMessage(error)}`);
      }
    }
    this.#sending = undefined;
  }
}

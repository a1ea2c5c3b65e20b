/**
 * The coordinator's reader of a queue's BullMQ event stream: one blocking
 * `XREAD` at a time on a connection of its own, from a given entry on, that
 * wakes when an entry is added (no polling) and hands on only the entries a
 * coordinator acts on — a worker's batch of events, and a job completed,
 * failed or stalled — without building anything for the others (every job
 * also adds `added`, `waiting`, `active` and `drained` entries).
 *
 * A read that Redis does not answer within its block time and a margin
 * (a connection reset can leave it unanswered) is given up: the connection
 * is reset and the read issued again from the same entry, so nothing is
 * skipped. While the connection is down, reads are retried every
 * {@link RETRY_MS}.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { sleep, type Clock } from '../../core/clock.js';
import type { RedisClient } from './connection.js';

/** How long one read blocks in Redis, in ms. */
const BLOCK_MS = 10_000;

/** How long past its block time an unanswered read is given up, in ms. */
const WATCHDOG_MARGIN_MS = 1_000;

/** How long after a failed read the next is issued, in ms. */
const RETRY_MS = 200;

/** An entry of the stream as fields: `event`, `jobId`, and the event's own. */
export type StreamEntry = Record<string, string>;

/** Events the reader hands on; the others are skipped unread. */
const WANTED = new Set(['completed', 'failed', 'stalled']);

/** Reads stream `key` of `connection` (a connection of its own: it blocks), handing each wanted entry to `handle`. */
export class StreamReader {
  readonly #connection: RedisClient;
  readonly #key: string;
  readonly #custom: string;
  readonly #handle: (entry: StreamEntry) => void;
  readonly #clock: Clock;
  #lastId: string;
  #closed = false;
  #running: Promise<void> | undefined;

  /**
   * @param from The id of the last entry already seen (reading starts after it).
   * @param custom The name of the custom event that is handed on besides completed, failed and stalled.
   * @param clock The clock of the retries and of the watchdog on an unanswered read.
   */
  constructor(connection: RedisClient, key: string, from: string, custom: string, handle: (entry: StreamEntry) => void, clock: Clock) {
    this.#connection = connection;
    this.#clock = clock;
    this.#key = key;
    this.#lastId = from;
    this.#custom = custom;
    this.#handle = handle;
  }

  /** Start reading (once). */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stop reading and drop the connection. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#connection.disconnect();
    await this.#running;
  }

  async #loop(): Promise<void> {
    while (!this.#closed) {
      let reply: unknown;
      try {
        reply = await this.#read();
      } catch {
        if (this.#closed) return;
        await sleep(this.#clock, RETRY_MS);
        continue;
      }
      if (reply) this.#take(reply);
    }
  }

  /** One blocking read: its reply (null when nothing came), given up (null) when Redis does not answer in time. */
  async #read(): Promise<unknown> {
    const reading = this.#connection.xread('BLOCK', BLOCK_MS, 'STREAMS', this.#key, this.#lastId);
    let cancel: (() => void) | undefined;
    const watchdog = new Promise<null>((resolve) => {
      cancel = this.#clock.setTimer(() => {
        // Unanswered (a reset connection can leave it so): drop it with the connection, which comes back, and read again.
        reading.catch(() => undefined);
        if (!this.#closed) this.#connection.disconnect(true);
        resolve(null);
      }, BLOCK_MS + WATCHDOG_MARGIN_MS);
    });
    try {
      return await Promise.race([reading, watchdog]);
    } finally {
      cancel?.();
    }
  }

  /** Hand on the wanted entries of one reply (`[[key, [[id, [field, value, ...]], ...]]]`). */
  #take(reply: unknown): void {
    const entries = (reply as Array<[string, Array<[string, string[]]>]>)[0]?.[1] ?? [];
    for (const [id, fields] of entries) {
      this.#lastId = id;
      // BullMQ writes the event's name first; look further only in an entry written otherwise.
      const event = fields[0] === 'event' ? fields[1] : fieldOf(fields, 'event');
      if (event === undefined || !(WANTED.has(event) || event === this.#custom)) continue;
      const entry: StreamEntry = {};
      for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]!] = fields[i + 1]!;
      try {
        this.#handle(entry);
      } catch {
        // A handler's failure must not stop the reading (handlers report their own problems).
      }
    }
  }
}

function fieldOf(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/**
 * # The store contract
 *
 * Everything troupe persists (checkpoints, run logs, presets, the team
 * registry) goes through a {@link Store}: a few required methods over two
 * kinds of data.
 *
 * - **Documents** (`get`, `set`, `delete`, `list`): JSON values under string
 *   keys. Keys are `/`-separated paths such as `runs/<id>/checkpoint`; a
 *   store must encode them so that no key can escape its storage (`../x`,
 *   absolute paths, NUL, backslashes) and `list` must return the original
 *   keys. `set` replaces the whole document atomically: a reader sees the
 *   old value or the new one, never a mix; writes to one key are applied in
 *   call order. Values are JSON: what `get` returns equals
 *   `JSON.parse(JSON.stringify(value))`, never the caller's object.
 * - **Streams** (`append`, `read`): append-only lists of JSON records, such
 *   as a run's events. A torn last record (a crash mid-append) is skipped on
 *   read and reported in `torn`, never fatal. Appends to one stream are
 *   applied in call order.
 *
 * Every call honours its `signal`: a call aborted before it starts does
 * nothing and rejects with the abort error. Failures are `StoreError`s.
 *
 * `storeSuite` in `troupe/testing` is the conformance suite every store must
 * pass; write one for Redis or PostgreSQL against it.
 * @module
 */

/** Options of every store call. */
export interface StoreCallOptions {
  /** Cancels the call. */
  signal?: AbortSignal;
}

/** Options of {@link Store.read}. */
export interface StoreReadOptions extends StoreCallOptions {
  /** Index of the first record to return (0-based). Default: 0. */
  from?: number;
}

/** What {@link Store.read} returns. */
export interface StoreReadResult {
  /** The records from `from` on, in append order. */
  records: unknown[];
  /** The index to pass as `from` to read only what is appended later. */
  next: number;
  /** Set when the last record was torn (a crash mid-append) and skipped. */
  torn?: { reason: string };
}

/** A place to keep documents and append-only streams. */
export interface Store {
  /** The document under `key`, or `undefined`. */
  get(key: string, options?: StoreCallOptions): Promise<unknown>;
  /** Replace the document under `key` atomically. `value` must be JSON-serialisable. */
  set(key: string, value: unknown, options?: StoreCallOptions): Promise<void>;
  /** Remove the document under `key`; true when there was one. */
  delete(key: string, options?: StoreCallOptions): Promise<boolean>;
  /** Keys of the documents whose key starts with `prefix`, sorted. */
  list(prefix: string, options?: StoreCallOptions): Promise<string[]>;
  /** Append one JSON record to `stream`. */
  append(stream: string, record: unknown, options?: StoreCallOptions): Promise<void>;
  /** Read a stream's records. A stream never appended to reads as empty. */
  read(stream: string, options?: StoreReadOptions): Promise<StoreReadResult>;
  /**
   * Optional: remove a whole stream; true when there was one. `pruneRuns`
   * uses it to delete run logs; stores without it keep their streams.
   */
  deleteStream?(stream: string, options?: StoreCallOptions): Promise<boolean>;
}

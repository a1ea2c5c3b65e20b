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
 * **Compare-and-set** (optional: `getVersioned` and `setIf`, a store has
 * both or neither): for a document that several processes update, read it
 * with its version, compute the new value, and write it only if nobody wrote
 * in between; on a conflict, read again and retry.
 *
 * - A version is an opaque, non-empty string that identifies the stored
 *   content: it changes whenever the document's content changes, and equal
 *   content may give an equal version (the bundled stores use the SHA-1 of
 *   the JSON text). So a compare-and-set compares content, which is what a
 *   read-modify-write needs.
 * - `setIf(key, value, { ifVersion })` writes only when the document's
 *   current version is `ifVersion`, or, with `ifVersion: null`, only when
 *   there is no document. It returns `{ ok: true, version }` (the new
 *   version) or `{ ok: false }` and then changes nothing. The comparison and
 *   the write are one step for every `setIf` on the key, from any process
 *   or connection that shares the storage; memory and Redis stores also
 *   order it with plain `set` and `delete` (a file store does within one
 *   instance: across processes, update shared documents only with `setIf`).
 *   {@link supportsCompareAndSet} tells whether a store has it.
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

/** A document and its version, as {@link Store.getVersioned} returns it. */
export interface VersionedDocument {
  /** The document. */
  value: unknown;
  /** Its version: pass it as `ifVersion` to {@link Store.setIf}. */
  version: string;
}

/** Options of {@link Store.setIf}. */
export interface StoreSetIfOptions extends StoreCallOptions {
  /** Write only if the document's version is this one; `null`: only if there is no document. */
  ifVersion: string | null;
}

/** What {@link Store.setIf} returns: the new version, or `ok: false` when the condition did not hold. */
export type SetIfResult = { ok: true; version: string } | { ok: false };

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
  /** Optional (with `setIf`): the document under `key` and its version, or `undefined`. */
  getVersioned?(key: string, options?: StoreCallOptions): Promise<VersionedDocument | undefined>;
  /**
   * Optional (with `getVersioned`): replace the document under `key` only if
   * its version is `options.ifVersion` (`null`: only if there is none), as
   * one atomic step. `{ ok: false }` when the condition did not hold.
   */
  setIf?(key: string, value: unknown, options: StoreSetIfOptions): Promise<SetIfResult>;
}

/** A store with compare-and-set. */
export type CompareAndSetStore = Store & Required<Pick<Store, 'getVersioned' | 'setIf'>>;

/**
 * Whether `store` has compare-and-set (`getVersioned` and `setIf`).
 *
 * @example
 * ```ts
 * if (supportsCompareAndSet(store)) {
 *   const current = await store.getVersioned('counter');
 *   const next = ((current?.value as number | undefined) ?? 0) + 1;
 *   const written = await store.setIf('counter', next, { ifVersion: current?.version ?? null });
 *   if (!written.ok) {
 *     // someone else wrote first: read again and retry
 *   }
 * }
 * ```
 */
export function supportsCompareAndSet(store: Store): store is CompareAndSetStore {
  return typeof store.getVersioned === 'function' && typeof store.setIf === 'function';
}

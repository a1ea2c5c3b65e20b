/**
 * `memoryStore()`: a {@link Store} in memory, for tests and short-lived runs.
 * @module
 */
import { throwIfAborted } from './abort.js';
import { checkIfVersion, checkKey, readFrom, toJsonText, versionOf } from './store-internal.js';
import type { SetIfResult, Store, StoreCallOptions, StoreReadOptions, StoreReadResult, StoreSetIfOptions, VersionedDocument } from './store.js';

/** A memory store; `clear()` empties it. */
export interface MemoryStore extends Store {
  /** Remove every document and stream. */
  clear(): void;
  deleteStream(stream: string, options?: StoreCallOptions): Promise<boolean>;
  getVersioned(key: string, options?: StoreCallOptions): Promise<VersionedDocument | undefined>;
  setIf(key: string, value: unknown, options: StoreSetIfOptions): Promise<SetIfResult>;
}

/**
 * Create a store that keeps documents and streams in memory. Values are
 * stored as JSON text, so what you read back is a copy, exactly as with a
 * file store.
 *
 * @example
 * ```ts
 * const store = memoryStore();
 * await store.set('settings', { theme: 'dark' });
 * await store.get('settings'); // { theme: 'dark' }
 * ```
 */
export function memoryStore(): MemoryStore {
  const docs = new Map<string, string>();
  const streams = new Map<string, string[]>();
  return {
    async get(key, options = {}) {
      throwIfAborted(options.signal);
      checkKey(key);
      const text = docs.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    async set(key, value, options = {}) {
      throwIfAborted(options.signal);
      checkKey(key);
      docs.set(key, toJsonText(value, `key "${key}"`));
    },
    async delete(key, options = {}) {
      throwIfAborted(options.signal);
      checkKey(key);
      return docs.delete(key);
    },
    async list(prefix, options = {}) {
      throwIfAborted(options.signal);
      checkKey(prefix, 'prefix');
      return [...docs.keys()].filter((k) => k.startsWith(prefix)).sort();
    },
    async append(stream, record, options = {}) {
      throwIfAborted(options.signal);
      checkKey(stream, 'stream');
      const text = toJsonText(record, `stream "${stream}"`);
      const list = streams.get(stream) ?? [];
      list.push(text);
      streams.set(stream, list);
    },
    async read(stream, options: StoreReadOptions = {}): Promise<StoreReadResult> {
      throwIfAborted(options.signal);
      checkKey(stream, 'stream');
      const list = streams.get(stream) ?? [];
      const from = readFrom(options.from);
      return { records: list.slice(from).map((t) => JSON.parse(t) as unknown), next: Math.max(from, list.length) };
    },
    async deleteStream(stream, options = {}) {
      throwIfAborted(options.signal);
      checkKey(stream, 'stream');
      return streams.delete(stream);
    },
    async getVersioned(key, options = {}) {
      throwIfAborted(options.signal);
      checkKey(key);
      const text = docs.get(key);
      return text === undefined ? undefined : { value: JSON.parse(text) as unknown, version: versionOf(text) };
    },
    async setIf(key, value, options) {
      throwIfAborted(options?.signal);
      checkKey(key);
      checkIfVersion(options?.ifVersion);
      const text = toJsonText(value, `key "${key}"`);
      const current = docs.get(key);
      const holds = options.ifVersion === null ? current === undefined : current !== undefined && versionOf(current) === options.ifVersion;
      if (!holds) return { ok: false };
      docs.set(key, text);
      return { ok: true, version: versionOf(text) };
    },
    clear() {
      docs.clear();
      streams.clear();
    },
  };
}

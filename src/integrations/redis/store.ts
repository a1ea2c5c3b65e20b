/**
 * `redisStore({ connection, prefix })`: a {@link Store} on Redis, shared by
 * every process that connects to the same Redis with the same prefix.
 * @module
 */
import { raceAbort, throwIfAborted } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { ConfigurationError, StoreError, TroupeError, describeValue, errorMessage } from '../../core/errors.js';
import { abortSignal, anything, clock as clockCheck, defineOptions, expectPositiveNumber } from '../../core/options.js';
import { checkIfVersion, checkKey, readFrom, toJsonText, versionOf } from '../../core/store-internal.js';
import type { SetIfResult, Store, StoreCallOptions, StoreReadOptions, StoreReadResult, StoreSetIfOptions, VersionedDocument } from '../../core/store.js';
import { RedisLink, isCluster, type RedisClient, type RedisConnection } from './connection.js';

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /**
   * A `redis://` URL or ioredis options: the store opens its own connection
   * (and closes it on `close()`), set to fail calls rather than queue them
   * while Redis is away (options you give override those settings). Or an
   * ioredis `Redis` or `Cluster` client that you own: the store uses it as
   * it is and never closes it.
   */
  connection: RedisConnection;
  /**
   * Put before every key. Default: `'troupe:'`. Stores with different
   * prefixes never see each other's keys. On Redis Cluster, put a hash tag
   * in it (`'{troupe}:'`) so all keys of the store live in one slot.
   */
  prefix?: string;
  /** Closes the store when it aborts: later calls fail with a `StoreError`. */
  signal?: AbortSignal;
  /**
   * The longest one call may take, in ms: waiting for the connection (while
   * Redis is away), the command and its reply. Past it, the call fails with
   * a `StoreError` (`details.timeoutMs`). Default: 10000.
   */
  timeoutMs?: number;
  /** Clock of that time-out. Default: the real clock. */
  clock?: Clock;
}

/** A Redis store. */
export interface RedisStore extends Store {
  /** The key prefix. */
  readonly prefix: string;
  deleteStream(stream: string, options?: StoreCallOptions): Promise<boolean>;
  getVersioned(key: string, options?: StoreCallOptions): Promise<VersionedDocument | undefined>;
  setIf(key: string, value: unknown, options: StoreSetIfOptions): Promise<SetIfResult>;
  /**
   * Close the connection the store opened, resolving once it has closed (a
   * client you gave stays open); later calls fail with a `StoreError`.
   */
  close(): Promise<void>;
}

/**
 * Compare the document's SHA-1 with ARGV[2] ('' = must be absent) and set it
 * to ARGV[1] when it matches, in one step: a Lua script runs atomically.
 */
const SET_IF = `local current = redis.call('GET', KEYS[1])
if ARGV[2] == '' then
  if current then return 0 end
elseif (not current) or redis.sha1hex(current) ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

const redisStoreOptions = defineOptions<RedisStoreOptions>('redisStore', { connection: anything, prefix: anything, signal: abortSignal, timeoutMs: anything, clock: clockCheck });

/**
 * Create a store on Redis.
 *
 * - A document `k` is the string key `<prefix>d:<k>` holding its JSON
 *   text (`SET` replaces it atomically); a stream is the list
 *   `<prefix>s:<stream>`, one JSON record per element (`RPUSH`, read with
 *   `LRANGE` from `from`). In the key, `%` becomes `%25` and `:` becomes
 *   `%3A`, so no key of one store can fall under another store's prefix.
 * - `list` walks the key space with `SCAN` (every master of a Cluster),
 *   never `KEYS`.
 * - `setIf` is a Lua script: the comparison and the write are one step for
 *   every client of the Redis. A version is the SHA-1 of the JSON text.
 * - Calls are sent in call order on one connection, so writes to one key are
 *   applied in call order.
 * - Every call ends within `timeoutMs`: while Redis is away, calls wait for
 *   the connection that long and then fail with a `StoreError`; a command
 *   in flight when the connection drops fails at once (on a connection the
 *   store opened; a client you give keeps its own settings). A call aborted
 *   after its command was sent may still take effect.
 *
 * @example
 * ```ts
 * import { redisStore } from 'troupe/redis';
 * const store = redisStore({ connection: 'redis://127.0.0.1:6379', prefix: '{myapp}:' });
 * await run(flow, input, { adapter, store });
 * await store.close();
 * ```
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected redisStore options, got ${describeValue(options)}`);
  redisStoreOptions.check(options);
  const { connection } = options;
  if (!(typeof connection === 'string' ? connection !== '' : typeof connection === 'object' && connection !== null)) {
    throw new ConfigurationError(`Expected \`connection\` to be a Redis URL, ioredis options or an ioredis client, got ${describeValue(connection)}`);
  }
  const prefix = checkPrefix(options.prefix ?? 'troupe:');
  const timeoutMs = expectPositiveNumber('timeoutMs', options.timeoutMs) ?? 10_000;
  const link = new RedisLink(connection, timeoutMs);
  const onClose = () => void link.close();
  options.signal?.addEventListener('abort', onClose, { once: true });
  if (options.signal?.aborted) onClose();
  const env: RedisEnv = {
    prefix,
    docs: `${prefix}d:`,
    docKey: (key) => `${prefix}d:${encodeRedisKey(key)}`,
    streamKey: (stream) => `${prefix}s:${encodeRedisKey(stream)}`,
    call: redisCall({ link, prefix, timeoutMs, clock: options.clock ?? realClock, storeSignal: options.signal }),
  };
  return {
    prefix,
    ...redisDocuments(env),
    ...redisStreams(env),
    async close() {
      options.signal?.removeEventListener('abort', onClose);
      await link.close();
    },
  };
}

/** One Redis call of a store: `command` with its action and key for errors, within the call's signal. */
type RedisCall = <T>(action: string, name: string, signal: AbortSignal | undefined, command: (client: RedisClient, stopped: () => boolean) => Promise<T>) => Promise<T>;

/** What the methods of one Redis store share. */
interface RedisEnv {
  prefix: string;
  /** The prefix of document keys. */
  docs: string;
  docKey(key: string): string;
  streamKey(stream: string): string;
  call: RedisCall;
}

/**
 * How a store sends its calls: each runs `command` once the client is ready,
 * within the call's signal, the store's signal and the time-out, and turns
 * failures into `StoreError`s. The time-out is a plain timer and signals are
 * only listened to when given: an AbortSignal listener costs more than a
 * Redis round trip on 127.0.0.1.
 */
function redisCall(env: { link: RedisLink; prefix: string; timeoutMs: number; clock: Clock; storeSignal: AbortSignal | undefined }): RedisCall {
  const { link, prefix, timeoutMs, clock, storeSignal } = env;
  const closed = (signal: AbortSignal): StoreError =>
    new StoreError('The Redis store is closed: its signal aborted', { cause: signal.reason, details: { prefix, closed: true } });
  return async function call<T>(action: string, name: string, signal: AbortSignal | undefined, command: (client: RedisClient, stopped: () => boolean) => Promise<T>): Promise<T> {
    throwIfAborted(signal);
    if (storeSignal?.aborted) throw closed(storeSignal);
    let timedOut = false;
    let cancelTimer = () => {};
    const timeout = new Promise<never>((_, reject) => {
      cancelTimer = clock.setTimer(() => {
        timedOut = true;
        reject(new StoreError(`Redis did not answer within ${timeoutMs} ms (${action} "${name}")${link.describeFailure()}`, { details: { key: name, prefix, timeoutMs } }));
      }, timeoutMs);
    });
    const stopped = () => timedOut || signal?.aborted === true || storeSignal?.aborted === true;
    const work = async () => {
      const client = await link.ready();
      // The call has ended (aborted, timed out) while it waited for the connection: send nothing.
      if (stopped()) throw new StoreError(`The call ended before it was sent (${action} "${name}")`, { details: { key: name, prefix } });
      return command(client, stopped);
    };
    try {
      return await raceAbort(raceAbort(Promise.race([work(), timeout]), signal), storeSignal);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (storeSignal?.aborted) throw closed(storeSignal);
      if (error instanceof TroupeError) throw error;
      throw new StoreError(`Could not ${action} "${name}" in Redis: ${errorMessage(error)}`, { cause: error, details: { key: name, prefix } });
    } finally {
      cancelTimer();
    }
  };
}

/** The document methods of a Redis store. */
function redisDocuments(env: RedisEnv): Pick<RedisStore, 'get' | 'getVersioned' | 'set' | 'setIf' | 'delete' | 'list'> {
  const { call, docKey, docs } = env;
  return {
    async get(key, opts = {}) {
      checkKey(key);
      const text = await call('read', key, opts.signal, (client) => client.get(docKey(key)));
      return text === null ? undefined : parseDocument(text, key);
    },
    async getVersioned(key, opts = {}) {
      checkKey(key);
      const text = await call('read', key, opts.signal, (client) => client.get(docKey(key)));
      return text === null ? undefined : { value: parseDocument(text, key), version: versionOf(text) };
    },
    async set(key, value, opts = {}) {
      checkKey(key);
      const text = toJsonText(value, `key "${key}"`);
      await call('write', key, opts.signal, (client) => client.set(docKey(key), text));
    },
    async setIf(key, value, opts) {
      checkKey(key);
      checkIfVersion(opts?.ifVersion);
      const text = toJsonText(value, `key "${key}"`);
      const written = await call('write', key, opts.signal, (client) => client.eval(SET_IF, 1, docKey(key), text, opts.ifVersion ?? ''));
      return written === 1 ? { ok: true, version: versionOf(text) } : { ok: false };
    },
    async delete(key, opts = {}) {
      checkKey(key);
      return (await call('delete', key, opts.signal, (client) => client.del(docKey(key)))) > 0;
    },
    async list(keyPrefix, opts = {}) {
      checkKey(keyPrefix, 'prefix');
      const pattern = `${escapeGlob(docs + encodeRedisKey(keyPrefix))}*`;
      const found = await call('list', keyPrefix, opts.signal, (client, stopped) => scanKeys(client, pattern, stopped));
      const keys = new Set<string>();
      for (const redisKey of found) {
        const encoded = redisKey.slice(docs.length);
        // A `:` cannot occur in an encoded key: the key belongs to a store whose prefix extends ours.
        if (!redisKey.startsWith(docs) || encoded.includes(':')) continue;
        keys.add(decodeRedisKey(encoded));
      }
      return [...keys].filter((k) => k.startsWith(keyPrefix)).sort();
    },
  };
}

/** The stream methods of a Redis store. */
function redisStreams(env: RedisEnv): Pick<RedisStore, 'append' | 'read' | 'deleteStream'> {
  const { call, streamKey } = env;
  return {
    async append(stream, record, opts = {}) {
      checkKey(stream, 'stream');
      const text = toJsonText(record, `stream "${stream}"`);
      await call('append to', stream, opts.signal, (client) => client.rpush(streamKey(stream), text));
    },
    async read(stream, opts: StoreReadOptions = {}): Promise<StoreReadResult> {
      checkKey(stream, 'stream');
      const from = readFrom(opts.from);
      const texts = await call('read', stream, opts.signal, (client) => client.lrange(streamKey(stream), from, -1));
      const records = texts.map((text, i) => parseRecord(text, stream, from + i));
      return { records, next: from + records.length };
    },
    async deleteStream(stream, opts = {}) {
      checkKey(stream, 'stream');
      return (await call('delete', stream, opts.signal, (client) => client.del(streamKey(stream)))) > 0;
    },
  };
}

/** Encode a store key for Redis: `%` → `%25`, `:` → `%3A` (so an encoded key holds no `:`). */
export function encodeRedisKey(key: string): string {
  return key.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

/** The store key of an encoded one (the inverse of {@link encodeRedisKey}). */
export function decodeRedisKey(encoded: string): string {
  return encoded.replace(/%25|%3A/g, (s) => (s === '%25' ? '%' : ':'));
}

/** Validate the key prefix: a non-empty string, and a hash tag in it (for Redis Cluster) must be complete. */
function checkPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string' || prefix === '') {
    throw new ConfigurationError(`Expected \`prefix\` to be a non-empty string, got ${describeValue(prefix)}`);
  }
  const open = prefix.indexOf('{');
  if (open >= 0) {
    const close = prefix.indexOf('}', open + 1);
    if (close < 0 || close === open + 1) {
      throw new ConfigurationError(`Expected the hash tag in \`prefix\` to be complete and non-empty ("{name}:"), got ${describeValue(prefix)}`);
    }
  }
  return prefix;
}

/** Escape the glob characters of `SCAN MATCH`. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** Every key matching `pattern`, on every master of a Cluster; stops once `stopped()`. */
async function scanKeys(client: RedisClient, pattern: string, stopped: () => boolean): Promise<string[]> {
  const nodes = isCluster(client) ? client.nodes('master') : [client];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      if (stopped()) return keys; // the call has already ended: its result is not used
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
  }
  return keys;
}

function parseDocument(text: string, key: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new StoreError(`Document "${key}" in Redis is not valid JSON: ${errorMessage(error)}`, { cause: error, details: { key, corrupt: true, raw: text } });
  }
}

function parseRecord(text: string, stream: string, index: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new StoreError(`Record ${index} of stream "${stream}" in Redis is not valid JSON: ${errorMessage(error)}`, { cause: error, details: { stream, index } });
  }
}

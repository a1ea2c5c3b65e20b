/**
 * The Redis connection of a store: one it opens (from a URL or ioredis
 * options) with settings that make a lost Redis fail calls instead of
 * queueing them, or an ioredis client the caller owns. Either way each call
 * first waits, within its own signal, until the client is ready.
 * @module
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { loadPeer } from '../../core/peer.js';
import { MAX_TIMER_DELAY_MS } from '../../core/clock.js';
import { StoreError, errorMessage } from '../../core/errors.js';

/** An ioredis client: a single Redis or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * Where a Redis store connects: a `redis://` URL or ioredis options (the
 * store opens its own connection and closes it on `close()`), or an ioredis
 * `Redis` or `Cluster` client that you own (the store never closes it).
 */
export type RedisConnection = string | RedisOptions | RedisClient;

/**
 * The settings of a connection the store opens. Commands are never queued
 * while Redis is away (the store waits for the connection itself, within the
 * call's time-out, and only then sends), and a command in flight when the
 * connection drops fails at once instead of being sent again, so a call that
 * reported a failure never takes effect later. Reconnection goes on in the
 * background, so calls succeed again once Redis is back.
 */
export function ownedClientOptions(timeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    // ioredis arms its own setTimeout: keep it within Node's limit (the store's own time-out, on the clock, has none).
    connectTimeout: Math.min(timeoutMs, MAX_TIMER_DELAY_MS),
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  };
}

/** True for an ioredis client (as opposed to a URL or options). */
export function isClient(connection: RedisConnection): connection is RedisClient {
  return typeof connection === 'object' && connection !== null && typeof (connection as Partial<Redis>).sendCommand === 'function';
}

/** True for a Redis Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/** The ioredis statuses with a socket open or opening: closing one ends with the client's 'end'. */
const OPEN_STATUSES: ReadonlySet<string> = new Set(['wait', 'connecting', 'connect', 'ready']);

/** A store's handle on its client: lazily created (when owned), waited for before each command. */
export class RedisLink {
  readonly owned: boolean;
  #client: Promise<RedisClient> | undefined;
  #lastError: Error | undefined;
  #closed = false;
  #becomingReady: Promise<RedisClient> | undefined;
  readonly #connection: RedisConnection;
  readonly #timeoutMs: number;

  constructor(connection: RedisConnection, timeoutMs: number) {
    this.#connection = connection;
    this.#timeoutMs = timeoutMs;
    this.owned = !isClient(connection);
  }

  /** The client once it is ready to take commands; rejects if the client ends first or the store is closed. */
  async ready(): Promise<RedisClient> {
    const client = await (this.#client ??= this.#open());
    this.#throwIfClosed();
    if (client.status === 'ready') return client;
    if (client.status === 'end' && !this.owned) {
      throw new StoreError('The Redis client given to the store has been closed', { details: { closed: true } });
    }
    // One set of listeners however many calls wait; they resume in call order.
    this.#becomingReady ??= this.#whenReady(client).finally(() => {
      this.#becomingReady = undefined;
    });
    await this.#becomingReady;
    this.#throwIfClosed();
    return client;
  }

  #throwIfClosed(): void {
    if (this.#closed) throw new StoreError('The Redis store is closed', { details: { closed: true } });
  }

  /** Resolves once `client` is ready, rejects if it ends first; connects a client that has not started. */
  #whenReady(client: RedisClient): Promise<RedisClient> {
    return new Promise<RedisClient>((resolve, reject) => {
      const cleanup = () => {
        client.off('ready', onReady);
        client.off('end', onEnd);
        client.off('error', onError);
      };
      const onReady = () => {
        cleanup();
        resolve(client);
      };
      const onEnd = () => {
        cleanup();
        reject(new StoreError(`The connection to Redis has ended${this.describeFailure()}`, { cause: this.#lastError, details: { closed: true } }));
      };
      const onError = (error: Error) => {
        this.#lastError = error;
      };
      client.on('ready', onReady);
      client.on('end', onEnd);
      client.on('error', onError);
      if (client.status === 'wait') {
        client.connect().catch((error: unknown) => {
          if (error instanceof Error) this.#lastError = error;
        });
      }
    });
  }

  /**
   * Close a connection the store opened (at once: commands in flight fail),
   * resolving once its socket has closed: ioredis ends the socket and
   * destroys it if Redis has not closed its side within its
   * `disconnectTimeout` (2 s by default). A client you gave stays open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    if (!this.owned || !this.#client) return;
    const client = await this.#client.catch(() => undefined);
    if (!client) return;
    // With a socket open or opening, ioredis ends with 'end' once it closed; between two attempts to reconnect
    // there is none, and disconnecting only stops the next attempt.
    const open = OPEN_STATUSES.has(client.status);
    const ended = open ? new Promise<void>((resolve) => client.once('end', () => resolve())) : undefined;
    client.disconnect();
    await ended;
  }

  /** ` (last error: <message>)` when a connection error was seen, else nothing: for error messages. */
  describeFailure(): string {
    return this.#lastError ? ` (last error: ${errorMessage(this.#lastError)})` : '';
  }

  async #open(): Promise<RedisClient> {
    const connection = this.#connection;
    if (isClient(connection)) return connection;
    const mod = await loadPeer('ioredis', () => import('ioredis'), 'redisStore');
    const RedisClass = mod.Redis ?? mod.default;
    const options = ownedClientOptions(this.#timeoutMs);
    const client =
      typeof connection === 'string' ? new RedisClass(connection, options) : new RedisClass({ ...options, ...connection, lazyConnect: true });
    client.on('error', (error: Error) => {
      this.#lastError = error;
    });
    return client;
  }
}

/**
 * Where a queue lives: the Redis connection, the queue's name and its key
 * prefix, checked once; and the ioredis client each side opens from them.
 * @module
 */
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { loadPeer } from '../../core/peer.js';
import type { Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { QueueError } from './errors.js';

/**
 * A Redis to reach: a `redis://` URL or ioredis options (troupe opens its own
 * connections and closes them), or an ioredis `Redis` or `Cluster` client that
 * you own (troupe uses it and duplicates of it, and never closes it).
 */
export type QueueConnection = string | RedisOptions | Redis | Cluster;

/** An ioredis client: a single Redis or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** True for an ioredis client (as opposed to a URL or options). */
export function isClient(connection: QueueConnection): connection is RedisClient {
  return typeof connection === 'object' && connection !== null && typeof (connection as Partial<Redis>).sendCommand === 'function';
}

/** True for a Redis Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/** Where a queue lives: the options `bullmqExecutor`, `startWorker` and `remote` share. */
export interface QueueLocation {
  /** The Redis: a URL, ioredis options, or an ioredis client you own. */
  connection: QueueConnection;
  /**
   * The queue's name; coordinators and workers of one queue must agree on it.
   * Letters, digits, `.`, `-`, `_` and braces (a hash tag). Default: `troupe`.
   */
  queueName?: string;
  /**
   * The prefix of every BullMQ key of the queue. Default: `troupe`. On Redis
   * Cluster the prefix or the queue name must hold a hash tag (`{troupe}`),
   * so that all keys of a queue live in one slot; a tag in the queue name
   * spreads queues over the cluster.
   */
  prefix?: string;
}

/** A checked {@link QueueLocation}. */
export interface QueuePlace {
  readonly connection: QueueConnection;
  readonly queueName: string;
  readonly prefix: string;
}

/** Check `options` (a {@link QueueLocation}); `usedBy` names the caller in messages. */
export function checkPlace(options: QueueLocation, usedBy: string): QueuePlace {
  return placeOf(checkBase(options, usedBy), options.queueName ?? 'troupe');
}

/** Check the connection and the prefix of `options` (the queue's name is checked by {@link placeOf}). */
export function checkBase(options: Omit<QueueLocation, 'queueName'>, usedBy: string): { connection: QueueConnection; prefix: string } {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected ${usedBy} options, got ${describeValue(options)}`);
  const { connection } = options;
  if (!(typeof connection === 'string' ? connection !== '' : typeof connection === 'object' && connection !== null)) {
    throw new ConfigurationError(`Expected \`connection\` to be a Redis URL, ioredis options or an ioredis client, got ${describeValue(connection)}`);
  }
  const prefix = options.prefix ?? 'troupe';
  if (typeof prefix !== 'string' || prefix === '' || prefix.length > 100) {
    throw new ConfigurationError(`Expected \`prefix\` to be a string of 1 to 100 characters (a hash tag such as "{troupe}" on Redis Cluster), got ${describeValue(prefix)}`);
  }
  return { connection, prefix };
}

/** The place of queue `queueName` beside `base` (checked: its name, and a hash tag on Redis Cluster). */
export function placeOf(base: { connection: QueueConnection; prefix: string }, queueName: unknown): QueuePlace {
  if (typeof queueName !== 'string' || !/^[A-Za-z0-9._{}-]{1,100}$/.test(queueName)) {
    throw new ConfigurationError(`Expected a queue name of 1 to 100 letters, digits, dots, dashes, underscores or braces, got ${describeValue(queueName)}`);
  }
  const { connection, prefix } = base;
  if (isClient(connection) && isCluster(connection) && !/\{[^{}]+\}/.test(`${prefix}:${queueName}`)) {
    throw new ConfigurationError(
      `On Redis Cluster, the prefix or the queue name needs a hash tag so that every key of the queue lives in one slot ("{${prefix}}", or a queue "{${queueName}}"), got prefix ${describeValue(prefix)} and queue ${describeValue(queueName)}`,
    );
  }
  return { connection, queueName, prefix };
}

/**
 * Settings of the connections troupe opens: commands fail at once while
 * Redis is away (nothing is queued to run later), reconnection goes on in
 * the background, and BullMQ's blocking commands never time out on their
 * own (`maxRetriesPerRequest: null`, as BullMQ's workers require).
 */
export function ownedQueueClientOptions(): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  };
}

/** An ioredis client and whether troupe opened it (and so closes it). */
export interface OpenedClient {
  readonly client: RedisClient;
  readonly owned: boolean;
}

/**
 * The client of a place: the one you gave, or a new one (connecting in the
 * background; `ready` events tell when). `usedBy` names the caller in the
 * error when ioredis is missing.
 */
export async function openClient(place: QueuePlace, usedBy: string): Promise<OpenedClient> {
  const connection = place.connection;
  if (isClient(connection)) return { client: connection, owned: false };
  const mod = await loadPeer('ioredis', () => import('ioredis'), usedBy);
  const RedisClass = mod.Redis ?? mod.default;
  const options = ownedQueueClientOptions();
  const client = typeof connection === 'string' ? new RedisClass(connection, options) : new RedisClass({ ...options, ...connection, lazyConnect: true });
  return { client, owned: true };
}

/** A second connection to the same Redis (for SUBSCRIBE), with the same settings. */
export function duplicateClient(client: RedisClient): RedisClient {
  return isCluster(client) ? client.duplicate() : client.duplicate();
}

/** Connect a client that has not started yet (a lazy one troupe opened); errors are reported by its `error` events. */
export function connectInBackground(client: RedisClient): void {
  if (client.status === 'wait') client.connect().catch(() => undefined);
}

/** The Redis key of troupe's own data beside a queue's BullMQ keys: `<prefix>:<queue>:troupe:<name>`. */
export function troupeKey(place: QueuePlace, name: string): string {
  return `${place.prefix}:${place.queueName}:troupe:${name}`;
}

/** Resolve once `client` is ready; reject with a `QueueError` (`timeout`) after `timeoutMs` on `clock`. */
export function whenReady(client: RedisClient, timeoutMs: number, clock: Clock, what: string): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const off = () => {
      cancel();
      client.off('ready', onReady);
    };
    const onReady = () => {
      off();
      resolve();
    };
    const cancel = clock.setTimer(() => {
      off();
      reject(new QueueError('timeout', `Redis did not become ready within ${timeoutMs} ms (${what})`, { details: { timeoutMs } }));
    }, timeoutMs);
    client.on('ready', onReady);
    connectInBackground(client);
  });
}

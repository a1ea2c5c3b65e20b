/**
 * A coordinator's connections to its queue: the Redis client (its `ready`
 * and `close` events tell when Redis comes and goes), the BullMQ `Queue` that
 * adds jobs, and the reader of the queue's event stream (on a connection of
 * its own), started at the stream's current end and routed to the handlers.
 * @module
 */
import type { Queue } from 'bullmq';
import { loadPeer } from '../../core/peer.js';
import type { Clock } from '../../core/clock.js';
import { connectInBackground, duplicateClient, openClient, whenReady, type QueuePlace, type RedisClient } from './connection.js';
import { StreamReader } from './stream-reader.js';
import { settleWithin } from './time.js';
import { BATCH_EVENT } from './wire.js';

/** Where the queue's happenings go. */
export interface QueueHandlers {
  /** The connection is ready (again). */
  up(): void;
  /** The connection was lost. */
  down(): void;
  /** A custom `troupe` event: a worker's batch of events (fields as strings). */
  batch(args: Record<string, unknown>): void;
  completed(jobId: string, returnValue: unknown): void;
  failed(jobId: string, reason: string): void;
  stalled(jobId: string): void;
}

/** The open connections of a queue. */
export interface OpenedQueue {
  readonly client: RedisClient;
  readonly queue: Queue;
  /** Close the reader and the queue (waiting at most `timeoutMs`: Redis may be away), then the connection troupe opened. */
  close(): Promise<void>;
}

/** What opening needs besides the place. */
export interface OpenQueueSettings {
  usedBy: string;
  clock: Clock;
  timeoutMs: number;
  /** Runs a Redis call within the time limit, turning failures into `QueueError`s. */
  call<T>(action: string, fn: () => Promise<T>): Promise<T>;
}

/** Connect, create the queue and its event reader, and resolve once the reader reads. */
export async function openQueue(place: QueuePlace, s: OpenQueueSettings, handlers: QueueHandlers): Promise<OpenedQueue> {
  const { queueName, prefix } = place;
  const bull = await loadPeer('bullmq', () => import('bullmq'), s.usedBy);
  const { client, owned } = await openClient(place, s.usedBy);
  const onReady = () => handlers.up();
  const onClose = () => handlers.down();
  const onError = () => undefined; // reported through the calls that fail; without a listener ioredis prints them
  client.on('ready', onReady);
  client.on('close', onClose);
  client.on('error', onError);
  const detach = () => {
    client.off('ready', onReady);
    client.off('close', onClose);
    // A connection troupe opened keeps its error listener: ioredis may still report a failed reconnection.
    if (!owned) client.off('error', onError);
  };
  let queue: Queue | undefined;
  let reader: StreamReader | undefined;
  let readerConnection: RedisClient | undefined;
  const closeAll = async () => {
    await settleWithin(Promise.allSettled([reader?.close(), queue?.close()]), s.timeoutMs, s.clock);
    // The reader drops its connection on close; one made for a reader that never started is dropped here.
    if (!reader) readerConnection?.disconnect();
    detach();
    if (owned) client.disconnect();
  };
  try {
    connectInBackground(client);
    const created = new bull.Queue(queueName, { connection: client, prefix });
    queue = created;
    created.on('error', onError);
    // Read the event stream from its current end: nothing older concerns this coordinator.
    const last = await s.call('read the event stream of', async () => {
      await created.waitUntilReady();
      return client.xrevrange(created.keys.events!, '+', '-', 'COUNT', 1);
    });
    // The reader blocks: a connection of its own.
    const connection = duplicateClient(client);
    readerConnection = connection;
    connection.on('error', onError);
    await whenReady(connection, s.timeoutMs, s.clock, s.usedBy);
    reader = new StreamReader(connection, created.keys.events!, last[0]?.[0] ?? '0-0', BATCH_EVENT, (entry) => {
      const jobId = entry.jobId ?? '';
      switch (entry.event) {
        case BATCH_EVENT:
          return handlers.batch(entry);
        case 'completed':
          return handlers.completed(jobId, parseJson(entry.returnvalue));
        case 'failed':
          return handlers.failed(jobId, entry.failedReason ?? '');
        case 'stalled':
          return handlers.stalled(jobId);
      }
    }, s.clock);
    reader.start();
    return { client, queue: created, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** A job's return value as BullMQ stored it (JSON); `undefined` when it is not JSON. */
function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

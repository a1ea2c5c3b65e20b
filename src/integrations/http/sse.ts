/**
 * Server-Sent Events on web streams: frames, heartbeats, and a bounded
 * buffer for clients that read slowly.
 * @module
 */
import { combineSignals } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { abortSignal, clock as clockCheck, defineOptions, either, nonNegativeInteger, positiveNumber, string } from '../../core/options.js';

/** Options of an SSE stream. */
export interface SseOptions {
  /** Ends the stream (the client went away, the server shuts down). */
  signal?: AbortSignal;
  /** The clock of heartbeats and of the drain time-out. Default: the real clock. */
  clock?: Clock;
  /** A comment line every this many ms keeps proxies from closing an idle stream. Default: 15000. */
  heartbeatMs?: number;
  /**
   * Bytes buffered for a client that reads slowly. Once the buffer is full
   * the stream waits for the client to read; if it does not within
   * `drainTimeoutMs`, the stream ends with a final `error` event
   * (`slow_client`). Default: 262144 (256 KiB).
   */
  bufferBytes?: number;
  /** How long a full buffer may wait for the client, in ms. Default: 10000. */
  drainTimeoutMs?: number;
  /** The reconnection delay the stream asks clients for (`retry:`), in ms. Default: 1000. */
  retryMs?: number;
}

/** The description of {@link SseOptions} (streams that take more extend its shape). */
export const sseOptions = defineOptions<SseOptions>('sseStream', {
  signal: abortSignal,
  clock: clockCheck,
  heartbeatMs: positiveNumber,
  bufferBytes: positiveNumber,
  drainTimeoutMs: positiveNumber,
  retryMs: positiveNumber,
});

/** Options of {@link sseFrame}. */
export interface SseFrameOptions {
  /** The frame's `id:` (an event's position in the log). */
  id?: string | number;
  /** The frame's `event:` (its type, when it is not `message`). */
  event?: string;
}

const sseFrameOptions = defineOptions<SseFrameOptions>('sseFrame', { id: either('a string or a non-negative integer', string, nonNegativeInteger), event: string });

/** Where a producer writes its frames. */
export interface SseSink {
  /** Write one frame (see {@link sseFrame}); waits while the buffer is full. Rejects once the stream has ended. */
  send(frame: string): Promise<void>;
  /** Aborts when the stream ends (client gone, slow client, `signal`). */
  readonly signal: AbortSignal;
}

/** The headers of an SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

/**
 * One SSE frame: `id:` (when given), `event:` (when given) and the data as
 * JSON on one `data:` line (JSON text holds no raw line break).
 */
export function sseFrame(data: unknown, options: SseFrameOptions = {}): string {
  sseFrameOptions.check(options);
  const id = options.id === undefined ? '' : `id: ${options.id}\n`;
  const event = options.event === undefined ? '' : `event: ${options.event}\n`;
  return `${id}${event}data: ${JSON.stringify(data)}\n\n`;
}

class StreamEnded extends Error {}

/**
 * A `ReadableStream` of SSE bytes written by `produce`. The stream ends when
 * `produce` returns; a throw ends it with an `error` event. Heartbeats are
 * comment lines; a client whose buffer stays full for `drainTimeoutMs` gets a
 * final `error` event (`code: 'slow_client'`) and the stream closes, so a
 * slow client never costs more than `bufferBytes` (plus that one event).
 */
export function sseStream(produce: (sink: SseSink) => Promise<void>, options: SseOptions = {}): ReadableStream<Uint8Array> {
  sseOptions.check(options);
  const clock = options.clock ?? realClock;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const bufferBytes = options.bufferBytes ?? 262_144;
  const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
  const retryMs = options.retryMs ?? 1000;
  const encoder = new TextEncoder();
  const stop = new AbortController();
  const signal = combineSignals(options.signal, stop.signal);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let wake: (() => void) | undefined;
  let cancelHeartbeat: (() => void) | undefined;

  const close = (last?: string) => {
    if (closed) return;
    closed = true;
    cancelHeartbeat?.();
    signal.removeEventListener('abort', onAbort);
    stop.abort(new StreamEnded('The event stream ended'));
    wake?.();
    try {
      if (last !== undefined) controller.enqueue(encoder.encode(last));
      controller.close();
    } catch {
      // the consumer cancelled: nothing to close
    }
  };
  const onAbort = () => close();
  const room = async (): Promise<void> => {
    const deadline = clock.now() + drainTimeoutMs;
    while (!closed && (controller.desiredSize ?? 0) <= 0) {
      const left = deadline - clock.now();
      if (left <= 0) {
        close(sseFrame({ code: 'slow_client', message: `The client read too slowly: ${bufferBytes} bytes waited ${drainTimeoutMs} ms` }, { event: 'error' }));
        break;
      }
      await new Promise<void>((resolve) => {
        const cancel = clock.setTimer(() => done(), left);
        const done = () => {
          cancel();
          wake = undefined;
          resolve();
        };
        wake = done;
      });
    }
  };
  const beat = () => {
    if (closed) return;
    if ((controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(': keep-alive\n\n'));
    cancelHeartbeat = clock.setTimer(beat, heartbeatMs);
  };
  const sink: SseSink = {
    signal,
    async send(frame) {
      if (closed) throw new StreamEnded('The event stream ended');
      await room();
      if (closed) throw new StreamEnded('The event stream ended');
      controller.enqueue(encoder.encode(frame));
    },
  };

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (signal.aborted) {
          close();
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
        controller.enqueue(encoder.encode(`retry: ${retryMs}\n\n`));
        cancelHeartbeat = clock.setTimer(beat, heartbeatMs);
        void Promise.resolve()
          .then(() => produce(sink))
          .then(
            () => close(),
            (error: unknown) => {
              if (closed || signal.aborted) close();
              else close(sseFrame({ code: 'stream_failed', message: errorMessage(error) }, { event: 'error' }));
            },
          );
      },
      pull() {
        wake?.();
      },
      cancel() {
        close();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: bufferBytes }),
  );
}

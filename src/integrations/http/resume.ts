/**
 * A `fetch` whose event streams survive a cut connection: it reconnects
 * with `Last-Event-ID` and splices the rest in, so the reader sees one
 * stream with every event once. Made for AG-UI's `HttpAgent` (its `fetch`
 * option), whose own requests are plain POSTs that end with the connection.
 * @module
 */
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { clock as clockCheck, defineOptions, func, positiveInteger, positiveNumber } from '../../core/options.js';

/** A `fetch` as `resumingFetch` takes and returns it (AG-UI's `HttpAgent` takes one in its `fetch` option). */
export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Options of {@link resumingFetch}. */
export interface ResumingFetchOptions {
  /** The fetch that sends the requests. Default: the global `fetch`. */
  fetch?: FetchFunction;
  /** How many reconnects in a row may bring no new event before the stream fails with the last error. Default: 5. */
  maxAttempts?: number;
  /** The wait before a reconnect when the stream named none (`retry:`), in ms. Default: 1000. */
  retryMs?: number;
  /** The clock of the waits. Default: the real clock. */
  clock?: Clock;
}

const resumingFetchOptions = defineOptions<ResumingFetchOptions>('resumingFetch', { fetch: func, maxAttempts: positiveInteger, retryMs: positiveNumber, clock: clockCheck });

/**
 * A `fetch` that resumes event streams. A response that is not an event
 * stream (`text/event-stream`), or whose request body cannot be sent again
 * (a stream), is returned as it is. Otherwise the body it returns passes on
 * whole SSE frames only; when the connection breaks, it waits the stream's
 * `retry:` and sends the same request again with `Last-Event-ID: <the last
 * id it passed on>` (without one when no event came through yet), and goes
 * on with that response (a 204 ends the stream). A server that honours `Last-Event-ID` — troupe's event routes and
 * `POST /agui` do — so loses and repeats nothing. After `maxAttempts`
 * reconnects in a row without a new event, or on a reply that is not an
 * event stream, the body fails.
 *
 * @example
 * ```ts
 * import { HttpAgent } from '@ag-ui/client';
 * const agent = new HttpAgent({ url: 'https://app.example/api/agui', headers, fetch: resumingFetch() });
 * ```
 */
export function resumingFetch(options: ResumingFetchOptions = {}): FetchFunction {
  resumingFetchOptions.check(options);
  const send: FetchFunction = options.fetch ?? ((input, init) => fetch(input, init));
  const settings: Settings = { maxAttempts: options.maxAttempts ?? 5, retryMs: options.retryMs ?? 1000, clock: options.clock ?? realClock };
  return async (input, init = {}) => {
    const response = await send(input, init);
    if (!isEventStream(response) || !response.body || !replayable(init.body)) return response;
    const again = (lastEventId: string | undefined) => {
      const headers = new Headers(init.headers);
      if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
      return send(input, { ...init, headers });
    };
    return new Response(spliced(response.body, again, init.signal ?? undefined, settings), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

interface Settings {
  maxAttempts: number;
  retryMs: number;
  clock: Clock;
}

function isEventStream(response: Response): boolean {
  return response.status === 200 && (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

/** A body that can be sent again: none, text, or bytes. */
function replayable(body: RequestInit['body']): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof ArrayBuffer || ArrayBuffer.isView(body) || body instanceof URLSearchParams || body instanceof Blob;
}

/** The whole SSE frames of `first`, then of each response to a reconnect, as one stream. */
function spliced(first: ReadableStream<Uint8Array>, again: (lastEventId: string | undefined) => Promise<Response>, signal: AbortSignal | undefined, settings: Settings): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let reader = first.getReader();
  const frames = new FrameSplitter(settings.retryMs);
  let attempts = 0;
  /** Connect again until a stream answers; undefined when the server says there is nothing more (204). */
  const reconnect = async (cause: unknown): Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> => {
    let last = cause;
    for (;;) {
      // Events passed on without an id cannot be skipped by the server: the stream cannot go on.
      if (signal?.aborted || (frames.lastEventId === undefined && frames.events > 0) || attempts >= settings.maxAttempts) throw last;
      attempts++;
      frames.reset();
      await sleep(settings.clock, frames.retryMs, signal);
      try {
        const response = await again(frames.lastEventId);
        if (response.status === 204) return undefined;
        if (!isEventStream(response) || !response.body) {
          await response.body?.cancel().catch(() => undefined);
          throw new Error(`The event stream could not be resumed: HTTP ${response.status}`);
        }
        return response.body.getReader();
      } catch (error) {
        last = error;
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          const next = await reconnect(error);
          if (!next) return controller.close();
          reader = next;
          continue;
        }
        if (chunk.done) {
          const rest = frames.end();
          if (rest !== '') controller.enqueue(encoder.encode(rest));
          return controller.close();
        }
        const whole = frames.push(chunk.value);
        if (whole.text !== '') {
          if (whole.events > 0) attempts = 0;
          return controller.enqueue(encoder.encode(whole.text));
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Cuts SSE text into whole frames (a frame ends at an empty line), keeping
 * the last event id and retry it passed on. Lines end with LF, CRLF or CR;
 * each byte is looked at a bounded number of times.
 */
class FrameSplitter {
  lastEventId: string | undefined;
  /** Frames with data passed on. */
  events = 0;
  retryMs: number;
  #decoder = new TextDecoder();
  #pending = '';
  /** Where to look for the next frame end in `#pending`. */
  #scanned = 0;
  /** A CR at the end of the last chunk (its LF may come next). */
  #cr = false;

  constructor(retryMs: number) {
    this.retryMs = retryMs;
  }

  /** The whole frames this chunk completes (as LF text), and how many of them carry data. */
  push(bytes: Uint8Array): { text: string; events: number } {
    let text = this.#decoder.decode(bytes, { stream: true });
    if (this.#cr && text.startsWith('\n')) text = text.slice(1);
    this.#cr = text.endsWith('\r');
    this.#pending += text.includes('\r') ? text.split('\r\n').join('\n').split('\r').join('\n') : text;
    let end = -1;
    for (let at = this.#pending.indexOf('\n\n', this.#scanned); at >= 0; at = this.#pending.indexOf('\n\n', at + 1)) end = at;
    if (end < 0) {
      this.#scanned = Math.max(0, this.#pending.length - 1);
      return { text: '', events: 0 };
    }
    const whole = this.#pending.slice(0, end + 2);
    this.#pending = this.#pending.slice(end + 2);
    this.#scanned = 0;
    return { text: whole, events: this.#read(whole) };
  }

  /** What is left when the stream ends cleanly (a last frame without its empty line). */
  end(): string {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = '';
    return rest;
  }

  /** Forget a frame cut in the middle: the server sends it again. */
  reset(): void {
    this.#decoder = new TextDecoder();
    this.#pending = '';
    this.#scanned = 0;
    this.#cr = false;
  }

  /** Note the ids and retries of whole frames; the number of frames with data. */
  #read(text: string): number {
    let events = 0;
    for (const frame of text.split('\n\n')) {
      let data = false;
      let id: string | undefined;
      for (const line of frame.split('\n')) {
        if (line.startsWith('data')) data = true;
        else if (line.startsWith('id:') || line === 'id') id = fieldValue(line, 2);
        else if (line.startsWith('retry:')) {
          const value = fieldValue(line, 5);
          if (value !== '' && [...value].every((c) => c >= '0' && c <= '9')) this.retryMs = Number(value);
        }
      }
      if (id !== undefined && !id.includes('\u0000')) this.lastEventId = id;
      if (data) events++;
    }
    this.events += events;
    return events;
  }
}

/** The value of an SSE field line whose name is `nameLength` long: after the colon and one optional space. */
function fieldValue(line: string, nameLength: number): string {
  const value = line.slice(nameLength + 1);
  return value.startsWith(' ') ? value.slice(1) : value;
}

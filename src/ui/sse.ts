/**
 * Server-sent events read from a byte stream (what `fetch` gives for an
 * AG-UI `POST`; `EventSource` reads troupe's stream by itself). Linear:
 * each character is looked at once, whatever the chunks' boundaries.
 * @module
 */

/** One event of an SSE stream. */
export interface SseEvent {
  /** `message` unless the stream named it. */
  event: string;
  data: string;
  id?: string;
}

/** The largest event kept, in characters; a longer one is dropped whole. */
export const MAX_SSE_EVENT = 8 * 1024 * 1024;

/** Reads SSE text as it arrives: `push` each decoded chunk, get the events it completed. */
export class SseReader {
  #line = '';
  #data: string[] = [];
  #size = 0;
  #event = '';
  #id: string | undefined;
  #lastCr = false;

  /** The events completed by `chunk`. */
  push(chunk: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      // A CR LF pair is one line end, also when a chunk ends between them.
      if (c === 10 && this.#lastCr && i === start) {
        this.#lastCr = false;
        start = i + 1;
        continue;
      }
      if (c !== 10 && c !== 13) continue;
      this.#line += chunk.slice(start, i);
      this.#field(events);
      this.#lastCr = c === 13;
      start = i + 1;
    }
    if (start < chunk.length) {
      this.#line += chunk.slice(start);
      this.#lastCr = false;
    }
    if (this.#line.length > MAX_SSE_EVENT) this.#line = '';
    return events;
  }

  #field(events: SseEvent[]): void {
    const line = this.#line;
    this.#line = '';
    if (line === '') {
      if (this.#data.length > 0 && this.#size <= MAX_SSE_EVENT) events.push({ event: this.#event || 'message', data: this.#data.join('\n'), ...(this.#id !== undefined ? { id: this.#id } : {}) });
      this.#data = [];
      this.#size = 0;
      this.#event = '';
      return;
    }
    if (line.charCodeAt(0) === 58) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (name === 'data') {
      this.#size += value.length;
      if (this.#size <= MAX_SSE_EVENT) this.#data.push(value);
    } else if (name === 'event') this.#event = value;
    else if (name === 'id' && !value.includes('\0')) this.#id = value;
  }
}

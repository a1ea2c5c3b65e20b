// A node:http server on 127.0.0.1 (a free port) around a web-standard
// handler, through troupe/http's own `toNodeListener`, closed by the test.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeListener } from '../../src/integrations/http/node.js';

/** A running test server. */
export interface TestServer {
  readonly url: string;
  readonly server: Server;
  /** Cut every open connection (a network drop, as the client sees it). */
  dropConnections(): void;
  close(): Promise<void>;
}

/** Start a server for `handler` on 127.0.0.1. */
export async function startServer(handler: (request: Request) => Promise<Response>): Promise<TestServer> {
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    dropConnections: () => server.closeAllConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Read a whole SSE body into frames (`{ id, event, data }`), comments left out. */
export async function readFrames(body: ReadableStream<Uint8Array>): Promise<Array<{ id?: string; event?: string; data?: string; comment?: string; retry?: string }>> {
  const text = await new Response(body).text();
  return parseFrames(text);
}

/** Parse SSE text into frames. */
export function parseFrames(text: string): Array<{ id?: string; event?: string; data?: string; comment?: string; retry?: string }> {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const frame: { id?: string; event?: string; data?: string; comment?: string; retry?: string } = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comment = line.slice(1).trim();
        else if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) frame.data = line.slice(6);
        else if (line.startsWith('retry: ')) frame.retry = line.slice(7);
      }
      return frame;
    });
}

/** Read SSE events from `response` until `until` holds for one (or the stream ends); returns every event read. */
export async function readUntil<T = Record<string, unknown>>(response: Response, until: (event: T) => boolean): Promise<T[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: T[] = [];
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return events;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = parseFrames(buffer.slice(0, end + 2))[0];
        buffer = buffer.slice(end + 2);
        if (frame?.data !== undefined) {
          const event = JSON.parse(frame.data) as T;
          events.push(event);
          if (until(event)) return events;
        }
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

// An OpenAI-compatible Chat Completions server on 127.0.0.1 that allows
// `limit` requests in any `windowMs` and answers 429 with `Retry-After` (and
// `retry-after-ms`) beyond it. Used by the rate-limit tests and bench.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running limited server. */
export interface LimitedChatServer {
  /** The base URL (`.../v1`). */
  readonly url: string;
  /** Requests answered (in the order they arrived, with their arrival time). */
  readonly accepted: number[];
  /** Requests refused with 429. */
  readonly refused: number[];
  close(): Promise<void>;
}

/** Start the server: `limit` requests per `windowMs` (a sliding window on arrival time), each answered after `latencyMs`. */
export async function startLimitedChatServer(options: { limit: number; windowMs: number; latencyMs?: number }): Promise<LimitedChatServer> {
  const accepted: number[] = [];
  const refused: number[] = [];
  const window: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      while (window.length > 0 && window[0]! <= now - options.windowMs) window.shift();
      if (window.length >= options.limit) {
        refused.push(now);
        const waitMs = window[window.length - options.limit]! + options.windowMs - now;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(Math.ceil(waitMs / 1000)), 'retry-after-ms': String(waitMs) });
        res.end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } }));
        return;
      }
      window.push(now);
      accepted.push(now);
      let body: { model?: string; stream?: boolean } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // answered as a plain completion
      }
      const reply = () => {
        const text = `ok ${accepted.length}`;
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model ?? 'm', choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }] })}\n\n`);
          res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model ?? 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })}\n\n`);
          res.end('data: [DONE]\n\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 0,
            model: body.model ?? 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
          }),
        );
      };
      if (options.latencyMs) setTimeout(reply, options.latencyMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    accepted,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

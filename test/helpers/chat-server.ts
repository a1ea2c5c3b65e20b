import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdapterScenario } from '../../src/testing/adapter-suite.js';

/** What the fake server answers to one request. */
export interface FakeReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** Never answer. */
  hang?: boolean;
  /** Stream the text, then keep the response open (streamed requests only). */
  hangAfterText?: boolean;
}

/** One request the server received. */
export interface FakeRequest {
  body: Record<string, unknown> & { messages: Array<Record<string, unknown>>; stream?: boolean };
  headers: IncomingMessage['headers'];
}

/** A Chat Completions server on 127.0.0.1 that answers as `handler` says, as JSON or as server-sent events. */
export class FakeChatServer {
  readonly requests: FakeRequest[] = [];
  handler: (request: FakeRequest, index: number) => FakeReply = () => ({ text: '' });
  /** Requests of `hang` replies whose connection the client closed. */
  hungUp = 0;
  #waiters: Array<{ when: () => boolean; resolve: () => void }> = [];
  #server: Server | undefined;
  #url = '';

  get url(): string {
    return this.#url;
  }

  async start(): Promise<string> {
    if (this.#server) return this.#url;
    const server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this.#url;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `when()` holds (checked after each request and each closed connection). */
  until(when: () => boolean): Promise<void> {
    if (when()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ when, resolve }));
  }

  #wake(): void {
    this.#waiters = this.#waiters.filter((w) => (w.when() ? (w.resolve(), false) : true));
  }

  /** Play a conformance scenario: answer every request as it says. */
  play(scenario: AdapterScenario): void {
    this.requests.length = 0;
    switch (scenario.kind) {
      case 'text':
        this.handler = () => ({
          text: scenario.text,
          usage: { prompt_tokens: scenario.usage.inputTokens, completion_tokens: scenario.usage.outputTokens },
        });
        break;
      case 'tool-call':
        this.handler = (r) =>
          r.body.messages.some((m) => m['role'] === 'tool')
            ? { text: scenario.finalText }
            : { toolCalls: [{ id: 'call_1', name: scenario.tool, arguments: JSON.stringify(scenario.arguments) }] };
        break;
      case 'hang':
        this.handler = () => ({ hang: true });
        break;
      case 'stream-hang':
        this.handler = () => ({ text: scenario.text, hangAfterText: true });
        break;
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: FakeRequest = { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as FakeRequest['body'], headers: req.headers };
    this.requests.push(request);
    const reply = this.handler(request, this.requests.length - 1);
    if (reply.hang || (reply.hangAfterText && !request.body.stream)) {
      res.on('close', () => {
        this.hungUp++;
        this.#wake();
      });
      this.#wake();
      return;
    }
    this.#wake();
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      res.end(JSON.stringify({ error: { message: `fake failure ${reply.status}`, type: 'server_error' } }));
      return;
    }
    const usage = reply.usage && {
      prompt_tokens: reply.usage.prompt_tokens,
      completion_tokens: reply.usage.completion_tokens,
      total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens,
      ...(reply.usage.cached_tokens !== undefined && { prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens } }),
    };
    const base = { id: 'chatcmpl-1', created: 1, model: String(request.body['model']) };
    const toolCalls = (reply.toolCalls ?? []).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    if (!request.body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
              message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls.length && { tool_calls: toolCalls }) },
            },
          ],
          ...(usage && { usage }),
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = (delta: unknown, finish: string | null = null) =>
      send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
    chunk({ role: 'assistant', content: '' });
    // Text in pieces of 3 characters; each tool call in two fragments, as real servers do.
    for (let i = 0; i < (reply.text ?? '').length; i += 3) chunk({ content: reply.text!.slice(i, i + 3) });
    if (reply.hangAfterText) {
      res.on('close', () => {
        this.hungUp++;
        this.#wake();
      });
      return;
    }
    (reply.toolCalls ?? []).forEach((c, index) => {
      const half = Math.floor(c.arguments.length / 2);
      chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments.slice(0, half) } }] });
      chunk({ tool_calls: [{ index, function: { arguments: c.arguments.slice(half) } }] });
    });
    chunk({}, toolCalls.length ? 'tool_calls' : 'stop');
    if (request.body['stream_options'] && usage) send({ ...base, object: 'chat.completion.chunk', choices: [], usage });
    res.end('data: [DONE]\n\n');
  }
}

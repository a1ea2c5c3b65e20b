// A local stand-in for the Anthropic Messages API, enough for the real
// Claude Code CLI in `-p` mode (2.1.x): `POST /v1/messages` answered from a
// script of turns, as server-sent events (Claude Code always streams) or
// JSON, with usage; `HEAD /` (the CLI's connectivity probe) and
// `count_tokens` answered; anything else a 404 in the API's error shape.
// Listens on a free port of 127.0.0.1 and records every request body.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted model turn: text, tool calls, or both. */
export interface AnthropicTurn {
  text?: string;
  /** Tool calls; `name` ending with `suffix` picks the offered tool (MCP tools are named `mcp__<server>__<tool>`). */
  toolUses?: Array<{ suffix: string; input: Record<string, unknown> }>;
}

/** A request the mock received. */
export interface AnthropicRequest {
  path: string;
  body: {
    model?: string;
    stream?: boolean;
    tools?: Array<{ name: string }>;
    messages?: Array<{ role: string; content: unknown }>;
    [key: string]: unknown;
  };
}

/** A running mock. */
export interface MockAnthropic {
  /** `ANTHROPIC_BASE_URL` for the CLI. */
  url: string;
  /** The `/v1/messages` requests that consumed a turn, in order. */
  turns: AnthropicRequest[];
  /** Every `/v1/messages` request, side requests included, in order. */
  messages: AnthropicRequest[];
  /** Every request, in order. */
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

/** Options of {@link startMockAnthropic}. */
export interface MockAnthropicOptions {
  /**
   * Which `/v1/messages` requests consume a turn of the script: those that
   * offer tools (a request without tools is a side request of the CLI and
   * gets `ok`), or every one (for an agent offered no tool at all; Claude
   * Code 2.1.197 and Copilot 1.0.102 send no side requests in `-p` mode).
   * Default: `tools`.
   */
  turns?: 'tools' | 'all';
}

/**
 * Start the mock. A `/v1/messages` request that offers tools consumes the
 * next turn of `script` (a function of the request may pick it instead);
 * one without tools is a side request of the CLI and gets `ok`, unless
 * `options.turns` is `all`.
 */
export async function startMockAnthropic(
  script: AnthropicTurn[] | ((request: AnthropicRequest, index: number) => AnthropicTurn),
  options: MockAnthropicOptions = {},
): Promise<MockAnthropic> {
  const turns: AnthropicRequest[] = [];
  const messages: AnthropicRequest[] = [];
  const requests: Array<{ method: string; path: string }> = [];
  let ids = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      requests.push({ method: req.method ?? '', path: url.pathname });
      try {
        route(req, res, url.pathname, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        send(res, 500, { type: 'error', error: { type: 'api_error', message: String(error) } });
      }
    });
  });

  const route = (req: IncomingMessage, res: ServerResponse, path: string, raw: string) => {
    if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) return send(res, 200, {});
    const body = raw ? (JSON.parse(raw) as AnthropicRequest['body']) : {};
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') return send(res, 200, { input_tokens: estimate(body) });
    if (req.method !== 'POST' || path !== '/v1/messages') {
      return send(res, 404, { type: 'error', error: { type: 'not_found_error', message: `mock: no route ${req.method} ${path}` } });
    }
    const request = { path, body };
    messages.push(request);
    let turn: AnthropicTurn;
    if ((body.tools && body.tools.length > 0) || options.turns === 'all') {
      const index = turns.length;
      turns.push(request);
      turn = typeof script === 'function' ? script(request, index) : (script[index] ?? { text: 'mock: no scripted turn left' });
    } else {
      turn = { text: 'ok' };
    }
    const offered = (body.tools ?? []).map((t) => t.name);
    const blocks: Array<Record<string, unknown>> = [];
    if (turn.text !== undefined) blocks.push({ type: 'text', text: turn.text });
    for (const use of turn.toolUses ?? []) {
      const name = offered.find((n) => n.endsWith(use.suffix)) ?? `missing_${use.suffix}`;
      blocks.push({ type: 'tool_use', id: `toolu_mock_${++ids}`, name, input: use.input });
    }
    const stopReason = turn.toolUses?.length ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: estimate(body), output_tokens: Math.ceil(JSON.stringify(blocks).length / 4), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const message = { id: `msg_mock_${++ids}`, type: 'message', role: 'assistant', model: body.model ?? 'claude-mock' };
    if (!body.stream) return send(res, 200, { ...message, content: blocks, stop_reason: stopReason, stop_sequence: null, usage });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    blocks.forEach((block, index) => {
      if (block['type'] === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block['text'] } });
      } else {
        event('content_block_start', { index, content_block: { ...block, input: {} } });
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block['input']) } });
      }
      event('content_block_stop', { index });
    });
    event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    event('message_stop', {});
    res.end();
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    turns,
    messages,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** About four characters a token, over what the model would read. */
function estimate(body: AnthropicRequest['body']): number {
  return Math.max(1, Math.ceil(JSON.stringify([body['system'] ?? '', body.messages ?? [], body.tools ?? []]).length / 4));
}

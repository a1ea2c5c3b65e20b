// A local stand-in for the OpenAI Responses API as the real Codex CLI uses
// it (`wire_api = "responses"`, 0.169): `POST /v1/responses` with
// `stream: true`, answered from a script of turns as server-sent events
// (`response.created`, `response.output_item.added` / `.done`, text
// deltas, `response.completed` with usage). Codex offers MCP tools in a
// `namespace` tool (`mcp__<server>`), and a call names the namespace and the
// tool. Listens on a free port of 127.0.0.1 and records every request body.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted model turn: text, or tool calls (in one response, so the CLI may run them in parallel). */
export interface ResponsesTurn {
  text?: string;
  calls?: Array<{ namespace?: string; name: string; arguments: Record<string, unknown> }>;
  /** The usage the response reports. Default: about a quarter of the request's and the answer's JSON length, in tokens. */
  usage?: { input: number; output: number };
}

/** A request the mock received. */
export interface ResponsesRequest {
  model?: string;
  tools?: Array<{ type: string; name?: string; tools?: Array<{ name: string }> }>;
  input?: Array<{ type: string; role?: string; call_id?: string; output?: unknown; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** A running mock. */
export interface MockResponses {
  /** The provider's `base_url` for Codex (ends in `/v1`). */
  url: string;
  /** The `/v1/responses` requests, in order. */
  turns: ResponsesRequest[];
  /** Every request, in order. */
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

/** Start the mock: the n-th `POST /v1/responses` gets turn n of `script`. */
export async function startMockResponses(script: ResponsesTurn[] | ((request: ResponsesRequest, index: number) => ResponsesTurn)): Promise<MockResponses> {
  const turns: ResponsesRequest[] = [];
  const requests: Array<{ method: string; path: string }> = [];
  let ids = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      requests.push({ method: req.method ?? '', path });
      if (req.method !== 'POST' || path !== '/v1/responses') return send(res, 404, { error: { message: `mock: no route ${req.method} ${path}`, type: 'invalid_request_error' } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ResponsesRequest;
      const index = turns.length;
      turns.push(body);
      const turn = typeof script === 'function' ? script(body, index) : (script[index] ?? { text: 'mock: no scripted turn left' });
      stream(res, turn, body, `resp_mock_${++ids}`);
    });
  });

  const stream = (res: ServerResponse, turn: ResponsesTurn, body: ResponsesRequest, id: string) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('response.created', { response: { id, status: 'in_progress', model: body.model ?? 'mock' } });
    const items: Array<Record<string, unknown>> = [];
    if (turn.text !== undefined) {
      items.push({ type: 'message', id: `msg_${++ids}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
    }
    for (const call of turn.calls ?? []) {
      items.push({
        type: 'function_call',
        id: `fc_${++ids}`,
        call_id: `call_${ids}`,
        name: call.name,
        ...(call.namespace ? { namespace: call.namespace } : {}),
        arguments: JSON.stringify(call.arguments),
        status: 'completed',
      });
    }
    items.forEach((item, index) => {
      const started = item['type'] === 'message' ? { ...item, content: [], status: 'in_progress' } : { ...item, arguments: '', status: 'in_progress' };
      event('response.output_item.added', { output_index: index, item: started });
      if (item['type'] === 'message') {
        event('response.output_text.delta', { item_id: item['id'], output_index: index, content_index: 0, delta: turn.text });
      }
      event('response.output_item.done', { output_index: index, item });
    });
    const input = turn.usage?.input ?? Math.ceil(JSON.stringify(body.input ?? []).length / 4);
    const output = turn.usage?.output ?? Math.ceil(JSON.stringify(items).length / 4);
    event('response.completed', {
      response: {
        id,
        status: 'completed',
        output: items,
        usage: {
          input_tokens: input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + output,
        },
      },
    });
    res.end();
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    turns,
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

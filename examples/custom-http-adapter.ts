/**
 * A complete custom adapter for a plain HTTP chat endpoint, and a run on it.
 * The endpoint takes `{ system, messages }` and answers `{ reply, usage }`.
 * To stay offline, this example starts a tiny endpoint on 127.0.0.1 itself;
 * point `url` at your own service instead.
 *
 *   npx tsx examples/custom-http-adapter.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agent, run, type ModelAdapter } from 'troupe';
import { AdapterError, abortError, throwIfAborted, type ModelSession, type ModelTurn } from 'troupe/kernel';

/** Options of the HTTP chat adapter. */
export interface HttpChatAdapterOptions {
  /** The endpoint's URL. */
  url: string;
  /** Sent as a bearer token, when given. */
  apiKey?: string;
}

type Message = { role: 'user' | 'assistant'; content: string };

/** An adapter for a plain HTTP chat endpoint (text only: no tools, no streaming). */
export function httpChatAdapter(options: HttpChatAdapterOptions): ModelAdapter {
  let nextId = 1;
  return {
    id: 'http-chat',
    capabilities: { tools: false, streaming: false },
    async openSession(spec, openOptions): Promise<ModelSession> {
      throwIfAborted(openOptions?.signal); // an aborted open rejects with the abort error
      const history: Message[] = []; // the session keeps its own history
      return {
        id: `http-${nextId++}`,
        async send(input, sendOptions): Promise<ModelTurn> {
          if (typeof input !== 'string') throw new AdapterError('http-chat has no tools');
          history.push({ role: 'user', content: input });
          const signal = sendOptions?.signal;
          // fetch rejects an abort with its own AbortError: reject with the abort error troupe expects instead.
          const response = await fetch(options.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
            },
            body: JSON.stringify({ model: spec.model, system: spec.system, messages: history }),
            signal: signal ?? null, // aborts and time-outs reach the request
          }).catch((error: unknown) => {
            throw signal?.aborted ? abortError(signal) : error;
          });
          if (!response.ok) throw new AdapterError(`http-chat: HTTP ${response.status}`, { details: { status: response.status } });
          const body = (await response.json().catch((error: unknown) => {
            throw signal?.aborted ? abortError(signal) : error;
          })) as { reply: string; usage?: { input: number; output: number } };
          history.push({ role: 'assistant', content: body.reply });
          return {
            text: body.reply,
            toolCalls: [],
            ...(body.usage ? { usage: { inputTokens: body.usage.input, outputTokens: body.usage.output } } : {}),
          };
        },
        async close() {
          history.length = 0;
        },
      };
    },
  };
}

// A stand-in endpoint on 127.0.0.1 that echoes the last message.
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  req.on('end', () => {
    const { messages } = JSON.parse(raw) as { messages: Message[] };
    const last = messages.at(-1)?.content ?? '';
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ reply: `You said: ${last}`, usage: { input: last.length, output: last.length + 10 } }));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

try {
  const adapter = httpChatAdapter({ url: `http://127.0.0.1:${port}/chat` });
  const result = await run(agent({ name: 'echo', system: 'Echo the user.' }), 'hello over HTTP', { adapter });
  console.log(result.output, result.usage);
} finally {
  server.close();
}

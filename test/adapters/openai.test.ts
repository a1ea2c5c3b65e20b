import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openaiAdapter } from '../../src/adapters/openai.js';
import type { SessionEvent } from '../../src/core/adapter.js';
import { AdapterError, ConfigurationError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';
import { FakeChatServer } from '../helpers/chat-server.js';

const server = new FakeChatServer();
afterAll(() => server.stop());

for (const streaming of [true, false]) {
  adapterSuite(
    `openai (${streaming ? 'streamed' : 'plain JSON'})`,
    async (scenario) => {
      server.play(scenario);
      return openaiAdapter({ baseURL: await server.start(), apiKey: 'test', model: 'fake-model', streaming, maxRetries: 0 });
    },
    { runner: { describe, it } },
  );
}

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

describe('openaiAdapter', () => {
  it.each([true, false])('sends system, temperature, tools and the whole history (streaming %s)', async (streaming) => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.handler = (r) =>
      r.body.messages.at(-1)?.['role'] === 'tool'
        ? { text: 'It is sunny in Oslo.', usage: { prompt_tokens: 20, completion_tokens: 5, cached_tokens: 12 } }
        : { toolCalls: [{ id: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}' }], usage: { prompt_tokens: 10, completion_tokens: 4 } };
    const adapter = openaiAdapter({ baseURL, apiKey: 'sk-test', streaming, maxRetries: 0 });
    const forecaster = agent({ name: 'forecaster', model: 'gpt-test', system: 'Be brief.', temperature: 0.2, tools: [weather] });
    const result = await run(forecaster, 'Weather in Oslo?', { adapter });

    expect(result.output).toBe('It is sunny in Oslo.');
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 9, cachedTokens: 12, turns: 2 });
    const [first, second] = server.requests;
    expect(first?.headers['authorization']).toBe('Bearer sk-test');
    expect(first?.body).toMatchObject({ model: 'gpt-test', temperature: 0.2 });
    expect(first?.body.stream ?? false).toBe(streaming);
    expect(first?.body['tools']).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather',
          description: 'The weather in a city',
          parameters: expect.objectContaining({ type: 'object', required: ['city'] }),
        },
      },
    ]);
    expect(second?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_w', content: 'Sunny in Oslo' },
    ]);
    if (streaming) expect(second?.body['stream_options']).toEqual({ include_usage: true });
  });

  it('reports streamed text deltas and assembles tool calls from fragments', async () => {
    const baseURL = await server.start();
    server.handler = () => ({
      text: 'Checking both.',
      toolCalls: [
        { id: 'a', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'b', name: 'weather', arguments: '{"city":"Rome"}' },
      ],
    });
    const session = await openaiAdapter({ baseURL, apiKey: 'k', model: 'm' }).openSession({ agent: 'a' });
    const events: SessionEvent[] = [];
    const turn = await session.send('go', { onEvent: (e) => events.push(e) });
    const deltas = events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Checking both.');
    expect(turn.text).toBe('Checking both.');
    expect(turn.toolCalls).toEqual([
      { id: 'a', name: 'weather', arguments: { city: 'Oslo' } },
      { id: 'b', name: 'weather', arguments: { city: 'Rome' } },
    ]);
  });

  it('sends a continued conversation\'s history (spec.history) as messages before the first input', async () => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.handler = () => ({ text: 'You are Ada.' });
    const adapter = openaiAdapter({ baseURL, apiKey: 'sk-test', model: 'gpt-test', streaming: false, maxRetries: 0 });
    const session = await adapter.openSession({ agent: 'a', system: 'Be brief.', history: [{ role: 'user', text: 'My name is Ada.' }, { role: 'assistant', text: 'Hello Ada.' }] });
    await session.send('Who am I?');
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
      { role: 'user', content: 'Who am I?' },
    ]);
  });

  it('keeps arguments that are not JSON as raw text', async () => {
    const baseURL = await server.start();
    server.handler = () => ({ toolCalls: [{ id: 'x', name: 'weather', arguments: '{"city": ' }] });
    const session = await openaiAdapter({ baseURL, apiKey: 'k', model: 'm', streaming: false }).openSession({ agent: 'a' });
    const turn = await session.send('go');
    expect(turn.toolCalls[0]).toEqual({ id: 'x', name: 'weather', arguments: undefined, rawArguments: '{"city": ' });
  });

  it("retries through the SDK's own retries: a 500 once, then success", async () => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.handler = (_r, index) => (index === 0 ? { status: 500 } : { text: 'recovered' });
    const session = await openaiAdapter({ baseURL, apiKey: 'k', model: 'm', maxRetries: 1 }).openSession({ agent: 'a' });
    await expect(session.send('hi')).resolves.toMatchObject({ text: 'recovered' });
    expect(server.requests).toHaveLength(2);
  });

  it('fails with an AdapterError carrying the HTTP status, and keeps the history clean', async () => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.handler = (_r, index) => (index === 0 ? { status: 400 } : { text: 'ok' });
    const session = await openaiAdapter({ baseURL, apiKey: 'k', model: 'm', maxRetries: 3 }).openSession({ agent: 'a' });
    const error = await session.send('first').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect(error).toMatchObject({ details: { status: 400, baseURL: baseURL.replace(/\/$/, '') } });
    expect((error as Error).message).toMatch(new RegExp(`^Chat Completions request to ${baseURL.replace(/\/$/, '')} failed with HTTP 400`));
    await session.send('second');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body.messages).toEqual([{ role: 'user', content: 'second' }]);
  });

  it.each([true, false])('an abort closes the HTTP request on the server (streaming %s)', async (streaming) => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.hungUp = 0;
    server.handler = () => ({ hang: true });
    const session = await openaiAdapter({ baseURL, apiKey: 'k', model: 'm', streaming, maxRetries: 0 }).openSession({ agent: 'a' });
    const controller = new AbortController();
    const pending = session.send('hi', { signal: controller.signal });
    await server.until(() => server.requests.length === 1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await server.until(() => server.hungUp === 1);
    expect(server.requests).toHaveLength(1);
  });

  it('names the server a connection error came from, without the key or credentials of its URL', async () => {
    // A port on 127.0.0.1 that nothing listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const adapter = openaiAdapter({ baseURL: `http://user:hunter2@127.0.0.1:${port}/v1?api-key=qs-secret`, apiKey: 'sk-secret-key', model: 'm', maxRetries: 0 });
    const session = await adapter.openSession({ agent: 'a' });
    const error = await session.send('hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as AdapterError).message).toBe(`Chat Completions request to http://127.0.0.1:${port}/v1 failed: Connection error.`);
    expect((error as AdapterError).details).toEqual({ baseURL: `http://127.0.0.1:${port}/v1` });
    expect(JSON.stringify({ message: (error as Error).message, details: (error as AdapterError).details })).not.toMatch(/sk-secret-key|hunter2|qs-secret/);
  });

  it('validates its options and needs a model', async () => {
    expect(() => openaiAdapter({ maxRetries: -1 })).toThrow('Expected `maxRetries` to be a non-negative integer, got -1 (number)');
    expect(() => openaiAdapter({ baseURL: 'not a url' })).toThrow(ConfigurationError);
    await expect(openaiAdapter({ baseURL: 'http://127.0.0.1:1/v1' }).openSession({ agent: 'a' })).rejects.toThrow(/needs a model/);
  });
});

import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { aiSdkAdapter, type AiSdkAdapterOptions } from '../../src/adapters/ai-sdk.js';
import type { SessionEvent } from '../../src/core/adapter.js';
import { AdapterError, ConfigurationError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';
import { mockModel, mockModelFor } from '../helpers/mock-language-model.js';

for (const streaming of [true, false]) {
  adapterSuite(
    `ai-sdk (${streaming ? 'streamText' : 'generateText'})`,
    (scenario) => aiSdkAdapter({ model: mockModelFor(scenario), streaming, maxRetries: 0 }),
    { runner: { describe, it } },
  );
}

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

describe('aiSdkAdapter', () => {
  it.each([true, false])('passes system, temperature and tools, and keeps tool calls and results in the history (streaming %s)', async (streaming) => {
    const model = mockModel((o) =>
      o.prompt.some((m) => m.role === 'tool')
        ? { text: 'It is sunny in Oslo.', usage: { input: 20, output: 5, cached: 12 } }
        : { toolCalls: [{ id: 'call_w', name: 'weather', input: '{"city":"Oslo"}' }], usage: { input: 10, output: 4 } },
    );
    const adapter = aiSdkAdapter({ model, streaming });
    const forecaster = agent({ name: 'forecaster', system: 'Be brief.', temperature: 0.2, tools: [weather] });
    const result = await run(forecaster, 'Weather in Oslo?', { adapter });

    expect(result.output).toBe('It is sunny in Oslo.');
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 9, cachedTokens: 12, turns: 2 });
    const calls = streaming ? model.doStreamCalls : model.doGenerateCalls;
    expect(calls).toHaveLength(2);
    expect(calls[0]?.temperature).toBe(0.2);
    expect(calls[0]?.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'weather', description: 'The weather in a city', inputSchema: expect.objectContaining({ required: ['city'] }) }),
    ]);
    expect(calls[1]?.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [expect.objectContaining({ type: 'tool-call', toolCallId: 'call_w', toolName: 'weather', input: { city: 'Oslo' } })] },
      { role: 'tool', content: [expect.objectContaining({ type: 'tool-result', toolCallId: 'call_w', toolName: 'weather', output: { type: 'text', value: 'Sunny in Oslo' } })] },
    ]);
  });

  it('keeps the history of each session apart', async () => {
    const model = mockModel((_o, i) => ({ text: `reply ${i}` }));
    const adapter = aiSdkAdapter({ model, streaming: false });
    const one = await adapter.openSession({ agent: 'one' });
    const two = await adapter.openSession({ agent: 'two' });
    await one.send('first');
    await two.send('other');
    await one.send('second');
    const prompt = model.doGenerateCalls[2]?.prompt;
    expect(prompt?.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(prompt)).not.toContain('other');
  });

  it('sends a continued conversation\'s history (spec.history) as messages before the first input', async () => {
    const model = mockModel(() => ({ text: 'You are Ada.' }));
    const adapter = aiSdkAdapter({ model, streaming: false });
    const session = await adapter.openSession({ agent: 'a', history: [{ role: 'user', text: 'My name is Ada.' }, { role: 'assistant', text: 'Hello Ada.' }] });
    await session.send('Who am I?');
    const prompt = model.doGenerateCalls[0]?.prompt;
    expect(prompt?.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(prompt)).toContain('My name is Ada.');
    expect(JSON.stringify(prompt?.[1])).toContain('Hello Ada.');
  });

  it('reports streamed text deltas', async () => {
    const adapter = aiSdkAdapter({ model: mockModel(() => ({ text: 'Hello there, world' })) });
    const session = await adapter.openSession({ agent: 'a' });
    const events: SessionEvent[] = [];
    const turn = await session.send('hi', { onEvent: (e) => events.push(e) });
    const deltas = events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Hello there, world');
    expect(turn.text).toBe('Hello there, world');
  });

  it('resolves the model from the agent through a function', async () => {
    const seen: Array<string | undefined> = [];
    const adapter = aiSdkAdapter({
      model: (id) => {
        seen.push(id);
        return mockModel(() => ({ text: `from ${id}` }));
      },
    });
    const result = await run(agent({ name: 'a', model: 'small' }), 'hi', { adapter });
    expect(result.output).toBe('from small');
    expect(seen).toEqual(['small']);
  });

  it.each([true, false])('wraps provider failures in an AdapterError (streaming %s)', async (streaming) => {
    const model = mockModel(() => {
      throw new Error('provider down');
    });
    const session = await aiSdkAdapter({ model, streaming, maxRetries: 0 }).openSession({ agent: 'a' });
    const error = await session.send('hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as Error).message).toMatch(/provider down/);
  });

  it.each([true, false])('hands the abort signal to the model, which sees it abort (streaming %s)', async (streaming) => {
    const controller = new AbortController();
    const model = mockModel(() => {
      controller.abort();
      return { hang: true };
    });
    const session = await aiSdkAdapter({ model, streaming, maxRetries: 0 }).openSession({ agent: 'a' });
    await expect(session.send('hi', { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
    const calls = streaming ? model.doStreamCalls : model.doGenerateCalls;
    expect(calls).toHaveLength(1);
    expect(calls[0]?.abortSignal?.aborted).toBe(true);
  });

  it('takes a provider instance as `model`: the agent\'s model, else `defaultModel`, else a ConfigurationError', async () => {
    // The shape of a real provider (`anthropic`, `openai` from @ai-sdk/*): callable with a model id that is a `string`.
    interface Provider {
      (modelId: string): LanguageModelV3;
      languageModel(modelId: string): LanguageModelV3;
    }
    expectTypeOf<Provider>().toExtend<AiSdkAdapterOptions['model']>();
    const seen: string[] = [];
    const make = (id: string) => {
      seen.push(id);
      return mockModel(() => ({ text: `from ${id}` }));
    };
    const provider: Provider = Object.assign(make, { languageModel: make });
    const adapter = aiSdkAdapter({ model: provider, defaultModel: 'claude-sonnet-4-5' });
    expect((await run(agent({ name: 'named', model: 'claude-haiku-4-5' }), 'hi', { adapter })).output).toBe('from claude-haiku-4-5');
    expect((await run(agent({ name: 'unnamed' }), 'hi', { adapter })).output).toBe('from claude-sonnet-4-5');
    expect(seen).toEqual(['claude-haiku-4-5', 'claude-sonnet-4-5']);
    const without = aiSdkAdapter({ model: provider });
    const error = await without.openSession({ agent: 'unnamed' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe('aiSdkAdapter: the agent "unnamed" names no model; set `model` on the agent or `defaultModel` in the adapter options');
  });

  it('validates its options', () => {
    expect(() => aiSdkAdapter({} as never)).toThrow(ConfigurationError);
    expect(() => aiSdkAdapter({ model: 'x', maxRetries: 1.5 })).toThrow('Expected `maxRetries` to be a non-negative integer, got 1.5 (number)');
    expect(() => aiSdkAdapter({ model: 'x', defaultModel: '' })).toThrow('Expected `defaultModel` to be a model id, got "" (string)');
  });
});

import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import type { AdapterScenario } from '../../src/testing/adapter-suite.js';

/** What the mock model answers to one call. */
export interface MockReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; input: string }>;
  usage?: { input: number; output: number; cached?: number };
  hang?: boolean;
  /** Stream the text, then hang until aborted (`streamText` only; `generateText` hangs at once). */
  hangAfterText?: boolean;
}

function usageOf(reply: MockReply): LanguageModelV3Usage {
  const u = reply.usage ?? { input: 1, output: 1 };
  return {
    inputTokens: { total: u.input, noCache: u.input - (u.cached ?? 0), cacheRead: u.cached, cacheWrite: undefined },
    outputTokens: { total: u.output, text: u.output, reasoning: undefined },
  };
}

function hang(options: LanguageModelV3CallOptions): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (options.abortSignal?.aborted) reject(options.abortSignal.reason);
    options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason), { once: true });
  });
}

/** The AI SDK's own mock model, answering both `generateText` and `streamText` as `reply` says. */
export function mockModel(reply: (options: LanguageModelV3CallOptions, index: number) => MockReply): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const r = reply(options, calls++);
      if (r.hang) return hang(options);
      const content: LanguageModelV3Content[] = [];
      if (r.text) content.push({ type: 'text', text: r.text });
      for (const c of r.toolCalls ?? []) content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input });
      return {
        content,
        finishReason: { unified: r.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined },
        usage: usageOf(r),
        warnings: [],
      };
    },
    doStream: async (options) => {
      const r = reply(options, calls++);
      if (r.hang) return hang(options);
      if (r.hangAfterText) return { stream: streamThenHang(r.text ?? '', options.abortSignal) };
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (r.text) {
        parts.push({ type: 'text-start', id: 't' });
        for (let i = 0; i < r.text.length; i += 3) parts.push({ type: 'text-delta', id: 't', delta: r.text.slice(i, i + 3) });
        parts.push({ type: 'text-end', id: 't' });
      }
      for (const c of r.toolCalls ?? []) parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input });
      parts.push({ type: 'finish', usage: usageOf(r), finishReason: { unified: r.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined } });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

/** A stream of `text` in pieces that then stays open until `signal` aborts (and errors with its reason). */
function streamThenHang(text: string, signal: AbortSignal | undefined): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream<LanguageModelV3StreamPart>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: [] });
      controller.enqueue({ type: 'text-start', id: 't' });
      for (let i = 0; i < text.length; i += 3) controller.enqueue({ type: 'text-delta', id: 't', delta: text.slice(i, i + 3) });
      const fail = () => controller.error(signal?.reason);
      if (signal?.aborted) fail();
      else signal?.addEventListener('abort', fail, { once: true });
    },
  });
}

/** A mock model that plays a conformance scenario. */
export function mockModelFor(scenario: AdapterScenario): MockLanguageModelV3 {
  switch (scenario.kind) {
    case 'text':
      return mockModel(() => ({ text: scenario.text, usage: { input: scenario.usage.inputTokens, output: scenario.usage.outputTokens } }));
    case 'tool-call':
      return mockModel((o) =>
        o.prompt.some((m) => m.role === 'tool')
          ? { text: scenario.finalText }
          : { toolCalls: [{ id: 'call_1', name: scenario.tool, input: JSON.stringify(scenario.arguments) }] },
      );
    case 'hang':
      return mockModel(() => ({ hang: true }));
    case 'stream-hang':
      return new MockLanguageModelV3({
        doGenerate: async (options) => hang(options),
        doStream: async (options) => ({ stream: streamThenHang(scenario.text, options.abortSignal) }),
      });
  }
}

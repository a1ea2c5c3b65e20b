/**
 * `adapterSuite`: the conformance suite every model adapter must pass.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelAdapter } from '../core/adapter.js';
import { SessionHandle } from '../core/session.js';
import { SessionBusyError } from '../core/errors.js';
import { defineTool } from '../core/tools.js';
import { run } from '../core/run.js';
import { agent } from '../patterns/agent.js';

/**
 * What the adapter under test must be set up to answer. The factory builds
 * an adapter (or a fake server behind it) that replies as the scenario says,
 * whatever the input; it returns `undefined` when the adapter cannot play
 * the scenario, and the test is skipped.
 */
export type AdapterScenario =
  /** Reply `text` to any message. */
  | { kind: 'text'; text: string; usage: { inputTokens: number; outputTokens: number } }
  /** Call tool `tool` with `arguments`, then reply `finalText` once the result arrives. */
  | { kind: 'tool-call'; tool: string; arguments: Record<string, unknown>; finalText: string }
  /** Never answer until aborted. */
  | { kind: 'hang' };

/** Options of {@link adapterSuite}. */
export interface AdapterSuiteOptions {
  /** Also check that `usage` is reported (default true). */
  usage?: boolean;
}

/**
 * Register the conformance tests for an adapter with vitest: text turn, tool
 * call round trip, usage, abort while waiting, concurrent send rejected,
 * close. Tools are skipped when `capabilities.tools` is false.
 *
 * @example
 * ```ts
 * adapterSuite('my adapter', (scenario) => myAdapterFor(scenario));
 * ```
 */
export function adapterSuite(
  name: string,
  factory: (scenario: AdapterScenario) => ModelAdapter | undefined | Promise<ModelAdapter | undefined>,
  options: AdapterSuiteOptions = {},
): void {
  describe(`adapter conformance: ${name}`, () => {
    const text: AdapterScenario = { kind: 'text', text: 'pong', usage: { inputTokens: 7, outputTokens: 3 } };

    it('answers a text turn', async (t) => {
      const adapter = await factory(text);
      if (!adapter) return t.skip();
      const session = await adapter.openSession({ agent: 'conformance', system: 'Reply pong.' });
      const turn = await session.send('ping');
      expect(turn.text).toBe('pong');
      expect(turn.toolCalls).toEqual([]);
      await session.close();
    });

    it('reports usage', async (t) => {
      const adapter = await factory(text);
      if (!adapter || options.usage === false) return t.skip();
      const session = await adapter.openSession({ agent: 'conformance' });
      const turn = await session.send('ping');
      expect(turn.usage?.inputTokens).toBe(7);
      expect(turn.usage?.outputTokens).toBe(3);
      await session.close();
    });

    it('round-trips a tool call through the tool loop', async (t) => {
      const scenario: AdapterScenario = { kind: 'tool-call', tool: 'add', arguments: { a: 2, b: 3 }, finalText: 'The sum is 5' };
      const adapter = await factory(scenario);
      if (!adapter || !adapter.capabilities.tools) return t.skip();
      const seen: unknown[] = [];
      const add = defineTool({
        name: 'add',
        description: 'Add two numbers',
        parameters: z.object({ a: z.number(), b: z.number() }),
        execute: (args) => {
          seen.push(args);
          return args.a + args.b;
        },
      });
      const result = await run(agent({ name: 'conformance', tools: [add] }), 'What is 2 + 3?', { adapter });
      expect(seen).toEqual([{ a: 2, b: 3 }]);
      expect(result.output).toBe('The sum is 5');
      expect(result.usage.turns).toBe(2);
    });

    it('rejects promptly when aborted while waiting', async (t) => {
      const adapter = await factory({ kind: 'hang' });
      if (!adapter) return t.skip();
      const session = await adapter.openSession({ agent: 'conformance' });
      const controller = new AbortController();
      const pending = session.send('ping', { signal: controller.signal });
      controller.abort();
      await expect(pending).rejects.toBeTruthy();
      await session.close();
    });

    it('rejects a concurrent send on one session (through the handle)', async (t) => {
      const adapter = await factory({ kind: 'hang' });
      if (!adapter) return t.skip();
      const handle = new SessionHandle(await adapter.openSession({ agent: 'conformance' }), { agent: 'conformance' });
      const controller = new AbortController();
      const first = handle.send('one', { signal: controller.signal });
      first.catch(() => undefined);
      await expect(handle.send('two')).rejects.toBeInstanceOf(SessionBusyError);
      controller.abort();
      await expect(first).rejects.toBeTruthy();
      expect(handle.busy).toBe(false);
      await handle.close();
    });

    it('closes, and closing twice through the handle is harmless', async (t) => {
      const adapter = await factory(text);
      if (!adapter) return t.skip();
      const handle = new SessionHandle(await adapter.openSession({ agent: 'conformance' }), { agent: 'conformance' });
      await handle.send('ping');
      await handle.close();
      await handle.close();
      expect(handle.closed).toBe(true);
      await expect(handle.send('again')).rejects.toMatchObject({ code: 'session_closed' });
    });
  });
}

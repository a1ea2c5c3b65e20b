/**
 * `adapterSuite`: the conformance suite every model adapter must pass.
 * @module
 */
import { z } from 'zod';
import type { ModelAdapter, SessionEvent } from '../core/adapter.js';
import { SessionHandle } from '../core/session.js';
import { CancelledError, SessionBusyError, TimeoutError } from '../core/errors.js';
import { defineTool } from '../core/tools.js';
import { run } from '../core/run.js';
import { agent } from '../patterns/agent.js';
import { anything, boolean, defineOptions } from '../core/options.js';
import { expect } from './expect.js';
import { resolveRunner, type SuiteRunner } from './runner.js';

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
  | { kind: 'hang' }
  /** Stream `text` (as one or more `text-delta` events), then never finish until aborted. Streaming adapters only. */
  | { kind: 'stream-hang'; text: string };

/** Options of {@link adapterSuite}. */
export interface AdapterSuiteOptions {
  /** Also check that `usage` is reported (default true). */
  usage?: boolean;
  /** The test runner's `describe` and `it` (vitest's or `node:test`'s). Default: global `describe` and `it`. */
  runner?: SuiteRunner;
}

/** What the cases of {@link adapterSuite} get: the adapter for a scenario, or `undefined` to skip it. */
type AdapterFactory = (scenario: AdapterScenario) => ModelAdapter | undefined | Promise<ModelAdapter | undefined>;

const text: AdapterScenario = { kind: 'text', text: 'pong', usage: { inputTokens: 7, outputTokens: 3 } };
const streamed: Extract<AdapterScenario, { kind: 'stream-hang' }> = { kind: 'stream-hang', text: 'The answer begins' };

const adapterSuiteOptions = defineOptions<AdapterSuiteOptions>('adapterSuite', { usage: boolean, runner: anything });

/**
 * Register the conformance tests for an adapter with your test runner: text
 * turn, usage, tool call round trip, streamed deltas, abort while waiting
 * and while streaming (rejecting with the abort's reason: a
 * `CancelledError`, or the `TimeoutError` of a time-out), an aborted
 * `openSession`, the model list (when the adapter has `listModels`),
 * concurrent send rejected, close. Tools are skipped when
 * `capabilities.tools` is false, streaming when `capabilities.streaming` is.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or 'node:test'
 * adapterSuite('my adapter', (scenario) => myAdapterFor(scenario), { runner: { describe, it } });
 * ```
 */
export function adapterSuite(
  name: string,
  factory: AdapterFactory,
  options: AdapterSuiteOptions = {},
): void {
  adapterSuiteOptions.check(options);
  const { describe, it } = resolveRunner('adapterSuite', options.runner);
  describe(`adapter conformance: ${name}`, () => {
    turnCases(factory, it, options);
    abortCases(factory, it);
    handleCases(factory, it);
  });
}

/** Cases of {@link adapterSuite}. */
function turnCases(factory: AdapterFactory, it: SuiteRunner['it'], options: AdapterSuiteOptions): void {
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

  it('streams text deltas that add up to the text of the turn', async (t) => {
    const adapter = await factory(text);
    if (!adapter || !adapter.capabilities.streaming) return t.skip();
    const session = await adapter.openSession({ agent: 'conformance' });
    const deltas: string[] = [];
    const turn = await session.send('ping', { onEvent: (e) => void (e.type === 'text-delta' && deltas.push(e.text)) });
    expect(deltas.length > 0).toBe(true);
    expect(deltas.join('')).toBe(turn.text);
    await session.close();
  });
}

/** Cases of {@link adapterSuite}. */
function abortCases(factory: AdapterFactory, it: SuiteRunner['it']): void {
  it('rejects an openSession whose signal has aborted, with a CancelledError', async (t) => {
    const adapter = await factory(text);
    if (!adapter) return t.skip();
    const controller = new AbortController();
    controller.abort();
    await expect(adapter.openSession({ agent: 'conformance' }, { signal: controller.signal })).rejects.toBeInstanceOf(CancelledError);
    const timeout = new TimeoutError('conformance: opening timed out');
    await expect(adapter.openSession({ agent: 'conformance' }, { signal: AbortSignal.abort(timeout) })).rejects.toBe(timeout);
  });

  it('lists its models as strings, when it can, and rejects a listing whose signal has aborted', async (t) => {
    const adapter = await factory(text);
    if (!adapter?.listModels) return t.skip();
    const models = await adapter.listModels();
    expect(Array.isArray(models) && models.every((m) => typeof m === 'string' && m !== '')).toBe(true);
    const controller = new AbortController();
    controller.abort();
    await expect(adapter.listModels({ signal: controller.signal })).rejects.toBeInstanceOf(CancelledError);
  });

  it('rejects promptly with a CancelledError when aborted while waiting', async (t) => {
    const adapter = await factory({ kind: 'hang' });
    if (!adapter) return t.skip();
    const session = await adapter.openSession({ agent: 'conformance' });
    const controller = new AbortController();
    const pending = session.send('ping', { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    await session.close();
  });

  it('rejects with the time-out itself when a time-out aborts the turn', async (t) => {
    const adapter = await factory({ kind: 'hang' });
    if (!adapter) return t.skip();
    const session = await adapter.openSession({ agent: 'conformance' });
    const controller = new AbortController();
    const pending = session.send('ping', { signal: controller.signal });
    const timeout = new TimeoutError('conformance: the turn timed out');
    controller.abort(timeout);
    await expect(pending).rejects.toBe(timeout);
    await session.close();
  });

  it('rejects promptly when aborted in the middle of a streamed answer, and reports no event after it', async (t) => {
    const adapter = await factory(streamed);
    if (!adapter || !adapter.capabilities.streaming) return t.skip();
    const handle = new SessionHandle(await adapter.openSession({ agent: 'conformance' }), { agent: 'conformance' });
    const controller = new AbortController();
    const events: SessionEvent[] = [];
    let firstDelta!: () => void;
    const started = new Promise<void>((resolve) => (firstDelta = resolve));
    const pending = handle.send('ping', {
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'text-delta') firstDelta();
      },
    });
    pending.catch(() => undefined);
    await started;
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    const seen = events.length;
    const text = events.map((e) => (e.type === 'text-delta' ? e.text : '')).join('');
    expect(text.length > 0 && streamed.text.startsWith(text)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.length).toBe(seen);
    expect(handle.busy).toBe(false);
    await handle.close();
  });
}

/** Cases of {@link adapterSuite}. */
function handleCases(factory: AdapterFactory, it: SuiteRunner['it']): void {
  it('rejects a concurrent send on one session (through the handle)', async (t) => {
    const adapter = await factory({ kind: 'hang' });
    if (!adapter) return t.skip();
    const handle = new SessionHandle(await adapter.openSession({ agent: 'conformance' }), { agent: 'conformance' });
    const controller = new AbortController();
    const first = handle.send('one', { signal: controller.signal });
    first.catch(() => undefined);
    await expect(handle.send('two')).rejects.toBeInstanceOf(SessionBusyError);
    controller.abort();
    await expect(first).rejects.toBeInstanceOf(CancelledError);
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
}

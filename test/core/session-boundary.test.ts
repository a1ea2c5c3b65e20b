import { describe, expect, it } from 'vitest';
import type { ModelAdapter, ModelSession, ModelTurn } from '../../src/core/adapter.js';
import { AdapterError, CancelledError, ConfigurationError, ModelBehaviorError, TimeoutError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { SessionHandle, adapterFailure, openSession } from '../../src/core/session.js';
import { agent } from '../../src/patterns/agent.js';

/** A session whose send does what `reply` says. */
function sessionOf(reply: (signal?: AbortSignal) => Promise<unknown>, onClose = () => undefined): ModelSession {
  return { id: 's1', send: (_input, options) => reply(options?.signal) as Promise<ModelTurn>, close: async () => onClose() };
}
/** An adapter whose sessions do what `reply` says. */
function adapterOf(reply: (signal?: AbortSignal) => Promise<unknown>): ModelAdapter {
  return { id: 'raw', capabilities: { tools: false, streaming: false }, openSession: async () => sessionOf(reply) };
}

describe('the session boundary', () => {
  it('turns what an adapter throws into an AdapterError that keeps it as cause', async () => {
    const hangUp = new Error('socket hang up');
    for (const thrown of [hangUp, 'rate limited', { status: 503 }]) {
      const handle = new SessionHandle(sessionOf(() => Promise.reject(thrown)), { agent: 'a' });
      const error = await handle.send('hi').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AdapterError);
      expect((error as AdapterError).cause).toBe(thrown);
      expect((error as AdapterError).details).toMatchObject({ agent: 'a', action: 'send', sessionId: 's1' });
    }
    const error = await new SessionHandle(sessionOf(() => Promise.reject(hangUp)), { agent: 'a' }).send('hi').catch((e: unknown) => e);
    expect((error as Error).message).toBe('The adapter failed to answer for agent "a": socket hang up');
  });

  it('keeps a TroupeError as it is, and a cancellation as a cancellation whatever the adapter throws', async () => {
    const typed = new ConfigurationError('bad key');
    await expect(new SessionHandle(sessionOf(() => Promise.reject(typed)), { agent: 'a' }).send('hi')).rejects.toBe(typed);

    // The adapter answers the abort with its own error: the caller still sees the abort's reason.
    const timeout = new TimeoutError('Agent "a" timed out');
    const controller = new AbortController();
    const handle = new SessionHandle(
      sessionOf((signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(new Error('Request was aborted.'))))),
      { agent: 'a' },
    );
    const pending = handle.send('hi', { signal: controller.signal });
    controller.abort(timeout);
    await expect(pending).rejects.toBe(timeout);
    expect(adapterFailure(new Error('late'), { agent: 'a', action: 'send', signal: AbortSignal.abort() })).toBeInstanceOf(CancelledError);
  });

  it('opens sessions behind the boundary: a throw, a rejection or no session at all is an AdapterError', async () => {
    const refused = new Error('connect ECONNREFUSED');
    const throwing: ModelAdapter = { id: 'x', capabilities: { tools: false, streaming: false }, openSession: () => { throw refused; } };
    const error = await openSession(throwing, { agent: 'a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect(error).toMatchObject({ cause: refused, message: 'Adapter "x" failed to open a session for agent "a": connect ECONNREFUSED', details: { action: 'open' } });
    const rejecting: ModelAdapter = { ...throwing, openSession: () => Promise.reject('no capacity') };
    await expect(openSession(rejecting, { agent: 'a' })).rejects.toMatchObject({ code: 'adapter_error', cause: 'no capacity' });
    const empty: ModelAdapter = { ...throwing, openSession: () => Promise.resolve(undefined as unknown as ModelSession) };
    await expect(openSession(empty, { agent: 'a' })).rejects.toMatchObject({ code: 'adapter_error', message: 'Adapter "x" returned no session for agent "a"' });
  });

  it('rejects an aborted open at once, and closes a session that opens later', async () => {
    let closed = 0;
    let open!: (s: ModelSession) => void;
    const slow: ModelAdapter = {
      id: 'slow',
      capabilities: { tools: false, streaming: false },
      openSession: () => new Promise<ModelSession>((resolve) => (open = resolve)),
    };
    const controller = new AbortController();
    const pending = openSession(slow, { agent: 'a' }, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    open(sessionOf(() => Promise.resolve({ text: '', toolCalls: [] }), () => void closed++));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(1);
    await expect(openSession(slow, { agent: 'a' }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(CancelledError);
  });

  it('checks turns below the run log: a null or undefined turn is a ModelBehaviorError', async () => {
    for (const turn of [null, undefined, 'text']) {
      const session = await openSession(adapterOf(() => Promise.resolve(turn)), { agent: 'a' });
      await expect(session.send('hi')).rejects.toBeInstanceOf(ModelBehaviorError);
      await expect(run(agent({ name: 'a' }), 'hi', { adapter: adapterOf(() => Promise.resolve(turn)) })).rejects.toBeInstanceOf(ModelBehaviorError);
    }
  });

  it('lets a model fallback see a plain adapter failure as the AdapterError it is', async () => {
    const adapter: ModelAdapter = {
      id: 'flaky',
      capabilities: { tools: false, streaming: false },
      openSession: async (spec) => sessionOf(() => (spec.model === 'big' ? Promise.reject(new Error('socket hang up')) : Promise.resolve({ text: `answered by ${spec.model}`, toolCalls: [] }))),
    };
    const result = await run(agent({ name: 'a', models: ['big', 'small'] }), 'hi', { adapter });
    expect(result.output).toBe('answered by small');
  });
});

import { describe, expect, it } from 'vitest';
import type { ModelSession, ModelTurn, SendOptions, SessionEvent } from '../../src/core/adapter.js';
import { SessionHandle } from '../../src/core/session.js';
import { SessionBusyError } from '../../src/core/errors.js';

function deferredSession() {
  const pending: Array<{ resolve: (t: ModelTurn) => void; reject: (e: unknown) => void; opts: SendOptions | undefined }> = [];
  let closed = 0;
  const session: ModelSession = {
    id: 's1',
    send: (_input, opts) => new Promise<ModelTurn>((resolve, reject) => pending.push({ resolve, reject, opts })),
    close: async () => {
      closed++;
    },
  };
  return { session, pending, closedCount: () => closed };
}

describe('SessionHandle', () => {
  it('rejects a second concurrent send with SessionBusyError', async () => {
    const { session, pending } = deferredSession();
    const handle = new SessionHandle(session, { agent: 'a' });
    const first = handle.send('one');
    await Promise.resolve();
    await Promise.resolve();
    await expect(handle.send('two')).rejects.toBeInstanceOf(SessionBusyError);
    await expect(handle.send('two')).rejects.toMatchObject({ code: 'session_busy' });
    pending[0]!.resolve({ text: 'ok', toolCalls: [] });
    await expect(first).resolves.toMatchObject({ text: 'ok' });
  });

  it('clears busy before the promise settles, on success', async () => {
    const { session, pending } = deferredSession();
    const handle = new SessionHandle(session, { agent: 'a' });
    let continuation: Promise<ModelTurn> | undefined;
    const first = handle.send('one').then((turn) => {
      expect(handle.busy).toBe(false);
      continuation = handle.send('two');
      return turn;
    });
    await new Promise((r) => setTimeout(r, 0));
    pending[0]!.resolve({ text: 'ok', toolCalls: [] });
    await first;
    await new Promise((r) => setTimeout(r, 0));
    pending[1]!.resolve({ text: 'again', toolCalls: [] });
    await expect(continuation).resolves.toMatchObject({ text: 'again' });
  });

  it('clears busy before the promise settles, on failure', async () => {
    const { session, pending } = deferredSession();
    const handle = new SessionHandle(session, { agent: 'a' });
    let busyInCatch: boolean | undefined;
    const first = handle.send('one').catch(() => {
      busyInCatch = handle.busy;
    });
    await new Promise((r) => setTimeout(r, 0));
    pending[0]!.reject(new Error('boom'));
    await first;
    expect(busyInCatch).toBe(false);
  });

  it('drops events from a closed or replaced session', async () => {
    const seen: SessionEvent[] = [];
    const { session, pending } = deferredSession();
    const handle = new SessionHandle(session, { agent: 'a', onEvent: (e) => seen.push(e) });
    const p = handle.send('one');
    await new Promise((r) => setTimeout(r, 0));
    const emit = pending[0]!.opts!.onEvent!;
    emit({ type: 'text-delta', text: 'live' });
    pending[0]!.resolve({ text: 'x', toolCalls: [] });
    await p;
    // A late event from the old session after it was replaced:
    const second = deferredSession();
    await handle.replace(second.session);
    emit({ type: 'text-delta', text: 'stale-after-replace' });
    const p2 = handle.send('two');
    await new Promise((r) => setTimeout(r, 0));
    const emit2 = second.pending[0]!.opts!.onEvent!;
    second.pending[0]!.resolve({ text: 'y', toolCalls: [] });
    await p2;
    await handle.close();
    emit2({ type: 'text-delta', text: 'stale-after-close' });
    expect(seen).toEqual([{ type: 'text-delta', text: 'live' }]);
  });

  it('rejects at once when aborted, even if the adapter ignores the signal, and closes the session', async () => {
    const { session, closedCount } = deferredSession();
    const handle = new SessionHandle(session, { agent: 'a' });
    const controller = new AbortController();
    const p = handle.send('one', { signal: controller.signal });
    controller.abort();
    await expect(p).rejects.toMatchObject({ code: 'cancelled' });
    expect(handle.busy).toBe(false);
    expect(handle.closed).toBe(true);
    expect(closedCount()).toBe(1);
  });

  it('normalises a malformed turn and rejects a missing one', async () => {
    const session: ModelSession = {
      id: 's',
      send: async () => ({ toolCalls: [{ name: 'x' }] }) as unknown as ModelTurn,
      close: async () => undefined,
    };
    const handle = new SessionHandle(session, { agent: 'a' });
    await expect(handle.send('x')).resolves.toEqual({ text: '', toolCalls: [{ id: 'call_0', name: 'x', arguments: undefined }] });
    const bad = new SessionHandle({ id: 'b', send: async () => null as unknown as ModelTurn, close: async () => undefined }, { agent: 'a' });
    await expect(bad.send('x')).rejects.toMatchObject({ code: 'model_behavior' });
  });
});

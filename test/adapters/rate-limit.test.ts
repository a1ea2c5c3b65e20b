// Rate limits around any adapter: requests, tokens and concurrency shared
// by every session, a provider's 429 holding every call for its Retry-After,
// waits on the injected clock that honour the signal; the typed 429 of the
// OpenAI-compatible adapter against a local server that limits requests;
// one limit shared through Redis.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { isTroupeError, type ModelAdapter } from 'troupe';
import { RateLimitError, type ModelTurn } from 'troupe/kernel';
import { SimulatedClock } from 'troupe/testing';
import { memoryRateLimitState, rateLimited } from 'troupe/adapters/rate-limit';
import { openaiAdapter } from 'troupe/adapters/openai';
import { redisRateLimitState } from 'troupe/redis';
import { retryAfterMs } from '../../src/adapters/retry-after.js';
import { startLimitedChatServer } from '../helpers/limited-chat-server.js';
import { closedAfterEach, redisTarget } from '../helpers/redis.js';

/** An adapter that records when each send starts (clock time) and takes `busyMs` per send. */
function recording(clock: SimulatedClock, options: { busyMs?: number; usage?: number; fail?: (n: number) => Error | undefined } = {}) {
  const starts: number[] = [];
  let n = 0;
  const adapter: ModelAdapter = {
    id: 'rec',
    capabilities: { tools: false, streaming: false },
    async openSession(spec) {
      return {
        id: `s-${spec.agent}`,
        async send(): Promise<ModelTurn> {
          const index = n++;
          starts.push(clock.now());
          const failure = options.fail?.(index);
          if (failure) throw failure;
          if (options.busyMs) await new Promise<void>((r) => clock.setTimer(r, options.busyMs!));
          return { text: 'ok', toolCalls: [], usage: { inputTokens: options.usage ?? 1, outputTokens: 0 } };
        },
        async close() {},
      };
    },
  };
  return { adapter, starts };
}

describe('rateLimited', () => {
  it('holds calls past the requests per minute until the window frees a slot, across sessions', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock);
    // The whole window at once (`burstMs: 60_000`): the window alone limits.
    const limited = rateLimited(adapter, { requestsPerMinute: 3, burstMs: 60_000, clock });
    const a = await limited.openSession({ agent: 'a' });
    const b = await limited.openSession({ agent: 'b' });
    const sends = [a.send('1'), b.send('2'), a.send('3'), b.send('4'), a.send('5')].map((p) => p.catch((e: unknown) => e));
    await clock.advance(59_999);
    expect(starts).toEqual([0, 0, 0]);
    await clock.advance(1);
    await Promise.all(sends);
    expect(starts).toEqual([0, 0, 0, 60_000, 60_000]);
  });

  it('spreads a minute\'s requests evenly: 30 calls started together at 600 a minute go 10 at once, then one every 100 ms', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock);
    const limited = rateLimited(adapter, { requestsPerMinute: 600, clock });
    const sessions = await Promise.all(Array.from({ length: 30 }, (_, i) => limited.openSession({ agent: `a${i}` })));
    const sends = Promise.all(sessions.map((s) => s.send('x')));
    await clock.advance(0);
    expect(starts).toEqual(Array(10).fill(0)); // the burst: a second's share
    await clock.advance(2_000);
    await sends;
    expect(starts).toEqual([...Array(10).fill(0), ...Array.from({ length: 20 }, (_, i) => (i + 1) * 100)]);
    expect(starts.filter((t) => t < 1000)).toHaveLength(19);
  });

  it('takes `burstMs`: how much of a minute may go out at once', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock);
    const limited = rateLimited(adapter, { requestsPerMinute: 600, burstMs: 500, clock });
    const sessions = await Promise.all(Array.from({ length: 8 }, (_, i) => limited.openSession({ agent: `a${i}` })));
    const sends = Promise.all(sessions.map((s) => s.send('x')));
    await clock.advance(300);
    await sends;
    expect(starts).toEqual([0, 0, 0, 0, 0, 100, 200, 300]);
  });

  it('spreads tokens per minute the same way: a call waits for the tokens it estimates, refilling continuously', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock, { usage: 100 });
    // 6,000 tokens a minute: 100 a second, 100 at once.
    const limited = rateLimited(adapter, { tokensPerMinute: 6_000, clock, estimateTokens: () => 100 });
    const sessions = await Promise.all(Array.from({ length: 5 }, (_, i) => limited.openSession({ agent: `a${i}` })));
    const sends = Promise.all(sessions.map((s) => s.send('x')));
    await clock.advance(5_000);
    await sends;
    expect(starts).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it('keeps at most `maxParallel` calls in flight', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock, { busyMs: 1000 });
    const limited = rateLimited(adapter, { maxParallel: 2, clock });
    const sessions = await Promise.all(['a', 'b', 'c', 'd'].map((agent) => limited.openSession({ agent })));
    const sends = Promise.all(sessions.map((s) => s.send('x')));
    await clock.advance(3000);
    await sends;
    expect(starts).toEqual([0, 0, 1000, 1000]);
  });

  it('counts tokens per minute from the usage the calls report', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock, { usage: 80 });
    const limited = rateLimited(adapter, { tokensPerMinute: 100, burstMs: 60_000, clock, estimateTokens: () => 10 });
    const s = await limited.openSession({ agent: 'a' });
    await s.send('first');
    const second = s.send('second');
    await clock.advance(30_000);
    expect(starts).toEqual([0, 0]); // 80 used + 10 reserved fits in 100
    const third = s.send('third'); // 80 + 80 (the second's usage) is over: waits for the window
    await clock.advance(29_999);
    expect(starts).toHaveLength(2);
    await clock.advance(30_001);
    await Promise.all([second, third]);
    expect(starts).toEqual([0, 0, 60_000]);
  });

  it('turns a provider 429 into a pause of every session for its Retry-After, and sends the call again', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock, { fail: (n) => (n === 0 ? new RateLimitError('slow down', { retryAfterMs: 5000 }) : undefined) });
    const limited = rateLimited(adapter, { clock });
    const a = await limited.openSession({ agent: 'a' });
    const b = await limited.openSession({ agent: 'b' });
    const first = a.send('1');
    await clock.advance(1);
    const second = b.send('2');
    await clock.advance(4998);
    expect(starts).toEqual([0]);
    await clock.advance(1);
    expect((await first).text).toBe('ok');
    expect((await second).text).toBe('ok');
    expect(starts).toEqual([0, 5000, 5000]);
    expect(limited.retried).toBe(1);
  });

  it('a call the provider refused counts against no window', async () => {
    const clock = new SimulatedClock();
    const { adapter, starts } = recording(clock, { fail: (n) => (n === 0 ? new RateLimitError('slow down', { retryAfterMs: 100 }) : undefined) });
    const limited = rateLimited(adapter, { requestsPerMinute: 2, burstMs: 60_000, clock });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((agent) => limited.openSession({ agent })));
    const first = a!.send('1');
    await clock.advance(1);
    const second = b!.send('2');
    await clock.advance(99);
    await Promise.all([first, second]);
    expect(starts).toEqual([0, 100, 100]);
    const third = c!.send('3');
    await clock.advance(59_999);
    expect(starts).toHaveLength(3);
    await clock.advance(1);
    await third;
    expect(starts).toEqual([0, 100, 100, 60_100]);
  });

  it('lets a 429 through once its retries are spent, and a waiting call rejects at once when its signal aborts', async () => {
    const clock = new SimulatedClock();
    const { adapter } = recording(clock, { fail: () => new RateLimitError('no', { retryAfterMs: 10 }) });
    const limited = rateLimited(adapter, { clock, retry: { maxRetries: 2 } });
    const s = await limited.openSession({ agent: 'a' });
    const failed = s.send('x').catch((e: unknown) => e);
    await clock.advance(100);
    const error = await failed;
    expect(isTroupeError(error, 'rate_limited')).toBe(true);
    expect((error as RateLimitError).retryAfterMs).toBe(10);

    const held = rateLimited(recording(clock).adapter, { requestsPerMinute: 1, clock });
    const h = await held.openSession({ agent: 'a' });
    await h.send('fills the minute');
    const controller = new AbortController();
    const waiting = h.send('waits', { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort();
    expect(isTroupeError(await waiting, 'cancelled')).toBe(true);
  });

  it('a refused call gives its share of the refilling bucket back', async () => {
    const state = memoryRateLimitState();
    const spread = (leaseId: string, now: number) => state.acquire({ now, windowMs: 60_000, limits: { requestsPerMinute: 60, tokensPerMinute: 6_000 }, tokens: 100, leaseId, leaseExpiresAt: now + 1000, burstMs: 1000 });
    expect(await spread('a', 0)).toEqual({ ok: true });
    expect(await spread('b', 1)).toMatchObject({ ok: false, waitMs: 999 });
    await state.release({ now: 2, leaseId: 'a', tokens: 100, refused: true });
    expect(await spread('b', 3)).toEqual({ ok: true });
  });

  it('one memory state shared by two limiters holds them both', async () => {
    const clock = new SimulatedClock();
    const state = memoryRateLimitState();
    const shared1 = rateLimited(recording(clock).adapter, { requestsPerMinute: 1, clock, state });
    const shared2 = rateLimited(recording(clock).adapter, { requestsPerMinute: 1, clock, state });
    await (await shared1.openSession({ agent: 'a' })).send('x');
    const held = (await shared2.openSession({ agent: 'b' })).send('y');
    let done = false;
    void held.then(() => (done = true));
    await clock.advance(1000);
    expect(done).toBe(false);
    await clock.advance(59_000);
    await held;
  });

  it('refuses bad limits with the option named', () => {
    const { adapter } = recording(new SimulatedClock());
    expect(() => rateLimited(adapter, { requestsPerMinute: 0 })).toThrow(/requestsPerMinute/);
    expect(() => rateLimited(adapter, { maxParallel: 1.5 })).toThrow(/maxParallel/);
  });

  it('reads Retry-After in ms, seconds and as a date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500);
    expect(retryAfterMs({ 'Retry-After': '2' })).toBe(2000);
    expect(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4000)).toBe(6000);
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('rateLimited with the OpenAI-compatible adapter and a server that limits requests', () => {
  it('the adapter reports a 429 as a RateLimitError carrying the wait', async () => {
    const server = await startLimitedChatServer({ limit: 1, windowMs: 60_000 });
    try {
      const adapter = openaiAdapter({ baseURL: server.url, model: 'm', maxRetries: 0, streaming: false });
      const s = await adapter.openSession({ agent: 'a' });
      await s.send('one');
      const error = await s.send('two').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(59_000);
    } finally {
      await server.close();
    }
  });

  it('leaves no abort listener behind on a long-lived signal, however many turns it serves', async () => {
    const server = await startLimitedChatServer({ limit: 1000, windowMs: 60_000 });
    try {
      const controller = new AbortController();
      const session = await rateLimited(openaiAdapter({ baseURL: server.url, model: 'm', maxRetries: 0 }), { requestsPerMinute: 1000 }).openSession({ agent: 'a' });
      for (let i = 0; i < 12; i++) await session.send(`turn ${i}`, { signal: controller.signal });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('no 429 reaches the application; the server never sees more than its limit in a window', async () => {
    const server = await startLimitedChatServer({ limit: 5, windowMs: 500 });
    try {
      const adapter = rateLimited(openaiAdapter({ baseURL: server.url, model: 'm', maxRetries: 0 }), { requestsPerMinute: 5, windowMs: 500 });
      const workers = Array.from({ length: 4 }, async (_, w) => {
        const s = await adapter.openSession({ agent: `w${w}` });
        for (let i = 0; i < 4; i++) await s.send(`call ${i}`);
      });
      await Promise.all(workers);
      expect(server.accepted).toHaveLength(16);
      for (const at of server.accepted) expect(server.accepted.filter((t) => t > at - 500 && t <= at).length).toBeLessThanOrEqual(5);
    } finally {
      await server.close();
    }
  });

  it('with no limits set, the 429s the server sends are held and retried, never seen by the application', async () => {
    const server = await startLimitedChatServer({ limit: 3, windowMs: 300 });
    try {
      const adapter = rateLimited(openaiAdapter({ baseURL: server.url, model: 'm', maxRetries: 0 }), {});
      const sessions = await Promise.all([0, 1, 2, 3, 4, 5].map((w) => adapter.openSession({ agent: `w${w}` })));
      const turns = await Promise.all(sessions.map((s) => s.send('hi')));
      expect(turns.every((t) => t.text.startsWith('ok'))).toBe(true);
      expect(server.refused.length).toBeGreaterThan(0);
      expect(adapter.retried).toBe(server.refused.length);
    } finally {
      await server.close();
    }
  });
});

const { url } = redisTarget();
describe.skipIf(!url)('redisRateLimitState', () => {
  const closeAfter = closedAfterEach();
  it('one limit for two limiters on separate connections (as two processes would have)', async () => {
    const clock = new SimulatedClock(1_000_000);
    const name = `test-${Math.random().toString(36).slice(2)}`;
    const one = recording(clock);
    const two = recording(clock);
    // The whole window at once (`burstMs: 60_000`): the window alone limits.
    const a = rateLimited(one.adapter, { requestsPerMinute: 4, burstMs: 60_000, clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const b = rateLimited(two.adapter, { requestsPerMinute: 4, burstMs: 60_000, clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const sa = await a.openSession({ agent: 'a' });
    const sb = await b.openSession({ agent: 'b' });
    let settled = 0;
    const sends = [sa.send('1'), sb.send('2'), sa.send('3'), sb.send('4'), sa.send('5'), sb.send('6')].map((p) => p.finally(() => settled++));
    // Redis answers in real time: wait (boundedly) until four calls finished (their slots released, which wakes
    // the waiting calls of the same limiter to ask Redis again) and the other two wait on the clock.
    for (let i = 0; i < 2000 && (settled < 4 || clock.pending < 2); i++) await new Promise((r) => setTimeout(r, 5));
    expect(one.starts.length + two.starts.length).toBe(4);
    await clock.advance(60_000);
    await Promise.all(sends);
    const starts = [...one.starts, ...two.starts].sort((x, y) => x - y);
    expect(starts.slice(0, 4)).toEqual([1_000_000, 1_000_000, 1_000_000, 1_000_000]);
    expect(starts.slice(4)).toEqual([1_060_000, 1_060_000]);
  });

  it('spreads a minute over the minute for every limiter of one Redis state: 10 at once at 600 a minute, then one every 100 ms', async () => {
    const clock = new SimulatedClock(2_000_000);
    const name = `test-${Math.random().toString(36).slice(2)}`;
    const one = recording(clock);
    const two = recording(clock);
    const a = rateLimited(one.adapter, { requestsPerMinute: 600, clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const b = rateLimited(two.adapter, { requestsPerMinute: 600, clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const sessions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).openSession({ agent: `w${i}` })));
    let settled = 0;
    const sends = sessions.map((s) => s.send('x').finally(() => settled++));
    const starts = () => [...one.starts, ...two.starts].sort((x, y) => x - y);
    // Redis answers in real time: wait (boundedly) for what the clock allows so far.
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 2000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    await until(() => settled >= 10 && clock.pending >= 2);
    expect(starts()).toEqual(Array(10).fill(2_000_000));
    await clock.advance(100);
    await until(() => settled >= 11 && clock.pending >= 1);
    await clock.advance(100);
    await Promise.all(sends);
    expect(starts()).toEqual([...Array(10).fill(2_000_000), 2_000_100, 2_000_200]);
  });

  it('a pause one limiter learns from a 429 holds the other', async () => {
    const clock = new SimulatedClock(5_000_000);
    const name = `test-${Math.random().toString(36).slice(2)}`;
    const failing = recording(clock, { fail: (n) => (n === 0 ? new RateLimitError('slow', { retryAfterMs: 2000 }) : undefined) });
    const other = recording(clock);
    const a = rateLimited(failing.adapter, { clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const b = rateLimited(other.adapter, { clock, state: closeAfter(redisRateLimitState({ connection: url!, name })) });
    const first = (await a.openSession({ agent: 'a' })).send('x');
    for (let i = 0; i < 2000 && clock.pending < 1; i++) await new Promise((r) => setTimeout(r, 5));
    const second = (await b.openSession({ agent: 'b' })).send('y');
    for (let i = 0; i < 2000 && clock.pending < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(other.starts).toEqual([]);
    await clock.advance(2000);
    await Promise.all([first, second]);
    expect(other.starts[0]).toBeGreaterThanOrEqual(5_002_000);
  });

  it('a refused call gives its slot back in Redis too', async () => {
    const state = closeAfter(redisRateLimitState({ connection: url!, name: `test-${Math.random().toString(36).slice(2)}` }));
    const limits = { requestsPerMinute: 1 };
    const take = (leaseId: string, now: number) => state.acquire({ now, windowMs: 60_000, limits, tokens: 1, leaseId, leaseExpiresAt: now + 1000 });
    expect(await take('a', 1000)).toEqual({ ok: true });
    expect(await take('b', 1001)).toMatchObject({ ok: false, reason: 'requests', waitMs: 59_999 });
    await state.release({ now: 1002, leaseId: 'a', tokens: 1, refused: true });
    expect(await take('b', 1003)).toEqual({ ok: true });
    // Its share of the refilling bucket too.
    const spread = (leaseId: string, now: number) => state.acquire({ now, windowMs: 60_000, limits: { requestsPerMinute: 60 }, tokens: 1, leaseId, leaseExpiresAt: now + 1000, burstMs: 1000 });
    expect(await spread('c', 200_000)).toEqual({ ok: true });
    expect(await spread('d', 200_001)).toMatchObject({ ok: false, reason: 'requests', waitMs: 999 });
    await state.release({ now: 200_002, leaseId: 'c', tokens: 1, refused: true });
    expect(await spread('d', 200_003)).toEqual({ ok: true });
  });

});

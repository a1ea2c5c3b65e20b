import { describe, expect, it } from 'vitest';
import { SimulatedClock, sleep } from '../../src/core/clock.js';
import { combineSignals, timeoutSignal, withTimeout } from '../../src/core/abort.js';

describe('SimulatedClock', () => {
  it('fires timers in order only when advanced', async () => {
    const clock = new SimulatedClock(1000);
    const order: number[] = [];
    void sleep(clock, 50).then(() => order.push(50));
    void sleep(clock, 10).then(() => order.push(10));
    await clock.advance(5);
    expect(order).toEqual([]);
    await clock.advance(100);
    expect(order).toEqual([10, 50]);
    expect(clock.now()).toBe(1105);
  });

  it('sleep rejects when the signal aborts and removes its timer', async () => {
    const clock = new SimulatedClock();
    const c = new AbortController();
    const p = sleep(clock, 1000, c.signal);
    c.abort();
    await expect(p).rejects.toMatchObject({ code: 'cancelled' });
    expect(clock.pending).toBe(0);
  });

  it('runAll fires chained timers', async () => {
    const clock = new SimulatedClock();
    let done = false;
    void (async () => {
      await sleep(clock, 10);
      await sleep(clock, 20);
      done = true;
    })();
    await clock.runAll();
    expect(done).toBe(true);
    expect(clock.now()).toBe(30);
  });
});

describe('abort helpers', () => {
  it('timeoutSignal aborts with a TimeoutError on the injected clock', async () => {
    const clock = new SimulatedClock();
    const t = timeoutSignal(100, clock);
    expect(t.signal.aborted).toBe(false);
    await clock.advance(100);
    expect(t.signal.aborted).toBe(true);
    expect(t.signal.reason).toMatchObject({ code: 'timeout' });
  });

  it('combineSignals aborts when any input aborts', () => {
    const a = new AbortController();
    const b = new AbortController();
    const s = combineSignals(a.signal, undefined, b.signal);
    b.abort('x');
    expect(s.aborted).toBe(true);
  });

  it('withTimeout rejects with a timeout and clears its timer on success', async () => {
    const clock = new SimulatedClock();
    const slow = withTimeout((signal) => sleep(clock, 1000, signal), { timeoutMs: 10, clock });
    const rejected = expect(slow).rejects.toMatchObject({ code: 'timeout' });
    await clock.advance(10);
    await rejected;
    await expect(withTimeout(async () => 'ok', { timeoutMs: 10, clock })).resolves.toBe('ok');
    expect(clock.pending).toBe(0);
  });
});

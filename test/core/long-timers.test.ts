import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, SimulatedClock, boundedTimer, realClock, sleep, type TimerHost } from '../../src/core/clock.js';
import { timeoutSignal } from '../../src/core/abort.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { ownedClientOptions } from '../../src/integrations/redis/connection.js';

const LONG = 3e9; // about 35 days: past Node's 2^31 - 1 ms

/**
 * A host whose timers fire when told to, and whose time can run a little
 * behind the timers (as Node's can: a timer may fire a millisecond before
 * `Date.now()` says it is due).
 */
class ManualHost implements TimerHost {
  time = 0;
  lag = 0;
  readonly armed = new Map<number, { fn: () => void; ms: number }>();
  readonly delays: number[] = [];
  #next = 1;
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.delays.push(ms);
    this.armed.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.armed.delete(handle as number);
  }
  /** Fire the one armed timer after its delay (minus the lag, when the delay is longer). */
  fire(): void {
    const [id, timer] = [...this.armed][0]!;
    this.armed.delete(id);
    this.time += timer.ms > this.lag ? timer.ms - this.lag : timer.ms;
    timer.fn();
  }
  /** Fire until `done()` (at most 100 times). */
  fireUntil(done: () => boolean): void {
    for (let i = 0; i < 100 && !done(); i++) this.fire();
  }
}

describe('long timers', () => {
  it('are chained in pieces Node accepts and fire only at their deadline', () => {
    const host = new ManualHost();
    let fired = 0;
    boundedTimer(host, () => fired++, LONG);
    host.fireUntil(() => fired > 0);
    expect(host.time).toBe(LONG);
    expect(Math.max(...host.delays)).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
    expect(host.delays).toEqual([MAX_TIMER_DELAY_MS, LONG - MAX_TIMER_DELAY_MS]);
    expect(host.armed.size).toBe(0);
  });

  it('never fire early, even when the host fires ahead of its own time', () => {
    const host = new ManualHost();
    host.lag = 1;
    let firedAt: number | undefined;
    boundedTimer(host, () => (firedAt = host.now()), 100);
    host.fireUntil(() => firedAt !== undefined);
    expect(firedAt).toBeGreaterThanOrEqual(100);
  });

  it('cancel whichever piece is armed; a time-out of Infinity never fires', () => {
    const host = new ManualHost();
    let fired = false;
    const cancel = boundedTimer(host, () => (fired = true), LONG);
    host.fire(); // the first piece passes
    expect(host.armed.size).toBe(1);
    cancel();
    expect(host.armed.size).toBe(0);
    expect(fired).toBe(false);
    boundedTimer(host, () => (fired = true), Infinity);
    expect(host.armed.size).toBe(0);
    boundedTimer(host, () => (fired = true), Number.NaN);
    host.fire();
    expect(fired).toBe(true); // NaN counts as no delay
  });

  it('on the real clock: a 3e9 ms timer has not fired after a real wait, and leaves no timer once cancelled', async () => {
    // Counted in one synchronous step around the cancels: timers of other tests sharing the process cannot come or go in between.
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    let fired = false;
    const cancel = realClock.setTimer(() => (fired = true), LONG);
    const signal = timeoutSignal(LONG, realClock);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).toBe(false);
    expect(signal.signal.aborted).toBe(false);
    const armed = timers();
    cancel();
    signal.clear();
    expect(timers()).toBe(armed - 2);
  });

  it('a run with timeoutMs 3e9 finishes on the real clock instead of timing out at once', async () => {
    const adapter = scriptedAdapter({ fallback: 'done', latencyMs: 20 });
    const result = await run(agent({ name: 'slowpoke', timeoutMs: LONG }), 'go', { adapter, timeoutMs: LONG });
    expect(result.output).toBe('done');
  });

  it('on a simulated clock: a 3e9 ms time-out fires at 3e9 ms, not before', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: { fault: 'hang' } });
    const result = run(agent({ name: 'waiter' }), 'go', { adapter, clock, timeoutMs: LONG });
    const settled = result.then(() => 'resolved', (e: unknown) => e);
    await clock.advance(MAX_TIMER_DELAY_MS + 1);
    await clock.advance(LONG - MAX_TIMER_DELAY_MS - 2);
    expect(await Promise.race([settled, Promise.resolve('pending')])).toBe('pending');
    await clock.advance(1);
    expect(await settled).toMatchObject({ code: 'timeout' });
    const slept = sleep(clock, LONG).then(() => clock.now());
    await clock.advance(LONG);
    expect(await slept).toBe(2 * LONG);
  });

  it('keeps the timers of libraries troupe configures within the limit', () => {
    expect(ownedClientOptions(LONG).connectTimeout).toBe(MAX_TIMER_DELAY_MS);
    expect(ownedClientOptions(10_000).connectTimeout).toBe(10_000);
  });

  it('every timer in src/ goes through the clock (the team interface, which runs in a browser, uses the page\'s)', () => {
    const src = join(import.meta.dirname, '..', '..', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.replaceAll('\\', '/').startsWith('ui/'));
    const raw = files.filter((f) => /\b(setTimeout|setInterval|AbortSignal\.timeout)\s*\(/.test(readFileSync(join(src, f), 'utf8').replace(/^\s*(\*|\/\/).*$/gm, '')));
    expect(raw.map((f) => relative('.', f).replaceAll('\\', '/'))).toEqual(['core/clock.ts']);
  });
});

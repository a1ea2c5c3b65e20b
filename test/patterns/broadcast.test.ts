import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { broadcast } from '../../src/patterns/broadcast.js';
import { sequential } from '../../src/patterns/sequential.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { Gauge, gaugedRunnable } from '../helpers/concurrency.js';

describe('broadcast', () => {
  it('sends the same input to all and labels the answers; usage rolls up', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'optimist', reply: { text: 'Sunny', usage: { inputTokens: 2, outputTokens: 1 } } },
        { agent: 'pessimist', reply: { text: 'Rain', usage: { inputTokens: 3, outputTokens: 1 } } },
      ],
    });
    const result = await run(broadcast([agent({ name: 'optimist' }), agent({ name: 'pessimist' })], { name: 'panel' }), 'Weather?', { adapter });
    expect(result.output).toBe('### From optimist\nSunny\n\n### From pessimist\nRain');
    expect(result.agent).toBe('panel');
    expect(adapter.inputsOf('optimist')).toEqual(['Weather?']);
    expect(adapter.inputsOf('pessimist')).toEqual(['Weather?']);
    expect(result.usage).toMatchObject({ inputTokens: 5, outputTokens: 2, turns: 2 });
  });

  it('fails with the first failure', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: { fault: 'throw', error: 'down' } }, { agent: 'b', reply: 'ok' }] });
    await expect(run(broadcast([agent({ name: 'a' }), agent({ name: 'b' })]), 'x', { adapter })).rejects.toThrow('down');
  });

  it('runs at most maxParallel at once; the others wait their turn', async () => {
    const clock = new SimulatedClock();
    const gauge = new Gauge();
    const list = ['a', 'b', 'c', 'd', 'e'].map((name) => gaugedRunnable(name, gauge, clock));
    const result = run(broadcast(list, { maxParallel: 2 }), 'x', { clock });
    await clock.runAll();
    expect((await result).results.map((r) => r.outcome.output)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(gauge.peak).toBe(2);
    expect(clock.now()).toBe(300);
  });

  it('the first failure cancels the running siblings, and the queued ones never start', async () => {
    const clock = new SimulatedClock();
    const gauge = new Gauge();
    const failing = { name: 'bad', kind: 'custom', run: () => Promise.reject(new Error('down')) };
    const slow = gaugedRunnable('slow', gauge, clock, 5000);
    const queued = gaugedRunnable('queued', gauge, clock);
    const result = run(broadcast([slow, failing, queued], { maxParallel: 2 }), 'x', { clock });
    await expect(result).rejects.toThrow('down');
    expect(gauge.peak).toBe(1);
    expect(gauge.running).toBe(0);
    expect(clock.now()).toBe(0);
  });
});

describe('sequential', () => {
  it('runs in order, each step seeing the earlier answers; the last owns the answer', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'research', reply: { text: 'Facts', usage: { inputTokens: 1, outputTokens: 1 } } },
        { agent: 'outline', reply: { text: 'Outline', usage: { inputTokens: 2, outputTokens: 1 } } },
        { agent: 'write', reply: { text: 'Post', usage: { inputTokens: 3, outputTokens: 1 } } },
      ],
    });
    const result = await run(sequential([agent({ name: 'research' }), agent({ name: 'outline' }), agent({ name: 'write' })]), 'Tide pools', { adapter });
    expect(result).toMatchObject({ output: 'Post', agent: 'write' });
    expect(adapter.inputsOf('research')).toEqual(['Tide pools']);
    expect(adapter.inputsOf('write')[0]).toBe('## ORIGINAL USER REQUEST\nTide pools\n\n## EARLIER ANSWERS\n\n### From research\nFacts\n\n### From outline\nOutline');
    expect(result.steps.map((s) => s.name)).toEqual(['research', 'outline', 'write']);
    expect(result.usage).toMatchObject({ inputTokens: 6, outputTokens: 3, turns: 3 });
  });

  it('refuses an empty list', () => {
    expect(() => sequential([])).toThrow(/non-empty list/);
  });
});

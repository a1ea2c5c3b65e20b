import { describe, expect, it } from 'vitest';
import { scriptedAdapter, type ScriptedTurn } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';
import { scriptedFor } from '../helpers/scenarios.js';

adapterSuite('scripted', scriptedFor, { runner: { describe, it } });

describe('scriptedAdapter', () => {
  it('uses per-agent queues first, then rules in order, then the fallback', async () => {
    const adapter = scriptedAdapter({
      replies: { a: ['q1'] },
      rules: [
        { agent: 'a', match: 'refund', reply: 'billing' },
        { agent: /^a$/, reply: ['r1', 'r2'], times: 2 },
      ],
      fallback: 'fb',
    });
    const s = await adapter.openSession({ agent: 'a' });
    const texts = [];
    for (const input of ['x', 'a refund', 'y', 'z', 'w']) texts.push((await s.send(input)).text);
    expect(texts).toEqual(['q1', 'billing', 'r1', 'r2', 'fb']);
    expect(adapter.inputsOf('a')).toEqual(['x', 'a refund', 'y', 'z', 'w']);
  });

  it('fails clearly when nothing matches', async () => {
    const adapter = scriptedAdapter();
    const s = await adapter.openSession({ agent: 'lonely' });
    await expect(s.send('hello')).rejects.toThrow(/no reply for agent "lonely"/);
  });

  it('injects faults', async () => {
    const turns: ScriptedTurn[] = [{ fault: 'throw', error: 'provider down' }, { fault: 'empty' }, { fault: 'malformed-tool-call' }];
    const adapter = scriptedAdapter({ replies: { a: turns } });
    const s = await adapter.openSession({ agent: 'a' });
    await expect(s.send('1')).rejects.toThrow('provider down');
    await expect(s.send('2')).resolves.toMatchObject({ text: '', toolCalls: [] });
    const bad = await s.send('3');
    expect(bad.toolCalls[0]).toMatchObject({ arguments: undefined, rawArguments: '{"broken": ' });
  });

  it('waits for latency on the injected clock', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: 'ok', latencyMs: 500, clock });
    const s = await adapter.openSession({ agent: 'a' });
    let done = false;
    const p = s.send('x').then((t) => {
      done = true;
      return t;
    });
    await clock.advance(499);
    expect(done).toBe(false);
    await clock.advance(1);
    await expect(p).resolves.toMatchObject({ text: 'ok' });
  });

  it('estimates usage when none is scripted', async () => {
    const adapter = scriptedAdapter({ fallback: 'four' });
    const s = await adapter.openSession({ agent: 'a', system: '12345678' });
    const turn = await s.send('abcdefgh');
    expect(turn.usage).toEqual({ inputTokens: 4, outputTokens: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { usageByAgent } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { handoff, type HandoffOutcome } from '../../src/patterns/handoff.js';
import type { Runnable } from '../../src/core/runnable.js';

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

describe('handoff', () => {
  it('single hop: the receiver gets the original request and the sender output, and owns the answer', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'drafter', reply: { text: 'Draft: refund 12.50', usage: usage(10, 4) } },
        { agent: 'reviewer', reply: { text: 'Approved reply', usage: usage(20, 3) } },
      ],
    });
    const events: TroupeEvent[] = [];
    const result = await run(handoff(agent({ name: 'drafter' }), agent({ name: 'reviewer' })), 'Refund INV-77', {
      adapter,
      onEvent: (e) => events.push(e),
    });
    expect(result.output).toBe('Approved reply');
    expect(result.agent).toBe('reviewer');
    expect(result.from.output).toBe('Draft: refund 12.50');
    expect(adapter.inputsOf('reviewer')[0]).toBe('## ORIGINAL USER REQUEST\nRefund INV-77\n\n## HANDOFF FROM drafter\nDraft: refund 12.50');
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 7, turns: 2 });
    expect(usageByAgent(result.trace)).toMatchObject({ drafter: { inputTokens: 10 }, reviewer: { inputTokens: 20 } });
    const steps = events.filter((e) => e.type.startsWith('handoff.')).map((e) => e.type);
    expect(steps).toEqual(['handoff.started', 'handoff.completed']);
  });

  it('multi-hop chain: each hop gets the original request, the last agent owns the answer', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'a', reply: { text: 'A', usage: usage(1, 1) } },
        { agent: 'b', reply: { text: 'B', usage: usage(2, 2) } },
        { agent: 'c', reply: { text: 'C', usage: usage(3, 3) } },
      ],
    });
    const chain = handoff(handoff(agent({ name: 'a' }), agent({ name: 'b' })), agent({ name: 'c' }));
    const result = await run(chain, 'request', { adapter });
    expect(result.agent).toBe('c');
    expect(result.output).toBe('C');
    expect(adapter.inputsOf('b')[0]).toContain('## HANDOFF FROM a\nA');
    expect(adapter.inputsOf('c')[0]).toBe('## ORIGINAL USER REQUEST\nrequest\n\n## HANDOFF FROM b\nB');
    expect(result.usage).toMatchObject({ inputTokens: 6, outputTokens: 6, turns: 3 });
  });

  it('a chain as a list: handoff(a, b, c) and handoff([a, b, c]) run as the nested handoffs do', async () => {
    const replies = () =>
      scriptedAdapter({
        rules: [
          { agent: 'a', reply: { text: 'A', usage: usage(1, 1) } },
          { agent: 'b', reply: { text: 'B', usage: usage(2, 2) } },
          { agent: 'c', reply: { text: 'C', usage: usage(3, 3) } },
          { agent: 'd', reply: { text: 'D', usage: usage(4, 4) } },
        ],
      });
    const nestedAdapter = replies();
    const nested = await run(handoff(handoff(handoff(agent({ name: 'a' }), agent({ name: 'b' })), agent({ name: 'c' })), agent({ name: 'd' })), 'request', { adapter: nestedAdapter });
    for (const chain of [
      handoff(agent({ name: 'a' }), agent({ name: 'b' }), agent({ name: 'c' }), agent({ name: 'd' })),
      handoff([agent({ name: 'a' }), agent({ name: 'b' }), agent({ name: 'c' }), agent({ name: 'd' })]),
    ]) {
      expect(chain.name).toBe('a -> b -> c -> d');
      const adapter = replies();
      const result = await run(chain, 'request', { adapter });
      expect(result).toMatchObject({ output: 'D', agent: 'd', status: 'completed' });
      expect(result.usage).toEqual(nested.usage);
      for (const name of ['b', 'c', 'd']) expect(adapter.inputsOf(name)).toEqual(nestedAdapter.inputsOf(name));
      expect((result.from as HandoffOutcome).from).toMatchObject({ agent: 'b', from: { agent: 'a' } });
    }
  });

  it('a chain with options: the name is the whole chain\'s, the format applies to every step', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'A' }, { agent: 'b', reply: 'B' }, { agent: 'c', reply: 'C' }] });
    const format = (request: string, from: string, output: string) => `${request} | ${from} said ${output}`;
    const chain = handoff(agent({ name: 'a' }), agent({ name: 'b' }), agent({ name: 'c' }), { name: 'review chain', format });
    expect(chain.name).toBe('review chain');
    expect(handoff([agent({ name: 'a' }), agent({ name: 'b' })], { name: 'pair' }).name).toBe('pair');
    const result = await run(chain, 'req', { adapter });
    expect(adapter.inputsOf('b')).toEqual(['req | a said A']);
    expect(adapter.inputsOf('c')).toEqual(['req | b said B']);
    expect(result.trace.name).toBe('review chain');
  });

  it('names the stage that failed', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'A' }, { agent: 'b', reply: { fault: 'throw', error: 'vendor down' } }] });
    const failed: string[] = [];
    const handle = startRun(handoff(agent({ name: 'a' }), agent({ name: 'b' })), 'x', { adapter });
    handle.emitter.on('handoff.failed', (e) => failed.push(e.stage));
    await expect(handle.result).rejects.toMatchObject({ code: 'adapter_error', details: { stage: 'b' }, message: expect.stringContaining('Handoff stage "b" failed: vendor down') });
    expect(failed).toEqual(['b']);
  });

  it('cancellation mid-chain: no model call after the abort', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'a', reply: { text: 'A', delayMs: 100 } }, { agent: 'b', reply: 'B' }, { agent: 'c', reply: 'C' }] });
    const chain = handoff(handoff(agent({ name: 'a' }), agent({ name: 'b' })), agent({ name: 'c' }));
    const handle = startRun(chain, 'x', { adapter, clock });
    handle.result.catch(() => undefined);
    await clock.advance(50);
    handle.cancel();
    await clock.runAll();
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a']);
    expect(handle.trace.status).toBe('cancelled');
  });
});

describe('handoff depth guard', () => {
  it('stops recursion that static checks cannot see', async () => {
    const adapter = scriptedAdapter({ fallback: 'again' });
    const lazy: Runnable = { name: 'lazy', kind: 'lazy', run: (input, ctx) => loop.run(input, ctx) };
    const loop: Runnable = handoff(agent({ name: 'a' }), lazy);
    await expect(run(loop, 'x', { adapter, maxDepth: 8 })).rejects.toMatchObject({ code: 'depth_exceeded' });
  });
});

describe('handoff options', () => {
  it('refuses something that is not a runnable', () => {
    expect(() => handoff(agent({ name: 'a' }), undefined as unknown as Runnable)).toThrow('Expected `to` of a handoff to be a runnable, got undefined (undefined)');
    expect(() => handoff(agent({ name: 'a' }), agent({ name: 'b' }), 'c' as unknown as Runnable)).toThrow('Expected step 3 of a handoff to be a runnable, got "c" (string)');
    expect(() => handoff([agent({ name: 'a' })])).toThrow('Expected a handoff of at least two runnables, got 1');
    expect(() => handoff([agent({ name: 'a' }), { name: 'x' } as unknown as Runnable, agent({ name: 'c' })])).toThrow(
      'Expected step 2 of a handoff to be a runnable, got {"name":"x"} (object)',
    );
  });
});

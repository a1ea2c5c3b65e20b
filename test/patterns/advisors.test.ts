import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { advisors } from '../../src/patterns/advisors.js';
import { agent } from '../../src/patterns/agent.js';

const lead = agent({ name: 'lead' });
const risk = agent({ name: 'risk' });
const compliance = agent({ name: 'compliance' });

describe('advisors', () => {
  it('all succeed: main gets the enriched message in the exact format', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'risk', reply: { text: 'Low risk.', usage: { inputTokens: 3, outputTokens: 2 } } },
        { agent: 'compliance', reply: { text: 'Compliant.', usage: { inputTokens: 4, outputTokens: 2 } } },
        { agent: 'lead', reply: { text: 'Ship it.', usage: { inputTokens: 10, outputTokens: 2 } } },
      ],
    });
    const events: TroupeEvent[] = [];
    const result = await run(advisors(lead, [risk, compliance]), 'Ship on Friday?', { adapter, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ output: 'Ship it.', agent: 'lead' });
    expect(adapter.inputsOf('lead')[0]).toBe(
      '## ORIGINAL USER REQUEST\nShip on Friday?\n\n## ANALYSIS GATHERED\n\n### From risk\nLow risk.\n\n### From compliance\nCompliant.',
    );
    expect(adapter.inputsOf('risk')).toEqual(['Ship on Friday?']);
    expect(result.advice.map((a) => a.ok)).toEqual([true, true]);
    expect(events.filter((e) => e.type === 'advisor.completed').map((e) => (e as { advisor: string }).advisor).sort()).toEqual(['compliance', 'risk']);
    expect(result.usage).toMatchObject({ inputTokens: 17, outputTokens: 6, turns: 3 });
  });

  it('partial failure: the failed advisor becomes a note by default', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'risk', reply: { fault: 'throw', error: 'rate limited' } },
        { agent: 'compliance', reply: 'Compliant.' },
        { agent: 'lead', reply: 'Go.' },
      ],
    });
    const failed: string[] = [];
    const handle = startRun(advisors(lead, [risk, compliance]), 'q', { adapter });
    handle.emitter.on('advisor.failed', (e) => failed.push(`${e.advisor}: ${e.error}`));
    const result = await handle.result;
    expect(result.output).toBe('Go.');
    expect(adapter.inputsOf('lead')[0]).toContain('### From risk\nAdvisor consultation failed for risk: rate limited\n\n### From compliance\nCompliant.');
    expect(failed).toEqual(['risk: rate limited']);
  });

  it("onFailure: 'fail' rethrows and main never runs", async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'risk', reply: { fault: 'throw', error: 'boom' } }, { agent: 'compliance', reply: 'ok' }, { agent: 'lead', reply: 'x' }] });
    await expect(run(advisors(lead, [risk, compliance], { onFailure: 'fail' }), 'q', { adapter })).rejects.toThrow('boom');
    expect(adapter.inputsOf('lead')).toHaveLength(0);
  });

  it('time-out: a slow advisor times out on the injected clock, the others count', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'risk', reply: { text: 'late', delayMs: 10_000 } },
        { agent: 'compliance', reply: { text: 'quick', delayMs: 100 } },
        { agent: 'lead', reply: 'decided' },
      ],
    });
    const handle = startRun(advisors(lead, [risk, compliance], { timeoutMs: 1000 }), 'q', { adapter, clock });
    await clock.advance(1000);
    const result = await handle.result;
    expect(result.output).toBe('decided');
    expect(result.advice[0]).toMatchObject({ advisor: 'risk', ok: false, error: 'Advisor "risk" timed out after 1000 ms' });
    expect(adapter.inputsOf('lead')[0]).toContain('Advisor consultation failed for risk: Advisor "risk" timed out after 1000 ms');
    expect(clock.now()).toBe(1000);
  });

  it('runs at most maxParallel advisors at once', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, fallback: { text: 'ok', delayMs: 100 } });
    const handle = startRun(advisors(lead, [risk, compliance, agent({ name: 'legal' })], { maxParallel: 2 }), 'q', { adapter, clock });
    await clock.advance(100);
    expect(adapter.calls.map((c) => c.agent)).toEqual(['risk', 'compliance', 'legal']);
    await clock.advance(50);
    expect(adapter.calls).toHaveLength(3);
    await clock.runAll();
    await handle.result;
    expect(clock.now()).toBe(300);
  });

  it('validates options with clear messages', () => {
    expect(() => advisors(lead, [risk], { maxParallel: -1 })).toThrow('Expected `maxParallel` to be a positive integer, got -1 (number)');
    expect(() => advisors(lead, [risk], { timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

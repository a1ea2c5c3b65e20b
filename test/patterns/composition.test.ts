import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { usageByAgent } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { advisors } from '../../src/patterns/advisors.js';
import { agent } from '../../src/patterns/agent.js';
import { handoff } from '../../src/patterns/handoff.js';
import { router } from '../../src/patterns/router.js';

const u = (n: number) => ({ inputTokens: n, outputTokens: 1 });

describe('composition', () => {
  it('handoff + advisors: the receiver consults advisors on the handed-off message', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'drafter', reply: { text: 'Draft', usage: u(1) } },
        { agent: 'risk', reply: { text: 'Risky', usage: u(2) } },
        { agent: 'approver', reply: { text: 'Approved with care', usage: u(3) } },
      ],
    });
    const flow = handoff(agent({ name: 'drafter' }), advisors(agent({ name: 'approver' }), [agent({ name: 'risk' })]));
    const result = await run(flow, 'Refund 500', { adapter });
    expect(result).toMatchObject({ output: 'Approved with care', agent: 'approver' });
    expect(adapter.inputsOf('risk')[0]).toContain('## HANDOFF FROM drafter\nDraft');
    // One request heading: the advisors keep the handed-off message's own instead of nesting it under another.
    expect(adapter.inputsOf('approver')[0]).toMatch(/^## ORIGINAL USER REQUEST\nRefund 500\n\n## HANDOFF FROM drafter\nDraft\n\n## ANALYSIS GATHERED\n\n### From risk\nRisky$/);
    expect(adapter.inputsOf('approver')[0]!.split('## ORIGINAL USER REQUEST')).toHaveLength(2);
    expect(result.usage).toMatchObject({ inputTokens: 6, outputTokens: 3, turns: 3 });
    expect(Object.keys(usageByAgent(result.trace)).sort()).toEqual(['approver', 'drafter', 'risk']);
  });

  it('router + handoff: the chosen destination hands off, and its receiver is the terminal agent', async () => {
    const adapter = scriptedAdapter({
      replies: { desk: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'billing' } }], usage: u(4) }] },
      rules: [
        { agent: 'billing', reply: { text: 'Refund 12.50', usage: u(5) } },
        { agent: 'approval', reply: { text: 'Refund approved', usage: u(6) } },
      ],
    });
    const billingChain = handoff(agent({ name: 'billing' }), agent({ name: 'approval' }));
    const flow = router(agent({ name: 'desk' }), { billing: billingChain, legal: agent({ name: 'legal' }) });
    const result = await run(flow, 'Charged twice', { adapter });
    expect(result).toMatchObject({ output: 'Refund approved', agent: 'approval', destination: 'billing' });
    expect(adapter.inputsOf('billing')).toEqual(['Charged twice']);
    expect(result.usage).toMatchObject({ inputTokens: 15, outputTokens: 3, turns: 3 });
  });

  it('cancellation mid-chain stops advisors and later stages', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, fallback: { text: 'slow', delayMs: 500 } });
    const flow = handoff(agent({ name: 'a' }), advisors(agent({ name: 'main' }), [agent({ name: 'x' }), agent({ name: 'y' })]));
    const handle = startRun(flow, 'q', { adapter, clock });
    handle.result.catch(() => undefined);
    await clock.advance(600);
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a', 'x', 'y']);
    handle.cancel();
    await clock.runAll();
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a', 'x', 'y']);
  });
});

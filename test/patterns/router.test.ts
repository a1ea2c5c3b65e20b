import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { RoutingError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { router } from '../../src/patterns/router.js';

const route = (to: string, reason = 'fits') => ({ toolCalls: [{ name: 'route_to', arguments: { agent: to, reason } }], usage: { inputTokens: 7, outputTokens: 2 } });
const desk = () => agent({ name: 'desk' });
const billing = agent({ name: 'billing', description: 'Charges and refunds' });
const legal = agent({ name: 'legal' });

describe('router', () => {
  it('routes with one route_to turn; the destination gets the original request', async () => {
    const adapter = scriptedAdapter({
      replies: { desk: [route('billing', 'a charge')] },
      rules: [{ agent: 'billing', reply: { text: 'Refunded.', usage: { inputTokens: 5, outputTokens: 1 } } }],
    });
    const events: TroupeEvent[] = [];
    const result = await run(router(desk(), [billing, legal]), 'I was charged twice', { adapter, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ output: 'Refunded.', agent: 'billing', destination: 'billing', rationale: 'a charge' });
    expect(adapter.inputsOf('billing')).toEqual(['I was charged twice']);
    // exactly one router turn: no tool result is sent back after the choice
    expect(adapter.inputsOf('desk')).toHaveLength(1);
    expect(adapter.inputsOf('desk')[0]).toContain('`route_to`');
    expect(adapter.inputsOf('desk')[0]).toContain('Destinations:\n- billing: Charges and refunds\n- legal');
    const spec = adapter.sessions.find((s) => s.agent === 'desk')!;
    expect(spec.tools?.[0]).toMatchObject({ name: 'route_to', parameters: { properties: { agent: { enum: ['billing', 'legal'] } } } });
    expect(events.find((e) => e.type === 'router.selected')).toMatchObject({ router: 'desk', destination: 'billing', form: 'tool', attempt: 1 });
    expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 3, turns: 2 });
  });

  it('uses the ROUTE: line for adapters without tools', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      replies: { desk: ['This is a contract question.\nROUTE: legal'] },
      rules: [{ agent: 'legal', reply: 'See clause 4.' }],
    });
    const result = await run(router(desk(), [billing, legal]), 'Can I cancel?', { adapter });
    expect(result.agent).toBe('legal');
    expect(adapter.sessions[0]!.tools).toBeUndefined();
    expect(adapter.inputsOf('desk')[0]).toContain('ROUTE: <name>');
  });

  it('invalid selection gets one corrective retry listing the valid names', async () => {
    const adapter = scriptedAdapter({
      replies: { desk: [route('sales'), route('legal')] },
      rules: [{ agent: 'legal', reply: 'Legal answer' }],
    });
    const events: TroupeEvent[] = [];
    const result = await run(router(desk(), [billing, legal]), 'q', { adapter, onEvent: (e) => events.push(e) });
    expect(result.agent).toBe('legal');
    const retry = adapter.calls.filter((c) => c.agent === 'desk')[1]!;
    expect(retry.text).toContain('"sales" is not a valid destination');
    expect(retry.text).toContain('Valid names: billing, legal');
    expect(events.find((e) => e.type === 'router.retry')).toMatchObject({ choice: 'sales', valid: ['billing', 'legal'] });
    expect(events.find((e) => e.type === 'router.selected')).toMatchObject({ attempt: 2 });
  });

  it('routing failure: a RoutingError after the retry', async () => {
    const adapter = scriptedAdapter({ replies: { desk: ['I am not sure.', 'Still unsure.'] } });
    const error = await run(router(desk(), [billing, legal]), 'q', { adapter }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RoutingError);
    expect(error).toMatchObject({ code: 'routing_failed', details: { router: 'desk', valid: ['billing', 'legal'] } });
    expect(adapter.inputsOf('desk')).toHaveLength(2);
    expect(adapter.inputsOf('billing')).toHaveLength(0);
  });

  it('routing failure goes to the configured fallback', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      replies: { desk: ['ROUTE: nowhere', 'ROUTE: elsewhere'] },
      rules: [{ agent: 'billing', reply: 'Billing takes it' }],
    });
    const result = await run(router(desk(), [billing, legal], { fallback: 'billing' }), 'q', { adapter });
    expect(result).toMatchObject({ agent: 'billing', destination: 'billing' });
  });

  it("the router agent's time-out holds on the injected clock", async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, replies: { desk: [{ fault: 'hang' }] } });
    const p = run(router(agent({ name: 'desk', timeoutMs: 500 }), [billing, legal]), 'q', { adapter, clock });
    p.catch(() => undefined);
    await clock.advance(500);
    await expect(p).rejects.toMatchObject({ code: 'timeout', message: 'Agent "desk" timed out after 500 ms' });
    expect(adapter.closedSessions).toBe(1);
    expect(adapter.inputsOf('billing')).toHaveLength(0);
  });

  it('validates its options eagerly', () => {
    expect(() => router(desk(), [])).toThrow(/at least one destination/);
    expect(() => router(desk(), [billing], { fallback: 'legal' })).toThrow('Expected `fallback` of router "desk" to be one of billing, got "legal" (string)');
  });
});

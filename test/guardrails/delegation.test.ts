import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { lastMessages, withGuardrails, withoutToolOutput, type Delegation } from '../../src/guardrails/index.js';
import { agent } from '../../src/patterns/agent.js';
import { asTool } from '../../src/patterns/as-tool.js';
import { handoff } from '../../src/patterns/handoff.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { router } from '../../src/patterns/router.js';

function collect() {
  const events: TroupeEvent[] = [];
  return {
    onEvent: (e: TroupeEvent) => void events.push(e),
    of: <K extends TroupeEvent['type']>(type: K) => events.filter((e) => e.type === type) as unknown as Array<TroupeEvent<K>>,
  };
}

describe('handoff hooks', () => {
  const search = defineTool({ name: 'search', description: 'Search', parameters: z.object({}), execute: () => 'raw search dump' });

  it('an input filter shapes what the receiver sees; the history holds the request, the chain\'s answers and the sender\'s tool results', async () => {
    const adapter = scriptedAdapter({ replies: { research: [{ toolCalls: [{ name: 'search' }] }, 'Findings.'], writer: ['Article.', 'Article 2.'] } });
    const seen: Delegation[] = [];
    const chain = handoff(agent({ name: 'research', tools: [search] }), agent({ name: 'writer' }), {
      delegation: { inputFilter: (d) => (seen.push(d), lastMessages(1, { keepRequest: false })(d)) },
    });
    const events = collect();
    await run(chain, 'Write about tides', { adapter, onEvent: events.onEvent });
    expect(seen[0]).toMatchObject({ kind: 'handoff', from: 'research', to: 'writer' });
    expect(seen[0]!.history).toEqual([
      { role: 'user', content: 'Write about tides' },
      { role: 'tool', name: 'search', content: 'raw search dump' },
      { role: 'assistant', name: 'research', content: 'Findings.' },
    ]);
    expect(adapter.inputsOf('writer')).toEqual(['## EARLIER ANSWERS\n\n### From research\nFindings.']);
    expect(events.of('delegation.decided')).toMatchObject([{ kind: 'handoff', from: 'research', to: 'writer', decision: 'changed' }]);

    const adapter2 = scriptedAdapter({ replies: { research: [{ toolCalls: [{ name: 'search' }] }, 'Findings.'], writer: ['Article.'] } });
    const full = handoff(agent({ name: 'research', tools: [search] }), agent({ name: 'writer' }), { delegation: { inputFilter: lastMessages(5) } });
    await run(full, 'Write about tides', { adapter: adapter2 });
    expect(adapter2.inputsOf('writer')[0]).toContain('## EARLIER ANSWERS\n\n### From search (tool result)\nraw search dump');
    const clean = handoff(agent({ name: 'research', tools: [search] }), agent({ name: 'writer' }), { delegation: { inputFilter: withoutToolOutput() } });
    const adapter3 = scriptedAdapter({ replies: { research: [{ toolCalls: [{ name: 'search' }] }, 'Findings.'], writer: ['Article.'] } });
    await run(clean, 'Write about tides', { adapter: adapter3 });
    expect(adapter3.inputsOf('writer')).toEqual(['## ORIGINAL USER REQUEST\nWrite about tides\n\n## EARLIER ANSWERS\n\n### From research\nFindings.']);
  });

  it('a hook before the handoff may change it or refuse it; a refusal leaves the sender\'s answer', async () => {
    const adapter = scriptedAdapter({ replies: { a: ['draft 1', 'draft 2'], b: ['final'] } });
    const changed = handoff(agent({ name: 'a' }), agent({ name: 'b' }), { delegation: { beforeDelegation: (d) => ({ input: `${d.input}\n\nBe brief.` }) } });
    expect((await run(changed, 'go', { adapter })).output).toBe('final');
    expect(adapter.inputsOf('b')[0]).toMatch(/## HANDOFF FROM a\ndraft 1\n\nBe brief\.$/);
    const events = collect();
    const refused = handoff(agent({ name: 'a' }), agent({ name: 'b' }), { delegation: { beforeDelegation: () => ({ refuse: 'b is on leave' }) } });
    const result = await run(refused, 'go', { adapter, onEvent: events.onEvent });
    expect(result).toMatchObject({ output: 'draft 2', agent: 'a' });
    expect(events.of('handoff.declined')).toMatchObject([{ from: 'a', to: 'b', reason: 'refused' }]);
    expect(events.of('delegation.decided')).toMatchObject([{ decision: 'refused', reason: 'b is on leave' }]);
  });

  it('a disabled receiver is evaluated at run time', async () => {
    let on = false;
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'draft' }, { agent: 'b', reply: 'final' }] });
    const chain = handoff(agent({ name: 'a' }), agent({ name: 'b' }), { delegation: { enabled: () => on } });
    expect((await run(chain, 'go', { adapter })).agent).toBe('a');
    on = true;
    expect((await run(chain, 'go', { adapter })).agent).toBe('b');
  });

  it('hooks of a guarded runnable apply to every handoff inside it', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'draft' }, { agent: 'b', reply: 'mid' }, { agent: 'c', reply: 'final' }] });
    const chain = withGuardrails(handoff(handoff(agent({ name: 'a' }), agent({ name: 'b' })), agent({ name: 'c' })), {
      delegation: { inputFilter: (d) => d.history.map((m) => m.content).join(' | ') },
    });
    await run(chain, 'go', { adapter });
    expect(adapter.inputsOf('b')).toEqual(['go | draft']);
    expect(adapter.inputsOf('c')).toEqual(['go | draft | mid']);
  });
});

describe('router hooks', () => {
  it('a disabled destination is not offered; a refused route goes back to the router as a tool error', async () => {
    const adapter = scriptedAdapter({
      replies: {
        desk: [
          { toolCalls: [{ name: 'route_to', arguments: { agent: 'billing', reason: 'charges' } }] },
          { toolCalls: [{ name: 'route_to', arguments: { agent: 'support' } }] },
        ],
        support: ['Helped.'],
      },
    });
    const desk = router(agent({ name: 'desk' }), [agent({ name: 'billing' }), agent({ name: 'support' }), agent({ name: 'legal' })], {
      delegation: {
        enabled: (t) => t.to !== 'legal',
        beforeDelegation: (d) => (d.to === 'billing' ? { refuse: 'billing is closed today' } : { input: `[routed] ${d.input}` }),
      },
    });
    const result = await run(desk, 'I was charged twice', { adapter });
    expect(result).toMatchObject({ agent: 'support', destination: 'support' });
    const tool = adapter.sessions[0]!.tools!.find((t) => t.name === 'route_to')!;
    expect((tool.parameters as { properties: { agent: { enum: string[] } } }).properties.agent.enum).toEqual(['billing', 'support']);
    expect(adapter.calls[0]!.text).not.toContain('- legal');
    expect(adapter.calls[1]!.input).toMatchObject([{ name: 'route_to', isError: true, content: expect.stringContaining('Routing to "billing" was refused: billing is closed today.') }]);
    expect(adapter.inputsOf('support')).toEqual(['[routed] I was charged twice']);
  });
});

describe('orchestrator delegation hooks', () => {
  it('tool dispatch: a disabled worker is not offered, a refusal is the delegate call\'s error result, a filter shapes the worker\'s prompt', async () => {
    const adapter = scriptedAdapter({
      replies: {
        lead: [
          { toolCalls: [{ name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'write it' } }, { name: 'delegate_to_worker', arguments: { worker: 'tester', task: 'test it' } }] },
          'Synthesis.',
        ],
        tester: ['Tested.'],
      },
    });
    const events = collect();
    const loop = orchestrate({
      lead: agent({ name: 'lead' }),
      workers: [agent({ name: 'coder' }), agent({ name: 'tester' }), agent({ name: 'deployer' })],
      mode: 'orchestrator',
      dispatch: 'tool',
      delegation: {
        enabled: (t) => t.to !== 'deployer',
        inputFilter: (d) => `Task: ${d.history.at(-1)!.content}`,
        beforeDelegation: (d) => (d.to === 'coder' ? { refuse: 'coder is busy' } : undefined),
      },
    });
    const result = await run(loop, 'Ship the feature', { adapter, onEvent: events.onEvent });
    expect(result.output).toBe('Synthesis.');
    const tool = adapter.sessions[0]!.tools!.find((t) => t.name === 'delegate_to_worker')!;
    expect((tool.parameters as { properties: { worker: { enum: string[] } } }).properties.worker.enum).toEqual(['coder', 'tester']);
    expect(adapter.calls[0]!.text).not.toContain('deployer');
    expect(adapter.calls.find((c) => c.agent === 'lead' && c.turn === 2)!.input).toMatchObject([
      { isError: true, content: 'Error: Delegation refused: coder is busy' },
      { content: 'Tested.' },
    ]);
    expect(adapter.inputsOf('tester')).toEqual(['Task: test it']);
    expect(adapter.inputsOf('coder')).toEqual([]);
    expect(events.of('delegation.decided').map((e) => `${e.to}:${e.decision}`)).toEqual(['coder:refused', 'tester:changed']);
  });

  it('text dispatch: an assignment to a disabled worker or to no worker is refused and logged, and the synthesis sees it', async () => {
    const adapter = scriptedAdapter({
      replies: {
        lead: ['@worker:coder\nWrite it.\n\n@worker:tester\nTest it.\n\n@worker:deplyer\nShip it.', 'Synthesis.'],
        coder: ['Written.'],
      },
    });
    const events = collect();
    const loop = orchestrate({
      lead: agent({ name: 'lead' }),
      workers: [agent({ name: 'coder' }), agent({ name: 'tester' }), agent({ name: 'deployer' })],
      mode: 'orchestrator',
      delegation: { enabled: (t) => t.to !== 'tester' },
    });
    const result = await run(loop, 'Ship the feature', { adapter, onEvent: events.onEvent });
    expect(result.output).toBe('Synthesis.');
    expect(adapter.inputsOf('tester')).toEqual([]);
    expect(events.of('delegation.decided').map((e) => `${e.to}:${e.decision}`)).toEqual(['tester:disabled', 'deplyer:refused', 'coder:allowed']);
    expect(result.results.map((r) => [r.worker, r.success])).toEqual([
      ['tester', false],
      ['deplyer', false],
      ['coder', true],
    ]);
    // The synthesis prompt names both refusals.
    const synthesis = adapter.inputsOf('lead').at(-1)!;
    expect(synthesis).toContain('Delegation refused: "tester" is not available');
    expect(synthesis).toContain('Delegation refused: no worker is named "deplyer" (workers: coder, deployer)');
  });

  it('text dispatch without hooks: a misspelt worker name is refused and logged, not dropped', async () => {
    const adapter = scriptedAdapter({ replies: { lead: ['@worker:coder\nWrite it.\n\n@worker:tster\nTest it.', 'Synthesis.'], coder: ['Written.'] } });
    const events = collect();
    const loop = orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], mode: 'orchestrator' });
    const result = await run(loop, 'Ship it', { adapter, onEvent: events.onEvent });
    expect(events.of('delegation.decided')).toEqual([expect.objectContaining({ to: 'tster', decision: 'refused' })]);
    expect(result.results.find((r) => r.worker === 'tster')).toMatchObject({ success: false });
    expect(adapter.inputsOf('lead').at(-1)).toContain('no worker is named "tster"');
  });
});

describe('agent-as-tool hooks', () => {
  it('a disabled agent tool is not offered; a refusal is an error result; a filter shapes the task', async () => {
    const adapter = scriptedAdapter({
      replies: {
        lead: [{ toolCalls: [{ name: 'helper', arguments: { task: 'first' } }, { name: 'helper', arguments: { task: 'second' } }] }, 'Done.'],
        helper: ['ok'],
      },
    });
    let calls = 0;
    const helperTool = asTool(agent({ name: 'helper' }), {
      delegation: {
        inputFilter: (d) => d.input.toUpperCase(),
        beforeDelegation: () => (++calls === 1 ? { refuse: 'not now' } : undefined),
      },
    });
    const off = asTool(agent({ name: 'hidden' }), { delegation: { enabled: () => false } });
    await run(agent({ name: 'lead', tools: [helperTool, off] }), 'go', { adapter });
    expect(adapter.sessions[0]!.tools!.map((t) => t.name)).toEqual(['helper']);
    expect(adapter.calls.find((c) => c.agent === 'lead' && c.turn === 2)!.input).toMatchObject([{ isError: true, content: 'Error: Delegation refused: not now' }, { content: 'ok' }]);
    expect(adapter.inputsOf('helper')).toEqual(['SECOND']);
  });
});

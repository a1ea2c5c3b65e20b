import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { usageByAgent } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { asTool } from '../../src/patterns/as-tool.js';
import { handoff } from '../../src/patterns/handoff.js';

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

describe('asTool', () => {
  it('runs the runnable on the task, nested in the caller\'s op; its usage rolls up into the caller\'s', async () => {
    const researcher = agent({ name: 'researcher', system: 'Find facts.' });
    const lead = agent({ name: 'lead', tools: [asTool(researcher, { description: 'Finds facts on a topic' })] });
    const adapter = scriptedAdapter({
      replies: {
        lead: [{ toolCalls: [{ name: 'researcher', arguments: { task: 'Facts on tides' } }], usage: usage(10, 2) }, { text: 'Tides come from the moon.', usage: usage(30, 5) }],
        researcher: [{ text: 'The moon pulls the sea.', usage: usage(7, 6) }],
      },
    });
    const events: TroupeEvent[] = [];
    const result = await run(lead, 'Explain tides', { adapter, onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Tides come from the moon.');
    expect(adapter.inputsOf('researcher')).toEqual(['Facts on tides']);
    expect(adapter.calls.find((c) => c.agent === 'lead' && c.turn === 2)!.text).toContain('The moon pulls the sea.');
    expect(adapter.sessions[0]!.tools).toEqual([
      { name: 'researcher', description: 'Finds facts on a topic', parameters: expect.objectContaining({ type: 'object', required: ['task'] }) },
    ]);
    const agentOp = result.trace.children[0]!;
    expect(agentOp.children.map((c) => [c.kind, c.name, c.children[0]?.name])).toEqual([['subagent', 'researcher', 'researcher']]);
    expect(result.usage).toMatchObject({ inputTokens: 47, outputTokens: 13, turns: 3 });
    expect(usageByAgent(result.trace)).toMatchObject({ lead: { inputTokens: 40 }, researcher: { inputTokens: 7 } });
    expect(events.filter((e) => e.type === 'agent.started').map((e) => (e as TroupeEvent<'agent.started'>).agent)).toEqual(['lead', 'researcher']);
  });

  it('any runnable: a handoff chain as one tool, named after it with other characters written `_`', async () => {
    const chain = handoff(agent({ name: 'draft' }), agent({ name: 'review' }), { name: 'draft -> review' });
    const tool = asTool(chain);
    expect(tool.name).toBe('draft_-__review');
    expect(tool.description).toBe('Ask draft -> review to do a task; returns its answer.');
    const lead = agent({ name: 'lead', tools: [tool] });
    const adapter = scriptedAdapter({
      replies: { lead: [{ toolCalls: [{ name: 'draft_-__review', arguments: { task: 'a note' } }] }, 'sent'] },
      rules: [{ agent: 'draft', reply: 'D' }, { agent: 'review', reply: 'R' }],
    });
    const result = await run(lead, 'x', { adapter });
    expect(adapter.calls.find((c) => c.agent === 'lead' && c.turn === 2)!.text).toContain('R');
    expect(result.usage.turns).toBe(4);
  });

  it('a failing sub-agent becomes an error result the caller sees; the run goes on', async () => {
    const flaky = agent({ name: 'flaky' });
    const lead = agent({ name: 'lead', tools: [asTool(flaky)] });
    const adapter = scriptedAdapter({
      replies: { lead: [{ toolCalls: [{ name: 'flaky', arguments: { task: 'try' } }] }, 'I will do it myself.'], flaky: [{ fault: 'throw', error: 'model down' }] },
    });
    const result = await run(lead, 'x', { adapter });
    expect(result.output).toBe('I will do it myself.');
    const second = adapter.calls.find((c) => c.agent === 'lead' && c.turn === 2)!.text;
    expect(second).toContain('Error:');
    expect(second).toContain('model down');
    expect(result.trace.children[0]!.children[0]).toMatchObject({ kind: 'subagent', status: 'failed' });
  });

  it('a cancelled run cancels the sub-agent', async () => {
    const clock = new SimulatedClock();
    const slow = agent({ name: 'slow' });
    const lead = agent({ name: 'lead', tools: [asTool(slow)] });
    const adapter = scriptedAdapter({ clock, replies: { lead: [{ toolCalls: [{ name: 'slow', arguments: { task: 't' } }] }, 'never'], slow: [{ text: 's', delayMs: 1000 }] } });
    const handle = startRun(lead, 'x', { adapter, clock });
    handle.result.catch(() => undefined);
    await clock.advance(10);
    handle.cancel();
    await clock.runAll();
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['lead', 'slow']);
  });

  it('refuses what is not a runnable', () => {
    expect(() => asTool({} as never)).toThrow(/Expected a runnable for asTool/);
  });
});

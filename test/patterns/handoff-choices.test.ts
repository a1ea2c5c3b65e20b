import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { emptyUsage } from '../../src/core/usage.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { handoffChoices, parseHandoffLine, type HandoffApprover } from '../../src/patterns/handoff-choices.js';
import { ApprovalQueue } from '../../src/guardrails/approvals.js';

const team = () => ({ planner: agent({ name: 'planner', system: 'Plan.' }), builder: agent({ name: 'builder' }), tester: agent({ name: 'tester' }) });

describe('parseHandoffLine', () => {
  it('reads the last HANDOFF line outside fences, in any case, quotes and backticks dropped', () => {
    expect(parseHandoffLine('Done.\nhandoff: `Build it`')).toEqual({ choice: 'Build it', rest: 'Done.' });
    expect(parseHandoffLine('HANDOFF: a\nmore\nHANDOFF: "b".')).toEqual({ choice: 'b', rest: 'HANDOFF: a\nmore' });
    expect(parseHandoffLine('Example:\n```\nHANDOFF: builder\n```\nNo hand-off.')).toBeUndefined();
    expect(parseHandoffLine('HANDOFF:')).toBeUndefined();
    expect(() => parseHandoffLine(3 as never)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('handoffChoices', () => {
  it('a choice with send goes ahead: by a HANDOFF line on an adapter without tools', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      replies: { planner: ['The plan.\nHANDOFF: Build it'], builder: ['Built.'] },
    });
    const flow = handoffChoices('planner', { agents: team(), choices: { planner: [{ to: 'builder', label: 'Build it', prompt: 'Build the plan', send: true }] } });
    const events: TroupeEvent[] = [];
    const result = await run(flow, 'Make a shed', { adapter, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ output: 'Built.', agent: 'builder', handoffs: [{ from: 'planner', to: 'builder', label: 'Build it' }] });
    expect(adapter.inputsOf('builder')[0]).toBe('## ORIGINAL USER REQUEST\nMake a shed\n\n## HANDOFF FROM planner\nThe plan.\n\n## NEXT STEP\nBuild the plan');
    expect(adapter.sessions[0]!.system).toBe('Plan.\n\n## HAND-OFFS\nWhen your part is done, you may hand the work on to:\n- Build it → builder: Build the plan\nTo hand off, end your answer with a line `HANDOFF: <label>`. Hand off only when the next step is clearly due; otherwise just answer.');
    expect(events.filter((e) => e.type.startsWith('handoff.')).map((e) => e.type)).toEqual(['handoff.started', 'handoff.completed']);
  });

  it('by the hand_off tool on an adapter with tools; without a choice the first answer stands', async () => {
    const adapter = scriptedAdapter({
      replies: { planner: [{ toolCalls: [{ name: 'hand_off', arguments: { to: 'tester' } }] }, 'Plan ready.'], tester: ['Tested.'] },
    });
    const flow = handoffChoices('planner', { agents: team(), choices: { planner: [{ to: 'builder', send: true }, { to: 'tester', send: true }] } });
    expect(await run(flow, 'x', { adapter })).toMatchObject({ output: 'Tested.', agent: 'tester' });
    expect(adapter.calls[1]!.text).toContain('Handing off to tester once you have answered.');
    const quiet = scriptedAdapter({ replies: { planner: ['Nothing to hand on.'] } });
    expect(await run(flow, 'x', { adapter: quiet })).toMatchObject({ output: 'Nothing to hand on.', agent: 'planner', handoffs: [] });
  });

  it('a choice without send asks the approval queue: approved goes on, refused stops', async () => {
    const replies = () => ({ planner: ['Plan.\nHANDOFF: builder'], builder: ['Built.'] });
    const choices = { planner: [{ to: 'builder', label: 'Build' }] };
    const yes = new ApprovalQueue({ handler: () => ({ approved: true }) });
    expect(await run(handoffChoices('planner', { agents: team(), choices, approvals: yes }), 'x', { adapter: scriptedAdapter({ replies: replies() }) })).toMatchObject({ agent: 'builder' });
    const asked: unknown[] = [];
    const no: HandoffApprover = { request: async (r) => (asked.push(r), false) };
    const events: TroupeEvent[] = [];
    const refused = await run(handoffChoices('planner', { agents: team(), choices, approvals: no }), 'x', { adapter: scriptedAdapter({ replies: replies() }), onEvent: (e) => events.push(e) });
    expect(refused).toMatchObject({ output: 'Plan.', agent: 'planner', handoffs: [] });
    expect(asked).toEqual([{ tool: 'handoff:builder', agent: 'planner', sessionId: expect.any(String), runId: expect.any(String), arguments: { to: 'builder', label: 'Build' } }]);
    expect(events.find((e) => e.type === 'handoff.declined')).toMatchObject({ from: 'planner', to: 'builder', label: 'Build', reason: 'denied' });
    // No approval queue: the choice is not taken, and the event says why.
    const none: TroupeEvent[] = [];
    await run(handoffChoices('planner', { agents: team(), choices }), 'x', { adapter: scriptedAdapter({ replies: replies() }), onEvent: (e) => none.push(e) });
    expect(none.find((e) => e.type === 'handoff.declined')).toMatchObject({ reason: 'no-approvals' });
  });

  it('loops between agents are bounded by maxHandoffs', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'planner', reply: 'P\nHANDOFF: builder' }, { agent: 'builder', reply: 'B\nHANDOFF: planner' }] });
    const events: TroupeEvent[] = [];
    const flow = handoffChoices('planner', {
      agents: team(),
      choices: { planner: [{ to: 'builder', send: true }], builder: [{ to: 'planner', send: true }] },
      maxHandoffs: 3,
    });
    const result = await run(flow, 'x', { adapter, onEvent: (e) => events.push(e) });
    expect(result.handoffs.map((h) => h.to)).toEqual(['builder', 'planner', 'builder']);
    expect(result).toMatchObject({ output: 'B', agent: 'builder' });
    expect(events.find((e) => e.type === 'handoff.declined')).toMatchObject({ reason: 'limit' });
  });

  it('checks its options', () => {
    expect(() => handoffChoices('ghost', { agents: team(), choices: {} })).toThrow(/"ghost" is not in `agents`/);
    expect(() => handoffChoices('planner', { agents: team(), choices: { planner: [{ to: 'nobody' }] } })).toThrow(/"nobody", which is not in `agents`/);
    expect(() => handoffChoices('planner', { agents: { ...team(), planner: { name: 'planner', kind: 'custom', run: async () => ({ output: '', agent: 'planner', status: 'completed' as const, usage: emptyUsage() }) } }, choices: { planner: [{ to: 'builder' }] } })).toThrow(/must be an agent/);
    expect(() => handoffChoices('planner', { agents: team(), choices: {}, maxHandoffs: -1 })).toThrow(/maxHandoffs/);
  });
});

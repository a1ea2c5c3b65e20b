import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { defineTool } from '../../../src/core/tools.js';
import { PlanningSession } from '../../../src/plan/session/planning-session.js';
import { chunk, planOf } from '../helpers.js';

const twoChunks = planOf(chunk(0), chunk(1, [0], { role: 'Synthesis' }));
const plan = JSON.stringify(twoChunks);

describe('PlanningSession: editing, going back, settings, instructions', () => {
  it('approves a plan the user edited, validated like a generated one; an invalid edit keeps the plan', async () => {
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', plan] }, rules: [{ agent: 'synthesis', reply: 'summary' }, { agent: /Generic|Testing|Synthesis/, reply: (r) => `did: ${r.text.split('\n')[0]}` }] });
    const session = new PlanningSession({ adapter, clock: new SimulatedClock(), planRoles: ['Generic', 'Testing', 'Synthesis'] });
    const step = await session.submitTask('Fix the parser');
    expect(step.phase).toBe('awaiting-approval');
    const edited = structuredClone(session.plan!);
    edited.chunks[0]!.title = 'Fix the tokenizer first';
    edited.chunks.splice(1, 0, { ...chunk(2, [0]), role: 'Testing', title: 'Add a regression test' });
    edited.chunks[2]!.dependsOnIndexes = [0, 2];
    expect(session.editPlan(edited)).toEqual({ phase: 'awaiting-approval', plan: edited });
    // Invalid edits: a cycle, a role the planner may not use, damaged JSON; nothing is lost.
    const cyclic = structuredClone(edited);
    cyclic.chunks[0]!.dependsOnIndexes = [2];
    expect(() => session.editPlan(cyclic)).toThrow(/dependency cycle: 0 -> 2 -> 0/);
    expect(() => session.editPlan({ ...edited, chunks: [{ ...edited.chunks[0]!, role: 'Performance' }] })).toThrow(/role Performance, which is not available/);
    expect(() => session.editPlan('{"planSummary": "x", "chunks": []}')).toThrow(/no work chunks/);
    expect(session.plan).toEqual(edited);
    const done = await session.approvePlan();
    expect(done.outcome?.results.map((r) => [r.sequenceIndex, r.title, r.status])).toEqual([
      [0, 'Fix the tokenizer first', 'completed'],
      [2, 'Add a regression test', 'completed'],
      [1, 'Chunk B', 'completed'],
    ]);
    expect(adapter.inputsOf('Testing')[0]).toContain('# Chunk 2: Add a regression test');
    expect(session.messages.map((m) => m.from)).toEqual(['user', 'planner', 'user']);
  });

  it('goes back to clarifying when the user asks, and when the planner asks while revising', async () => {
    const adapter = scriptedAdapter({
      replies: {
        planner: [
          '{"action":"plan"}',
          plan,
          // the user went back: the planner asks
          '{"action":"clarify","questions":["Which parser: JSON or YAML?"]}',
          '{"action":"plan"}',
          plan,
          // changes requested: the planner asks instead of planning
          'I need to know one thing first. {"action":"clarify","questions":["Keep the old API?"]}',
          '{"action":"plan"}',
          plan,
        ],
      },
    });
    const session = new PlanningSession({ adapter, clock: new SimulatedClock() });
    const phases: string[] = [];
    session.emitter.on('phase.changed', (e) => phases.push(e.to));
    await session.submitTask('Fix the parser');
    const back = await session.clarify('I should say which parser');
    expect(back).toEqual({ phase: 'clarifying', questions: ['Which parser: JSON or YAML?'] });
    expect(adapter.inputsOf('planner')[2]).toContain('The user went back to clarifying: I should say which parser');
    expect((await session.answerClarification('YAML')).phase).toBe('awaiting-approval');
    const asked = await session.requestChanges('Split the work by module');
    expect(asked).toEqual({ phase: 'clarifying', questions: ['Keep the old API?'] });
    expect(adapter.inputsOf('planner')[5]).toContain('{"action":"clarify","questions":["..."]}');
    expect((await session.answerClarification('yes')).phase).toBe('awaiting-approval');
    expect(phases).toEqual([
      'clarifying', 'planning', 'awaiting-approval',
      'clarifying', 'planning', 'awaiting-approval',
      'planning', 'clarifying', 'planning', 'awaiting-approval',
    ]);
    await expect(session.answerClarification('again')).rejects.toMatchObject({ code: 'wrong_phase' });
  });

  it('uses the planner and aggregator settings, defaulting to the Planning and Synthesis roles', async () => {
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', plan] }, rules: [{ agent: 'synthesis', reply: 'summary' }, { agent: /Generic|Synthesis/, reply: 'worked' }] });
    const session = new PlanningSession({
      adapter,
      clock: new SimulatedClock(),
      planner: { model: 'planner-model', system: 'You plan database migrations.' },
      aggregator: { temperature: 0.7 },
      roles: { Synthesis: { model: 'big-model', system: 'You summarise for managers.' } },
    });
    await session.submitTask('Migrate the users table');
    await session.approvePlan();
    const planners = adapter.sessions.filter((s) => s.agent === 'planner');
    expect(planners.map((s) => [s.model, s.temperature])).toEqual([['planner-model', 0.2], ['planner-model', 0.2]]);
    expect(planners[0]!.system).toMatch(/^You plan database migrations\.\n\nYou decide whether a task is clear enough/);
    expect(planners[1]!.system).toBe('You plan database migrations.');
    const synthesis = adapter.sessions.find((s) => s.agent === 'synthesis')!;
    expect([synthesis.model, synthesis.temperature, synthesis.system]).toEqual(['big-model', 0.7, 'You summarise for managers.']);
  });

  it('hands an instruction to running workers at their next turn and acknowledges it', async () => {
    let session!: PlanningSession;
    const acks: string[] = [];
    const readFile = defineTool({
      name: 'read_file',
      description: 'Read a file',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => {
        if (path === 'a.ts') acks.push(session.post('Use tabs, not spaces').message);
        return `contents of ${path}`;
      },
    });
    const adapter = scriptedAdapter({
      replies: {
        planner: ['{"action":"plan"}', JSON.stringify(planOf(chunk(0), chunk(1), chunk(2, [0, 1], { role: 'Synthesis' })))],
        Synthesis: ['merged'],
        synthesis: ['summary'],
      },
      rules: [
        {
          agent: 'Generic',
          reply: (r) => {
            if (r.text.startsWith('# Chunk 0')) return { text: '', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.ts' } }] };
            if (r.text.startsWith('# Chunk 1')) return 'chunk 1 first answer';
            return r.text.startsWith('[tool result') ? 'chunk 0 done with tabs' : 'chunk 1 done with tabs';
          },
        },
      ],
    });
    session = new PlanningSession({ adapter, clock: new SimulatedClock(), tools: [readFile], toolRisks: { read_file: 'read-only' }, maxParallel: 2 });
    const events: TroupeEvent[] = [];
    session.emitter.on('*', (e) => events.push(e));
    await session.submitTask('Reformat the code');
    const done = await session.approvePlan();
    expect(done.phase).toBe('completed');
    expect(acks).toEqual(['Noted: chunks 0, 1 will get it at their next turn, and the chunks that start from now on will follow it.']);
    const inputs = adapter.inputsOf('Generic');
    // Chunk 0 gets it with its tool result; chunk 1 (no tool call) right after its answer.
    expect(inputs).toHaveLength(4);
    expect(inputs.find((i) => i.startsWith('[tool result'))).toMatch(/^\[tool result read_file#call_1\] contents of a\.ts\n\n## New instructions from the user\n\n.*\n- Use tabs, not spaces$/s);
    expect(inputs.find((i) => i.startsWith('## New instructions from the user'))).toContain('- Use tabs, not spaces\n\nIf they change your work');
    expect(adapter.inputsOf('Synthesis')[0]).toContain('## Additional instructions from the user\n\n- Use tabs, not spaces');
    const delivered = events.filter((e): e is TroupeEvent<'chunk.instruction'> => e.type === 'chunk.instruction');
    expect(delivered.map((e) => [e.chunkId, e.instructions])).toEqual([['0', ['Use tabs, not spaces']], ['1', ['Use tabs, not spaces']]]);
    expect(done.outcome!.results.map((r) => r.output)).toEqual(['chunk 0 done with tabs', 'chunk 1 done with tabs', 'merged']);
    expect(session.messages.filter((m) => m.from === 'session').map((m) => m.text)).toEqual([acks[0]]);
    const instruction = events.find((e): e is TroupeEvent<'plan.instruction'> => e.type === 'plan.instruction')!;
    expect(instruction).toMatchObject({ running: ['0', '1'], acknowledgement: acks[0] });
  });
});

import { describe, expect, it } from 'vitest';
import { NotRunningError } from '../../../src/core/control.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { readRun } from '../../../src/persistence/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { PlanMessageError, parseRecipient } from '../../../src/plan/live/messages.js';
import { PlanControl } from '../../../src/plan/live/control.js';
import { chunk, drive, planOf } from '../helpers.js';

function rejected(f: () => unknown): PlanMessageError {
  try {
    f();
  } catch (error) {
    if (error instanceof PlanMessageError) return error;
    throw error;
  }
  throw new Error('expected a PlanMessageError');
}

describe('messages between the workers of a plan', () => {
  it('reach a chunk that has not started in its prompt, and are events and checkpoint entries', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        {
          agent: 'Generic',
          reply: (r) => {
            if (r.text.startsWith('# Chunk 0')) return { text: '', toolCalls: [{ id: 'p1', name: 'post_message', arguments: { to: 'chunk:1', text: 'The endpoint returns 201, not 200.' } }] };
            if (r.text.startsWith('[tool result')) return 'chunk 0 done';
            return 'chunk 1 done';
          },
        },
      ],
    });
    const events: TroupeEvent[] = [];
    const plan = planOf(chunk(0), chunk(1, [0]));
    const outcome = await drive(clock, executePlan(plan, { adapter, clock, store, runId: 'talk', workerMessages: true, onEvent: (e) => events.push(e) }));
    const inputs = adapter.inputsOf('Generic');
    expect(inputs[1]).toBe('[tool result post_message#p1] Posted m1 to chunk 1.');
    expect(inputs[2]).toContain('## Messages from other workers\n\n- From chunk 0 (to chunk 1): The endpoint returns 201, not 200.');
    expect(outcome.messages).toEqual([{ id: 'm1', from: 0, to: { chunk: 1 }, text: 'The endpoint returns 201, not 200.', time: expect.any(Number) }]);
    expect(events.filter((e) => e.type === 'plan.message')).toHaveLength(1);
    const log = await readRun('talk', { store });
    const appended = log.events.filter((e): e is TroupeEvent<'checkpoint.appended'> => e.type === 'checkpoint.appended').map((e) => e.entry);
    expect(appended).toContainEqual({ message: outcome.messages![0] });
    expect(outcome.results[0]!.toolCalls).toEqual([{ name: 'post_message', arguments: { to: 'chunk:1', text: 'The endpoint returns 201, not 200.' } }]);
  });

  it('reach a running chunk at its next turn (a role, or everyone), once, with a chunk.instruction event naming them', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        {
          agent: 'Generic',
          reply: (r) => {
            if (r.text.startsWith('# Chunk 0')) return { text: '', toolCalls: [{ id: 'p1', name: 'post_message', arguments: { to: 'role:Testing', text: 'Login now needs a CSRF token.' } }] };
            return 'chunk 0 done';
          },
        },
        // The tester answers later than chunk 0 posts: the message comes after its answer, as a follow-up.
        { agent: 'Testing', reply: (r) => (r.text.startsWith('# Chunk 1') ? { text: 'tests written', delayMs: 50 } : 'tests updated for CSRF') },
      ],
    });
    const events: TroupeEvent[] = [];
    const plan = planOf(chunk(0), chunk(1, [], { role: 'Testing' }));
    const outcome = await drive(clock, executePlan(plan, { adapter, clock, workerMessages: true, onEvent: (e) => events.push(e) }));
    const tester = adapter.inputsOf('Testing');
    expect(tester).toHaveLength(2);
    expect(tester[0]).not.toContain('CSRF');
    expect(tester[1]).toMatch(/^## Messages from other workers\n\n- From chunk 0 \(to role Testing\): Login now needs a CSRF token\.\n\nIf they change your work/);
    expect(outcome.results[1]!.output).toBe('tests updated for CSRF');
    const delivered = events.filter((e): e is TroupeEvent<'chunk.instruction'> => e.type === 'chunk.instruction');
    expect(delivered.map((e) => [e.chunkId, e.instructions, e.messages])).toEqual([['1', [], ['m1']]]);
  });

  it('are bounded: a message too long, past the plan cap, or to nobody is refused with a typed error (and a tool answer)', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const errors: PlanMessageError[] = [];
    const adapter = scriptedAdapter({
      clock,
      rules: [
        {
          agent: 'Generic',
          reply: (r) => {
            if (r.text.startsWith('# Chunk 0')) {
              errors.push(rejected(() => control.post({ to: 'all', text: 'x'.repeat(21) })));
              control.post({ to: 'all', text: 'first' });
              control.post({ to: { chunk: 1 }, text: 'second' });
              errors.push(rejected(() => control.post({ to: 'all', text: 'third' })));
              return { text: '', toolCalls: [{ id: 'p1', name: 'post_message', arguments: { to: 'chunk:1', text: 'fourth' } }] };
            }
            return 'done';
          },
        },
      ],
    });
    const outcome = await drive(clock, executePlan(planOf(chunk(0), chunk(1, [0])), { adapter, clock, control, workerMessages: { maxChars: 20, maxMessages: 2 } }));
    expect(errors.map((e) => [e.code, e.problem])).toEqual([['message_rejected', 'too_long'], ['message_rejected', 'cap_reached']]);
    expect(errors[0]!.message).toBe('The message has 21 characters; the limit is 20');
    // The refusal is the tool's answer; the message to everyone posted meanwhile comes with it.
    expect(adapter.inputsOf('Generic')[1]).toBe('[tool result post_message#p1] Not posted: The plan already has 2 messages, its limit.\n\n## Messages from other workers\n\n- From api: first');
    expect(outcome.messages!.map((m) => m.text)).toEqual(['first', 'second']);
    // The plan has ended: one `NotRunningError` for every control called while no plan runs.
    expect(() => control.post({ to: 'all', text: 'late' })).toThrow(NotRunningError);
    expect(() => control.post({ to: 'all', text: 'late' })).toThrow(expect.objectContaining({ code: 'not_running' }));
  });

  it('refuses a recipient that is not in the plan, and parses recipients as models write them', async () => {
    const clock = new SimulatedClock();
    const control = new PlanControl();
    const errors: PlanMessageError[] = [];
    const runChunk = async (): Promise<string> => {
      errors.push(rejected(() => control.post({ to: { chunk: 9 }, text: 'hello' })));
      errors.push(rejected(() => control.post({ to: { role: 'Performance' }, text: 'hello' })));
      errors.push(rejected(() => control.post({ to: 'nobody', text: 'hello' } as never)));
      return 'ok';
    };
    await drive(clock, executePlan(planOf(chunk(0)), { clock, control, runChunk }));
    expect(errors.map((e) => e.problem)).toEqual(['unknown_recipient', 'unknown_recipient', 'malformed']);
    expect([parseRecipient('all'), parseRecipient('chunk:3'), parseRecipient('7'), parseRecipient('role:testing'), parseRecipient('role: Wizard')]).toEqual(['all', { chunk: 3 }, { chunk: 7 }, { role: 'Testing' }, undefined]);
  });
});

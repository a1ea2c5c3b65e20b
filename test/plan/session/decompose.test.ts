import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { decompose } from '../../../src/plan/session/decompose.js';
import { PlanValidationError } from '../../../src/plan/model/plan.js';
import { chunk, planOf } from '../helpers.js';

const valid = JSON.stringify(planOf(chunk(0), chunk(1, [0], { role: 'Synthesis' })));

describe('decompose', () => {
  it('sends an invalid plan back with its errors, then accepts a valid one', async () => {
    const adapter = scriptedAdapter({ replies: { planner: ['I think we should start with the cache.', `Here you go:\n\`\`\`json\n${valid}\n\`\`\``] } });
    const plan = await decompose('Find the leaks', { adapter });
    expect(plan.chunks.map((c) => c.sequenceIndex)).toEqual([0, 1]);
    const [first, second] = adapter.inputsOf('planner');
    expect(first).toContain('## Task\n\nFind the leaks');
    expect(first).toContain('Synthesis');
    expect(second).toContain('Your plan is invalid');
    expect(second).toContain('no JSON object found');
    // the same session: the correction is a second turn
    expect(adapter.calls[1]!.turn).toBe(2);
  });

  it('throws a PlanValidationError carrying every attempt after three invalid answers', async () => {
    const cyclic = JSON.stringify(planOf(chunk(0, [1]), chunk(1, [0])));
    const adapter = scriptedAdapter({ replies: { planner: ['nothing', cyclic, JSON.stringify(planOf())] } });
    const error = await decompose('Find the leaks', { adapter }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlanValidationError);
    const attempts = (error as PlanValidationError).attempts;
    expect(attempts).toHaveLength(3);
    expect(attempts[0]).toEqual(['no JSON object found in the answer']);
    expect(attempts[1]![0]).toMatch(/dependency cycle: 0 -> 1 -> 0/);
    expect(attempts[2]).toEqual(['plan contains no work chunks']);
    expect((error as PlanValidationError).code).toBe('plan_invalid');
  });

  it('plans in a session the caller owns, correcting it in the same session', async () => {
    const sent: string[] = [];
    const answers = ['not a plan', valid];
    const session = { send: async (input: string) => (sent.push(input), { text: answers.shift()! }) };
    const plan = await decompose('Find the leaks', { session });
    expect(plan.chunks).toHaveLength(2);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain('## Task\n\nFind the leaks');
    expect(sent[1]).toContain('Your plan is invalid');
  });

  it('refuses roles that are not available', async () => {
    const adapter = scriptedAdapter({ replies: { planner: [valid, JSON.stringify(planOf(chunk(0)))] } });
    const plan = await decompose('Task', { adapter, roles: ['Generic'] });
    expect(plan.chunks).toHaveLength(1);
    expect(adapter.inputsOf('planner')[1]).toContain('uses role Synthesis, which is not available');
  });
});

import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { LoopControl } from '../../src/core/control.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { agent } from '../../src/patterns/agent.js';
import { reflect, reflectStateSchema, type ReflectState } from '../../src/patterns/reflect.js';
import { resume } from '../../src/core/resume.js';
import { checkpointRecorder } from '../helpers/checkpoints.js';
import { memoryStore } from '../../src/core/memory-store.js';

const writer = () => agent({ name: 'writer', system: 'You write haiku.' });

describe('reflect', () => {
  it('stops on [[REFLECTION_COMPLETE]], each prompt naming the goal and iteration i/N', async () => {
    const adapter = scriptedAdapter({ replies: { writer: ['A first draft.', 'Leaves fall softly down\n[[REFLECTION_COMPLETE]]'] } });
    const result = await run(reflect(writer(), { goal: 'A haiku about autumn', maxIterations: 3 }), 'Write a haiku', { adapter, clock: new SimulatedClock() });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', goalMet: true, iterations: 2, output: 'Leaves fall softly down', agent: 'writer' });
    expect(result.summary).toBe('✅ Goal met (2/3) in 0 ms');
    const inputs = adapter.inputsOf('writer');
    expect(inputs[0]).toContain('## GOAL\nA haiku about autumn');
    expect(inputs[0]).toContain('## ITERATION 1/3');
    expect(inputs[0]).toContain('## ORIGINAL USER REQUEST\nWrite a haiku');
    expect(inputs[0]).toContain('End your reply with [[REFLECTION_COMPLETE]] on a line of its own only when the goal is fully achieved.');
    expect(inputs[1]).toContain('## ITERATION 2/3');
    expect(inputs[1]).toContain('## YOUR PREVIOUS ANSWER\nA first draft.');
    expect(adapter.sessions).toHaveLength(1);
  });

  it('ignores a sentinel in the middle of a sentence', async () => {
    const adapter = scriptedAdapter({ replies: { writer: ['I will say [[REFLECTION_COMPLETE]] later.', 'v2', 'v3'] } });
    const result = await run(reflect(writer(), { maxIterations: 3 }), 'go', { adapter, clock: new SimulatedClock() });
    expect(result).toMatchObject({ status: 'completed', reason: 'max-iterations', iterations: 3 });
    expect(result.goalMet).toBe(false);
    expect(result).not.toHaveProperty('cancelled'); // `goalMet` says it
    expect(result.summary).toMatch(/^⏱️ Max iterations \(3\/3\)/);
  });

  it('uses an evaluator: FAIL feedback goes into the next prompt, PASS ends the loop', async () => {
    const adapter = scriptedAdapter({
      replies: { writer: ['Draft one.', 'Draft two.'], critic: ['FAIL: Missing the season word', 'PASS\nLovely.'] },
    });
    const events: TroupeEvent[] = [];
    const loop = reflect(writer(), { goal: 'A haiku', evaluator: agent({ name: 'critic' }), evaluationPrompt: 'Judge strictly.' });
    const result = await run(loop, 'A haiku', { adapter, clock: new SimulatedClock(), onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2, output: 'Draft two.' });
    expect(adapter.inputsOf('writer')[1]).toContain('## LAST EVALUATION\nMissing the season word');
    expect(adapter.inputsOf('critic')[0]).toBe('Judge strictly.\n\n## GOAL\nA haiku\n\n## RESPONSE TO EVALUATE\nDraft one.');
    expect(result.evaluations.map((e) => [e.score, e.rationale, e.trend])).toEqual([[0, 'Missing the season word', 'stable'], [1, 'Lovely.', 'improving']]);
    expect(events.filter((e) => e.type === 'reflect.evaluated')).toHaveLength(2);
  });

  it('stalls when the agent repeats itself', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'writer', reply: 'Same poem.' }] });
    const result = await run(reflect(writer()), 'go', { adapter, clock: new SimulatedClock() });
    expect(result).toMatchObject({ status: 'completed', reason: 'stalled', iterations: 3 });
  });

  it('spends an error budget with back-off', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'writer', reply: { fault: 'throw', error: 'down' } }] });
    const p = run(reflect(writer(), { retry: { delayMs: 1000 } }), 'go', { adapter, clock });
    for (let i = 0; i < 5; i++) await clock.advance(1000);
    const result = await p;
    expect(result).toMatchObject({ status: 'failed', reason: 'error-budget', error: 'down', iterations: 0 });
    expect(adapter.calls).toHaveLength(3);
  });

  it('is cancelled by the signal, with no model call after the abort', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'writer', reply: { text: 'slow', delayMs: 5000 } }] });
    const controller = new AbortController();
    const p = run(reflect(writer()), 'go', { adapter, clock, signal: controller.signal });
    await clock.advance(100);
    controller.abort();
    const result = await p;
    await clock.runAll();
    expect(result).toMatchObject({ status: 'cancelled', iterations: 0 });
    expect(adapter.calls).toHaveLength(1);
  });

  it("pauses through its run's control and continues at the same iteration once unpaused", async () => {
    const adapter = scriptedAdapter({ replies: { writer: ['one', 'two\n[[REFLECTION_COMPLETE]]'] } });
    const loop = reflect(writer());
    const control = new LoopControl();
    const first = startRun(loop, 'go', { adapter, clock: new SimulatedClock(), control });
    first.emitter.on('agent.turn', () => control.pause());
    const paused = await first.result;
    expect(paused).toMatchObject({ status: 'paused', iterations: 1 });
    expect(paused.state.lastOutput).toBe('one');
    control.unpause();
    const result = await run(loop, 'go', { adapter, clock: new SimulatedClock(), control });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2, output: 'two' });
    expect(adapter.inputsOf('writer')[1]).toContain('## ITERATION 2/5');
  });

  it('two runs of one loop have their own controls: pausing one does not pause the other', async () => {
    const reply = (r: { text: string }) => (r.text.includes('## ITERATION 2/') ? `${r.text.split('\n')[1]} done\n[[REFLECTION_COMPLETE]]` : 'draft');
    const adapter = scriptedAdapter({ rules: [{ agent: 'writer', reply }] });
    const loop = reflect(writer());
    const clock = new SimulatedClock();
    const [first, second] = [new LoopControl(), new LoopControl()];
    const a = startRun(loop, 'first', { adapter, clock, control: first });
    const b = startRun(loop, 'second', { adapter, clock, control: second });
    a.emitter.on('agent.turn', () => first.pause());
    const [paused, finished] = await Promise.all([a.result, b.result]);
    expect(paused).toMatchObject({ status: 'paused', iterations: 1 });
    expect(finished).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2, output: 'second done' });
    expect(second.paused).toBe(false);
  });

  it("is cancelled through its run's control", async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ agent: 'writer', reply: { text: 'slow', delayMs: 5000 } }] });
    const control = new LoopControl();
    const p = run(reflect(writer()), 'go', { adapter, clock, control });
    await clock.advance(100);
    control.cancel('Enough');
    expect(await p).toMatchObject({ status: 'cancelled', iterations: 0 });
    expect(control.running).toBe(false);
    expect(() => control.cancel()).toThrow(expect.objectContaining({ code: 'not_running' }));
  });

  it('a finished loop saved with a status of before 0.1.0 (goal-met) resumes as status completed, reason goal-met', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({ replies: { writer: ['one\n[[REFLECTION_COMPLETE]]'] } });
    await run(reflect(writer()), 'go', { adapter, clock: new SimulatedClock(), store, runId: 'old' });
    const [key] = (await store.list('runs/old/checkpoints')).filter((k) => k.includes('reflect'));
    const doc = (await store.get(key!)) as { outcome: Record<string, unknown> };
    const { reason: _reason, ...outcome } = doc.outcome;
    await store.set(key!, { ...doc, outcome: { ...outcome, status: 'goal-met' } });
    const resumed = await resume(reflect(writer()), 'old', { adapter, clock: new SimulatedClock(), store });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'goal-met', output: 'one' });
    expect(adapter.calls).toHaveLength(1);
  });

  it('checkpoints after every iteration in the run store and resumes from it', async () => {
    const saves = checkpointRecorder<ReflectState>('reflect', 2);
    const adapter = scriptedAdapter({ replies: { writer: ['one', 'two', 'three\n[[REFLECTION_COMPLETE]]'] } });
    const first = await run(reflect(writer(), { maxIterations: 4 }), 'go', { adapter, clock: new SimulatedClock(), store: saves.store, runId: 'w', signal: saves.signal, onEvent: saves.onEvent });
    expect(first.status).toBe('cancelled');
    expect(saves.states.map((s) => s.iteration)).toEqual([1, 2]);
    expect(reflectStateSchema.parse(saves.states[1])).toEqual(saves.states[1]);
    const result = await resume(reflect(writer(), { maxIterations: 4 }), 'w', { adapter, clock: new SimulatedClock(), store: saves.store });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 3, output: 'three' });
    expect(adapter.inputsOf('writer')[2]).toContain('## YOUR PREVIOUS ANSWER\ntwo');
  });
});

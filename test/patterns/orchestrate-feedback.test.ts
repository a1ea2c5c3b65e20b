// What an orchestrate loop learns from one iteration for the next: the
// adjustments from feedback (failed workers, short answers, a score drop)
// and the evaluator's prompt (iteration, previous score and rationale,
// worker answers cut to length).
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { resume } from '../../src/core/resume.js';
import { checkpointRecorder } from '../helpers/checkpoints.js';
import { feedbackAdjustments } from '../../src/reflection/adjust.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate, type OrchestrateOptions } from '../../src/patterns/orchestrate.js';
import { orchestrateStateSchema, type OrchestrateState } from '../../src/patterns/orchestrate-state.js';

const REQUEST = 'Fix the token refresh bug, test it and document it';
const PLAN = '@worker:coder\nFix the refresh path.\n@end\n@worker:tester\nTest it.\n@end\n@worker:writer\nDocument it.\n@end';
const LONG = 'The refresh path now compares expiresAt with the clock before reusing a token, and refuses a revoked one.';

function team(extra: Partial<OrchestrateOptions> = {}) {
  return orchestrate({
    lead: agent({ name: 'lead' }),
    workers: [agent({ name: 'coder' }), agent({ name: 'tester' }), agent({ name: 'writer' })],
    evaluator: agent({ name: 'judge' }),
    ...extra,
  });
}

const adjustments = (events: TroupeEvent[]) =>
  events.filter((e): e is TroupeEvent<'reflect.adjustment'> => e.type === 'reflect.adjustment').map(({ iteration, kind, worker }) => [iteration, kind, worker ?? null]);

describe('feedbackAdjustments', () => {
  it('flags failed workers, short answers from iteration 2 on, and a score drop, in that order', () => {
    const results = [
      { worker: 'coder', success: false, output: '', error: 'Worker "coder" timed out after 1000 ms\nat step 3' },
      { worker: 'tester', success: true, output: 'ok' },
      { worker: 'writer', success: true, output: LONG },
    ];
    expect(feedbackAdjustments({ iteration: 1, results, score: 0.4, previous: 0.7 })).toEqual([
      {
        kind: 'worker-failed', worker: 'coder', error: 'Worker "coder" timed out after 1000 ms\nat step 3',
        message: 'Worker "coder" failed (Worker "coder" timed out after 1000 ms): give its task to "tester" or "writer", or try it again.',
      },
      { kind: 'score-drop', score: 0.4, previous: 0.7, message: 'The score dropped from 0.70 to 0.40: review what changed since the previous iteration, and the tasks or the workers.' },
    ]);
    expect(feedbackAdjustments({ iteration: 2, results, minAnswerChars: 10 }).map((a) => [a.kind, 'worker' in a ? a.worker : null])).toEqual([
      ['worker-failed', 'coder'],
      ['short-answer', 'tester'],
    ]);
    expect(feedbackAdjustments({ iteration: 2, results: [{ worker: 'a', success: false, output: '' }] })[0]?.message).toBe(
      'Worker "a" failed (unknown error): try its task again, smaller or clearer.',
    );
    // A drop of exactly 0.1 is stable, as the quality trend says.
    expect(feedbackAdjustments({ iteration: 3, results: [], score: 0.6, previous: 0.7 })).toEqual([]);
    expect(() => feedbackAdjustments({ iteration: 2, results: [], minAnswerChars: -1 })).toThrow(/minAnswerChars/);
  });
});

describe('adjustment from feedback in orchestrate', () => {
  it('emits the adjustments after an evaluation and puts them into the next plan', async () => {
    const clock = new SimulatedClock();
    let plans = 0;
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Synthesis ${plans}: fix, tests (${plans}) and docs-${plans}` : (plans++, PLAN)) },
        { agent: 'coder', reply: (r) => (r.text.includes('## YOUR ASSIGNED TASK') && plans === 1 ? { fault: 'throw', error: 'socket hang up' } : LONG) },
        { agent: 'tester', reply: 'done' },
        { agent: 'writer', reply: LONG },
      ],
      replies: { judge: ['SCORE: 0.7\nRATIONALE: The docs are thin.', 'SCORE: 0.4\nRATIONALE: The tests are gone.', 'SCORE: 0.95\nRATIONALE: Complete.'] },
    });
    const events: TroupeEvent[] = [];
    const result = await run(team(), REQUEST, { adapter, clock, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 3 });
    expect(adjustments(events)).toEqual([
      [1, 'worker-failed', 'coder'],
      [2, 'short-answer', 'tester'],
      [2, 'score-drop', null],
    ]);
    const [, , second, , third] = adapter.inputsOf('lead');
    expect(second).toContain('## ADJUSTMENTS\nFrom the last iteration\'s results and evaluation:\n- Worker "coder" failed (socket hang up): give its task to "tester" or "writer", or try it again.');
    expect(third).toContain('- Worker "tester" gave a brief answer (4 characters): make its task more precise, or give it to another worker.');
    expect(third).toContain('- The score dropped from 0.70 to 0.40');
    expect(third).not.toContain('coder" failed');
    expect(result.state.adjustments).toBeUndefined(); // the goal is met: nothing is left to adjust
    const order = events.map((e) => e.type).filter((t) => t === 'reflect.evaluated' || t === 'reflect.adjustment' || t === 'reflect.iteration.started');
    expect(order).toEqual([
      'reflect.iteration.started', 'reflect.evaluated', 'reflect.adjustment',
      'reflect.iteration.started', 'reflect.evaluated', 'reflect.adjustment', 'reflect.adjustment',
      'reflect.iteration.started', 'reflect.evaluated',
    ]);
  });

  it('is off with autoAdjust: false, and minAnswerChars sets what is too short', async () => {
    const script = () =>
      scriptedAdapter({
        rules: [
          { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Synthesis of ${r.text.length}` : PLAN) },
          { agent: 'coder', reply: 'short one' },
          { agent: 'tester', reply: 'short two' },
          { agent: 'writer', reply: 'short three' },
        ],
        replies: { judge: ['SCORE: 0.5\nRATIONALE: a', 'SCORE: 0.5\nRATIONALE: b'] },
      });
    const off: TroupeEvent[] = [];
    await run(team({ maxIterations: 2, autoAdjust: false }), REQUEST, { adapter: script(), onEvent: (e) => off.push(e) });
    expect(adjustments(off)).toEqual([]);
    const low: TroupeEvent[] = [];
    await run(team({ maxIterations: 2, autoAdjust: { minAnswerChars: 10 } }), REQUEST, { adapter: script(), onEvent: (e) => low.push(e) });
    expect(adjustments(low)).toEqual([[2, 'short-answer', 'coder'], [2, 'short-answer', 'tester']]);
    expect(() => team({ autoAdjust: { minAnswerChars: 1.5 } })).toThrow(/autoAdjust.minAnswerChars/);
    expect(() => team({ autoAdjust: 'yes' as never })).toThrow(/autoAdjust/);
  });

  it('keeps the adjustments in the checkpoint, so a resumed loop plans with them', async () => {
    const saves = checkpointRecorder<OrchestrateState>('orchestrate', 1);
    const first = scriptedAdapter({
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? 'Synthesis one' : PLAN) },
        { agent: 'coder', reply: { fault: 'throw', error: 'out of quota' } },
        { agent: 'tester', reply: LONG },
        { agent: 'writer', reply: LONG },
      ],
      replies: { judge: ['SCORE: 0.3\nRATIONALE: The fix is missing.'] },
    });
    await run(team({ maxIterations: 3 }), REQUEST, { adapter: first, store: saves.store, runId: 'fb', signal: saves.signal, onEvent: saves.onEvent });
    const saved = saves.states.at(-1)!;
    expect(orchestrateStateSchema.parse(saved).adjustments?.map((a) => a.kind)).toEqual(['worker-failed']);
    const second = scriptedAdapter({
      rules: [{ agent: 'lead', reply: 'It is all done now, nothing to delegate.' }],
    });
    const resumed = await resume(team({ maxIterations: 3 }), 'fb', { adapter: second, store: saves.store });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
    expect(second.inputsOf('lead')[0]).toContain('- Worker "coder" failed (out of quota)');
  });
});

describe('the evaluator\'s prompt', () => {
  it('carries the iteration, the previous score and rationale, and worker answers cut to length', async () => {
    const long = `${'x'.repeat(2000)}TAIL-NOT-SHOWN${'y'.repeat(986)}`;
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? 'The synthesis.' : PLAN) },
        { agent: 'coder', reply: long },
        { agent: 'tester', reply: { fault: 'throw', error: 'tests crashed' } },
        { agent: 'writer', reply: 'Docs are written.' },
      ],
      replies: { judge: ['SCORE: 0.6\nRATIONALE: The tests crashed.', 'SCORE: 0.7\nRATIONALE: Better.'] },
    });
    await run(team({ maxIterations: 2 }), REQUEST, { adapter });
    const [first, second] = adapter.inputsOf('judge');
    expect(first).toContain(`## ORIGINAL USER REQUEST\n${REQUEST}`);
    expect(first).toContain('## ITERATION 1/2');
    expect(first).toContain(`### From coder\n${'x'.repeat(2000)}\n… [1000 more characters not shown]`);
    expect(first).not.toContain('TAIL-NOT-SHOWN');
    expect(first).toContain('### From tester (failed)\nError: tests crashed');
    expect(first).toContain('### From writer\nDocs are written.');
    expect(first).toContain('## RESPONSE TO EVALUATE\nThe synthesis.');
    expect(first).not.toContain('## LAST EVALUATION');
    expect(second).toContain('## ITERATION 2/2');
    expect(second).toContain('## LAST EVALUATION\nIteration 1 scored 0.60: The tests crashed.');
  });

  it('cuts to evaluatorAnswerChars, never inside a surrogate pair', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? 'The synthesis.' : '@worker:coder\nFix it.\n@end') },
        { agent: 'coder', reply: `abc😀def` },
      ],
      replies: { judge: ['SCORE: 1\nRATIONALE: ok'] },
    });
    await run(team({ evaluatorAnswerChars: 4 }), REQUEST, { adapter });
    expect(adapter.inputsOf('judge')[0]).toContain('### From coder\nabc\n… [5 more characters not shown]');
    expect(() => team({ evaluatorAnswerChars: 0 })).toThrow(/evaluatorAnswerChars/);
  });
});

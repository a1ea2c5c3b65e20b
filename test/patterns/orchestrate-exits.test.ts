// How an orchestrate loop ends, on replies shaped like real models' (the
// fixtures in test/fixtures/reflection): every exit's status, goalMet,
// cancelled and summary agree, with each other and with reflect.completed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter, type ScriptedAdapterOptions } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run, startRun } from '../../src/core/run.js';
import { LoopControl } from '../../src/core/control.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate, type OrchestrateOptions, type OrchestrateOutcome } from '../../src/patterns/orchestrate.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reflection', name), 'utf8');
const REQUEST = 'Fix the token refresh bug, test it and document it';
const PLAN = '@worker:coder\nFix the refresh path.\n@end\n@worker:tester\nTest it.\n@end';

function setup(options: ScriptedAdapterOptions) {
  const clock = new SimulatedClock();
  const adapter = scriptedAdapter({
    clock,
    ...options,
    rules: [...(options.rules ?? []), { agent: 'coder', reply: 'coder: the refresh path checks expiresAt now' }, { agent: 'tester', reply: 'tester: two regression tests' }],
  });
  const events: TroupeEvent[] = [];
  return { clock, adapter, events, onEvent: (e: TroupeEvent) => events.push(e) };
}

function team(extra: Partial<OrchestrateOptions> = {}) {
  return orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], ...extra });
}

async function drive<T>(clock: SimulatedClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 1000 && !settled; i++) await clock.advance(500);
  return promise;
}

/** A lead that plans, then synthesises with the given texts in turn. */
const lead = (syntheses: string[], plan = PLAN) => {
  let n = 0;
  return (r: { text: string }) => (r.text.includes('## WORKER RESULTS') ? syntheses[Math.min(n++, syntheses.length - 1)]! : plan);
};

const HEADS = {
  'goal-met': '✅ Goal met',
  'max-iterations': '⏱️ Max iterations',
  stalled: '⚠️ Stalled',
  'error-budget': '❌ Error budget exhausted',
  cancelled: '⏹️ Cancelled',
  paused: '⏸️ Paused',
  completed: '✅ Completed',
  failed: '❌ Failed',
  'budget-exhausted': '💸 Budget exhausted',
} as const;

/** The outcome's fields agree with each other, with the summary, and with reflect.completed. */
function expectAgreement(result: OrchestrateOutcome, events: TroupeEvent[]) {
  expect(result.summary.startsWith(`${HEADS[result.reason ?? result.status]} (${result.iterations}/`), result.summary).toBe(true);
  expect(result.summary.startsWith('✅')).toBe(result.goalMet);
  expect(result).not.toHaveProperty('cancelled');
  const completed = events.filter((e): e is TroupeEvent<'reflect.completed'> => e.type === 'reflect.completed');
  expect(completed.map((e) => [e.status, e.reason, e.goalMet, e.summary, e.iterations])).toEqual([[result.status, result.reason, result.goalMet, result.summary, result.iterations]]);
}

describe('every exit of orchestrate agrees with its summary', () => {
  it('goal met: a direct answer in iteration 2', async () => {
    const answer = fixture('direct-answer.md');
    const { adapter, clock, events, onEvent } = setup({ replies: { lead: [PLAN, 'Fixed and tested.\n[[NEEDS_ITERATION]]', answer] } });
    const result = await run(team(), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', goalMet: true, iterations: 2, output: answer.trimEnd() });
    expect(result.summary).toBe('✅ Goal met (2/5) in 0 ms');
    expectAgreement(result, events);
  });

  it('goal met: a direct answer without tools in a tool-dispatch loop', async () => {
    const { adapter, clock, events, onEvent } = setup({
      replies: {
        lead: [
          { toolCalls: [{ name: 'delegate_to_worker', arguments: { worker: 'coder', task: 'Fix it.' } }] },
          'Fixed.\n[[NEEDS_ITERATION]]',
          'Nothing left to delegate: it is fixed.',
        ],
      },
    });
    const result = await run(team({ dispatch: 'tool' }), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', goalMet: true, iterations: 2, output: 'Nothing left to delegate: it is fixed.' });
    expectAgreement(result, events);
  });

  it('goal met: a synthesis whose last line ends with the group sentinel', async () => {
    const synthesis = fixture('synthesis-closing-sentinel.md');
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: lead([synthesis]) }] });
    const result = await run(team(), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1, goalMet: true });
    expect(result.output.endsWith('All done.')).toBe(true);
    expect(result.evaluations.map((e) => e.score)).toEqual([1]);
    expectAgreement(result, events);
  });

  it('goal met: an evaluator whose rationale ends with the sentinel, with the rationale cut before it', async () => {
    const { adapter, clock, events, onEvent } = setup({
      rules: [{ agent: 'lead', reply: lead(['The fix, the tests and the docs.']) }],
      replies: { judge: ['SCORE: 0.8\n' + fixture('evaluation-closing-sentinel.md').split('\n')[1]] },
    });
    const result = await run(team({ evaluator: agent({ name: 'judge' }) }), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1 });
    expect(result.evaluations[0]).toMatchObject({ score: 0.8, rationale: 'Complete and correct: the fix, the regression tests and the docs agree with each other.' });
    expectAgreement(result, events);
  });

  it('max iterations: a score that is not one number falls back to the default and does not meet the goal', async () => {
    const { adapter, clock, events, onEvent } = setup({
      rules: [{ agent: 'lead', reply: lead(['Draft one of the fix.', 'Draft two, with the tests.']) }],
      fallback: fixture('evaluation-version-score.md'),
    });
    const result = await run(team({ evaluator: agent({ name: 'judge' }), maxIterations: 2 }), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'max-iterations', goalMet: false, iterations: 2 });
    expect(result.evaluations.map((e) => e.score)).toEqual([0.5, 0.5]);
    expectAgreement(result, events);
  });

  it('max iterations: self-evaluation without a sentinel scores 0.7', async () => {
    let n = 0;
    const { adapter, clock, events, onEvent } = setup({
      rules: [{ agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Synthesis ${++n}: step-${n} of the fix, part-${n}` : PLAN) }],
    });
    const result = await run(team({ maxIterations: 2 }), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'max-iterations', goalMet: false, iterations: 2 });
    expect(result.evaluations.map((e) => [e.score, e.evaluator])).toEqual([[0.7, 'lead'], [0.7, 'lead']]);
    expectAgreement(result, events);
  });

  it('stalled', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: lead(['The same synthesis.\n[[NEEDS_ITERATION]]']) }] });
    const result = await run(team(), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', reason: 'stalled', iterations: 3 });
    expectAgreement(result, events);
  });

  it('error budget', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: { fault: 'throw', error: 'model unavailable' } }] });
    const result = await drive(clock, run(team(), REQUEST, { adapter, clock, onEvent }));
    expect(result).toMatchObject({ status: 'failed', reason: 'error-budget', iterations: 0 });
    expectAgreement(result, events);
  });

  it('cancelled', async () => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: lead(['never']) }, { agent: 'coder', reply: { text: 'slow', delayMs: 5000 } }] });
    const controller = new AbortController();
    const p = run(team(), REQUEST, { adapter, clock, onEvent, signal: controller.signal });
    await clock.advance(1000);
    controller.abort();
    const result = await drive(clock, p);
    expect(result).toMatchObject({ status: 'cancelled' });
    expectAgreement(result, events);
  });

  it('paused', async () => {
    const { adapter, clock } = setup({ rules: [{ agent: 'lead', reply: lead(['Draft.\n[[NEEDS_ITERATION]]']) }] });
    const loop = team();
    const events: TroupeEvent[] = [];
    const control = new LoopControl();
    const handle = startRun(loop, REQUEST, { adapter, clock, control, onEvent: (e) => events.push(e) });
    handle.emitter.on('reflect.evaluated', () => control.pause());
    const result = await handle.result;
    expect(result).toMatchObject({ status: 'paused', iterations: 1 });
    expectAgreement(result, events);
  });

  it.each(['broadcast', 'sequential', 'orchestrator'] as const)('completed: the one-pass mode %s', async (mode) => {
    const { adapter, clock, events, onEvent } = setup({ rules: [{ agent: 'lead', reply: lead(['Both parts are done.']) }] });
    const result = await run(team({ mode }), REQUEST, { adapter, clock, onEvent });
    expect(result).toMatchObject({ status: 'completed', goalMet: true, iterations: 1 });
    expect(result.summary).toBe('✅ Completed (1/1) in 0 ms');
    expectAgreement(result, events);
  });
});

describe('worker names with spaces', () => {
  it('dispatches `@worker:Code Reviewer` to the worker "Code Reviewer"', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({
      clock,
      rules: [
        { agent: 'lead', reply: lead(['Reviewed, tested and documented.\n[[GROUP_REFLECT_COMPLETE]]'], fixture('plan-spaced-names.md')) },
        { agent: 'Code Reviewer', reply: 'Found the expiry bug in the refresh path.' },
        { agent: 'Test Writer', reply: 'Two regression tests.' },
        { agent: 'Docs Writer', reply: 'docs/auth.md updated.' },
      ],
    });
    const loop = orchestrate({
      lead: agent({ name: 'lead' }),
      workers: ['Code Reviewer', 'Test Writer', 'Docs Writer'].map((name) => agent({ name })),
    });
    const events: TroupeEvent[] = [];
    const result = await run(loop, REQUEST, { adapter, clock, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 1 });
    // "@worker:Security Reviewer Audit…" names no worker (read as "Security"): refused (a failed result the synthesis sees), not dropped.
    expect(result.results.map((r) => [r.worker, r.success]).sort()).toEqual([['Code Reviewer', true], ['Docs Writer', true], ['Security', false], ['Test Writer', true]]);
    expect(adapter.inputsOf('lead')[0]).toContain('@worker:Code Reviewer\n<the task>\n@end'); // the form the planning prompt shows
    expect(adapter.inputsOf('Code Reviewer')[0]).toContain('## YOUR ASSIGNED TASK\nReview `src/auth/session.ts` for token expiry bugs.');
  });
});

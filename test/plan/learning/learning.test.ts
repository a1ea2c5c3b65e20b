import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { resume } from '../../../src/core/resume.js';
import { decompose } from '../../../src/plan/session/decompose.js';
import { executePlan, planRunnable } from '../../../src/plan/engine/execute.js';
import { applyLearning, learnFromStats, outcomeSummary, usedLearning, type LearningRecord } from '../../../src/plan/learning/learning.js';
import { emptyOutcomeStats, emptyTally, type OutcomeStats, type OutcomeTally } from '../../../src/plan/learning/outcome-stats.js';
import { chunk, drive, planOf } from '../helpers.js';

function tally(count: number, completed: number, durationMs: number, costUsd: number, extra: Partial<OutcomeTally> = {}): OutcomeTally {
  return { ...emptyTally(), count, completed, failed: count - completed, attempts: count + (count - completed), durationMs, costUsd, ...extra };
}

function stats(): OutcomeStats {
  return {
    ...emptyOutcomeStats(),
    runs: 7,
    roles: {
      Testing: tally(4, 3, 4 * 1000, 0.4, { failures: { timeout: 1 } }),
      CodeAnalysis: tally(5, 5, 5 * 60_000, 1, { scoreSum: 4.5, scores: 5 }),
      Synthesis: tally(1, 1, 500, 0.1),
    },
    roleModels: {
      Implementation: {
        large: tally(10, 9, 0, 10),
        small: tally(10, 9, 0, 1),
        tiny: tally(10, 3, 0, 0.1),
        fresh: tally(1, 1, 0, 0),
      },
    },
  };
}

describe('learnFromStats', () => {
  it('uses nothing unless asked', () => {
    expect(learnFromStats(stats())).toEqual({ runs: 7, estimates: {}, models: {}, basis: {} });
  });

  it('takes each role with enough chunks as an estimate, with the numbers it came from', () => {
    const record = learnFromStats(stats(), { estimates: true });
    expect(record.estimates).toEqual({ Testing: 1000, CodeAnalysis: 60_000 });
    expect(record.basis.Testing).toEqual({ chunks: 4, successRate: 0.75, meanAttempts: 1.25, meanMs: 1000, meanCostUsd: 0.1 });
    expect(learnFromStats(stats(), { estimates: true, minSamples: 5 }).estimates).toEqual({ CodeAnalysis: 60_000 });
  });

  it('chooses the cheapest model within the tolerance of the best success rate, and the first when none has enough chunks', () => {
    const record = learnFromStats(stats(), { models: { Implementation: ['large', 'small', 'tiny', 'fresh'], Testing: ['a', 'b'] } });
    expect(record.models.Implementation).toEqual({ model: 'small', reason: '9 of 10 chunks completed (score 83%, best 83%), $0.1000 a chunk' });
    expect(record.models.Testing!.model).toBe('a');
    expect(learnFromStats(stats(), { models: { Implementation: ['large', 'tiny'] }, tolerance: 0 }).models.Implementation!.model).toBe('large');
    expect(learnFromStats(stats(), { models: { Implementation: ['large', 'tiny'] }, tolerance: 0.6 }).models.Implementation!.model).toBe('tiny');
  });

  it('refuses bad options with a ConfigurationError', () => {
    expect(() => learnFromStats(stats(), { models: { Nope: ['a'] } as never })).toThrow(/keyed by chunk role/);
    expect(() => learnFromStats(stats(), { models: { Testing: [] } })).toThrow(/non-empty list/);
    expect(() => learnFromStats(stats(), { minSamples: 0 })).toThrow(/minSamples/);
    expect(() => learnFromStats(stats(), { tolerance: 2 })).toThrow(/tolerance/);
  });

  it('writes a short factual summary for the planner', () => {
    expect(outcomeSummary(stats())).toBe(
      'How chunks of each role went in 7 earlier runs:\n' +
        '- CodeAnalysis: 5 chunks, 100% succeeded, 1.0 attempts, 1.0 min each, score 0.90\n' +
        '- Testing: 4 chunks, 75% succeeded, 1.3 attempts, 1.0 s each; failures: timeout ×1',
    );
    expect(outcomeSummary(emptyOutcomeStats())).toBe('');
    expect(learnFromStats(stats(), { summary: true }).summary).toContain('- Synthesis: 1 chunks, 100% succeeded');
  });

  it('fills only what the caller left open', () => {
    const record = learnFromStats(stats(), { estimates: true, models: { Implementation: ['small'] } });
    expect(applyLearning({ Testing: { estimatedMs: 5 }, Implementation: { temperature: 0 } }, record)).toEqual({
      Testing: { estimatedMs: 5 },
      CodeAnalysis: { estimatedMs: 60_000 },
      Implementation: { temperature: 0, model: 'small' },
    });
  });
});

describe('a plan with a learning record', () => {
  // Two independent chains of equal complexity: without estimates their order is the plan's; learned durations put the long one first.
  const plan = planOf(chunk(0, [], { role: 'Testing', complexity: 'Low' }), chunk(1, [], { role: 'CodeAnalysis', complexity: 'Low' }), chunk(2, [1], { role: 'Synthesis', complexity: 'Low' }), chunk(3, [0], { role: 'Synthesis', complexity: 'Low' }));

  async function execute(learning?: LearningRecord, store = memoryStore()) {
    const clock = new SimulatedClock();
    const models: string[] = [];
    const adapter = scriptedAdapter({
      clock,
      rules: [{ reply: (r) => (models.push(`${r.agent}:${r.spec.model ?? 'default'}`), { text: 'done', delayMs: 10 }) }],
    });
    const events: TroupeEvent[] = [];
    const outcome = await drive(clock, executePlan(plan, { adapter, clock, maxParallel: 1, store, runId: 'r', onEvent: (e) => events.push(e), ...(learning ? { learning } : {}) }));
    const starts = events.filter((e): e is TroupeEvent<'chunk.status'> => e.type === 'chunk.status' && e.status === 'running').map((e) => e.sequenceIndex);
    return { outcome, starts, models, events, store };
  }

  it('changes nothing without one', async () => {
    const { starts, models, events } = await execute();
    expect(starts).toEqual([0, 1, 2, 3]);
    expect(models).toContain('Testing:default');
    expect(events.some((e) => e.type === 'plan.learning')).toBe(false);
  });

  it('uses the learned estimates for the critical-path order and the chosen models, and logs what it used', async () => {
    const learning = learnFromStats(stats(), { estimates: true, models: { Testing: ['tester-model'] } });
    const { starts, models, events, store } = await execute(learning);
    expect(starts).toEqual([1, 0, 2, 3]);
    expect(models).toContain('Testing:tester-model');
    const logged = events.find((e): e is TroupeEvent<'plan.learning'> => e.type === 'plan.learning');
    expect(logged).toMatchObject({ planId: 'plan', learning });
    expect(await usedLearning('r', { store })).toEqual([{ planId: 'plan', learning }]);
  });

  it('resumes with the record the run used, whatever the statistics say now', async () => {
    const learning = learnFromStats(stats(), { estimates: true });
    const store = memoryStore();
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, rules: [{ reply: { text: 'done', delayMs: 10 } }] });
    const controller = new AbortController();
    const firstStarts: number[] = [];
    const first = drive(
      clock,
      executePlan(plan, {
        adapter, clock, maxParallel: 1, store, runId: 'crash', learning, signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'chunk.status' && e.status === 'completed') {
            firstStarts.push(e.sequenceIndex);
            controller.abort();
          }
        },
      }),
    );
    await expect(first).rejects.toMatchObject({ code: 'cancelled' });
    expect(firstStarts).toEqual([1]);
    const [used] = await usedLearning('crash', { store });
    const later: number[] = [];
    const relogged: unknown[] = [];
    const resumed = await drive(
      clock,
      resume(planRunnable(plan, { maxParallel: 1, learning: used!.learning }), 'crash', {
        adapter, clock, store,
        onEvent: (e) => {
          if (e.type === 'chunk.status' && e.status === 'running') later.push(e.sequenceIndex);
          if (e.type === 'plan.learning') relogged.push(e.learning);
        },
      }),
    );
    // The order an uninterrupted run with this record takes ([1, 0, 2, 3]), and the record logged again.
    expect(later).toEqual([0, 2, 3]);
    expect(relogged).toEqual([learning]);
    expect(resumed.results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it('refuses a learning record that is not one', () => {
    expect(() => planRunnable(plan, { learning: { runs: 1 } as never })).toThrow(/Invalid `learning`/);
  });

  it('gives the planner the summary as context', async () => {
    const seen: string[] = [];
    const adapter = scriptedAdapter({
      rules: [{ agent: 'planner', reply: (r) => (seen.push(r.text), JSON.stringify({ planSummary: 's', chunks: [{ sequenceIndex: 0, title: 't', prompt: 'do the thing now', complexity: 'Low', role: 'Testing' }] })) }],
    });
    const learning = learnFromStats(stats(), { summary: true });
    await decompose('Fix the cache', { adapter, context: learning.summary! });
    expect(seen[0]).toContain('## Context\n\nHow chunks of each role went in 7 earlier runs:\n- CodeAnalysis: 5 chunks');
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { run } from '../../../src/core/run.js';
import type { Store } from '../../../src/core/store.js';
import { redisStore } from '../../../src/integrations/redis/index.js';
import { agent } from '../../../src/patterns/agent.js';
import { orchestrate } from '../../../src/patterns/orchestrate.js';
import { fileStore } from '../../../src/persistence/file-store.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { outcomeCollector, recordRunOutcomes } from '../../../src/plan/learning/outcome-collector.js';
import { emptyOutcomeStats, loadOutcomeStats, mergeOutcomes, recordOutcomes, type OutcomeDelta } from '../../../src/plan/learning/outcome-stats.js';
import { closedAfterEach, redisTarget, testPrefixes } from '../../helpers/redis.js';
import { chunk, drive, planOf } from '../helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'troupe-stats-'));
  dirs.push(d);
  return d;
}

/** A plan of two analyses (one fails once, then succeeds) and a failing test chunk, on a simulated clock. */
async function plannedRun(clock: SimulatedClock, onEvent: (e: never) => void, store?: Store) {
  let analyses = 0;
  const adapter = scriptedAdapter({
    clock,
    rules: [
      {
        agent: 'CodeAnalysis',
        reply: () => (++analyses === 2 ? { fault: 'throw', error: 'socket hang up', delayMs: 100 } : { text: 'found it', delayMs: 1000, usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.01 } }),
      },
      { agent: 'Testing', reply: { fault: 'throw', error: 'test runner crashed', delayMs: 50 } },
    ],
  });
  const plan = planOf(chunk(0, [], { role: 'CodeAnalysis' }), chunk(1, [], { role: 'CodeAnalysis' }), chunk(2, [0, 1], { role: 'Testing' }));
  return drive(
    clock,
    executePlan(plan, {
      adapter,
      clock,
      maxParallel: 1,
      retry: { maxRetries: 1, delayMs: 10 },
      roles: { CodeAnalysis: { model: 'big' } },
      onEvent: onEvent as never,
      ...(store ? { store, runId: 'run-1' } : {}),
    }),
  );
}

describe('outcomeCollector', () => {
  it('counts chunks per role and per role and model, agent runs per agent and model, with durations on the run clock, attempts, tokens, cost and failures', async () => {
    const clock = new SimulatedClock();
    const outcomes = outcomeCollector();
    const outcome = await plannedRun(clock, outcomes.onEvent);
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed', 'failed']);
    const [delta] = outcomes.deltas();
    const analysis = delta!.roles.CodeAnalysis!;
    expect(analysis).toMatchObject({ count: 2, completed: 2, failed: 0, attempts: 3, inputTokens: 200, outputTokens: 20, costUsd: 0.02 });
    // 1000 ms for the first; 100 ms failing, a 10 ms wait, then 1000 ms for the second.
    expect(analysis.durationMs).toBe(1000 + 1110);
    expect(delta!.roleModels.CodeAnalysis!.big).toMatchObject({ count: 2, completed: 2, attempts: 3 });
    expect(delta!.roles.Testing).toMatchObject({ count: 1, completed: 0, failed: 1, attempts: 2, durationMs: 110, failures: { 'test runner crashed': 1 } });
    expect(delta!.agents.CodeAnalysis).toMatchObject({ count: 3, completed: 2, failed: 1, failures: { adapter_error: 1 } });
    expect(delta!.models.big).toMatchObject({ count: 3, completed: 2, failed: 1 });
    expect(delta!.models['scripted:default']).toMatchObject({ count: 2, completed: 0, failed: 2 });
  });

  it('credits evaluation scores to the agents the loop evaluated and their models, not the evaluator', async () => {
    const adapter = scriptedAdapter({
      replies: {
        lead: ['@worker:security\nReview it.\n@end', 'Review 1', '@worker:security\nAgain.\n@end', 'Review 2\n[[GROUP_REFLECT_COMPLETE]]'],
        security: ['SQL injection.', 'Also plain-text passwords.'],
        judge: ['SCORE: 0.6\nRATIONALE: Misses storage.', 'SCORE: 0.9\nRATIONALE: Complete.'],
      },
    });
    const loop = orchestrate({
      name: 'review',
      mode: 'orchestrator-reflect',
      lead: agent({ name: 'lead', model: 'lead-model' }),
      workers: [agent({ name: 'security', model: 'small' })],
      evaluator: agent({ name: 'judge' }),
      maxIterations: 3,
      goalScore: 0.9,
    });
    const outcomes = outcomeCollector();
    const result = await run(loop, 'Review this change.', { adapter, onEvent: outcomes.onEvent });
    expect(result.evaluations.map((e) => e.score)).toEqual([0.6, 0.9]);
    const [delta] = outcomes.deltas();
    expect(delta!.agents.security).toMatchObject({ scores: 2 });
    expect(delta!.agents.security!.scoreSum).toBeCloseTo(1.5);
    expect(delta!.agents.lead).toMatchObject({ scores: 2 });
    expect(delta!.models.small!.scoreSum).toBeCloseTo(1.5);
    expect(delta!.models['lead-model']!.scores).toBe(2);
    expect(delta!.agents.judge).toBeUndefined();
  });
});

describe('recordOutcomes', () => {
  const delta = (runId: string, ms: number): OutcomeDelta => {
    const collector = { count: 1, completed: 1, failed: 0, attempts: 1, durationMs: ms, inputTokens: 10, outputTokens: 1, costUsd: 0.5, scoreSum: 0, scores: 0, failures: {} };
    return { runId, roles: { Testing: collector }, agents: { Testing: collector }, models: { m: collector }, roleModels: { Testing: { m: collector } } };
  };

  it('merges runs, counts a run once, and keeps the most frequent failure kinds', () => {
    const once = mergeOutcomes(emptyOutcomeStats(), delta('a', 100));
    expect(mergeOutcomes(once, delta('a', 100))).toBe(once);
    const twice = mergeOutcomes(once, delta('b', 300));
    expect(twice).toMatchObject({ runs: 2, recentRuns: ['a', 'b'], roles: { Testing: { count: 2, durationMs: 400, costUsd: 1 } } });
    const failures = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`kind-${i}`, i + 1]));
    const failing: OutcomeDelta = { ...delta('c', 1), roles: { Testing: { ...delta('c', 1).roles.Testing!, failures } } };
    expect(Object.keys(mergeOutcomes(twice, failing).roles.Testing!.failures)).toEqual(['kind-11', 'kind-10', 'kind-9', 'kind-8', 'kind-7', 'kind-6', 'kind-5', 'kind-4']);
  });

  const stores: Array<[string, () => Store[]]> = [
    ['memory', () => { const s = memoryStore(); return [s, s, s, s]; }],
    ['file (four instances on one folder)', () => { const d = tempDir(); return [fileStore(d), fileStore(d), fileStore(d), fileStore(d)]; }],
  ];
  const { url } = redisTarget();
  if (url) {
    const prefix = testPrefixes(url);
    const closeLater = closedAfterEach();
    stores.push(['redis (four connections)', () => { const p = prefix(); return [0, 1, 2, 3].map(() => closeLater(redisStore({ connection: url, prefix: p }))); }]);
  }

  it.each(stores)('loses no update when runs record at the same time (%s store)', async (_name, make) => {
    const instances = make();
    const runs = Array.from({ length: 24 }, (_, i) => delta(`run-${i}`, 10 * (i + 1)));
    await Promise.all(runs.map((d, i) => recordOutcomes(d, { store: instances[i % instances.length]! })));
    await Promise.all(runs.slice(0, 6).map((d, i) => recordOutcomes(d, { store: instances[(i + 1) % instances.length]! }))); // again: counted once
    const stats = await loadOutcomeStats({ store: instances[0]! });
    expect(stats.runs).toBe(24);
    expect(stats.recentRuns.slice().sort()).toEqual(runs.map((r) => r.runId).sort());
    expect(stats.roles.Testing).toMatchObject({ count: 24, durationMs: (10 * 24 * 25) / 2, costUsd: 12 });
    expect(stats.roleModels.Testing!.m!.count).toBe(24);
  });

  it('folds a logged run from the store, once', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    await plannedRun(clock, () => undefined, store);
    await recordRunOutcomes('run-1', { store });
    const stats = await recordRunOutcomes('run-1', { store });
    expect(stats.runs).toBe(1);
    expect(stats.roles.CodeAnalysis).toMatchObject({ count: 2, attempts: 3, durationMs: 2110 });
  });

  it('refuses a document of a newer version or a broken one, and honours the signal', async () => {
    const store = memoryStore();
    await store.set('stats/outcomes', { schemaVersion: 2 });
    await expect(loadOutcomeStats({ store })).rejects.toThrow(/schema version 2/);
    await store.set('stats/outcomes', { schemaVersion: 1, runs: 'x' });
    await expect(recordOutcomes(delta('a', 1), { store })).rejects.toMatchObject({ code: 'store_error' });
    const controller = new AbortController();
    controller.abort();
    await expect(recordOutcomes(delta('a', 1), { store: memoryStore(), signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });
});

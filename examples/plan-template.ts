/**
 * A plan template, filled in four times, and what troupe learns from the
 * runs: each run's outcomes go into the store's statistics, and the fifth
 * run opts in to using them (role durations as scheduling estimates, the
 * cheaper of two models that succeed as often, a summary for a planner).
 * Offline on the scripted adapter and a simulated clock; with
 * TROUPE_ADAPTER set it runs on that adapter and the real clock.
 *
 *   npx tsx examples/plan-template.ts
 */
import { adapterFromEnv } from 'troupe/adapters/env';
import type { Clock } from 'troupe/kernel';
import {
  executePlan,
  instantiatePlanTemplate,
  learnFromStats,
  loadOutcomeStats,
  outcomeCollector,
  recordOutcomes,
  templateRegistry,
  type PlanOutcome,
  type PlanTemplate,
} from 'troupe/plan';
import { memoryStore, scriptedAdapter, SimulatedClock } from 'troupe/testing';

const template: PlanTemplate = {
  name: 'fix-module',
  description: 'Find and fix a bug in one module',
  parameters: {
    module: { type: 'string', maxLength: 60 },
    depth: { type: 'string', enum: ['quick', 'thorough'], default: 'quick' },
  },
  planSummary: 'Find and fix the bug in {{module}}',
  chunks: [
    { sequenceIndex: 0, title: 'Analyse {{module}}', prompt: 'Read src/{{module}} ({{depth}} pass) and describe the bug.', dependsOnIndexes: [], workingScope: ['src/{{module}}/'], complexity: 'Medium', role: 'CodeAnalysis' },
    { sequenceIndex: 1, title: 'Fix {{module}}', prompt: 'Fix the bug in src/{{module}} and add a test for it.', dependsOnIndexes: [0], complexity: 'Medium', role: 'Implementation' },
  ],
};

const store = memoryStore();
const templates = templateRegistry(store);
await templates.save(template);

// Analyses take 3 s, fixes 2 s on the large model and 2 s on the small one; the small one costs a tenth.
const simulated = new SimulatedClock();
const real = adapterFromEnv();
const clock: Clock | undefined = real ? undefined : simulated;
const adapter =
  real ??
  scriptedAdapter({
    clock: simulated,
    rules: [
      { agent: 'CodeAnalysis', reply: { text: 'The cache never evicts.', delayMs: 3000, usage: { inputTokens: 400, outputTokens: 40, costUsd: 0.004 } } },
      { agent: 'Implementation', reply: (r) => ({ text: `Fixed on ${r.spec.model ?? 'the default model'}.`, delayMs: 2000, usage: { inputTokens: 600, outputTokens: 80, costUsd: r.spec.model === 'small' ? 0.001 : 0.01 } }) },
    ],
  });

/** Run a plan, advancing the simulated clock until it ends. */
async function execute(promise: Promise<PlanOutcome>): Promise<PlanOutcome> {
  if (clock === undefined) return promise;
  let done = false;
  void promise.finally(() => (done = true)).catch(() => undefined);
  while (!done) await simulated.advance(100);
  return promise;
}

for (const [i, module] of ['cache', 'session', 'auth', 'search'].entries()) {
  const { plan } = instantiatePlanTemplate((await templates.get('fix-module'))!, { module, depth: i === 0 ? 'thorough' : 'quick' });
  const outcomes = outcomeCollector();
  const model = i % 2 === 1 ? 'small' : 'large';
  const outcome = await execute(executePlan(plan, { adapter, onEvent: outcomes.onEvent, roles: { Implementation: { model } }, ...(clock ? { clock } : {}) }));
  for (const delta of outcomes.deltas()) await recordOutcomes(delta, { store });
  console.log(`run ${i + 1}: ${plan.planSummary} on ${model} -> ${outcome.results.map((r) => `${r.title}: ${r.status}`).join(', ')}`);
}

try {
  instantiatePlanTemplate(template, { module: '../etc' });
} catch (error) {
  console.log(`refused before running: ${(error as Error).message}`);
}

const stats = await loadOutcomeStats({ store });
const learning = learnFromStats(stats, { estimates: true, models: { Implementation: ['large', 'small'] }, summary: true, minSamples: 1 });
console.log(`learned estimates: ${Object.entries(learning.estimates).map(([role, ms]) => `${role} ${ms} ms`).join(', ')}`);
console.log(`Implementation model: ${learning.models.Implementation!.model} (${learning.models.Implementation!.reason})`);
console.log(learning.summary);

const { plan } = instantiatePlanTemplate(template, { module: 'billing' });
const fourth = await execute(executePlan(plan, { adapter, learning, ...(clock ? { clock } : {}) }));
console.log(`run 5 with what was learned: ${fourth.results.map((r) => r.output).join(' ')}`);

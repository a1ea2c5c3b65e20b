// Recipes of the plan layer's functions (see ./types.ts).
import { memoryStore } from '../../../src/core/memory-store.js';
import { learnFromStats, outcomeSummary, usedLearning } from '../../../src/plan/learning/learning.js';
import { recordRunOutcomes } from '../../../src/plan/learning/outcome-collector.js';
import { emptyOutcomeStats, loadOutcomeStats, recordOutcomes } from '../../../src/plan/learning/outcome-stats.js';
import { recordChunkResult } from '../../../src/plan/engine/checkpoint.js';
import { executePlan, planRunnable } from '../../../src/plan/engine/execute.js';
import { directExecutor, inProcessExecutor } from '../../../src/plan/engine/executor.js';
import { sharedPool } from '../../../src/plan/engine/pool.js';
import { PlanControl } from '../../../src/plan/live/control.js';
import type { Plan } from '../../../src/plan/model/plan.js';
import { aggregate } from '../../../src/plan/session/aggregate.js';
import { decompose } from '../../../src/plan/session/decompose.js';
import { PlanningSession } from '../../../src/plan/session/planning-session.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import type { Recipes } from './types.js';

const store = () => memoryStore();
const adapter = () => scriptedAdapter({ fallback: 'ok' });
const plan: Plan = { planSummary: 'Say hi', chunks: [{ sequenceIndex: 1, title: 'Hi', prompt: 'Say hi.', dependsOnIndexes: [], complexity: 'Low', role: 'Generic' }] };
const job = { runId: 'r1', checkpointPath: 'plan', chunk: plan.chunks[0]!, attempt: 1 };
const delta = { runId: 'r1', roles: {}, agents: {}, models: {}, roleModels: {} };

export const planRecipes: Recipes = {
  // troupe/plan: statistics and learning
  learnFromStats: (extra) => learnFromStats(emptyOutcomeStats(), { ...extra }),
  outcomeSummary: (extra) => outcomeSummary(emptyOutcomeStats(), { ...extra }),
  usedLearning: (extra) => usedLearning('run-1', { store: store(), ...extra }),
  loadOutcomeStats: (extra) => loadOutcomeStats({ store: store(), ...extra }),
  recordOutcomes: (extra) => recordOutcomes(delta, { store: store(), ...extra }),
  recordRunOutcomes: (extra) => recordRunOutcomes('run-1', { store: store(), ...extra }),
  // troupe/plan: the engine (each checks its options before it runs anything)
  executePlan: (extra) => executePlan(plan, { adapter: adapter(), ...extra }),
  planRunnable: (extra) => planRunnable(plan, { ...extra }),
  inProcessExecutor: (extra) => inProcessExecutor({ ...extra }),
  directExecutor: (extra) => directExecutor({ ...extra }),
  sharedPool: (extra) => sharedPool({ ...extra }),
  PlanControl: (extra) => new PlanControl({ ...extra }),
  recordChunkResult: (extra) => recordChunkResult(store(), job, 'done', { ...extra }),
  // troupe/plan: the planning session, the decomposer and the aggregator
  PlanningSession: (extra) => new PlanningSession({ adapter: adapter(), ...extra }),
  decompose: (extra) => decompose('Say hi', { adapter: adapter(), ...extra }),
  aggregate: (extra) => aggregate(plan, [], { adapter: adapter(), ...extra }),
};

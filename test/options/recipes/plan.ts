// Recipes of the plan layer's functions (see ./types.ts).
import { memoryStore } from '../../../src/core/memory-store.js';
import { learnFromStats, outcomeSummary, usedLearning } from '../../../src/plan/learning/learning.js';
import { recordRunOutcomes } from '../../../src/plan/learning/outcome-collector.js';
import { emptyOutcomeStats, loadOutcomeStats, recordOutcomes } from '../../../src/plan/learning/outcome-stats.js';
import type { Recipes } from './types.js';

const store = () => memoryStore();
const delta = { runId: 'r1', roles: {}, agents: {}, models: {}, roleModels: {} };

export const planRecipes: Recipes = {
  // troupe/plan: statistics and learning
  learnFromStats: (extra) => learnFromStats(emptyOutcomeStats(), { ...extra }),
  outcomeSummary: (extra) => outcomeSummary(emptyOutcomeStats(), { ...extra }),
  usedLearning: (extra) => usedLearning('run-1', { store: store(), ...extra }),
  loadOutcomeStats: (extra) => loadOutcomeStats({ store: store(), ...extra }),
  recordOutcomes: (extra) => recordOutcomes(delta, { store: store(), ...extra }),
  recordRunOutcomes: (extra) => recordRunOutcomes('run-1', { store: store(), ...extra }),
};

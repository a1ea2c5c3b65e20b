// Recipes of the edges layer's functions (see ./types.ts): persistence,
// time travel, the integrations, the command line's helpers, views, squads,
// agent files, workspaces, adapters and testing.
import { memoryStore } from '../../../src/core/memory-store.js';
import { exportRun, pruneRuns, readRun, timeline } from '../../../src/persistence/run-log.js';
import { listRuns } from '../../../src/persistence/runs.js';
import type { Recipes } from './types.js';

const store = () => memoryStore();

export const edgesRecipes: Recipes = {
  // troupe/persistence
  readRun: (extra) => readRun('run-1', { store: store(), ...extra }),
  timeline: (extra) => timeline('run-1', { store: store(), ...extra }),
  exportRun: (extra) => exportRun('run-1', { store: store(), ...extra }),
  listRuns: (extra) => listRuns({ store: store(), ...extra }),
  pruneRuns: (extra) => pruneRuns({ store: store(), maxAgeMs: 1000, ...extra }),
};

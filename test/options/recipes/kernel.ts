// Recipes of the kernel's functions (troupe, troupe/kernel).
import { resume } from '../../../src/core/resume.js';
import { run, startRun } from '../../../src/core/run.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { agent } from '../../../src/patterns/agent.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import type { Recipes } from './types.js';

const helper = () => agent({ name: 'helper' });
const adapter = () => scriptedAdapter({ fallback: 'ok' });

export const kernelRecipes: Recipes = {
  run: (extra) => run(helper(), 'hi', { adapter: adapter(), ...extra }),
  startRun: (extra) => startRun(helper(), 'hi', { adapter: adapter(), ...extra }).result,
  resume: (extra) => resume(helper(), 'run-1', { adapter: adapter(), store: memoryStore(), ...extra }),
};

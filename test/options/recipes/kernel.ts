// Recipes of the kernel's functions (troupe, troupe/kernel).
import { openSession, SessionHandle } from '../../../src/core/session.js';
import { runToolLoop } from '../../../src/core/tool-loop.js';
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
  openSession: (extra) => openSession(adapter(), { agent: 'helper' }, { ...extra }),
  SessionHandle: (extra) => new SessionHandle({ id: 's1', send: async () => ({ text: 'ok', toolCalls: [] }), close: async () => undefined }, { agent: 'helper', ...extra }),
  // runToolLoop checks its options before it uses the run's context.
  runToolLoop: async (extra) => {
    const handle = new SessionHandle(await openSession(adapter(), { agent: 'helper' }), { agent: 'helper' });
    return runToolLoop(handle, 'hi', { ctx: undefined as never, agent: 'helper', tools: [], maxTurns: 1, ...extra });
  },
  resume: (extra) => resume(helper(), 'run-1', { adapter: adapter(), store: memoryStore(), ...extra }),
};

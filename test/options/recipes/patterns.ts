// Recipes of the patterns, coordination, reflection and text layers' functions (see ./types.ts).
import { SimulatedClock } from '../../../src/core/clock.js';
import { ContextWindow } from '../../../src/core/context-window.js';
import { StallDetector } from '../../../src/reflection/stall.js';
import { findJson, safeFindJson } from '../../../src/text/json.js';
import { advisors, consultAdvisors } from '../../../src/patterns/advisors.js';
import { agent } from '../../../src/patterns/agent.js';
import { asTool } from '../../../src/patterns/as-tool.js';
import { broadcast } from '../../../src/patterns/broadcast.js';
import { handoff } from '../../../src/patterns/handoff.js';
import { handoffChoices } from '../../../src/patterns/handoff-choices.js';
import { orchestrate } from '../../../src/patterns/orchestrate.js';
import { reflect } from '../../../src/patterns/reflect.js';
import { router } from '../../../src/patterns/router.js';
import { sequential } from '../../../src/patterns/sequential.js';
import { team } from '../../../src/patterns/team.js';
import { withBudget } from '../../../src/patterns/with-budget.js';
import { readWorkingMemory, updateWorkingMemory, workingMemory } from '../../../src/patterns/working-memory.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { z } from 'zod';
import { coordinate } from '../../../src/coordination/coordinate.js';
import { MessageBus } from '../../../src/coordination/message-bus.js';
import { resolvePlanApproval } from '../../../src/coordination/plan-approval.js';
import { StuckDetector } from '../../../src/coordination/stuck.js';
import { TaskStore } from '../../../src/coordination/task-store.js';
import type { Recipes } from './types.js';

const a = (name: string) => agent({ name });

export const patternsRecipes: Recipes = {
  agent: (extra) => agent({ name: 'helper', ...extra }),
  advisors: (extra) => advisors(a('main'), [a('risk')], extra),
  // consultAdvisors checks its options before it uses the run's context.
  consultAdvisors: (extra) => consultAdvisors('main', [], 'hi', undefined as never, extra),
  broadcast: (extra) => broadcast([a('one'), a('two')], extra),
  sequential: (extra) => sequential([a('one'), a('two')], extra),
  asTool: (extra) => asTool(a('helper'), extra),
  handoff: (extra) => handoff(a('draft'), a('review'), extra),
  router: (extra) => router(a('desk'), [a('billing')], extra),
  handoffChoices: (extra) => handoffChoices('planner', { agents: { planner: a('planner') }, choices: {}, ...extra }),
  withBudget: (extra) => withBudget(a('helper'), { totalTokens: 100 }, extra),
  team: (extra) => team({ members: [a('analyst')], lead: a('lead'), ...extra }),
  reflect: (extra) => reflect(a('writer'), extra),
  orchestrate: (extra) => orchestrate({ lead: a('lead'), workers: [a('coder')], ...extra }),
  coordinate: (extra) => coordinate({ lead: a('lead'), workers: [a('w1')], stuck: { expectedTaskMs: 1000 }, ...extra }),
  TaskStore: (extra) => new TaskStore([], extra),
  MessageBus: (extra) => new MessageBus({ clock: new SimulatedClock(), ...extra }),
  StuckDetector: (extra) => new StuckDetector({ expectedTaskMs: 1000, ...extra }),
  resolvePlanApproval: (extra) => resolvePlanApproval(extra),
  // ContextWindow checks its options before it uses the run's context.
  ContextWindow: (extra) =>
    new ContextWindow({ budget: { maxTokens: 1000 }, agent: 'helper', system: undefined, ctx: undefined as never, contextUsage: false, reopen: () => Promise.reject(new Error('unused')), ...extra }),
  // troupe/reflection, troupe/text
  StallDetector: (extra) => new StallDetector({ ...extra }),
  findJson: (extra) => findJson('{"a": 1}', { ...extra }),
  safeFindJson: (extra) => safeFindJson('{"a": 1}', { ...extra }),
  workingMemory: (extra) => workingMemory({ schema: z.object({}), ...extra }),
  readWorkingMemory: (extra) => readWorkingMemory(workingMemory({ schema: z.object({}) }), { store: memoryStore(), thread: 't1', ...extra }),
  updateWorkingMemory: (extra) => updateWorkingMemory(workingMemory({ schema: z.object({}) }), { replace: {} }, { store: memoryStore(), thread: 't1', ...extra }),
};

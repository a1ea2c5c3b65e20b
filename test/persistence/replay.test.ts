import { describe, expect, it } from 'vitest';
import { replayAdapter } from '../../src/adapters/recording.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { run } from '../../src/core/run.js';
import type { Outcome, Runnable } from '../../src/core/runnable.js';
import { agent } from '../../src/patterns/agent.js';
import { handoff } from '../../src/patterns/handoff.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { team } from '../../src/patterns/team.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { exportRun } from '../../src/persistence/run-log.js';
import type { ModelAdapter } from '../../src/core/adapter.js';

/** Run live with a store, export the run, replay it: zero model calls, the same outcome. */
async function replays<O extends Outcome>(make: () => Runnable<O>, input: string, live: ModelAdapter & { calls: unknown[] }) {
  const store = memoryStore();
  const original = await run(make(), input, { adapter: live, store, runId: 'live', clock: new SimulatedClock() });
  const liveCalls = live.calls.length;
  const exported = JSON.parse(JSON.stringify(await exportRun('live', { store }))) as Awaited<ReturnType<typeof exportRun>>;
  const replay = replayAdapter(exported);
  const again = await run(make(), input, { adapter: replay, clock: new SimulatedClock() });
  expect(live.calls.length).toBe(liveCalls); // the live adapter was not called again
  expect(replay.served).toBe(liveCalls);
  expect(replay.remaining).toBe(0);
  const strip = ({ runId: _r, trace: _t, durationMs: _d, ...rest }: typeof original) => rest;
  expect(strip(again)).toEqual(strip(original));
  return original;
}

describe('replaying a logged run', () => {
  it('replays a handoff chain', async () => {
    const live = scriptedAdapter({ rules: [{ agent: 'triage', reply: 'A billing question.' }, { agent: 'billing', reply: 'Refund issued.' }, { agent: 'qa', reply: 'Approved: refund issued.' }] });
    const original = await replays(() => handoff(handoff(agent({ name: 'triage' }), agent({ name: 'billing' })), agent({ name: 'qa' })), 'Refund order 42', live);
    expect(original).toMatchObject({ output: 'Approved: refund issued.', agent: 'qa' });
  });

  it('replays a team', async () => {
    const live = scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: (r) => `${r.agent} says ${r.turn}` }, { agent: 'lead', reply: 'Merged.' }] });
    const make = () => team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 2 });
    const original = await replays(make, 'Review PR 7', live);
    expect(original).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 2, output: 'Merged.' });
  });

  it('replays an orchestrator-reflect loop', async () => {
    const live = scriptedAdapter({
      replies: { judge: ['SCORE: 0.4\nRATIONALE: No tests.', 'SCORE: 0.95\nRATIONALE: Done.'] },
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Synthesis ${r.turn}` : '@worker:coder\nWrite it.\n@end\n@worker:tester\nTest it.\n@end') },
        { agent: 'coder', reply: 'code' },
        { agent: 'tester', reply: 'tests' },
      ],
    });
    const make = () => orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'coder' }), agent({ name: 'tester' })], evaluator: agent({ name: 'judge' }), maxIterations: 3 });
    const original = await replays(make, 'Add a login form', live);
    expect(original).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
  });
});

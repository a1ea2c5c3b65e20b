import { expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { coordinate } from '../../src/coordination/coordinate.js';

// With fractional clock times, a deadline computed as `checkedAt + timeout`
// could be missed by a check computed as `now - checkedAt >= timeout`: the
// coordination then waited 0 ms for it forever, and simulated time stopped.
it.each([
  [70.1, 33.3],
  [100, 0.001],
  [100 / 3, 50 / 3],
])('a coordination reaches its stuck deadlines at fractional times (a first task of %d ms, %d ms to answer)', async (firstTaskMs, statusTimeoutMs) => {
  const clock = new SimulatedClock();
  const adapter = scriptedAdapter({
    clock,
    latencyMs: 100,
    replies: { w1: [{ text: 'quick', delayMs: firstTaskMs }, { fault: 'hang' }] },
    rules: [{ agent: 'lead', reply: 'OK' }],
  });
  const flow = coordinate({
    lead: agent({ name: 'lead' }),
    workers: [agent({ name: 'w1' })],
    tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }],
    stuck: { expectedTaskMs: 60_000, statusTimeoutMs },
  });
  const done = run(flow, 'x', { adapter, clock });
  let settled = false;
  done.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 100 && !settled; i++) await clock.advance(100);
  // The second task's worker hangs: checked, found stuck and stopped; with no worker left the task needs a person.
  expect((await done).tasks.map((t) => [t.id, t.status])).toEqual([['a', 'done'], ['b', 'blocked']]);
});

// The fields views read from the kernel's and the scheduler's events.
import { describe, expect, it } from 'vitest';
import { agent, defineRunnable, run, startRun, type TroupeEvent } from 'troupe';
import { scriptedAdapter } from 'troupe/testing';
import { executePlan } from '../../src/plan/engine/execute.js';
import { chunk, planOf } from '../plan/helpers.js';

describe('events for views', () => {
  it('op.started carries the op path; op.completed the error and code of a failed op', async () => {
    const events: TroupeEvent[] = [];
    const adapter = scriptedAdapter({ replies: { a: [{ fault: 'throw', error: 'boom' }] } });
    const outer = defineRunnable({ name: 'outer', kind: 'custom', run: (input, ctx) => agent({ name: 'a' }).run(input, ctx) });
    await expect(run(outer, 'x', { adapter, onEvent: (e) => events.push(e) })).rejects.toMatchObject({ code: 'adapter_error' });
    const started = events.filter((e): e is TroupeEvent<'op.started'> => e.type === 'op.started');
    expect(started.map((e) => e.path)).toEqual(['/custom:outer#0', '/custom:outer#0/agent:a#0']);
    const completed = events.filter((e): e is TroupeEvent<'op.completed'> => e.type === 'op.completed');
    expect(completed.map((e) => [e.name, e.status, e.code, e.error])).toEqual([
      ['a', 'failed', 'adapter_error', 'boom'],
      ['outer', 'failed', 'adapter_error', 'boom'],
    ]);
  });

  it('op.completed of a cancelled op says so; a completed op has no error', async () => {
    const adapter = scriptedAdapter({ replies: { a: [{ fault: 'hang' }], b: ['fine'] } });
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'b' }), 'x', { adapter, onEvent: (e) => events.push(e) });
    const done = events.find((e): e is TroupeEvent<'op.completed'> => e.type === 'op.completed')!;
    expect(done.error).toBeUndefined();
    expect(done.code).toBeUndefined();
    const handle = startRun(agent({ name: 'a' }), 'x', { adapter });
    const seen: TroupeEvent[] = [];
    handle.emitter.on('*', (e) => {
      seen.push(e);
      if (e.type === 'agent.started') handle.cancel();
    });
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(seen.find((e) => e.type === 'op.completed')).toMatchObject({ status: 'cancelled', code: 'cancelled' });
  });

  it('plan.started carries the chunk graph when someone listens', async () => {
    const events: TroupeEvent[] = [];
    const plan = planOf(chunk(1), chunk(2, [1]), chunk(3, [1, 2]));
    await executePlan(plan, { adapter: scriptedAdapter({ fallback: 'done' }), onEvent: (e) => events.push(e) });
    expect(events.find((e) => e.type === 'plan.started')).toMatchObject({
      graph: [
        { chunkId: '1', title: 'Chunk B', role: 'Generic', dependsOn: [] },
        { chunkId: '2', title: 'Chunk C', role: 'Generic', dependsOn: ['1'] },
        { chunkId: '3', title: 'Chunk D', role: 'Generic', dependsOn: ['1', '2'] },
      ],
    });
  });
});

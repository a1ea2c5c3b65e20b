// PlanControl is a per-run control (docs/conventions.md): a RunControl
// passed to the run, read by the plan as `ctx.control`; the runnable holds
// no state of a run.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { NotRunningError, RunControl } from '../../../src/core/control.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { run } from '../../../src/core/run.js';
import { defineRunnable } from '../../../src/core/runnable.js';
import { executePlan, planRunnable, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import { PlanControl } from '../../../src/plan/live/control.js';
import { chunk, drive, planOf } from '../helpers.js';

/** Chunks that take `ms` each on the clock, recording which ran. */
function timed(clock: SimulatedClock, ran: string[], ms = 10): ChunkRunner {
  return async ({ chunk: c, ctx, signal }) => {
    ran.push(`${ctx.runId}:${c.sequenceIndex}`);
    await new Promise<void>((resolve, reject) => {
      const cancel = clock.setTimer(resolve, ms);
      signal.addEventListener('abort', () => (cancel(), reject(signal.reason)), { once: true });
    });
    return `done ${c.sequenceIndex}`;
  };
}

describe('PlanControl, a control per run', () => {
  it('is a RunControl, passed to the run: two runs of one runnable each change their own plan', async () => {
    const clock = new SimulatedClock();
    const ran: string[] = [];
    const runnable = planRunnable(planOf(chunk(0), chunk(1, [0])), { runChunk: timed(clock, ran), maxParallel: 1 });
    const [a, b] = [new PlanControl(), new PlanControl()];
    expect(a).toBeInstanceOf(RunControl);
    const onEvent = (control: PlanControl) => (e: TroupeEvent) => {
      if (e.type === 'chunk.status' && e.status === 'running' && e.sequenceIndex === 0) control.addChunks([chunk(5, [1])], `only in ${e.runId}`);
    };
    const [first, second] = await drive(
      clock,
      Promise.all([
        run(runnable, 'task', { clock, control: a, runId: 'a', onEvent: onEvent(a) }),
        run(runnable, 'task', { clock, control: b, runId: 'b' }),
      ]),
    );
    expect(first.results.map((r) => r.sequenceIndex)).toEqual([0, 1, 5]);
    expect(second.results.map((r) => r.sequenceIndex)).toEqual([0, 1]);
    // Once the runs ended, the controls are free and say so.
    expect(a.running).toBe(false);
    expect(() => a.addChunks([chunk(6)])).toThrow(NotRunningError);
  });

  it('cancel() ends the plan’s run: running chunks are cancelled and the run rejects cancelled', async () => {
    const clock = new SimulatedClock();
    const ran: string[] = [];
    const control = new PlanControl();
    const onEvent = (e: TroupeEvent): void => {
      if (e.type === 'chunk.status' && e.status === 'running' && e.sequenceIndex === 1) control.cancel('enough');
    };
    const statuses = new Map<number, string>();
    const running = executePlan(planOf(chunk(0), chunk(1, [0]), chunk(2, [1])), {
      clock,
      control,
      runChunk: timed(clock, ran),
      onEvent: (e) => {
        if (e.type === 'chunk.status') statuses.set(e.sequenceIndex, e.status);
        onEvent(e);
      },
    });
    await expect(drive(clock, running)).rejects.toMatchObject({ code: 'cancelled', message: 'enough' });
    expect([...statuses.values()]).toEqual(['completed', 'cancelled', 'cancelled']);
    expect(() => control.cancel()).toThrow(NotRunningError);
  });

  it('works for a plan executed inside another runnable’s context: the plan attaches it for its own run', async () => {
    const clock = new SimulatedClock();
    const ran: string[] = [];
    const control = new PlanControl();
    const flow = defineRunnable({
      name: 'outer',
      kind: 'flow',
      run: async (input, ctx) => {
        const outcome = await executePlan(planOf(chunk(0), chunk(1, [0])), { ctx, control, task: input, runChunk: timed(clock, ran), maxParallel: 1 });
        return { output: outcome.results.map((r) => r.sequenceIndex).join(','), agent: 'outer', status: 'completed' as const };
      },
    });
    const onEvent = (e: TroupeEvent): void => {
      if (e.type === 'chunk.status' && e.status === 'running' && e.sequenceIndex === 0) {
        control.post({ to: 'all', text: 'hello' });
        control.addChunks([chunk(7, [0])]);
      }
    };
    const result = await drive(clock, run(flow, 'go', { clock, onEvent }));
    expect(result.output).toBe('0,1,7');
    expect(control.running).toBe(false);
  });

  it('checks its options once, from its description', () => {
    expect(() => new PlanControl({ replay: [{ id: 0 }] as never })).toThrow(/`replay\[0\]` to be a recorded plan change/);
    expect(() => new PlanControl({ replays: [] } as never)).toThrow('Unknown option `replays` of PlanControl; did you mean `replay`?');
  });
});

// Flows for the troupe/http tests.
import { defineRunnable } from 'troupe';
import { sleep, type Clock } from 'troupe/kernel';

/** A flow that emits `count` warnings `gapMs` apart (on `clock`), then answers. */
export function ticker(count: number, gapMs: number, clock: Clock) {
  return defineRunnable({
    name: 'ticker',
    kind: 'ticker',
    run: async (_input, ctx) => {
      for (let i = 0; i < count; i++) {
        ctx.emit('warning', { message: `tick ${i}` });
        await sleep(clock, gapMs, ctx.signal);
      }
      return { output: `ticked ${count}`, agent: 'ticker', status: 'completed' };
    },
  });
}

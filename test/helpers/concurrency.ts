// Measures how many things run at once: sessions' turns of an adapter, or
// runnables, so that tests can check that `maxParallel` bounds a fan-out.
import type { ModelAdapter } from '../../src/core/adapter.js';
import { sleep, type Clock } from '../../src/core/clock.js';
import { defineRunnable, type Runnable } from '../../src/core/runnable.js';

/** The most at once so far, and how many are running now. */
export class Gauge {
  running = 0;
  peak = 0;
  enter(): void {
    this.running++;
    this.peak = Math.max(this.peak, this.running);
  }
  leave(): void {
    this.running--;
  }
}

/** `inner`, with the turns of the agents `counted` names measured by `gauge`. */
export function gaugedAdapter(inner: ModelAdapter, gauge: Gauge, counted: (agent: string) => boolean): ModelAdapter {
  return {
    ...inner,
    capabilities: inner.capabilities,
    async openSession(spec, options) {
      const session = await inner.openSession(spec, options);
      if (!counted(spec.agent)) return session;
      return {
        get id() {
          return session.id;
        },
        async send(input, sendOptions) {
          gauge.enter();
          try {
            return await session.send(input, sendOptions);
          } finally {
            gauge.leave();
          }
        },
        close: () => session.close(),
      };
    },
  };
}

/** A runnable that answers `name` after `ms` on `clock`, measured by `gauge`. */
export function gaugedRunnable(name: string, gauge: Gauge, clock: Clock, ms = 100): Runnable {
  return defineRunnable({
    name,
    kind: 'custom',
    async run(_input, ctx) {
      gauge.enter();
      try {
        await sleep(clock, ms, ctx.signal);
        return { output: name, agent: name, status: 'completed' };
      } finally {
        gauge.leave();
      }
    },
  });
}

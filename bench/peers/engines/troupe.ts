/** troupe's `executePlan`, from this repository's sources, with events on (an `onEvent` listener). */
import { executePlan } from '../../../src/plan/index.js';
import type { Engine } from './types.js';

export const run: Engine = async (plan, slots, work) => {
  let events = 0;
  await executePlan(plan, {
    maxParallel: slots,
    onEvent: () => void events++,
    runChunk: async ({ chunk }) => {
      await work(chunk.sequenceIndex);
      return 'ok';
    },
  });
};

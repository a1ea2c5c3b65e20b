/**
 * Mastra: a workflow whose steps are the chunks, grouped by dependency depth
 * (`.parallel([...])` per stage, in sequence), since a Mastra workflow
 * composes parallel groups one after another rather than arbitrary joins.
 * The slot count is a shared semaphore around the work.
 */
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';
import { buildStages } from '../../../src/plan/index.js';
import type { Engine } from './types.js';

/** At most `slots` calls of `fn` at once. */
function limiter(slots: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (fn) => {
    if (active >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

export const run: Engine = async (plan, slots, work) => {
  const limit = limiter(slots);
  const any = z.any();
  const step = (i: number) => createStep({ id: `c${i}`, inputSchema: any, outputSchema: any, execute: async () => limit(() => work(i)).then(() => i) });
  let flow = createWorkflow({ id: 'plan', inputSchema: any, outputSchema: any }) as unknown as {
    then(s: unknown): typeof flow;
    parallel(s: unknown[]): typeof flow;
    commit(): { createRunAsync(): Promise<{ start(o: { inputData: unknown }): Promise<{ status: string; error?: unknown }> }> };
  };
  for (const stage of buildStages(plan)) flow = stage.length === 1 ? flow.then(step(stage[0]!)) : flow.parallel(stage.map(step));
  const workflow = flow.commit();
  const result = await (await workflow.createRunAsync()).start({ inputData: {} });
  if (result.status !== 'success') throw new Error(`Mastra workflow ended ${result.status}: ${String(result.error)}`);
};

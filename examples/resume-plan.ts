/**
 * Resume a plan: execute a plan of six chunks with a file store, kill it
 * after three chunks, then resume it. The second half runs only the three
 * chunks the first half did not finish.
 *
 *   npx tsx examples/resume-plan.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resume, type TroupeEvent } from 'troupe';
import { executePlan, planRunnable, type Plan, type PlanChunk } from 'troupe/plan';
import { fileStore } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const step = (sequenceIndex: number, title: string, dependsOnIndexes: number[]): PlanChunk => ({
  sequenceIndex, title, prompt: `${title}.`, dependsOnIndexes, complexity: 'Low', role: 'Generic',
});
const plan: Plan = {
  planSummary: 'Ship a login form',
  chunks: [
    step(0, 'Design the form', []),
    step(1, 'Write the validation rules', []),
    step(2, 'Build the form', [0]),
    step(3, 'Test the validation', [1]),
    step(4, 'Wire the form to the API', [2]),
    step(5, 'Write the release note', [3, 4]),
  ],
};
const options = { planId: 'login-form', maxParallel: 1 };

/**
 * A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env), else a
 * scripted one that answers every chunk; and the chunks this half ran, from the plan's events.
 */
function worker() {
  const ran: number[] = [];
  const adapter = adapterFromEnv() ?? scriptedAdapter({
    rules: [{ agent: 'Generic', reply: (r) => `Chunk ${/# Chunk (\d+)/.exec(r.text)?.[1]} done.` }],
  });
  const onEvent = (e: TroupeEvent) => {
    if (e.type === 'chunk.status' && e.status === 'running') ran.push(e.sequenceIndex);
  };
  return { adapter, ran, onEvent };
}

const dir = mkdtempSync(join(tmpdir(), 'troupe-resume-plan-'));
try {
  const store = fileStore(dir);

  // 1. Start the plan, and kill it once three chunks have completed.
  const first = worker();
  const kill = new AbortController();
  let completed = 0;
  const onEvent = (e: TroupeEvent) => {
    first.onEvent(e);
    if (e.type === 'chunk.status' && e.status === 'completed' && ++completed === 3) kill.abort();
  };
  await executePlan(plan, { ...options, adapter: first.adapter, store, runId: 'login-1', signal: kill.signal, onEvent }).catch((error: Error) =>
    console.log(`first half stopped: ${error.message}`),
  );
  console.log('first half ran chunks:', first.ran.join(', '));

  // 2. Resume the run: the plan loads its checkpoint and runs only what is left.
  const second = worker();
  const outcome = await resume(planRunnable(plan, options), 'login-1', { store, adapter: second.adapter, onEvent: second.onEvent });
  console.log('second half ran chunks:', second.ran.join(', '));
  console.log(`plan ${outcome.status}: ${outcome.results.map((r) => `${r.sequenceIndex} ${r.status}`).join(', ')}`);
  if ([...first.ran, ...second.ran].sort().join() !== '0,1,2,3,4,5') throw new Error('a chunk ran twice or not at all');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

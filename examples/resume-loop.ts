/**
 * Resume an orchestrate loop: run an orchestrator-reflect loop of four
 * iterations with a file store, kill it after iteration 2, then resume it.
 * The second half runs iterations 3 and 4 only, with the evaluations of the
 * first half.
 *
 *   npx tsx examples/resume-loop.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, orchestrate, resume, run, type TroupeEvent } from 'troupe';
import { fileStore } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const loop = () =>
  orchestrate({
    name: 'login-form',
    lead: agent({ name: 'lead', system: 'You lead the team.' }),
    workers: [agent({ name: 'coder', system: 'You write TypeScript.' })],
    evaluator: agent({ name: 'judge', system: 'You score the work.' }),
    maxIterations: 4,
  });

/** The scripted team (a real model instead when the environment names one: TROUPE_ADAPTER, see troupe/adapters/env); the judge gives the scores in order, the lead numbers its versions from `version`. */
const team = (scores: number[], version: number) =>
  scriptedAdapter({
    replies: { judge: scores.map((s) => `SCORE: ${s}\nRATIONALE: ${s >= 0.9 ? 'Complete.' : 'Not there yet.'}`) },
    rules: [
      { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Login form, version ${version++}.` : '@worker:coder\nImprove the login form.\n@end') },
      { agent: 'coder', reply: 'Done.' },
    ],
  });
const iterations = (events: TroupeEvent[]) => events.flatMap((e) => (e.type === 'reflect.iteration.started' ? [e.iteration] : []));

const dir = mkdtempSync(join(tmpdir(), 'troupe-resume-loop-'));
try {
  const store = fileStore(dir);

  // 1. Run, and kill the run once iteration 2 is checkpointed (the loop's second `checkpoint.saved`).
  const kill = new AbortController();
  const firstEvents: TroupeEvent[] = [];
  let saves = 0;
  const first = await run(loop(), 'Add a login form', {
    adapter: adapterFromEnv() ?? team([0.3, 0.6], 1), store, runId: 'login-loop', signal: kill.signal,
    onEvent: (e) => {
      firstEvents.push(e);
      if (e.type === 'checkpoint.saved' && e.kind === 'orchestrate' && ++saves === 2) kill.abort();
    },
  });
  console.log(`first half: iterations ${iterations(firstEvents).join(', ')} -> ${first.summary}`);

  // 2. Resume: the loop continues at iteration 3 with its evaluation history.
  const secondEvents: TroupeEvent[] = [];
  const second = await resume(loop(), 'login-loop', { adapter: adapterFromEnv() ?? team([0.7, 0.95], 3), store, onEvent: (e) => secondEvents.push(e) });
  console.log(`second half: iterations ${iterations(secondEvents).join(', ')} -> ${second.summary}`);
  console.log(`scores: ${second.evaluations.map((e) => e.score).join(', ')}`);
  console.log(`answer: ${second.output}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

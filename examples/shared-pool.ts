/**
 * Several projects over one pool: the plans of two repositories share three
 * worker slots. `web` has weight 2; `api` has weight 1 and at most one
 * worker at a time; each plan works in its own directory and has its own
 * token budget. A third project, `docs`, joins while the others run and
 * gets its share at once. Offline it runs on the scripted adapter with a
 * simulated clock (every answer takes a second); the environment can name
 * a real model instead:
 *
 *   npx tsx examples/shared-pool.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/shared-pool.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TroupeEvent } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { realClock, type Clock } from 'troupe/kernel';
import { executePlan, sharedPool, type Plan, type PlanChunk } from 'troupe/plan';
import { SimulatedClock, scriptedAdapter } from 'troupe/testing';

const step = (sequenceIndex: number, title: string, dependsOnIndexes: number[] = []): PlanChunk => ({
  sequenceIndex, title, prompt: `${title}. Answer in one sentence.`, dependsOnIndexes, complexity: 'Low', role: 'Implementation',
});
const plans = {
  web: { planSummary: 'Refresh the web app', chunks: ['Header', 'Footer', 'Login page', 'Settings page', 'Search box', 'Dark mode'].map((t, i) => step(i, `Build the ${t}`)) },
  api: { planSummary: 'Version the API', chunks: [step(0, 'Add /v2 routes'), step(1, 'Deprecate /v1', [0]), step(2, 'Add rate limits'), step(3, 'Write the changelog', [1, 2])] },
  docs: { planSummary: 'Update the docs', chunks: [step(0, 'Document /v2'), step(1, 'Document dark mode'), step(2, 'Fix broken links')] },
} satisfies Record<string, Plan>;

// The model named by the environment (TROUPE_ADAPTER), else the scripted
// adapter on a simulated clock, each answer taking a second.
const real = adapterFromEnv();
const simulated = real ? undefined : new SimulatedClock();
const clock: Clock = simulated ?? realClock;
const adapter = real ?? scriptedAdapter({ clock, latencyMs: 1000, rules: [{ agent: 'Implementation', reply: (r) => `Done: ${/# Chunk \d+: (.*)/.exec(r.text)?.[1] ?? 'the task'}.` }] });

// One pool of three slots; each project gets its own executor in it.
const pool = sharedPool({ maxParallel: 3, clock });
const shares = {
  web: pool.executor('web', { weight: 2 }),
  api: pool.executor('api', { weight: 1, maxParallel: 1 }),
  docs: pool.executor('docs', { weight: 1 }),
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const dirs: string[] = [];
const start = clock.now();
const done: string[] = [];

/** Every second (half a second in): who holds the slots, and what finished since. */
function watch(): () => void {
  let cancel = clock.setTimer(function tick() {
    const slots = pool.stats().filter((s) => s.running > 0).map((s) => `${s.name} ${s.running}`).join(', ');
    console.log(`${seconds(clock.now() - start).padStart(6)}  slots: ${(slots || 'none').padEnd(22)} finished: ${done.splice(0).join(', ') || '-'}`);
    cancel = clock.setTimer(tick, 1000);
  }, 500);
  return () => cancel();
}

function project(name: keyof typeof plans) {
  const baseDir = mkdtempSync(join(tmpdir(), `troupe-pool-${name}-`));
  dirs.push(baseDir);
  const onEvent = (e: TroupeEvent) => {
    if (e.type === 'chunk.status' && e.status === 'completed') done.push(`${name} ${e.sequenceIndex}`);
  };
  return executePlan(plans[name], { adapter, clock, planId: name, baseDir, executor: shares[name], budget: { run: { name, totalTokens: 50_000 } }, onEvent });
}

const stopWatching = watch();
try {
  const web = project('web');
  const api = project('api');
  // docs joins two seconds in, while web and api run.
  const docs = (simulated ? new Promise<void>((resolve) => clock.setTimer(resolve, 2000)) : Promise.resolve()).then(() => project('docs'));
  const all = Promise.all([web, api, docs]);
  if (simulated) {
    let settled = false;
    void all.finally(() => (settled = true)).catch(() => undefined);
    while (!settled) await simulated.advance(100);
  }
  const outcomes = await all;
  console.log('');
  for (const o of outcomes) console.log(`${o.plan.planSummary}: ${o.status}${o.reason ? ` (${o.reason})` : ''}, ${o.stats.completed}/${o.stats.total} chunks`);
  console.log(`worker time: ${pool.stats().map((s) => `${s.name} ${seconds(s.workerMs)}`).join(', ')}`);
} finally {
  stopWatching();
  pool.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

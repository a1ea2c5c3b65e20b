/**
 * Lead coordination: a lead and three workers implement a small feature
 * list. Workers submit plans before they work; one worker hangs, gets a
 * status check, does not answer, and its task is reassigned. Runs offline on
 * the scripted adapter with a simulated clock, or on a real model (and the
 * real clock) when the environment names one (TROUPE_ADAPTER, see
 * troupe/adapters/env).
 *
 *   npx tsx examples/lead-coordination.ts
 */
import { agent, run, type TroupeEvent } from 'troupe';
import { memoryStore } from 'troupe/persistence';
import { coordinate } from 'troupe/coordination';
import { realClock } from 'troupe/kernel';
import { adapterFromEnv } from 'troupe/adapters/env';
import { SimulatedClock, scriptedAdapter } from 'troupe/testing';

const live = adapterFromEnv();
const simulated = live ? undefined : new SimulatedClock();
const clock = simulated ?? realClock;
const taskOf = (text: string) => /Task (\S+):/.exec(text)?.[1] ?? '?';

const scripted = scriptedAdapter({
  clock,
  rules: [
    // The lead: approve plans that name their files, answer questions, write the synthesis.
    { agent: 'lead', match: /PLAN from \S+ for task (\S+)/, reply: (r) => r.text.includes('files:') ? `APPROVE ${/PLAN from \S+ for task (\S+)/.exec(r.text)![1]}` : `REJECT ${/PLAN from \S+ for task (\S+)/.exec(r.text)![1]}: name the files you will touch.` },
    { agent: 'lead', match: 'QUESTION from', reply: 'ANSWER ana: Store the theme in localStorage under "theme".' },
    { agent: 'lead', match: 'Every task is resolved', reply: 'Done: dark mode, settings page, CSV export. Reassigned the export after ben stalled. Nothing needs a person.' },
    { agent: 'lead', reply: 'OK' },
    // ben hangs on his first real piece of work (after his plan).
    { agent: 'ben', match: 'Do the work now', reply: { fault: 'hang' } },
    // Workers plan with their files, ask once, then report.
    { agent: /ana|ben|cy/, match: 'reply with your plan only', reply: (r) => ({ text: `Plan for ${taskOf(r.text)}: 2 steps; files: src/${taskOf(r.text)}.ts`, delayMs: 200 }) },
    { agent: 'ana', match: 'Task dark-mode', reply: 'QUESTION: Where should the theme be stored?' },
    { agent: /ana|ben|cy/, reply: { text: 'Implemented and tested.', delayMs: 800 } },
  ],
});

const flow = coordinate({
  lead: agent({ name: 'lead', system: 'You lead a small web team.' }),
  workers: [agent({ name: 'ana' }), agent({ name: 'ben' }), agent({ name: 'cy' })],
  tasks: [
    { id: 'dark-mode', title: 'Dark mode toggle', files: ['src/dark-mode.ts'] },
    { id: 'export', title: 'CSV export button', files: ['src/export.ts'] },
    { id: 'settings', title: 'Settings page', files: ['src/settings.ts'] },
    { id: 'docs', title: 'Document the new features', dependsOn: ['dark-mode', 'export', 'settings'] },
  ],
  planApproval: true,
  stuck: { expectedTaskMs: 1_000, statusTimeoutMs: 1_000 },
});

const log = (e: TroupeEvent) => {
  const at = `${String(e.time).padStart(5)} ms`;
  if (e.type === 'coord.task' && e.from) console.log(`${at}  task ${e.task}: ${e.from} → ${e.to}${e.worker ? ` (${e.worker})` : ''}`);
  if (e.type === 'coord.message' && ['question', 'answer'].includes(e.message.kind)) console.log(`${at}  ${e.message.sender} → ${e.message.recipient} (${e.message.kind}): ${e.message.text}`);
  if (e.type === 'coord.decision' && e.decision !== 'tasks-planned') console.log(`${at}  lead: ${[e.decision, e.task, e.worker, e.detail].filter(Boolean).join(' ')}`);
};

// The store checkpoints the task list after every batch of transitions (resume the run with `resume(flow, runId, { store })`).
const result = run(flow, 'Ship dark mode, a settings page and CSV export', { adapter: live ?? scripted, clock, onEvent: log, store: memoryStore() });
let settled = false;
void result.finally(() => (settled = true)).catch(() => undefined);
while (simulated && !settled) await simulated.advance(100);

const outcome = await result;
console.log('\nTasks:');
for (const t of outcome.tasks) console.log(`  ${t.id.padEnd(10)} ${t.status.padEnd(8)} ${t.assignee ?? ''}`);
console.log(`\nSynthesis: ${outcome.synthesis}`);
if (simulated) console.log(`Simulated time: ${simulated.now()} ms; model calls: ${scripted.calls.length}`);

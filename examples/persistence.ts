/**
 * Persistence: log a run to a file store, show its timeline, then replay it
 * from the log with zero model calls.
 *
 *   npx tsx examples/persistence.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, defineRunnable, run } from 'troupe';
import { exportRun, fileStore, timeline } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { replayAdapter, scriptedAdapter } from 'troupe/testing';

const researcher = agent({ name: 'researcher', system: 'Find the key facts.' });
const writer = agent({ name: 'writer', system: 'Write one clear sentence from the facts.' });

// A chain: the writer gets the request plus the researcher's notes.
export const chain = defineRunnable({
  name: 'research-then-write',
  kind: 'chain',
  async run(input, ctx) {
    const notes = await researcher.run(input, ctx);
    const answer = await writer.run(`${input}\n\nNotes:\n${notes.output}`, ctx);
    return { output: answer.output, agent: answer.agent, status: answer.status };
  },
});

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env), else the scripted one.
const live = adapterFromEnv() ?? scriptedAdapter({
  latencyMs: 5,
  replies: {
    researcher: ['Tides come from the Moon’s gravity; two bulges; about 12h25m apart.'],
    writer: ['Tides rise and fall about every 12 hours 25 minutes because the Moon pulls the oceans into two bulges.'],
  },
});

const dir = mkdtempSync(join(tmpdir(), 'troupe-example-'));
try {
  const store = fileStore(dir);
  const question = 'Why are there two tides a day?';

  // 1. Run with a store: every event goes to runs/<runId>/events.jsonl.
  const first = await run(chain, question, { adapter: live, store, runId: 'tides-1' });
  console.log('answer:', first.output);

  // 2. The timeline: every event with its offset, and durations of ops and agents.
  for (const entry of await timeline('tides-1', { store })) {
    if (entry.durationMs === undefined && entry.type !== 'model.turn') continue;
    const who = entry.agent ?? (entry.event.type === 'op.completed' ? entry.event.name : undefined);
    const what = `${entry.type}${who ? ` (${who})` : ''}`;
    console.log(`  +${String(entry.offsetMs).padStart(3)} ms  ${what.padEnd(38)}${entry.durationMs === undefined ? '' : ` took ${entry.durationMs} ms`}`);
  }

  // 3. Replay from the exported run: the same outcome, zero model calls.
  const replay = replayAdapter(await exportRun('tides-1', { store }));
  const again = await run(chain, question, { adapter: replay });
  console.log('replayed:', again.output === first.output ? 'same answer' : 'DIFFERENT answer');
  console.log(`model calls: ${first.usage.turns} live, ${replay.served} turns served from the log`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replayAdapter } from '../../src/adapters/recording.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { defineRunnable } from '../../src/core/runnable.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { exportRun, pruneRuns, readRun, runEventsStream, timeline } from '../../src/persistence/run-log.js';
import type { Store } from '../../src/core/store.js';

/** A chain: the writer drafts (with a tool), the editor polishes the draft. */
function chain() {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a fact up',
    parameters: z.object({ topic: z.string() }),
    execute: ({ topic }) => `${topic} is 42`,
  });
  const writer = agent({ name: 'writer', system: 'Draft.', tools: [lookup] });
  const editor = agent({ name: 'editor', system: 'Polish.' });
  return defineRunnable({
    name: 'writer-then-editor',
    kind: 'chain',
    async run(input, ctx) {
      const draft = await writer.run(input, ctx);
      const final = await editor.run(`${input}\n\nDraft:\n${draft.output}`, ctx);
      return { output: final.output, agent: final.agent, status: final.status };
    },
  });
}

function chainAdapter(clock?: SimulatedClock) {
  return scriptedAdapter({
    ...(clock ? { clock, latencyMs: 100 } : {}),
    rules: [
      { agent: 'writer', match: (r) => r.turn === 1, reply: { toolCalls: [{ name: 'lookup', arguments: { topic: 'the answer' } }] } },
      { agent: 'writer', reply: 'Draft: the answer is 42.' },
      { agent: 'editor', reply: 'The answer is 42.' },
    ],
  });
}

describe('run logs', () => {
  it('appends every event of the run, in order, including every model turn', async () => {
    const store = memoryStore();
    const seen: TroupeEvent[] = [];
    const result = await run(chain(), 'What is the answer?', { adapter: chainAdapter(), store, runId: 'r1', onEvent: (e) => seen.push(e) });
    const log = await readRun('r1', { store });
    expect(log.events).toEqual(JSON.parse(JSON.stringify(seen)));
    expect(log.events.at(-1)?.type).toBe('run.completed');
    const turns = log.events.filter((e) => e.type === 'model.turn');
    expect(turns.map((t) => [t.agent, t.session, t.turn])).toEqual([
      ['writer', 1, 1],
      ['writer', 1, 2],
      ['editor', 1, 1],
    ]);
    expect(log.meta).toMatchObject({ runId: 'r1', runnable: 'writer-then-editor', status: 'completed' });
    expect(result.output).toBe('The answer is 42.');
  });

  it('does not make the run wait for each append, but settles only once the log is flushed', async () => {
    const inner = memoryStore();
    const gates: Array<() => void> = [];
    const slow: Store = {
      ...inner,
      append: (stream, record, options) => new Promise<void>((resolve) => gates.push(resolve)).then(() => inner.append(stream, record, options)),
    };
    let settled = false;
    const pending = run(chain(), 'q', { adapter: chainAdapter(), store: slow, runId: 'slow' }).then((r) => {
      settled = true;
      return r;
    });
    // The run body goes on while the first append is still held.
    for (let i = 0; i < 50 && gates.length === 0; i++) await Promise.resolve();
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toBe(false);
    while (!settled) {
      gates.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
    const result = await pending;
    const log = await readRun('slow', { store: inner });
    expect(log.events.at(-1)?.type).toBe('run.completed');
    expect(result.output).toBe('The answer is 42.');
  });

  it('turns a store failure into a warning, never a lost run', async () => {
    const broken: Store = { ...memoryStore(), append: async () => Promise.reject(new Error('disk full')) };
    const warnings: string[] = [];
    const result = await run(chain(), 'q', {
      adapter: chainAdapter(),
      store: broken,
      onEvent: (e) => e.type === 'warning' && warnings.push(e.message),
    });
    expect(result.output).toBe('The answer is 42.');
    expect(warnings).toEqual(['The run log could not be written: disk full']);
  });

  it('logs a failed run, and rejects a store that is not one', async () => {
    const store = memoryStore();
    const failing = scriptedAdapter({ fallback: { fault: 'throw' } });
    await expect(run(agent({ name: 'a' }), 'q', { adapter: failing, store, runId: 'bad' })).rejects.toMatchObject({ code: 'adapter_error' });
    const log = await readRun('bad', { store });
    expect(log.events.at(-1)?.type).toBe('run.failed');
    expect(log.meta?.status).toBe('failed');
    expect(() => run(agent({ name: 'a' }), 'q', { store: {} as Store })).toThrow(/Expected `store` to be a store/);
  });

  it('gives a timeline with the duration of every op, agent and the run', async () => {
    const clock = new SimulatedClock(1_000);
    const store = memoryStore();
    const done = run(chain(), 'q', { adapter: chainAdapter(clock), store, runId: 't', clock });
    await clock.runAll();
    await done;
    const entries = await timeline('t', { store });
    expect(entries[0]).toMatchObject({ type: 'run.started', offsetMs: 0, sincePreviousMs: 0 });
    const last = entries.at(-1)!;
    expect(last).toMatchObject({ type: 'run.completed', durationMs: 300, offsetMs: 300 });
    const agents = entries.filter((e) => e.type === 'agent.completed').map((e) => [e.agent, e.durationMs]);
    expect(agents).toEqual([
      ['writer', 200],
      ['editor', 100],
    ]);
    expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i));
  });

  it('replays a finished run from its export with zero model calls and the same outcome', async () => {
    const store = memoryStore();
    const live = chainAdapter();
    const original = await run(chain(), 'What is the answer?', { adapter: live, store, runId: 'orig' });
    const exported = JSON.parse(JSON.stringify(await exportRun('orig', { store })));
    expect(exported).toMatchObject({ format: 'troupe.run', schemaVersion: 1, runId: 'orig' });
    const replay = replayAdapter(exported);
    const again = await run(chain(), 'What is the answer?', { adapter: replay });
    expect({ output: again.output, agent: again.agent, status: again.status }).toEqual({
      output: original.output,
      agent: original.agent,
      status: original.status,
    });
    expect(again.usage).toEqual(original.usage);
    expect(replay.served).toBe(3);
    expect(replay.remaining).toBe(0);
    expect(live.calls).toHaveLength(3); // only the original run called the model
    // A run log read straight from the store replays too.
    const fromLog = replayAdapter(await readRun('orig', { store }));
    expect((await run(chain(), 'What is the answer?', { adapter: fromLog })).output).toBe(original.output);
  });

  it('reports a torn last record of a run log without failing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-runlog-'));
    const store = fileStore(dir);
    await run(agent({ name: 'a' }), 'q', { adapter: scriptedAdapter({ fallback: 'ok' }), store, runId: 'torn' });
    appendFileSync(join(dir, 'runs', 'torn', 'events.jsonl'), '{"type":"op.sta');
    const log = await readRun('torn', { store });
    expect(log.torn).toBeDefined();
    expect(log.events.at(-1)?.type).toBe('run.completed');
  });

  it('prunes runs older than maxAgeMs, with their logs', async () => {
    const clock = new SimulatedClock(0);
    const store = fileStore(mkdtempSync(join(tmpdir(), 'troupe-prune-')));
    const adapter = scriptedAdapter({ fallback: 'ok' });
    await run(agent({ name: 'a' }), 'q', { adapter, store, runId: 'old', clock });
    await store.set('runs/old/checkpoint', { x: 1 });
    await clock.advance(10_000);
    await run(agent({ name: 'a' }), 'q', { adapter, store, runId: 'new', clock });
    await clock.advance(1_000);
    expect(await pruneRuns({ store, maxAgeMs: 5_000, clock })).toEqual(['old']);
    expect(await store.list('runs/')).toEqual(['runs/new/meta']);
    expect((await store.read(runEventsStream('old'))).records).toEqual([]);
    expect((await readRun('new', { store })).events.length).toBeGreaterThan(0);
    await expect(pruneRuns({ store, maxAgeMs: -1 })).rejects.toThrow(/maxAgeMs/);
  });
});

describe('long run logs', () => {
  it('keeps every event of a run that queues thousands at once, in order', async () => {
    const store = memoryStore();
    const burst = defineRunnable({
      name: 'burst',
      kind: 'custom',
      async run(_input, ctx) {
        for (let i = 0; i < 5000; i++) ctx.emit('warning', { message: `event ${i}` });
        return { output: 'done', agent: 'burst', status: 'completed' };
      },
    });
    await run(burst, 'go', { store, runId: 'long' });
    const { events } = await readRun('long', { store });
    const warnings = events.filter((e): e is TroupeEvent<'warning'> => e.type === 'warning').map((e) => e.message);
    expect(warnings).toEqual(Array.from({ length: 5000 }, (_, i) => `event ${i}`));
    expect(events.at(-1)!.type).toBe('run.completed');
  });
});

describe('run log flushing', () => {
  it('gives up on a store that hangs, with a warning, and still returns the result', async () => {
    const clock = new SimulatedClock();
    const hung: Store = { ...memoryStore(), append: () => new Promise<void>(() => undefined) };
    const warnings: string[] = [];
    let settled = false;
    const pending = run(agent({ name: 'a' }), 'q', {
      adapter: scriptedAdapter({ fallback: 'ok' }),
      store: hung,
      clock,
      onEvent: (e) => e.type === 'warning' && warnings.push(e.message),
    }).then((r) => {
      settled = true;
      return r;
    });
    await clock.advance(29_999);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect((await pending).output).toBe('ok');
    expect(warnings).toEqual([expect.stringMatching(/not flushed within 30000 ms/)]);
  });
});

describe('model.turn events', () => {
  it('number the sessions of each agent in opening order, so a repeated agent replays', async () => {
    const store = memoryStore();
    const a = agent({ name: 'a' });
    const twice = defineRunnable({
      name: 'twice',
      kind: 'chain',
      async run(input, ctx) {
        const first = await a.run(input, ctx);
        const second = await a.run(`again: ${first.output}`, ctx);
        return { output: second.output, agent: 'a', status: 'completed' };
      },
    });
    const live = scriptedAdapter({ replies: { a: ['one', 'two'] } });
    const original = await run(twice, 'go', { adapter: live, store, runId: 'tw' });
    const turns = (await readRun('tw', { store })).events.filter((e) => e.type === 'model.turn');
    expect(turns.map((t) => [t.agent, t.session, t.turn, t.input, t.reply?.text])).toEqual([
      ['a', 1, 1, 'go', 'one'],
      ['a', 2, 1, 'again: one', 'two'],
    ]);
    const replay = replayAdapter(await exportRun('tw', { store }));
    expect((await run(twice, 'go', { adapter: replay })).output).toBe(original.output);
    expect(replay.served).toBe(2);
  });
});

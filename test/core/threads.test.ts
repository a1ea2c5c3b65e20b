// Threads: conversations that continue across runs (`run(flow, input, { store, thread })`),
// on the memory store. Across processes, on file and Redis stores: test/persistence/threads-processes.test.ts.
import { describe, expect, it } from 'vitest';
import type { ModelAdapter, SessionSpec } from '../../src/core/adapter.js';
import { inputText, scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { estimateTokens } from '../../src/core/context-window.js';
import { isTroupeError, type TroupeError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { resume } from '../../src/core/resume.js';
import { run, startRun } from '../../src/core/run.js';
import { runMetaKey } from '../../src/core/run-log-writer.js';
import { threadKey } from '../../src/core/thread.js';
import { withGuardrails } from '../../src/guardrails/with-guardrails.js';
import { classifierGuardrail } from '../../src/guardrails/classifier.js';
import { namespacedStore } from '../../src/integrations/http/namespace.js';
import { agent } from '../../src/patterns/agent.js';
import { handoff } from '../../src/patterns/handoff.js';
import { readRun } from '../../src/persistence/run-log.js';
import { ThreadBusyError, deleteThread, listThreads, readThread, truncateThread } from '../../src/persistence/threads.js';
import { replayRun } from '../../src/travel/what-if.js';
import { forkRun } from '../../src/travel/fork.js';
import { listCheckpoints } from '../../src/travel/checkpoints.js';
import { reflect } from '../../src/patterns/reflect.js';

const SYSTEM = 'You are the support agent of a bicycle shop.';

/** A support agent that answers each question with what it heard before: the number of earlier messages and the question. */
function support() {
  return scriptedAdapter({ rules: [{ agent: 'support', reply: (r) => `(${r.spec.history?.length ?? 0} earlier) You asked: ${r.text}` }] });
}

describe('a run on a thread', () => {
  it('continues the conversation: the entry agent gets the earlier exchanges as its session history, its input unchanged', async () => {
    const store = memoryStore();
    const adapter = support();
    const helper = agent({ name: 'support', system: SYSTEM });
    const first = await run(helper, 'My name is Ada.', { adapter, store, thread: 'customer-42' });
    expect(first.output).toBe('(0 earlier) You asked: My name is Ada.');
    const second = await run(helper, 'What is my name?', { adapter, store, thread: 'customer-42' });
    expect(second.output).toBe('(2 earlier) You asked: What is my name?');

    const [, call] = adapter.calls;
    expect(call!.text).toBe('What is my name?');
    expect(call!.spec.history).toEqual([
      { role: 'user', text: 'My name is Ada.' },
      { role: 'assistant', text: '(0 earlier) You asked: My name is Ada.' },
    ]);
    // The first run of a thread opens a session like any other run: no history at all.
    expect(adapter.calls[0]!.spec).not.toHaveProperty('history');

    const thread = await readThread('customer-42', { store });
    expect(thread!.messages.map((m) => [m.role, m.text, m.runId])).toEqual([
      ['user', 'My name is Ada.', first.runId],
      ['assistant', '(0 earlier) You asked: My name is Ada.', first.runId],
      ['user', 'What is my name?', second.runId],
      ['assistant', '(2 earlier) You asked: What is my name?', second.runId],
    ]);
    expect(thread!.messages[1]!.agent).toBe('support');
    expect(thread!.thread).toMatchObject({ threadId: 'customer-42', messages: 4, runs: 2, lastRunId: second.runId });
    expect(thread!.thread.busy).toBeUndefined();
  });

  it('logs what the entry agent was given (thread.loaded) and what the run added (thread.saved)', async () => {
    const store = memoryStore();
    const helper = agent({ name: 'support', system: SYSTEM });
    await run(helper, 'Hello', { adapter: support(), store, thread: 't1' });
    const events: TroupeEvent[] = [];
    const second = await run(helper, 'Again', { adapter: support(), store, thread: 't1', onEvent: (e) => events.push(e) });
    const types = events.map((e) => e.type);
    expect(types.indexOf('thread.loaded')).toBe(types.indexOf('run.started') + 1);
    expect(types.indexOf('thread.saved')).toBeLessThan(types.indexOf('run.completed'));
    expect(events.find((e) => e.type === 'run.started')).toMatchObject({ thread: 't1' });
    expect(events.find((e) => e.type === 'thread.loaded')).toMatchObject({ thread: 't1', runs: 2, messages: [{ role: 'user', text: 'Hello' }, { role: 'assistant' }] });
    expect(events.find((e) => e.type === 'thread.saved')).toMatchObject({ thread: 't1', added: 2, messages: 4 });
    const log = await readRun(second.runId, { store });
    expect(log.events.some((e) => e.type === 'thread.loaded')).toBe(true);
  });

  it('gives the history to the entry agent only: the next agent of a chain, a guardrail\'s classifier start new conversations', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'judge', reply: 'VERDICT: allow' },
        { agent: 'triage', reply: 'A billing question.' },
        { agent: 'billing', reply: 'Refund issued.' },
      ],
    });
    const flow = withGuardrails(handoff(agent({ name: 'triage' }), agent({ name: 'billing' })), { input: [classifierGuardrail(agent({ name: 'judge' }))] });
    await run(flow, 'Refund please', { adapter, store, thread: 'h1' });
    await run(flow, 'Refund again', { adapter, store, thread: 'h1' });
    const specOf = (name: string): SessionSpec => [...adapter.calls].reverse().find((c) => c.agent === name)!.spec;
    expect(specOf('triage').history).toEqual([
      { role: 'user', text: 'Refund please' },
      { role: 'assistant', text: 'Refund issued.' },
    ]);
    expect(specOf('judge').history).toBeUndefined();
    expect(specOf('billing').history).toBeUndefined();
  });

  it('leaves the thread as it was when the run fails, and gives it back', async () => {
    const store = memoryStore();
    const helper = agent({ name: 'support' });
    await run(helper, 'One', { adapter: support(), store, thread: 't' });
    const failing = scriptedAdapter({ rules: [{ agent: 'support', reply: { fault: 'throw', error: 'model down' } }] });
    await expect(run(helper, 'Two', { adapter: failing, store, thread: 't' })).rejects.toThrow(/model down/);
    const thread = await readThread('t', { store });
    expect(thread!.messages.map((m) => m.text)).toEqual(['One', '(0 earlier) You asked: One']);
    expect(thread!.thread.busy).toBeUndefined();
    expect(thread!.thread.runs).toBe(2);
    await run(helper, 'Three', { adapter: support(), store, thread: 't' });
    expect((await readThread('t', { store }))!.messages).toHaveLength(4);
  });

  it('needs a store with compare-and-set and a thread id', async () => {
    const helper = agent({ name: 'support' });
    expect(() => run(helper, 'x', { adapter: support(), thread: 't' })).toThrow(/pass `store` with `thread`/);
    expect(() => run(helper, 'x', { adapter: support(), store: memoryStore(), thread: '../t' })).toThrow(/thread id/);
    expect(() => run(helper, 'x', { adapter: support(), store: memoryStore(), thread: '' })).toThrow(/thread id/);
    const { getVersioned: _g, setIf: _s, ...plain } = memoryStore();
    expect(() => run(helper, 'x', { adapter: support(), store: plain, thread: 't' })).toThrow(/compare-and-set/);
  });

  it('refuses a second run on a busy thread with a ThreadBusyError (thread_busy); the first runs to the end', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const adapter = scriptedAdapter({ clock, latencyMs: 1000, rules: [{ agent: 'support', reply: (r) => `answer to ${r.text}` }] });
    const helper = agent({ name: 'support' });
    const first = startRun(helper, 'First', { adapter, store, thread: 'busy', clock });
    await clock.advance(10); // the first run holds the thread and waits for its model
    const refused = await run(helper, 'Second', { adapter, store, thread: 'busy', clock }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ThreadBusyError);
    expect(refused).toMatchObject({ code: 'thread_busy', thread: 'busy', heldBy: first.runId });
    await clock.advance(1000);
    expect((await first.result).output).toBe('answer to First');
    expect(adapter.calls.map((c) => c.text)).toEqual(['First']);
    expect((await readThread('busy', { store }))!.messages.map((m) => m.text)).toEqual(['First', 'answer to First']);
    // Once the first has given it back, the next run goes on.
    const next = run(helper, 'Third', { adapter, store, thread: 'busy', clock });
    await clock.advance(1000);
    expect((await next).output).toBe('answer to Third');
  });

  it('of many runs started on one thread at once, exactly one runs; the others are refused and logged failed', async () => {
    const store = memoryStore();
    const adapter = support();
    const helper = agent({ name: 'support' });
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => run(helper, `Question ${i}`, { adapter, store, thread: 'crowd', runId: `r${i}` })));
    const done = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as TroupeError] : []));
    expect(done).toHaveLength(1);
    expect(refused).toHaveLength(7);
    expect(refused.every((e) => isTroupeError(e, 'thread_busy'))).toBe(true);
    expect(adapter.calls).toHaveLength(1);
    expect((await readThread('crowd', { store }))!.messages).toHaveLength(2);
    // A refused run is logged: it started, and failed with thread_busy.
    const loser = results.findIndex((r) => r.status === 'rejected');
    const { events } = await readRun(`r${loser}`, { store });
    expect(events.map((e) => e.type)).toEqual(['run.started', 'run.failed']);
    expect(events.at(-1)).toMatchObject({ code: 'thread_busy' });
  });

  it('takes over a thread held by a run whose log says it ended', async () => {
    const store = memoryStore();
    await store.set(threadKey('stale'), { schemaVersion: 1, threadId: 'stale', createdAt: 0, updatedAt: 0, messages: 0, generation: 0, runs: 1, lastRunId: 'ghost', busy: { runId: 'ghost', since: 0 } });
    const helper = agent({ name: 'support' });
    await expect(run(helper, 'Hi', { adapter: support(), store, thread: 'stale' })).rejects.toBeInstanceOf(ThreadBusyError);
    await store.set(runMetaKey('ghost'), { schemaVersion: 1, runId: 'ghost', runnable: 'support', startedAt: 0, endedAt: 5, status: 'failed' });
    expect((await run(helper, 'Hi', { adapter: support(), store, thread: 'stale' })).output).toBe('(0 earlier) You asked: Hi');
  });

  it('keeps a 50-turn thread within the agent\'s context budget: every call sends at most maxTokens', async () => {
    const store = memoryStore();
    const sizes: number[] = [];
    const adapter = measuring(scriptedAdapter({ rules: [{ agent: 'support', reply: (r) => `Noted ${r.text.length} characters: ${'ok '.repeat(20)}` }] }), sizes);
    const maxTokens = 400;
    const helper = agent({ name: 'support', system: SYSTEM, context: { maxTokens } });
    const compactions: TroupeEvent<'context.compacted'>[] = [];
    let last = '';
    for (let turn = 1; turn <= 50; turn++) {
      const result = await run(helper, `Turn ${turn}: my order ${1000 + turn} has a question about ${'spokes '.repeat(8)}`, {
        adapter, store, thread: 'long', onEvent: (e) => void (e.type === 'context.compacted' && compactions.push(e)),
      });
      last = result.runId;
    }
    expect(sizes).toHaveLength(50);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(maxTokens);
    // Without the budget the last call would have sent the whole thread: far more.
    const thread = await readThread('long', { store });
    expect(thread!.messages).toHaveLength(100);
    const whole = thread!.messages.slice(0, 98).reduce((n, m) => n + estimateTokens(m.text), 0);
    expect(whole).toBeGreaterThan(4 * maxTokens);
    expect(compactions.length).toBeGreaterThan(30);
    expect(compactions.every((c) => c.after <= maxTokens && c.strategy === 'drop')).toBe(true);
    // The store keeps the whole thread; what is sent keeps the latest exchanges.
    const lastLog = await readRun(last, { store });
    const turn = lastLog.events.find((e) => e.type === 'model.turn') as TroupeEvent<'model.turn'>;
    expect(turn.spec.history!.at(-1)!.text).toBe(thread!.messages[97]!.text);
    expect(turn.spec.history![0]!.text).toMatch(/earlier exchanges? dropped to fit the context budget/);
  });

  it('compacts a long thread with the summariser when the agent has one', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'summariser', reply: 'Summary: the customer asked about orders.' },
        { agent: 'support', reply: (r) => `Answer ${r.turn}: ${'fine '.repeat(15)}` },
      ],
    });
    const helper = agent({ name: 'support', context: { maxTokens: 200, summarizer: agent({ name: 'summariser' }) } });
    for (let turn = 1; turn <= 12; turn++) await run(helper, `Question ${turn} ${'about spokes '.repeat(5)}`, { adapter, store, thread: 'sum' });
    const specs = adapter.calls.filter((c) => c.agent === 'support').map((c) => c.spec);
    expect(specs.at(-1)!.history![0]!.text).toContain('Summary: the customer asked about orders.');
    expect(adapter.calls.some((c) => c.agent === 'summariser')).toBe(true);
  });

  it('replays a thread run with zero model calls: the history it saw is in its log', async () => {
    const store = memoryStore();
    const adapter = support();
    const helper = agent({ name: 'support', system: SYSTEM });
    await run(helper, 'My name is Ada.', { adapter, store, thread: 'replay' });
    await run(helper, 'I ride a tandem.', { adapter, store, thread: 'replay' });
    const third = await run(helper, 'What do I ride?', { adapter, store, thread: 'replay' });
    const before = await readThread('replay', { store });
    const replay = await replayRun(helper, await readRun(third.runId, { store }));
    expect(replay.output).toBe(third.output);
    expect(replay.output).toBe('(4 earlier) You asked: What do I ride?');
    expect(replay.served).toBe(1);
    expect(adapter.calls).toHaveLength(3); // the replay called no model
    // The replay leaves the thread alone.
    expect(await readThread('replay', { store })).toEqual(before);
  });

  it('replays a compacted thread run exactly, under the same budget', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({ rules: [{ agent: 'support', reply: (r) => `Reply ${r.text.length} ${'words '.repeat(12)}` }] });
    const helper = agent({ name: 'support', context: { maxTokens: 250 } });
    let lastId = '';
    for (let turn = 1; turn <= 15; turn++) lastId = (await run(helper, `Message ${turn} ${'text '.repeat(10)}`, { adapter, store, thread: 'squeeze' })).runId;
    const calls = adapter.calls.length;
    const replay = await replayRun(helper, await readRun(lastId, { store }));
    expect(replay.served).toBeGreaterThan(0);
    expect(adapter.calls).toHaveLength(calls);
  });

  it('forks a thread run: the fork is given the history the run saw, and leaves the thread alone', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({
      rules: [{ agent: 'writer', reply: (r) => (r.text.includes('ITERATION 2') || r.text.includes('Iteration 2') ? `Final (${r.spec.history?.length ?? 0} earlier) [[REFLECTION_COMPLETE]]` : `Draft (${r.spec.history?.length ?? 0} earlier)`) }],
    });
    const loop = reflect(agent({ name: 'writer' }), { maxIterations: 3 });
    await run(loop, 'Write a haiku', { adapter, store, thread: 'poems' });
    const second = await run(loop, 'Another one', { adapter, store, thread: 'poems', runId: 'poem-2' });
    const before = await readThread('poems', { store });
    const log = await readRun('poem-2', { store });
    const fork = await forkRun('poem-2', { store, at: listCheckpoints(log)[0]!.id, forkId: 'poem-2-fork' });
    const forked = await resume(loop, fork.forkId, { adapter, store });
    expect(forked.output).toBe(second.output);
    const specs = adapter.calls.filter((c) => c.agent === 'writer').map((c) => c.spec.history?.length ?? 0);
    expect(specs.at(-1)).toBe(2);
    expect(await readThread('poems', { store })).toEqual(before);
    // The fork's own log holds the history it was given, so it replays with no model call too.
    const calls = adapter.calls.length;
    const replay = await replayRun(loop, await readRun(fork.forkId, { store }));
    expect(replay.output).toBe(forked.output);
    expect(adapter.calls).toHaveLength(calls);
  });

  it('resumes a thread run with the history it started with, and adds its exchange once', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const helper = agent({ name: 'support' });
    await run(helper, 'Before', { adapter: support(), store, thread: 'res', clock });
    const slow = scriptedAdapter({ clock, latencyMs: 1000, rules: [{ agent: 'support', reply: (r) => `(${r.spec.history?.length ?? 0} earlier) You asked: ${r.text}` }] });
    const handle = startRun(helper, 'Interrupted', { adapter: slow, store, thread: 'res', clock, runId: 'res-2' });
    await clock.advance(10);
    handle.cancel();
    await expect(handle.result).rejects.toThrow();
    const resumed = resume(helper, 'res-2', { adapter: slow, store, clock });
    await clock.advance(1000);
    expect((await resumed).output).toBe('(2 earlier) You asked: Interrupted');
    expect((await readThread('res', { store }))!.messages.map((m) => m.text)).toEqual(['Before', '(0 earlier) You asked: Before', 'Interrupted', '(2 earlier) You asked: Interrupted']);
  });
});

describe('threads in a store', () => {
  it('lists, reads, truncates and deletes threads', async () => {
    let now = 1000;
    const clock = { now: () => now, setTimer: new SimulatedClock().setTimer };
    const store = memoryStore();
    const helper = agent({ name: 'support' });
    for (const text of ['a1', 'a2', 'a3']) await run(helper, text, { adapter: support(), store, thread: 'a', clock: new SimulatedClock(now++) });
    await run(helper, 'b1', { adapter: support(), store, thread: 'b', clock: new SimulatedClock(now++) });
    expect((await listThreads({ store })).map((t) => [t.threadId, t.messages, t.runs])).toEqual([
      ['b', 2, 1],
      ['a', 6, 3],
    ]);
    expect(await readThread('none', { store })).toBeUndefined();

    expect(await truncateThread('a', { store, keep: 2, clock })).toBe(4);
    expect(await truncateThread('a', { store, keep: 5 })).toBe(0);
    expect((await readThread('a', { store }))!.messages.map((m) => m.text)).toEqual(['a1', '(0 earlier) You asked: a1']);
    const next = await run(helper, 'a4', { adapter: support(), store, thread: 'a' });
    expect(next.output).toBe('(2 earlier) You asked: a4');
    expect((await readThread('a', { store }))!.messages.map((m) => m.text)).toEqual(['a1', '(0 earlier) You asked: a1', 'a4', next.output]);
    // The truncated generation's stream is gone: nothing of it is read again.
    expect((await store.read('threads/a/messages-0')).records).toEqual([]);

    expect(await deleteThread('a', { store })).toBe(true);
    expect(await deleteThread('a', { store })).toBe(false);
    expect(await readThread('a', { store })).toBeUndefined();
    expect((await listThreads({ store })).map((t) => t.threadId)).toEqual(['b']);
    expect((await store.list('threads/a')).length).toBe(0);
    expect((await run(helper, 'fresh', { adapter: support(), store, thread: 'a' })).output).toBe('(0 earlier) You asked: fresh');
  });

  it('refuses to truncate or delete a thread a run holds, unless forced', async () => {
    const clock = new SimulatedClock();
    const store = memoryStore();
    const adapter = scriptedAdapter({ clock, latencyMs: 1000, fallback: 'ok' });
    const helper = agent({ name: 'support' });
    await run(helper, 'one', { adapter: support(), store, thread: 'held' });
    const running = startRun(helper, 'two', { adapter, store, thread: 'held', clock });
    await clock.advance(10);
    await expect(truncateThread('held', { store, keep: 0 })).rejects.toBeInstanceOf(ThreadBusyError);
    await expect(deleteThread('held', { store })).rejects.toMatchObject({ code: 'thread_busy' });
    expect(await deleteThread('held', { store, force: true })).toBe(true);
    const warnings: TroupeEvent[] = [];
    running.emitter.on('warning', (w) => warnings.push(w));
    await clock.advance(1000);
    await running.result;
    expect(warnings.map((w) => (w as TroupeEvent<'warning'>).code)).toContain('thread_save_failed');
    expect(await readThread('held', { store })).toBeUndefined();
  });

  it('checks its arguments', async () => {
    const store = memoryStore();
    await expect(readThread('a/b', { store })).rejects.toThrow(/thread id/);
    await expect(truncateThread('a', { store, keep: -1 })).rejects.toThrow(/keep/);
    await expect(listThreads({ store, limit: 3 } as never)).rejects.toThrow(/Unknown option `limit`/);
  });

  it('keeps each tenant\'s threads apart (namespacedStore, as troupe/http does)', async () => {
    const shared = memoryStore();
    const acme = namespacedStore(shared, 'acme');
    const globex = namespacedStore(shared, 'globex');
    const helper = agent({ name: 'support' });
    await run(helper, 'acme secret', { adapter: support(), store: acme, thread: 'same-id' });
    const other = await run(helper, 'globex question', { adapter: support(), store: globex, thread: 'same-id' });
    expect(other.output).toBe('(0 earlier) You asked: globex question');
    expect((await readThread('same-id', { store: acme }))!.messages[0]!.text).toBe('acme secret');
    expect((await listThreads({ store: globex })).map((t) => t.messages)).toEqual([2]);
    expect(await shared.get('tenants/acme/threads/same-id/thread')).toBeDefined();
  });
});

/** An adapter that records, for each call, what a chat API would be sent: system, history, earlier turns of the session and the input. */
function measuring(inner: ModelAdapter, sizes: number[]): ModelAdapter {
  return {
    id: inner.id,
    capabilities: inner.capabilities,
    async openSession(spec, options) {
      const session = await inner.openSession(spec, options);
      let context = estimateTokens(spec.system ?? '') + (spec.history ?? []).reduce((n, m) => n + estimateTokens(m.text), 0);
      return {
        id: session.id,
        async send(input, sendOptions) {
          const sent = context + estimateTokens(inputText(input));
          sizes.push(sent);
          const turn = await session.send(input, sendOptions);
          context = sent + estimateTokens(turn.text);
          return turn;
        },
        close: () => session.close(),
      };
    },
  };
}

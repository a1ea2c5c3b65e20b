// Working memory: a small structured memory an agent keeps per thread or per
// resource, given to it in its system prompt, changed through its
// `update_<name>` tool with compare-and-set. On Redis:
// test/integrations/redis/working-memory.test.ts.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter, type ScriptedRequest } from '../../src/adapters/scripted.js';
import { isTroupeError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { applyJsonPatch } from '../../src/patterns/json-patch.js';
import { WorkingMemoryError, readWorkingMemory, updateWorkingMemory, workingMemory } from '../../src/patterns/working-memory.js';
import { readRun } from '../../src/persistence/run-log.js';
import { deleteThread } from '../../src/persistence/threads.js';
import { replayRun } from '../../src/travel/what-if.js';

const customerSchema = z.object({
  name: z.string().optional(),
  bike: z.string().optional(),
  notes: z.array(z.string()).default([]),
});
const customer = () => workingMemory({ name: 'customer', scope: 'resource', schema: customerSchema });

/** The memory section of a session's system prompt. */
const memoryIn = (req: ScriptedRequest) => req.spec.system?.slice(req.spec.system.indexOf('## Working memory')) ?? '';

describe('working memory', () => {
  it('is given to the agent in its system prompt and changed through its tool; the next run sees the change', async () => {
    const store = memoryStore();
    const memory = customer();
    const adapter = scriptedAdapter({
      rules: [
        {
          agent: 'support',
          reply: (r) => {
            if (r.turn === 1 && r.text.includes('My name is Ada')) return { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'add', path: '/name', value: 'Ada' }] } }] };
            if (r.turn === 1) return `Hello again${memoryIn(r).includes('"name": "Ada"') ? ', Ada' : ''}.`;
            return 'Noted.';
          },
        },
      ],
    });
    const support = agent({ name: 'support', system: 'You help customers.', memory });
    const events: TroupeEvent[] = [];
    const first = await run(support, 'My name is Ada.', { adapter, store, resource: 'customer-42', onEvent: (e) => events.push(e) });
    expect(first.output).toBe('Noted.');
    expect(adapter.calls[0]!.spec.system).toContain('You help customers.\n\n## Working memory: customer\n');
    expect(adapter.calls[0]!.spec.system).toContain('"notes": []');
    expect(adapter.calls[0]!.spec.tools!.map((t) => t.name)).toEqual(['update_customer']);
    // The tool's answer gives the model the new value.
    expect(adapter.calls[1]!.text).toContain('Working memory "customer" updated (revision 1)');
    expect(events.find((e) => e.type === 'memory.loaded')).toMatchObject({ memory: 'customer', scope: 'resource', id: 'customer-42', agent: 'support', revision: 0, value: { notes: [] } });
    expect(events.find((e) => e.type === 'memory.updated')).toMatchObject({ memory: 'customer', revision: 1, value: { name: 'Ada', notes: [] }, op: 'patch' });
    expect((await readRun(first.runId, { store })).events.some((e) => e.type === 'memory.updated')).toBe(true);

    // Another run on the same resource (no thread at all) starts with what the first wrote.
    const second = await run(support, 'Hi!', { adapter, store, resource: 'customer-42' });
    expect(second.output).toBe('Hello again, Ada.');
    expect(await readWorkingMemory(memory, { store, resource: 'customer-42' })).toMatchObject({ value: { name: 'Ada', notes: [] }, revision: 1, updatedBy: first.runId });
    // Another resource has its own.
    expect(await readWorkingMemory(memory, { store, resource: 'customer-7' })).toEqual({ value: { notes: [] }, revision: 0 });
  });

  it('takes a whole new value, and refuses one that does not fit the schema (the model gets the error, nothing is written)', async () => {
    const store = memoryStore();
    const memory = customer();
    const adapter = scriptedAdapter({
      replies: {
        support: [
          { toolCalls: [{ name: 'update_customer', arguments: { replace: { name: 'Ada', bike: 'tandem', notes: ['likes blue'] } } }] },
          { toolCalls: [{ name: 'update_customer', arguments: { replace: { name: 42 } } }] },
          { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'remove', path: '/nothing' }] } }] },
          { toolCalls: [{ name: 'update_customer', arguments: {} }] },
          'Done.',
        ],
      },
    });
    const support = agent({ name: 'support', memory });
    await run(support, 'Remember me.', { adapter, store, resource: 'r1' });
    const [, second, third, fourth, fifth] = adapter.calls.map((c) => c.text);
    expect(second).toContain('updated (revision 1)');
    expect(third).toMatch(/tool error.*does not fit its schema: \/name/);
    expect(fourth).toMatch(/tool error.*does not apply: Nothing at "\/nothing" to remove/);
    expect(fifth).toMatch(/tool error.*Give either `patch` or `replace`/);
    expect(await readWorkingMemory(memory, { store, resource: 'r1' })).toMatchObject({ value: { name: 'Ada', bike: 'tandem', notes: ['likes blue'] }, revision: 1 });
  });

  it('kept per thread: each thread has its own, and deleting the thread deletes it', async () => {
    const store = memoryStore();
    const memory = workingMemory({ schema: z.object({ topic: z.string().optional() }) });
    expect(memory).toMatchObject({ name: 'memory', scope: 'thread' });
    const adapter = scriptedAdapter({
      rules: [{ agent: 'support', reply: (r) => (r.turn === 1 ? { toolCalls: [{ name: 'update_memory', arguments: { replace: { topic: r.text } } }] } : 'ok') }],
    });
    const support = agent({ name: 'support', memory });
    await run(support, 'brakes', { adapter, store, thread: 't1' });
    await run(support, 'gears', { adapter, store, thread: 't2' });
    expect((await readWorkingMemory(memory, { store, thread: 't1' })).value).toEqual({ topic: 'brakes' });
    expect((await readWorkingMemory(memory, { store, thread: 't2' })).value).toEqual({ topic: 'gears' });
    await deleteThread('t1', { store });
    expect(await readWorkingMemory(memory, { store, thread: 't1' })).toEqual({ value: {}, revision: 0 });
  });

  it('loses no update under 24 concurrent writers: runs that each add a note at once', async () => {
    const store = memoryStore();
    const memory = customer();
    const adapter = scriptedAdapter({
      rules: [{ agent: 'support', reply: (r) => (r.turn === 1 ? { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'add', path: '/notes/-', value: r.text }] } }] } : 'ok') }],
    });
    const support = agent({ name: 'support', memory });
    const events: TroupeEvent<'memory.updated'>[] = [];
    await Promise.all(
      Array.from({ length: 24 }, (_, i) => run(support, `note ${i}`, { adapter, store, resource: 'shared', thread: `t${i}`, onEvent: (e) => void (e.type === 'memory.updated' && events.push(e)) })),
    );
    const { value, revision } = await readWorkingMemory(memory, { store, resource: 'shared' });
    expect(revision).toBe(24);
    expect([...value!.notes].sort()).toEqual(Array.from({ length: 24 }, (_, i) => `note ${i}`).sort());
    expect(events.map((e) => e.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
  });

  it('loses no update under 24 concurrent updateWorkingMemory calls', async () => {
    const store = memoryStore();
    const memory = customer();
    await Promise.all(Array.from({ length: 24 }, (_, i) => updateWorkingMemory(memory, { patch: [{ op: 'add', path: '/notes/-', value: `w${i}` }] }, { store, resource: 'r' })));
    const { value, revision } = await readWorkingMemory(memory, { store, resource: 'r' });
    expect(revision).toBe(24);
    expect(value!.notes).toHaveLength(24);
    expect(new Set(value!.notes).size).toBe(24);
  });

  it('replays a run that read and changed its memory with zero model calls, as it was', async () => {
    const store = memoryStore();
    const memory = customer();
    const adapter = scriptedAdapter({
      rules: [{ agent: 'support', reply: (r) => (r.turn === 1 ? { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'add', path: '/notes/-', value: r.text }] } }] } : `Notes: ${r.text.split('\n').length}`) }],
    });
    const support = agent({ name: 'support', memory });
    await run(support, 'first', { adapter, store, resource: 'r' });
    const second = await run(support, 'second', { adapter, store, resource: 'r' });
    // The memory changes afterwards: the replay still sees what the recorded run saw.
    await updateWorkingMemory(memory, { replace: { notes: ['changed since'] } }, { store, resource: 'r' });
    const calls = adapter.calls.length;
    const replay = await replayRun(support, await readRun(second.runId, { store }));
    expect(replay.output).toBe(second.output);
    expect(replay.served).toBe(2);
    expect(adapter.calls).toHaveLength(calls);
    expect((await readWorkingMemory(memory, { store, resource: 'r' })).value).toEqual({ notes: ['changed since'] });
  });

  it('needs a store, and the thread or resource of its scope', async () => {
    const adapter = scriptedAdapter({ fallback: 'ok' });
    const support = agent({ name: 'support', memory: customer() });
    await expect(run(support, 'x', { adapter, resource: 'r' })).rejects.toThrow(/lives in the run's store/);
    await expect(run(support, 'x', { adapter, store: memoryStore() })).rejects.toThrow(/kept per resource; say which \(`run\(\.\.\., \{ store, resource \}\)`\)/);
    const perThread = agent({ name: 'support', memory: workingMemory({ schema: z.object({}) }) });
    await expect(run(perThread, 'x', { adapter, store: memoryStore() })).rejects.toThrow(/kept per thread/);
    expect(() => workingMemory({ schema: customerSchema, name: 'Bad Name' })).toThrow(/name/);
    expect(() => workingMemory({ schema: customerSchema, initial: { notes: 'x' } as never })).toThrow(/initial value/);
    expect(() => agent({ name: 'a', memory: [customer(), customer()] })).toThrow(/twice/);
    expect(() => run(support, 'x', { adapter, store: memoryStore(), resource: 'a/b' })).toThrow(/resource/);
    const refused = await updateWorkingMemory(customer(), { replace: { notes: 3 } }, { store: memoryStore(), resource: 'r' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkingMemoryError);
    expect(isTroupeError(refused, 'invalid_memory')).toBe(true);
  });
});

describe('applyJsonPatch', () => {
  it('adds, replaces and removes at JSON pointers, on a copy', () => {
    const value = { a: { list: [1, 2] }, 'x/y': 1, 't~': 2 };
    const patched = applyJsonPatch(value, [
      { op: 'add', path: '/a/list/-', value: 3 },
      { op: 'add', path: '/a/list/0', value: 0 },
      { op: 'replace', path: '/x~1y', value: 5 },
      { op: 'remove', path: '/t~0' },
      { op: 'add', path: '/b', value: { c: true } },
      { op: 'remove', path: '/a/list/1' },
    ]);
    expect(patched).toEqual({ a: { list: [0, 2, 3] }, 'x/y': 5, b: { c: true } });
    expect(value).toEqual({ a: { list: [1, 2] }, 'x/y': 1, 't~': 2 });
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }])).toEqual([1]);
  });

  it('refuses paths that lead nowhere', () => {
    expect(() => applyJsonPatch({}, [{ op: 'replace', path: '/a', value: 1 }])).toThrow(/Nothing at "\/a"/);
    expect(() => applyJsonPatch({ l: [] }, [{ op: 'add', path: '/l/5', value: 1 }])).toThrow(/past the end/);
    expect(() => applyJsonPatch({ l: [] }, [{ op: 'add', path: '/l/01', value: 1 }])).toThrow(/not a list index/);
    expect(() => applyJsonPatch({}, [{ op: 'add', path: 'a', value: 1 }])).toThrow(/not a JSON pointer/);
    expect(() => applyJsonPatch({}, [{ op: 'add', path: '/a' }])).toThrow(/has no value/);
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }])).toThrow(/not an object or a list/);
    expect(() => applyJsonPatch({}, [{ op: 'remove', path: '' }])).toThrow(/whole value/);
  });
});

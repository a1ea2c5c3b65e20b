// Working memory on real Redis: 24 writers, each on a connection of its own,
// add to one memory at once and no update is lost; threads continue on it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { run } from '../../../src/core/run.js';
import { redisStore } from '../../../src/integrations/redis/store.js';
import { agent } from '../../../src/patterns/agent.js';
import { readWorkingMemory, updateWorkingMemory, workingMemory } from '../../../src/patterns/working-memory.js';
import { closedAfterEach, redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefix = testPrefixes(url);
const closeLater = closedAfterEach();

const memory = workingMemory({ name: 'customer', scope: 'resource', schema: z.object({ notes: z.array(z.string()).default([]) }) });

describe.skipIf(!url)('working memory on Redis', () => {
  it('loses no update under 24 concurrent runs, each on its own connection, that add a note at once', async () => {
    const p = prefix();
    const adapter = scriptedAdapter({
      rules: [{ agent: 'support', reply: (r) => (r.turn === 1 ? { toolCalls: [{ name: 'update_customer', arguments: { patch: [{ op: 'add', path: '/notes/-', value: r.text }] } }] } : 'ok') }],
    });
    const support = agent({ name: 'support', memory });
    await Promise.all(
      Array.from({ length: 24 }, (_, i) => run(support, `note ${i}`, { adapter, store: closeLater(redisStore({ connection: url!, prefix: p })), resource: 'customer-42', thread: `chat-${i}` })),
    );
    const { value, revision } = await readWorkingMemory(memory, { store: closeLater(redisStore({ connection: url!, prefix: p })), resource: 'customer-42' });
    expect(revision).toBe(24);
    expect([...value!.notes].sort()).toEqual(Array.from({ length: 24 }, (_, i) => `note ${i}`).sort());
  });

  it('loses no update under 24 concurrent updateWorkingMemory calls on 24 connections', async () => {
    const p = prefix();
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        updateWorkingMemory(memory, { patch: [{ op: 'add', path: '/notes/-', value: `w${i}` }] }, { store: closeLater(redisStore({ connection: url!, prefix: p })), resource: 'r' }),
      ),
    );
    const { value, revision } = await readWorkingMemory(memory, { store: closeLater(redisStore({ connection: url!, prefix: p })), resource: 'r' });
    expect(revision).toBe(24);
    expect(new Set(value!.notes).size).toBe(24);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/core/clock.js';
import { StoreError } from '../../src/core/errors.js';
import { checkpointKey, loadCheckpoint, saveCheckpoint } from '../../src/core/checkpoint.js';
import { memoryStore } from '../../src/core/memory-store.js';

const planState = z.object({ schemaVersion: z.literal(1), done: z.array(z.string()), retries: z.number().default(0) });

describe('checkpoints', () => {
  it('saves a versioned document and loads it validated, with schema defaults', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock(5_000);
    const saved = await saveCheckpoint(store, 'r1', 'plan', { schemaVersion: 1, done: ['a'] }, { clock });
    expect(await store.get(checkpointKey('r1'))).toEqual({ schemaVersion: 1, kind: 'plan', runId: 'r1', savedAt: 5_000, state: { schemaVersion: 1, done: ['a'] } });
    expect(saved.savedAt).toBe(5_000);
    const loaded = await loadCheckpoint(store, 'r1', planState, { kind: 'plan' });
    expect(loaded?.state).toEqual({ schemaVersion: 1, done: ['a'], retries: 0 });
    expect(await loadCheckpoint(store, 'none', planState)).toBeUndefined();
  });

  it('replaces the previous checkpoint of the run', async () => {
    const store = memoryStore();
    await saveCheckpoint(store, 'r', 'plan', { schemaVersion: 1, done: ['a'] });
    await saveCheckpoint(store, 'r', 'plan', { schemaVersion: 1, done: ['a', 'b'] });
    expect((await loadCheckpoint(store, 'r', planState))?.state.done).toEqual(['a', 'b']);
  });

  it('fails with a clear StoreError when the state does not match its schema', async () => {
    const store = memoryStore();
    await saveCheckpoint(store, 'r', 'plan', { schemaVersion: 2, done: 'a' });
    const error = await loadCheckpoint(store, 'r', planState).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/Checkpoint "runs\/r\/checkpoint" \(plan\) holds a state that does not match its schema/);
    expect((error as Error).message).toMatch(/schemaVersion/);
    expect((error as StoreError).details.issues).toBeDefined();
  });

  it('fails on a document that is not a checkpoint, of another kind, or of another run', async () => {
    const store = memoryStore();
    await store.set(checkpointKey('x'), { schemaVersion: 9, state: {} });
    await expect(loadCheckpoint(store, 'x', planState)).rejects.toThrow(/is not a checkpoint document/);
    await saveCheckpoint(store, 'y', 'team', { schemaVersion: 1, done: [] });
    await expect(loadCheckpoint(store, 'y', planState, { kind: 'plan' })).rejects.toThrow(/saved by "team", expected "plan"/);
    await store.set(checkpointKey('z'), { schemaVersion: 1, kind: 'plan', runId: 'other', savedAt: 0, state: {} });
    await expect(loadCheckpoint(store, 'z', planState)).rejects.toThrow(/belongs to run "other"/);
    await expect(saveCheckpoint(store, '', 'plan', {})).rejects.toThrow(/Expected `runId`/);
  });

  it('honours its signal', async () => {
    const store = memoryStore();
    await expect(saveCheckpoint(store, 'r', 'plan', {}, { signal: AbortSignal.abort() })).rejects.toBeTruthy();
    expect(await store.list('')).toEqual([]);
  });
});

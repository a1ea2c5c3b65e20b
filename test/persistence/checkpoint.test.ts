import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/core/clock.js';
import { RunContext } from '../../src/core/context.js';
import { StoreError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { checkpointKey, checkpointStream, type CheckpointSpec } from '../../src/core/checkpoint.js';
import { createOp } from '../../src/core/ops.js';
import type { Store } from '../../src/core/store.js';
import { memoryStore } from '../../src/core/memory-store.js';

const counterState = z.object({ schemaVersion: z.literal(1), count: z.number().int(), retries: z.number().default(0) });
type Counter = z.output<typeof counterState>;
const spec: CheckpointSpec<Counter, { n: number }> = { kind: 'counter', version: 1, state: counterState, entry: z.object({ n: z.number() }) };

/** The op context of a pattern named `counter` in run `runId` (path `/counter:counter#0`), with its events. */
function patternContext(options: { store?: Store; runId?: string; resuming?: boolean; clock?: SimulatedClock } = {}) {
  const events: TroupeEvent[] = [];
  const clock = options.clock ?? new SimulatedClock(5_000);
  const root = RunContext.create({
    runId: options.runId ?? 'r1',
    clock,
    signal: new AbortController().signal,
    root: createOp('op-0', 'run', 'test', 0),
    ...(options.store ? { store: options.store } : {}),
    ...(options.resuming ? { resuming: true } : {}),
  });
  root.emitter.on('*', (e) => void events.push(e));
  let ctx!: RunContext;
  void root.enter({ kind: 'counter', name: 'counter' }, async (c) => {
    ctx = c;
    return { output: '', agent: 'x', status: 'completed' };
  });
  return { ctx, events };
}

describe('the checkpoint facility (ctx.checkpoint)', () => {
  it('saves the state under the pattern path, stamped, and restores it validated in a resumed run only', async () => {
    const store = memoryStore();
    const { ctx, events } = patternContext({ store });
    const checkpoint = ctx.checkpoint(spec);
    expect(checkpoint.key).toBe('runs/r1/checkpoints/counter:counter#0');
    expect(await checkpoint.restore()).toBeUndefined(); // not a resumed run
    await checkpoint.save({ schemaVersion: 1, count: 2, retries: 0 });
    expect(await store.get(checkpointKey('r1', '/counter:counter#0'))).toEqual({
      schemaVersion: 1, kind: 'counter', runId: 'r1', savedAt: 5_000, state: { schemaVersion: 1, count: 2, retries: 0 }, path: '/counter:counter#0',
    });
    expect(events.find((e) => e.type === 'checkpoint.saved')).toMatchObject({ kind: 'counter', name: 'counter', path: '/counter:counter#0', finished: false });

    await store.set(checkpointKey('r1', '/counter:counter#0'), { schemaVersion: 1, kind: 'counter', runId: 'r1', savedAt: 1, state: { schemaVersion: 1, count: 3 }, path: '/counter:counter#0' });
    const resumed = patternContext({ store, resuming: true });
    const restored = await resumed.ctx.checkpoint(spec).restore();
    expect(restored).toEqual({ state: { schemaVersion: 1, count: 3, retries: 0 }, entries: [] }); // schema defaults applied
    expect(resumed.events.find((e) => e.type === 'checkpoint.restored')).toMatchObject({ kind: 'counter', completed: false });
  });

  it('saves the outcome of a finished pattern, without usage, and returns it when resumed; not for statuses that mean "not done"', async () => {
    const store = memoryStore();
    const { ctx } = patternContext({ store });
    const state: Counter = { schemaVersion: 1, count: 1, retries: 0 };
    await ctx.checkpoint(spec).finish(state, { output: 'x', agent: 'a', status: 'cancelled' });
    expect(await store.get(checkpointKey('r1', '/counter:counter#0'))).toBeUndefined();
    await ctx.checkpoint(spec).finish(state, { output: '1', agent: 'a', status: 'completed', usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0, costUsd: 0, turns: 1 } });
    const restored = await patternContext({ store, resuming: true }).ctx.checkpoint(spec).restore();
    expect(restored?.outcome).toEqual({ output: '1', agent: 'a', status: 'completed' });
  });

  it('appends entries in order and restores those after the last save; a save after a restore folds them', async () => {
    const store = memoryStore();
    const first = patternContext({ store }).ctx.checkpoint(spec);
    await first.save({ schemaVersion: 1, count: 0, retries: 0 });
    for (let n = 1; n <= 3; n++) first.append({ n });
    expect(first.idle).toBe(false);
    await first.flush();
    expect(first.idle).toBe(true);
    expect((await store.read(checkpointStream('r1', '/counter:counter#0'))).records).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);

    // Another process appends while nobody runs the pattern.
    await store.append(checkpointStream('r1', '/counter:counter#0'), { n: 4 });
    const second = patternContext({ store, resuming: true }).ctx.checkpoint(spec);
    const restored = await second.restore();
    expect(restored?.entries).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    await second.save({ schemaVersion: 1, count: 10, retries: 0 }); // the state with the entries folded in
    second.append({ n: 5 });
    await second.flush();
    const third = await patternContext({ store, resuming: true }).ctx.checkpoint(spec).restore();
    expect(third).toEqual({ state: { schemaVersion: 1, count: 10, retries: 0 }, entries: [{ n: 5 }] });
  });

  it('restores entries written with no saved state (the state is then missing)', async () => {
    const store = memoryStore();
    await store.append(checkpointStream('r1', '/counter:counter#0'), { n: 7 });
    expect(await patternContext({ store, resuming: true }).ctx.checkpoint(spec).restore()).toEqual({ entries: [{ n: 7 }] });
  });

  it('fails with a versioned StoreError on a document or a state of another schema version', async () => {
    const store = memoryStore();
    const key = checkpointKey('r1', '/counter:counter#0');
    const load = () => patternContext({ store, resuming: true }).ctx.checkpoint(spec).restore();
    await store.set(key, { schemaVersion: 2, kind: 'counter', runId: 'r1', savedAt: 0, state: {}, path: '/counter:counter#0' });
    const doc = await load().catch((e: unknown) => e);
    expect(doc).toBeInstanceOf(StoreError);
    expect(doc).toMatchObject({ code: 'checkpoint_version', details: { schemaVersion: 2, expected: 1 } });
    expect((doc as Error).message).toBe('Checkpoint "runs/r1/checkpoints/counter:counter#0" is a document of schema version 2; this version of troupe reads version 1');
    await store.set(key, { schemaVersion: 1, kind: 'counter', runId: 'r1', savedAt: 0, state: { schemaVersion: 3, count: 1 }, path: '/counter:counter#0' });
    const state = await load().catch((e: unknown) => e);
    expect(state).toMatchObject({ code: 'checkpoint_version', details: { kind: 'counter', schemaVersion: 3, expected: 1 } });
    expect((state as Error).message).toMatch(/holds a counter state of schema version 3; this version of troupe reads version 1/);
  });

  it('fails with a StoreError naming the problem on a state, an entry, a kind or a run that does not match', async () => {
    const store = memoryStore();
    const key = checkpointKey('r1', '/counter:counter#0');
    const load = () => patternContext({ store, resuming: true }).ctx.checkpoint(spec).restore();
    await store.set(key, { schemaVersion: 1, kind: 'counter', runId: 'r1', savedAt: 0, state: { schemaVersion: 1, count: 'many' } });
    const error = await load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/\(counter\) holds a state that does not match its schema/);
    expect((error as StoreError).details.issues).toBeDefined();
    await store.set(key, { kind: 'counter' });
    await expect(load()).rejects.toThrow(/is not a checkpoint document/);
    await store.set(key, { schemaVersion: 1, kind: 'team', runId: 'r1', savedAt: 0, state: {} });
    await expect(load()).rejects.toThrow(/saved by "team", expected "counter"/);
    await store.set(key, { schemaVersion: 1, kind: 'counter', runId: 'other', savedAt: 0, state: {} });
    await expect(load()).rejects.toThrow(/belongs to run "other"/);
    await store.delete(key);
    await store.append(checkpointStream('r1', '/counter:counter#0'), { n: 'x' });
    await expect(load()).rejects.toThrow(/Entry 0 of checkpoint stream "runs\/r1\/checkpoint-entries\/counter:counter#0" \(counter\) does not match its schema/);
  });

  it('turns a store that fails into one warning per failed save and one for all appends; the pattern goes on', async () => {
    const store = memoryStore();
    const failing: Store = { ...store, set: () => Promise.reject(new Error('disk full')), append: () => Promise.reject(new Error('disk full')) };
    const { ctx, events } = patternContext({ store: failing });
    const checkpoint = ctx.checkpoint(spec);
    await checkpoint.save({ schemaVersion: 1, count: 1, retries: 0 });
    for (let n = 0; n < 5; n++) checkpoint.append({ n });
    await checkpoint.flush();
    const warnings = events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => (w as TroupeEvent<'warning'>).code)).toEqual(['checkpoint_failed', 'checkpoint_failed']);
    expect((warnings[0] as TroupeEvent<'warning'>).message).toMatch(/could not be saved: disk full/);
    expect((warnings[1] as TroupeEvent<'warning'>).message).toMatch(/could not be appended to: disk full/);
    expect(events.some((e) => e.type === 'checkpoint.saved')).toBe(false);
  });

  it('does nothing without a store', async () => {
    const { ctx } = patternContext();
    const checkpoint = ctx.checkpoint(spec);
    expect(checkpoint.enabled).toBe(false);
    await checkpoint.save({ schemaVersion: 1, count: 1, retries: 0 });
    checkpoint.append({ n: 1 });
    await checkpoint.flush();
    expect(await checkpoint.restore()).toBeUndefined();
  });
});

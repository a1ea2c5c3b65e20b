import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { scriptedAdapter, type ScriptedAdapterOptions } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { ConfigurationError, StoreError } from '../../src/core/errors.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { defineRunnable } from '../../src/core/runnable.js';
import { agent } from '../../src/patterns/agent.js';
import { handoff } from '../../src/patterns/handoff.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { reflect, reflectStateSchema } from '../../src/patterns/reflect.js';
import { team } from '../../src/patterns/team.js';
import { teamStateSchema } from '../../src/patterns/team-state.js';
import { orchestrateStateSchema } from '../../src/patterns/orchestrate-state.js';
import { planExecutionStateSchema } from '../../src/plan/engine/state.js';
import { CHECKPOINT_SCHEMA_VERSION, checkpointKey, parseCheckpoint } from '../../src/core/checkpoint.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { resume } from '../../src/core/resume.js';
import type { Store } from '../../src/core/store.js';
import { readRun } from '../../src/persistence/run-log.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('troupe-resume-');

/** Aborts the run once `kind` saved its checkpoint `saves` times (after iteration or round `saves`). */
function killAfter(kind: string, saves: number) {
  const controller = new AbortController();
  let seen = 0;
  const onEvent = (e: TroupeEvent) => void (e.type === 'checkpoint.saved' && e.kind === kind && !e.finished && ++seen === saves && controller.abort());
  return { signal: controller.signal, onEvent };
}

function writerLoop() {
  return reflect(agent({ name: 'writer' }), { goal: 'A haiku about autumn', maxIterations: 4, evaluator: agent({ name: 'critic' }) });
}

const collect = () => {
  const events: TroupeEvent[] = [];
  return { events, onEvent: (e: TroupeEvent) => void events.push(e) };
};
const iterationsOf = (events: TroupeEvent[]) =>
  events.flatMap((e) => (e.type === 'reflect.iteration.started' ? [e.iteration] : []));

describe('automatic checkpoints and resume', () => {
  it('resumes a reflect loop killed after iteration 2 of 4 at iteration 3, with its evaluation history', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    const kill = killAfter('reflect', 2);
    const first = await run(writerLoop(), 'Write', {
      store, clock, runId: 'r1', signal: kill.signal, onEvent: kill.onEvent,
      adapter: scriptedAdapter({ replies: { writer: ['Draft 1', 'Draft 2'], critic: ['FAIL: no season', 'FAIL: too long'] } }),
    });
    expect(first).toMatchObject({ status: 'cancelled', iterations: 2 });

    const adapter = scriptedAdapter({ replies: { writer: ['Draft 3', 'Leaves fall'], critic: ['FAIL: almost', 'PASS'] } });
    const { events, onEvent } = collect();
    const resumed = await resume(writerLoop(), 'r1', { store, clock, adapter, onEvent });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 4, output: 'Leaves fall', runId: 'r1' });
    expect(iterationsOf(events)).toEqual([3, 4]);
    expect(adapter.calls.map((c) => c.agent)).toEqual(['writer', 'critic', 'writer', 'critic']);
    const inputs = adapter.inputsOf('writer');
    expect(inputs[0]).toContain('## ITERATION 3/4');
    expect(inputs[0]).toContain('## YOUR PREVIOUS ANSWER\nDraft 2');
    expect(inputs[0]).toContain('## LAST EVALUATION\ntoo long');
    expect(resumed.evaluations.map((e) => [e.iteration, e.rationale])).toEqual([[1, 'no season'], [2, 'too long'], [3, 'almost'], [4, 'PASS']]);
    expect(events.find((e) => e.type === 'checkpoint.restored')).toMatchObject({ kind: 'reflect', completed: false, path: '/reflect:reflect:writer#0' });
    // The log of the run goes on: two run.started, the second marked resumed.
    const log = await readRun('r1', { store });
    expect(log.events.filter((e) => e.type === 'run.started').map((e) => (e as TroupeEvent<'run.started'>).resumed)).toEqual([undefined, true]);
    expect(log.meta).toMatchObject({ status: 'completed' });
  });

  it('carries the stall state of a reflect loop over a resume', async () => {
    const store = memoryStore();
    const kill = killAfter('reflect', 2);
    const loop = () => reflect(agent({ name: 'writer' }), { maxIterations: 4 });
    await run(loop(), 'go', { store, runId: 'st', signal: kill.signal, onEvent: kill.onEvent, adapter: scriptedAdapter({ rules: [{ agent: 'writer', reply: 'Same poem.' }] }) });
    const adapter = scriptedAdapter({ rules: [{ agent: 'writer', reply: 'Same poem.' }] });
    const resumed = await resume(loop(), 'st', { store, adapter });
    // Two repeats before the kill, one after: a stall at iteration 3, not 5.
    expect(resumed).toMatchObject({ status: 'completed', reason: 'stalled', iterations: 3 });
    expect(adapter.calls).toHaveLength(1);
  });

  it('resumes an orchestrate loop killed after iteration 2 of 4 at iteration 3', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    const PLAN = '@worker:coder\nWrite the form.\n@end';
    const script = (judge: string[]): ScriptedAdapterOptions => ({
      clock,
      replies: { judge },
      rules: [
        { agent: 'lead', reply: (r) => (r.text.includes('## WORKER RESULTS') ? `Synthesis ${r.turn}` : PLAN) },
        { agent: 'coder', reply: (r) => `code ${r.turn}` },
      ],
    });
    const loop = () => orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'coder' })], evaluator: agent({ name: 'judge' }), maxIterations: 4 });
    const kill = killAfter('orchestrate', 2);
    const first = await run(loop(), 'Add a login form', { store, clock, runId: 'o1', signal: kill.signal, onEvent: kill.onEvent, adapter: scriptedAdapter(script(['SCORE: 0.2', 'SCORE: 0.5'])) });
    expect(first).toMatchObject({ status: 'cancelled', iterations: 2 });

    const adapter = scriptedAdapter(script(['SCORE: 0.6', 'SCORE: 0.95']));
    const { events, onEvent } = collect();
    const resumed = await resume(loop(), 'o1', { store, clock, adapter, onEvent });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 4 });
    expect(iterationsOf(events)).toEqual([3, 4]);
    expect(adapter.inputsOf('judge')).toHaveLength(2);
    expect(adapter.inputsOf('coder')).toHaveLength(2);
    expect(resumed.evaluations.map((e) => e.score)).toEqual([0.2, 0.5, 0.6, 0.95]);
    // The resumed orchestrator is told the last synthesis of the first half.
    expect(adapter.inputsOf('lead')[0]).toContain('## YOUR PREVIOUS ANSWER\nSynthesis 4');
  });

  it('resumes a team killed after round 1 at round 2', async () => {
    const store = memoryStore();
    const script = () => scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: (r) => `${r.agent} turn ${r.turn}` }, { agent: 'lead', reply: 'Final.' }] });
    const kill = killAfter('team', 1);
    const panel = () => team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 3 });
    await expect(run(panel(), 'Review PR 7', { store, runId: 't1', signal: kill.signal, onEvent: kill.onEvent, adapter: script() })).rejects.toThrow();

    const adapter = script();
    const { events, onEvent } = collect();
    const resumed = await resume(panel(), 't1', { store, adapter, onEvent });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 3, output: 'Final.' });
    expect(events.flatMap((e) => (e.type === 'team.round.started' ? [e.round] : []))).toEqual([2, 3]);
    expect(adapter.inputsOf('a')).toHaveLength(2);
    expect(adapter.inputsOf('a')[0]).toContain('[a (you), round 1]: a turn 1');
    expect(resumed.transcript.map((m) => [m.from, m.round])).toEqual([['a', 1], ['b', 1], ['a', 2], ['b', 2], ['a', 3], ['b', 3]]);
  });

  it('returns the saved outcome of a finished loop with zero model calls', async () => {
    const store = memoryStore();
    const original = await run(writerLoop(), 'Write', { store, runId: 'done', adapter: scriptedAdapter({ replies: { writer: ['Leaves'], critic: ['PASS'] } }) });
    const adapter = scriptedAdapter({});
    const { events, onEvent } = collect();
    const again = await resume(writerLoop(), 'done', { store, adapter, onEvent });
    expect(adapter.calls).toHaveLength(0);
    expect({ ...again, usage: undefined, trace: undefined, durationMs: undefined }).toEqual({ ...original, usage: undefined, trace: undefined, durationMs: undefined });
    expect(events.find((e) => e.type === 'checkpoint.restored')).toMatchObject({ completed: true });
  });

  it('resumes a handoff whose first stage is a finished loop without running the loop again', async () => {
    const store = memoryStore();
    const flow = () => handoff(writerLoop(), agent({ name: 'editor' }));
    const controller = new AbortController();
    const onEvent = (e: TroupeEvent) => void (e.type === 'reflect.completed' && controller.abort());
    await expect(run(flow(), 'Write', { store, runId: 'h1', signal: controller.signal, onEvent, adapter: scriptedAdapter({ replies: { writer: ['Leaves'], critic: ['PASS'] } }) })).rejects.toThrow();
    expect(await store.list('runs/h1/checkpoints')).toEqual([checkpointKey('h1', '/handoff:reflect:writer -> editor#0/reflect:reflect:writer#0')]);

    const adapter = scriptedAdapter({ replies: { editor: ['Polished leaves'] } });
    const resumed = await resume(flow(), 'h1', { store, adapter });
    expect(resumed).toMatchObject({ output: 'Polished leaves', agent: 'editor' });
    expect(resumed.from).toMatchObject({ output: 'Leaves', status: 'completed', reason: 'goal-met' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['editor']);
    expect(adapter.inputsOf('editor')[0]).toContain('## HANDOFF FROM writer\nLeaves');
  });

  it('keys the loops inside a team member by round, so a resumed round does not reuse an earlier round', async () => {
    const store = memoryStore();
    const member = () => reflect(agent({ name: 'w' }), { name: 'drafts', maxIterations: 1 });
    const panel = () => team({ members: [member()], lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 2 });
    const kill = killAfter('team', 1);
    const script = () => scriptedAdapter({ rules: [{ agent: 'w', reply: (r) => `draft for ${r.text.includes('Round 2') ? 'round 2' : 'round 1'}` }, { agent: 'lead', reply: 'Final.' }] });
    await expect(run(panel(), 'Go', { store, runId: 'tm', signal: kill.signal, onEvent: kill.onEvent, adapter: script() })).rejects.toThrow();
    const adapter = script();
    const resumed = await resume(panel(), 'tm', { store, adapter });
    expect(adapter.inputsOf('w')).toHaveLength(1);
    expect(resumed.transcript.map((m) => m.text)).toEqual(['draft for round 1', 'draft for round 2']);
    expect(await store.list('runs/tm/checkpoints/')).toEqual([
      'runs/tm/checkpoints/team:team#0',
      'runs/tm/checkpoints/team:team#0/team-member:drafts#0/round-1/reflect:drafts#0',
      'runs/tm/checkpoints/team:team#0/team-member:drafts#0/round-2/reflect:drafts#0',
    ]);
  });

  it('gives the same checkpoint keys to the same runnable on the same input', async () => {
    const keysOf = async () => {
      const store = memoryStore();
      await run(handoff(writerLoop(), writerLoop()), 'Write', { store, runId: 'k', adapter: scriptedAdapter({ rules: [{ agent: 'writer', reply: 'x' }, { agent: 'critic', reply: 'PASS' }] }) });
      return store.list('runs/k/checkpoints/');
    };
    const keys = await keysOf();
    expect(keys).toEqual([
      'runs/k/checkpoints/handoff:reflect:writer -> reflect:writer#0/reflect:reflect:writer#0',
      'runs/k/checkpoints/handoff:reflect:writer -> reflect:writer#0/reflect:reflect:writer#1',
    ]);
    expect(await keysOf()).toEqual(keys);
  });

  it('fails with a versioned StoreError on a checkpoint of another schema version', async () => {
    const store = memoryStore();
    await run(writerLoop(), 'Write', { store, runId: 'v', adapter: scriptedAdapter({ replies: { writer: ['a'], critic: ['PASS'] } }) });
    const key = checkpointKey('v', '/reflect:reflect:writer#0');
    const doc = (await store.get(key)) as { state: Record<string, unknown>; outcome: Record<string, unknown> };
    await store.set(key, { ...doc, schemaVersion: 2 });
    const envelope = await resume(writerLoop(), 'v', { store, adapter: scriptedAdapter({}) }).catch((e: unknown) => e);
    expect(envelope).toBeInstanceOf(StoreError);
    expect(envelope).toMatchObject({ code: 'checkpoint_version' });
    expect((envelope as Error).message).toBe('Checkpoint "runs/v/checkpoints/reflect:reflect:writer#0" is a document of schema version 2; this version of troupe reads version 1');
    await store.set(key, { ...doc, state: { ...doc.state, schemaVersion: 2 } });
    const state = await resume(writerLoop(), 'v', { store, adapter: scriptedAdapter({}) }).catch((e: unknown) => e);
    expect(state).toMatchObject({ code: 'checkpoint_version' });
    expect((state as Error).message).toMatch(/holds a reflect state of schema version 2; this version of troupe reads version 1/);
  });

  it('fails with a clear StoreError on a corrupted checkpoint file', async () => {
    const dir = tempDir();
    const store = fileStore(dir, { fsync: false });
    await run(writerLoop(), 'Write', { store, runId: 'c', adapter: scriptedAdapter({ replies: { writer: ['a'], critic: ['PASS'] } }) });
    const files = readdirSync(join(dir, 'runs', 'c', 'checkpoints'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    const file = join(dir, 'runs', 'c', 'checkpoints', files[0]!);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 40));
    const error = await resume(writerLoop(), 'c', { store, adapter: scriptedAdapter({}) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/checkpoints/);
  });

  it('loads one fixture per checkpoint schema version through the checkpoint facility', () => {
    const fixtures = join(import.meta.dirname, '..', 'fixtures', 'persistence');
    const cases = [
      ['checkpoint-reflect.v1.json', 'reflect', reflectStateSchema],
      ['checkpoint-orchestrate.v1.json', 'orchestrate', orchestrateStateSchema],
      ['checkpoint-team.v1.json', 'team', teamStateSchema],
      ['checkpoint-plan.v1.json', 'plan', planExecutionStateSchema],
    ] as const;
    for (const [name, kind, state] of cases) {
      const doc = JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as { schemaVersion: number; runId: string; path: string };
      expect(doc.schemaVersion).toBe(CHECKPOINT_SCHEMA_VERSION);
      const key = checkpointKey(doc.runId, doc.path);
      const loaded = parseCheckpoint(doc, { key, runId: doc.runId }, { kind, version: 1, state: state as z.ZodType<unknown> });
      expect(loaded).toMatchObject({ kind, runId: doc.runId, path: doc.path });
    }
    // The plan fixture was saved with the capitalised chunk statuses of its time (`Succeeded`, `Aborted`): they read as today's.
    const plan = JSON.parse(readFileSync(join(fixtures, 'checkpoint-plan.v1.json'), 'utf8')) as { state: { chunks: Array<{ status: string }> } };
    expect(plan.state.chunks.some((c) => c.status === 'Succeeded')).toBe(true);
    const read = planExecutionStateSchema.parse(plan.state);
    expect(new Set(read.chunks.map((c) => c.status))).toEqual(new Set(['completed', 'cancelled']));
    expect(planExecutionStateSchema.safeParse({ ...plan.state, chunks: [{ ...plan.state.chunks[0], status: 'Done' }] }).success).toBe(false);
  });

  it('resumes from a stored fixture document', async () => {
    const store = memoryStore();
    const doc = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'persistence', 'checkpoint-reflect.v1.json'), 'utf8')) as { path: string; runId: string };
    await run(writerLoop(), 'Write', { store, runId: doc.runId, signal: AbortSignal.abort(), adapter: scriptedAdapter({}) }).catch(() => undefined);
    await store.set(checkpointKey(doc.runId, doc.path), doc);
    const adapter = scriptedAdapter({ replies: { writer: ['Leaves'], critic: ['PASS'] } });
    const resumed = await resume(writerLoop(), doc.runId, { store, adapter });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 3 });
    expect(adapter.inputsOf('writer')[0]).toContain('## ITERATION 3/4');
  });

  it('rejects a run it cannot resume with a clear error', async () => {
    const store = memoryStore();
    await expect(resume(writerLoop(), 'nothing', { store })).rejects.toThrow(StoreError);
    await expect(resume(writerLoop(), 'nothing', { store })).rejects.toThrow(/no run log/);
    await run(agent({ name: 'x' }), 'q', { store, runId: 'x', adapter: scriptedAdapter({ fallback: 'ok' }) });
    await expect(resume(writerLoop(), 'x', { store })).rejects.toThrow(ConfigurationError);
    await expect(resume(writerLoop(), 'x', { store })).rejects.toThrow('Cannot resume run "x" with "reflect:writer": it was a run of "x"');
    await expect(resume(writerLoop(), '', { store })).rejects.toThrow(/runId/);
    // @ts-expect-error resume takes the runnable first, then the run id (the one call shape)
    await expect(resume('x', { runnable: writerLoop(), store })).rejects.toThrow(ConfigurationError);
  });
});

describe('resuming a team whose members changed', () => {
  it('refuses with a clear ConfigurationError', async () => {
    const store = memoryStore();
    const members = (names: string[]) => names.map((name) => agent({ name }));
    const panel = (names: string[]) => team({ members: members(names), lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 2 });
    const adapter = scriptedAdapter({ fallback: 'ok' });
    const kill = killAfter('team', 1);
    await expect(run(panel(['a', 'b']), 'Go', { store, runId: 'tc', signal: kill.signal, onEvent: kill.onEvent, adapter })).rejects.toThrow();
    await expect(resume(panel(['a', 'c']), 'tc', { store, adapter })).rejects.toThrow(/Cannot resume team "team": the state has members \[a,b\]/);
  });
});

describe('checkpoint failures and paths', () => {
  it('turns a failed checkpoint save into a warning, never a failed run', async () => {
    const inner = memoryStore();
    const store: Store = {
      get: (key) => inner.get(key), list: (prefix) => inner.list(prefix), delete: (key) => inner.delete(key),
      append: (stream, record) => inner.append(stream, record), read: (stream, options) => inner.read(stream, options),
      set: (key: string, value: unknown) => (key.includes('/checkpoints/') ? Promise.reject(new Error('disk full')) : inner.set(key, value)) };
    const { events, onEvent } = collect();
    const result = await run(writerLoop(), 'Write', { store, onEvent, adapter: scriptedAdapter({ replies: { writer: ['a', 'b'], critic: ['FAIL: more', 'PASS'] } }) });
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
    const warnings = events.filter((e) => e.type === 'warning' && e.code === 'checkpoint_failed');
    expect(warnings).toHaveLength(3); // two iterations and the outcome
    expect(warnings[0]).toMatchObject({ message: 'The checkpoint of reflect "reflect:writer" could not be saved: disk full' });
  });

  it('numbers siblings of one kind and name, and scopes paths explicitly', async () => {
    const paths: string[] = [];
    const leaf = defineRunnable({ name: 'leaf', kind: 'custom', async run(_input, ctx) { paths.push(ctx.checkpointPath); return { output: '', agent: 'leaf', status: 'completed' }; } });
    const root = defineRunnable({
      name: 'root', kind: 'custom',
      async run(input, ctx) {
        await Promise.all([leaf.run(input, ctx), leaf.run(input, ctx)]);
        await leaf.run(input, ctx.withCheckpointScope('step/1'));
        return { output: '', agent: 'root', status: 'completed' };
      },
    });
    await run(root, 'x');
    expect(paths).toEqual(['/custom:root#0/custom:leaf#0', '/custom:root#0/custom:leaf#1', '/custom:root#0/step_1/custom:leaf#0']);
  });
});

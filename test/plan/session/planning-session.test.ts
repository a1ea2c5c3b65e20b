import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import type { ChunkRunner } from '../../../src/plan/engine/execute.js';
import { PlanningPhaseError, PlanningSession } from '../../../src/plan/session/planning-session.js';
import { planningMoves, planningPhases } from '../../../src/plan/session/phases.js';
import { NotRunningError } from '../../../src/core/control.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { chunk, planOf } from '../helpers.js';

const plan = JSON.stringify(planOf(chunk(0), chunk(1, [0], { role: 'Synthesis' })));

function setup(planner: string[], runChunk?: ChunkRunner) {
  const adapter = scriptedAdapter({
    replies: { planner },
    rules: [
      { agent: 'synthesis', reply: (r) => `summary (${r.text.includes('Status: completed') ? 'ok' : 'partial'})` },
      { agent: /Generic|Synthesis/, reply: 'worked' },
    ],
  });
  const session = new PlanningSession({ adapter, runId: 's1', retry: { delayMs: 0 }, ...(runChunk ? { runChunk } : {}) });
  const phases: string[] = [];
  session.emitter.on('phase.changed', (e) => phases.push(e.to));
  return { adapter, session, phases };
}

/** A chunk runner that calls `cancel` once started and records whether its signal aborted. */
function cancellingRunner(cancel: () => void): { runChunk: ChunkRunner; readonly sawAbort: boolean } {
  let sawAbort = false;
  const runChunk: ChunkRunner = ({ signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        sawAbort = true;
        reject(signal.reason);
      });
      cancel();
    });
  return { runChunk, get sawAbort() { return sawAbort; } };
}

describe('PlanningSession', () => {
  it('clarifies, plans, waits for approval, executes, aggregates and completes', async () => {
    const { adapter, session, phases } = setup(['{"action":"clarify","questions":["Which modules?"]}', '{"action":"plan"}', plan]);
    const events: TroupeEvent[] = [];
    session.emitter.on('*', (e) => events.push(e));
    const asked = await session.submitTask('Fix the memory leaks');
    expect(asked).toEqual({ phase: 'clarifying', questions: ['Which modules?'] });
    const planned = await session.answerClarification('cache and sessions');
    expect(planned.phase).toBe('awaiting-approval');
    expect(planned.plan?.chunks).toHaveLength(2);
    expect(adapter.inputsOf('planner')[2]).toContain("User's answers: cache and sessions");
    const done = await session.approvePlan();
    expect(done.phase).toBe('completed');
    expect(done.outcome?.output).toBe('summary (ok)');
    expect(done.outcome?.stats).toMatchObject({ total: 2, completed: 2 });
    expect(done.outcome?.usage.turns).toBe(3);
    expect(phases).toEqual(['clarifying', 'planning', 'awaiting-approval', 'executing', 'aggregating', 'completed']);
    expect(events.some((e) => e.type === 'chunk.status')).toBe(true);
  });

  it('plans again with the feedback when changes are requested, and cancels on reject', async () => {
    const { adapter, session } = setup(['{"action":"plan"}', plan, plan]);
    await session.submitTask('Fix the memory leaks');
    const revised = await session.requestChanges('add a test chunk');
    expect(revised.phase).toBe('awaiting-approval');
    expect(adapter.inputsOf('planner')[2]).toContain('Feedback: add a test chunk');
    expect(session.rejectPlan()).toEqual({ phase: 'cancelled' });
  });

  it('injects instructions into chunks that have not started and records them with the run', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const prompts: string[] = [];
    let session!: PlanningSession;
    const runChunk: ChunkRunner = async ({ chunk: c, prompt }) => {
      prompts.push(prompt);
      if (c.sequenceIndex === 0) {
        session.post('Prefer WeakMap');
        await gate;
      }
      return 'ok';
    };
    ({ session } = setup(['{"action":"plan"}', plan], runChunk));
    await session.submitTask('Fix the memory leaks');
    const running = session.approvePlan();
    await new Promise((r) => setImmediate(r));
    expect(session.phase).toBe('executing');
    release();
    const done = await running;
    expect(prompts[0]).not.toContain('Prefer WeakMap');
    expect(prompts[1]).toContain('- Prefer WeakMap');
    expect(session.runs[0]!.instructions).toEqual(['Prefer WeakMap']);
    expect(done.outcome?.instructions).toEqual(['Prefer WeakMap']);
  });

  it('plans a follow-up with the previous plan and report as context', async () => {
    const { adapter, session } = setup(['{"action":"plan"}', plan, plan]);
    await session.submitTask('Fix the memory leaks');
    await session.approvePlan();
    const next = await session.followUp('Now add regression tests');
    expect(next.phase).toBe('awaiting-approval');
    const prompt = adapter.inputsOf('planner')[2]!;
    expect(prompt).toContain('## Task\n\nNow add regression tests');
    expect(prompt).toContain('The earlier plan:');
    expect(prompt).toContain('The earlier report:\nsummary (ok)');
  });

  it('cancels a running execution', async () => {
    let session!: PlanningSession;
    const chunkRun = cancellingRunner(() => session.cancel());
    ({ session } = setup(['{"action":"plan"}', plan], chunkRun.runChunk));
    await session.submitTask('Fix the memory leaks');
    await expect(session.approvePlan()).rejects.toMatchObject({ code: 'cancelled' });
    expect(chunkRun.sawAbort).toBe(true);
    expect(session.phase).toBe('cancelled');
  });

  it('is cancelled by its signal option: the running execution sees the abort and later calls make no model call', async () => {
    const controller = new AbortController();
    const chunkRun = cancellingRunner(() => controller.abort());
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', plan] } });
    const session = new PlanningSession({ adapter, signal: controller.signal, runChunk: chunkRun.runChunk });
    await session.submitTask('Fix the memory leaks');
    await expect(session.approvePlan()).rejects.toMatchObject({ code: 'cancelled' });
    expect(chunkRun.sawAbort).toBe(true);
    expect(session.phase).toBe('cancelled');

    session.reset();
    const calls = adapter.calls.length;
    await expect(session.submitTask('Again')).rejects.toMatchObject({ code: 'cancelled' });
    expect(session.phase).toBe('cancelled');
    expect(adapter.calls.length).toBe(calls);
  });

  it('throws a typed error naming the current phase for a call in the wrong phase', async () => {
    const { session } = setup(['{"action":"plan"}', plan]);
    const wrong = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const error = wrong(() => session.post('x'));
    expect(error).toBeInstanceOf(PlanningPhaseError);
    expect(error).toMatchObject({ code: 'wrong_phase', phase: 'idle' });
    expect((error as Error).message).toContain('phase "idle"');
    await expect(session.approvePlan()).rejects.toMatchObject({ code: 'wrong_phase', phase: 'idle' });
    await expect(session.followUp('more')).rejects.toMatchObject({ code: 'wrong_phase' });
    await session.submitTask('Fix it');
    await expect(session.submitTask('again')).rejects.toMatchObject({ code: 'wrong_phase', phase: 'awaiting-approval' });
    await expect(session.answerClarification('x')).rejects.toMatchObject({ phase: 'awaiting-approval' });
    session.cancel();
    expect(session.phase).toBe('cancelled');
    expect(() => session.cancel()).toThrow(PlanningPhaseError);
    session.reset();
    expect(session.phase).toBe('idle');
  });
});

describe('PlanningSession.restore', () => {
  const threeChunks = JSON.stringify(planOf(chunk(0), chunk(1, [0]), chunk(2, [1])));

  it('continues an interrupted execution from its checkpoint: chunks that succeeded are not run again, injected instructions are kept', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const ran: number[] = [];
    const prompts: string[] = [];
    let session!: PlanningSession;
    const runChunk: ChunkRunner = async ({ chunk: c, prompt }) => {
      ran.push(c.sequenceIndex);
      prompts.push(prompt);
      if (c.sequenceIndex === 0) session.post('Prefer WeakMap');
      if (c.sequenceIndex === 1) controller.abort(); // the process dies during chunk 1
      return `did ${c.sequenceIndex}`;
    };
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', threeChunks] }, rules: [{ agent: 'synthesis', reply: 'summary' }] });
    session = new PlanningSession({ adapter, runId: 'rel-1', store, runChunk, signal: controller.signal });
    await session.submitTask('Fix the leaks');
    await expect(session.approvePlan()).rejects.toThrow();
    expect(ran).toEqual([0, 1]);

    ran.length = 0;
    prompts.length = 0;
    const restored = await PlanningSession.restore('rel-1', { adapter, store, runChunk });
    expect(restored.phase).toBe('awaiting-approval');
    expect(restored.plan?.chunks).toHaveLength(3);
    expect(restored.instructions).toEqual(['Prefer WeakMap']);
    session = restored;
    const done = await restored.approvePlan();
    expect(done.phase).toBe('completed');
    expect(ran).toEqual([1, 2]);
    expect(prompts[0]).toContain('Prefer WeakMap');
    expect(done.outcome?.results.map((r) => r.output)).toEqual(['did 0', 'did 1', 'did 2']);
    expect(done.outcome?.output).toBe('summary');

    // A finished execution restores as completed, with its run.
    const again = await PlanningSession.restore('rel-1', { adapter, store, runChunk });
    expect(again.phase).toBe('completed');
    expect(again.runs.map((r) => [r.task, r.report.summary, r.outcome.results.length])).toEqual([['Fix the leaks', 'summary', 3]]);
  });

  it('refuses to restore a session the store does not hold', async () => {
    const adapter = scriptedAdapter({});
    await expect(PlanningSession.restore('nope', { adapter, store: memoryStore() })).rejects.toThrow(/No execution of planning session "nope" in the store/);
  });
});

describe('the phases of a planning session', () => {
  it('are one table of moves, checked on every call: a call its phase does not list is refused with the phases that do', async () => {
    const { session } = setup(['{"action":"plan"}', plan]);
    const calls: Record<string, () => unknown> = {
      answerClarification: () => session.answerClarification('x'),
      clarify: () => session.clarify(),
      editPlan: () => session.editPlan(plan),
      approvePlan: () => session.approvePlan(),
      requestChanges: () => session.requestChanges('more'),
      rejectPlan: () => session.rejectPlan(),
      post: () => session.post('x'),
      changePlan: () => session.changePlan({ add: [chunk(9)] }),
      snapshot: () => session.snapshot(),
      followUp: () => session.followUp('more'),
      cancel: () => session.cancel(),
    };
    for (const [move, call] of Object.entries(calls)) {
      const error = await Promise.resolve().then(call).then(() => undefined, (e: unknown) => e);
      const allowed = planningPhases.filter((p) => planningMoves[p][move as keyof (typeof planningMoves)['idle']] !== undefined);
      expect(error, move).toBeInstanceOf(PlanningPhaseError);
      expect(error, move).toMatchObject({ phase: 'idle', details: { method: move, allowed } });
    }
    expect(session.phase).toBe('idle');
    // From awaiting approval: a rejected plan is cancelled, and a cancelled session allows nothing but a reset.
    await session.submitTask('Fix it');
    expect(session.rejectPlan()).toEqual({ phase: 'cancelled' });
    expect(() => session.rejectPlan()).toThrow(PlanningPhaseError);
    expect(() => session.snapshot()).toThrow(/allowed in: awaiting-approval, executing, aggregating, completed/);
    session.reset();
    expect(session.phase).toBe('idle');
  });

  it('every phase a move leads to is a phase, and every phase but idle is reached by a move', () => {
    const reached = new Set(Object.values(planningMoves).flatMap((moves) => Object.values(moves)));
    expect([...reached].every((p) => (planningPhases as readonly string[]).includes(p!))).toBe(true);
    expect(planningPhases.filter((p) => !reached.has(p))).toEqual([]);
  });
});

describe('the snapshot of a planning session', () => {
  it('is what restore takes: a snapshot of a plan awaiting approval restores it there, and approving runs it', async () => {
    const { session } = setup(['{"action":"plan"}', plan]);
    await session.submitTask('Fix the memory leaks');
    const snapshot = session.snapshot();
    expect(snapshot).toEqual({ schemaVersion: 1, runId: 's1', task: 'Fix the memory leaks', plan: JSON.parse(plan), instructions: [] });
    const { adapter } = setup([]);
    const restored = await PlanningSession.restore(JSON.parse(JSON.stringify(snapshot)), { adapter });
    expect([restored.runId, restored.phase, restored.plan]).toEqual(['s1', 'awaiting-approval', JSON.parse(plan)]);
    const done = await restored.approvePlan();
    expect(done.outcome?.stats).toMatchObject({ total: 2, completed: 2 });
    await expect(PlanningSession.restore(snapshot, { adapter, runId: 'other' })).rejects.toThrow(/`runId` to be the snapshot's run id "s1"/);
    await expect(PlanningSession.restore({ ...snapshot, plan: { chunks: 'no' } } as never, { adapter })).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('is the session’s checkpoint: a finished session’s snapshot equals the one its run keeps in the store', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', plan] }, rules: [{ agent: 'synthesis', reply: 'summary' }, { agent: /Generic|Synthesis/, reply: 'worked' }] });
    const session = new PlanningSession({ adapter, runId: 'kept', store });
    await session.submitTask('Fix it');
    await session.approvePlan();
    const fromStore = await PlanningSession.restore('kept', { adapter, store });
    expect(fromStore.phase).toBe('completed');
    expect(fromStore.snapshot()).toEqual(session.snapshot());
    const fromSnapshot = await PlanningSession.restore(session.snapshot(), { adapter });
    expect(fromSnapshot.runs.map((r) => r.outcome.output)).toEqual(['summary']);
  });

  it('reads a checkpoint saved with the words of before (sessionId, the execution’s planOutcome, succeeded chunks)', async () => {
    const doc = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'persistence', 'checkpoint-planning-session.v1.json'), 'utf8')) as { runId: string };
    const store = memoryStore();
    await store.set(`runs/${doc.runId}/checkpoints/planning-session:planning-session#0`, doc);
    const restored = await PlanningSession.restore(doc.runId, { adapter: scriptedAdapter({}), store });
    expect(restored.phase).toBe('completed');
    const outcome = restored.runs[0]!.outcome;
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(outcome.stats).toMatchObject({ total: 2, completed: 2, cancelled: 0 });
    expect(outcome.report?.stats).toMatchObject({ completed: 2 });
    expect(outcome.output).toBe('All fixed.');
    expect(restored.snapshot()).toMatchObject({ runId: doc.runId, task: 'Fix the leaks', instructions: ['Prefer WeakMap'] });
  });
});

describe('posting to a planning session', () => {
  it('takes an instruction for every chunk, or a message for one chunk, a role or everyone; the plan keeps its own id', async () => {
    let session!: PlanningSession;
    const posted: unknown[] = [];
    const runChunk: ChunkRunner = async ({ chunk: c, prompt }) => {
      if (c.sequenceIndex === 0) {
        posted.push(session.post('Prefer WeakMap'));
        posted.push(session.post({ to: { chunk: 1 }, text: 'The cache moved.' }));
      }
      return prompt;
    };
    const events: TroupeEvent[] = [];
    ({ session } = setup(['{"action":"plan"}', plan], runChunk));
    session.emitter.on('*', (e) => events.push(e));
    await session.submitTask('Fix it');
    const done = await session.approvePlan();
    expect(posted[0]).toMatchObject({ instruction: 'Prefer WeakMap', running: ['0'] });
    // A message to the plan resolves once it is in the run's store.
    expect(await posted[1]).toMatchObject({ id: 'm1', from: 'api', to: { chunk: 1 }, text: 'The cache moved.' });
    const second = done.outcome!.results[1]!.output!;
    expect(second).toContain('- Prefer WeakMap');
    expect(second).toContain('- From api (to chunk 1): The cache moved.');
    expect(events.find((e) => e.type === 'plan.instruction')).toMatchObject({ planId: 'plan', runId: 's1' });
    expect(events.find((e) => e.type === 'plan.started')).toMatchObject({ planId: 'plan', runId: 's1' });
    expect(() => session.post({ to: 'all', text: 'late' })).toThrow(PlanningPhaseError);
  });

  it('refuses a message before the plan runs with the one NotRunningError', async () => {
    let session!: PlanningSession;
    const errors: unknown[] = [];
    ({ session } = setup(['{"action":"plan"}', plan]));
    session.emitter.on('phase.changed', (e) => {
      if (e.to !== 'executing') return;
      for (const f of [() => session.post({ to: 'all', text: 'early' }), () => session.changePlan({ add: [chunk(9)] })]) {
        try {
          f();
        } catch (error) {
          errors.push(error);
        }
      }
    });
    await session.submitTask('Fix it');
    await session.approvePlan();
    expect(errors).toEqual([expect.any(NotRunningError), expect.any(NotRunningError)]);
    expect(errors).toEqual([expect.objectContaining({ code: 'not_running' }), expect.objectContaining({ code: 'not_running' })]);
  });
});

import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { RunContext } from '../../../src/core/context.js';
import { createOp } from '../../../src/core/ops.js';
import { SimulatedClock, sleep } from '../../../src/core/clock.js';
import { CancelledError, ConfigurationError, TimeoutError, isTroupeError } from '../../../src/core/errors.js';
import { executePlan, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import { directExecutor, inProcessExecutor, type ChunkAttemptResult, type ChunkJob, type ChunkJobData, type Executor } from '../../../src/plan/engine/executor.js';
import type { Plan } from '../../../src/plan/model/plan.js';
import { sharedPool, type SharedPool } from '../../../src/plan/engine/pool.js';
import { chunk, drive, planOf } from '../helpers.js';

/** `n` independent chunks. */
function flat(n: number): Plan {
  return planOf(...Array.from({ length: n }, (_, i) => chunk(i)));
}

/** What a plan's workers did: how many ran at once (now and at most), and which chunks started. */
interface Tally {
  running: number;
  peak: number;
  started: number[];
}

/** A runner whose chunks take `ms` on the clock, counted in `tally`. */
function worker(clock: SimulatedClock, tally: Tally, ms: number | ((i: number) => number) = 10): ChunkRunner {
  return async ({ chunk: c, signal }) => {
    tally.started.push(c.sequenceIndex);
    tally.peak = Math.max(tally.peak, ++tally.running);
    try {
      await sleep(clock, typeof ms === 'number' ? ms : ms(c.sequenceIndex), signal);
    } finally {
      tally.running--;
    }
    return `done ${c.sequenceIndex}`;
  };
}

const tally = (): Tally => ({ running: 0, peak: 0, started: [] });

/** Advance the clock to `t` ms, 1 ms at a time (timers fire in order, promise callbacks run between them). */
async function until(clock: SimulatedClock, t: number): Promise<void> {
  while (clock.now() < t) await clock.advance(1);
}

const running = (pool: SharedPool) => Object.fromEntries(pool.stats().map((s) => [s.name, s.running]));

describe('sharedPool', () => {
  it('shares the slots between busy plans in proportion to their weights', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 6, clock });
    const [a, b] = [tally(), tally()];
    const both = Promise.all([
      executePlan(flat(60), { clock, executor: pool.executor('a', { weight: 2 }), runChunk: worker(clock, a) }),
      executePlan(flat(60), { clock, executor: pool.executor('b'), runChunk: worker(clock, b) }),
    ]);
    const seen: string[] = [];
    for (const t of [5, 25, 55, 95]) {
      await until(clock, t);
      seen.push(`${a.running}:${b.running}`);
    }
    // Equal durations: four slots and two, at every moment both have chunks waiting.
    expect(seen).toEqual(['4:2', '4:2', '4:2', '4:2']);
    const [workA, workB] = pool.stats().map((s) => s.workerMs);
    expect(workA! / workB!).toBeCloseTo(2, 5);
    const [outA, outB] = await drive(clock, both);
    expect([outA.status, outB.status]).toEqual(['completed', 'completed']);
  });

  it('gives equal plans equal worker time when their chunks last differently', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const [a, b] = [tally(), tally()];
    // Plan a's chunks take 5 ms, plan b's 20 ms: a must get more slots, not more worker time.
    const both = Promise.all([
      executePlan(flat(400), { clock, executor: pool.executor('a'), runChunk: worker(clock, a, 5) }),
      executePlan(flat(100), { clock, executor: pool.executor('b'), runChunk: worker(clock, b, 20) }),
    ]);
    await until(clock, 400);
    const [workA, workB] = pool.stats().map((s) => s.workerMs);
    expect(Math.abs(workA! / workB! - 1)).toBeLessThan(0.1);
    expect(a.started.length).toBeGreaterThan(3 * b.started.length);
    await drive(clock, both);
  });

  it('never runs more of a plan at once than its maxParallel; the other plans get the rest', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const [a, b] = [tally(), tally()];
    const capped = pool.executor('a', { weight: 10, maxParallel: 1 });
    expect(capped.maxParallel).toBe(1);
    const both = Promise.all([
      executePlan(flat(8), { clock, executor: capped, runChunk: worker(clock, a) }),
      executePlan(flat(40), { clock, executor: pool.executor('b'), runChunk: worker(clock, b) }),
    ]);
    await until(clock, 5);
    expect(running(pool)).toEqual({ a: 1, b: 3 });
    await until(clock, 45);
    expect(running(pool)).toEqual({ a: 1, b: 3 });
    await drive(clock, both);
    expect(a.peak).toBe(1);
    expect(b.peak).toBe(4); // once plan a ended
  });

  it('fills a freed slot after the plan has seen its result, so a plan with one attempt at a time keeps its share', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 2, clock });
    const [a, b] = [tally(), tally()];
    // A chain: plan a never has a second attempt waiting when one ends.
    const chain = planOf(...Array.from({ length: 8 }, (_, i) => chunk(i, i === 0 ? [] : [i - 1])));
    const both = Promise.all([
      executePlan(chain, { clock, executor: pool.executor('a'), runChunk: worker(clock, a) }),
      executePlan(flat(40), { clock, executor: pool.executor('b'), runChunk: worker(clock, b) }),
    ]);
    const seen: number[] = [];
    for (const t of [5, 15, 35, 55, 75]) {
      await until(clock, t);
      seen.push(a.running);
    }
    expect(seen).toEqual([1, 1, 1, 1, 1]);
    await drive(clock, both);
  });

  it('starves no plan: a plan of weight 1 beside one of weight 100 still runs while the other has work', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 2, clock });
    const [a, b] = [tally(), tally()];
    let aDone = -1;
    let bFirst = -1;
    const heavy = executePlan(flat(400), { clock, executor: pool.executor('heavy', { weight: 100 }), runChunk: worker(clock, a) }).then(() => (aDone = clock.now()));
    const light = executePlan(flat(3), {
      clock,
      executor: pool.executor('light'),
      onEvent: (e) => {
        if (e.type === 'chunk.status' && e.status === 'completed' && bFirst < 0) bFirst = clock.now();
      },
      runChunk: worker(clock, b),
    });
    await drive(clock, Promise.all([heavy, light]), 10_000);
    expect(bFirst).toBeGreaterThan(0);
    expect(bFirst).toBeLessThan(aDone / 10);
  });

  it('lets a plan alone use every slot, and a plan that ends frees its share', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const [a, b] = [tally(), tally()];
    const short = executePlan(flat(4), { clock, executor: pool.executor('short'), runChunk: worker(clock, a) });
    const long = executePlan(flat(40), { clock, executor: pool.executor('long'), runChunk: worker(clock, b) });
    await until(clock, 5);
    expect(running(pool)).toEqual({ short: 2, long: 2 });
    await until(clock, 25);
    expect((await short).status).toBe('completed');
    expect(running(pool)).toEqual({ short: 0, long: 4 });
    await drive(clock, long);
    expect(b.peak).toBe(4);
  });

  it('frees the share of a cancelled plan: its waiting attempts never start, the others take its slots', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const [a, b] = [tally(), tally()];
    const stop = new AbortController();
    const cancelled = executePlan(flat(20), { clock, signal: stop.signal, executor: pool.executor('a'), runChunk: worker(clock, a) });
    const other = executePlan(flat(40), { clock, executor: pool.executor('b'), runChunk: worker(clock, b) });
    await until(clock, 5);
    expect(a.started).toEqual([0, 1]);
    stop.abort();
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    await until(clock, 15);
    expect(a.started).toEqual([0, 1]);
    expect(running(pool)).toEqual({ a: 0, b: 4 });
    expect(pool.stats()[0]).toMatchObject({ name: 'a', queued: 0, running: 0 });
    expect((await drive(clock, other)).status).toBe('completed');
  });

  it('lets a plan join while another runs, at its fair share at once and no more', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const [a, b] = [tally(), tally()];
    const first = executePlan(flat(80), { clock, executor: pool.executor('first'), runChunk: worker(clock, a) });
    await until(clock, 105);
    expect(running(pool)).toEqual({ first: 4 });
    // The newcomer banks nothing for the 100 ms it was not there, and the first plan keeps no lead.
    const late = executePlan(flat(20), { clock, executor: pool.executor('late'), runChunk: worker(clock, b) });
    await until(clock, 115);
    expect(running(pool)).toEqual({ first: 2, late: 2 });
    const share = pool.stats().map((s) => s.workerMs);
    await until(clock, 155);
    expect(running(pool)).toEqual({ first: 2, late: 2 });
    const after = pool.stats().map((s, i) => s.workerMs - share[i]!);
    expect(after[0]).toBe(after[1]);
    await drive(clock, Promise.all([first, late]));
  });

  it('keeps each plan\'s own budget: the plan that runs out stops and frees its share, the other goes on', async () => {
    const pool = sharedPool({ maxParallel: 2 });
    const reply = { text: 'done', usage: { inputTokens: 40, outputTokens: 10 } };
    const [thrifty, free] = [scriptedAdapter({ rules: [{ agent: 'Generic', reply }] }), scriptedAdapter({ rules: [{ agent: 'Generic', reply }] })];
    const [capped, open] = await Promise.all([
      executePlan(flat(6), { adapter: thrifty, maxParallel: 1, budget: { run: { name: 'thrifty', totalTokens: 100 } }, executor: pool.executor('thrifty', { maxParallel: 1 }) }),
      executePlan(flat(6), { adapter: free, executor: pool.executor('free') }),
    ]);
    expect(capped.status).toBe('budget-exhausted');
    // Its second call spent the budget: that chunk keeps its paid answer, and every one not yet run is cancelled.
    expect(capped.results.map((r) => r.status)).toEqual(['completed', 'completed', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(thrifty.calls).toHaveLength(2);
    expect(open.status).toBe('completed');
    expect(free.calls).toHaveLength(6);
    expect(pool.stats().map((s) => [s.name, s.running, s.queued])).toEqual([
      ['thrifty', 0, 0],
      ['free', 0, 0],
    ]);
  });

  it('keeps each plan\'s attempts in the order its scheduler dispatched them', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 1, clock });
    const a = tally();
    // Chunk 2 heads the longest chain, so the scheduler dispatches it first.
    const plan = planOf(chunk(0), chunk(1), chunk(2), chunk(3, [2]), chunk(4, [3]));
    await drive(clock, executePlan(plan, { clock, executor: pool.executor('a'), runChunk: worker(clock, a) }));
    expect(a.started.slice(0, 2)).toEqual([2, 3]);
  });

  it('wraps any executor, a remote one too: only the job data crosses, and it never gets more than its capacity', async () => {
    const clock = new SimulatedClock();
    const sent: ChunkJobData[] = [];
    let busy = 0;
    let peak = 0;
    // A stand-in for a queue-backed executor: it sends the job's JSON, and a worker elsewhere answers after 10 ms.
    const remote: Executor = {
      kind: 'remote',
      maxParallel: 3,
      async dispatch(job): Promise<ChunkAttemptResult> {
        const data = JSON.parse(JSON.stringify(job)) as ChunkJobData;
        sent.push(data);
        peak = Math.max(peak, ++busy);
        await sleep(clock, 10, job.signal);
        busy--;
        return { output: `worker did ${data.planId}/${data.chunk.sequenceIndex}` };
      },
    };
    const pool = sharedPool({ executor: remote, clock });
    expect(pool.maxParallel).toBe(3);
    const [a, b] = await drive(
      clock,
      Promise.all([
        executePlan(flat(12), { clock, planId: 'web', executor: pool.executor('web', { weight: 2 }) }),
        executePlan(flat(6), { clock, planId: 'api', executor: pool.executor('api') }),
      ]),
    );
    expect(peak).toBe(3);
    expect(sent).toHaveLength(18);
    expect(a.results.map((r) => r.output)).toContain('worker did web/11');
    expect(b.results.every((r) => r.status === 'completed')).toBe(true);
    // Two of the three slots went to web while both had chunks waiting.
    expect(sent.slice(0, 3).map((d) => d.planId).sort()).toEqual(['api', 'web', 'web']);
  });

  it('lets several plans share one share (its weight and maximum)', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 4, clock });
    const both = tally();
    const team = pool.executor('team', { maxParallel: 2 });
    await drive(
      clock,
      Promise.all([executePlan(flat(6), { clock, executor: team, runChunk: worker(clock, both) }), executePlan(flat(6), { clock, executor: team, runChunk: worker(clock, both) })]),
    );
    expect(both.peak).toBe(2);
    expect(pool.stats()[0]).toMatchObject({ name: 'team', settled: 12, running: 0, workerMs: 120 });
  });

  it('refuses bad options with typed errors that name them', () => {
    const bad = (f: () => unknown, code: string, message: RegExp) => {
      let caught: unknown;
      try {
        f();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect(isTroupeError(caught) && caught.code).toBe(code);
      expect((caught as Error).message).toMatch(message);
    };
    for (const capacity of [0, -1, 1.5, Number.NaN, '4'] as unknown[]) bad(() => sharedPool({ maxParallel: capacity as number }), 'invalid_option', /`maxParallel`/);
    bad(() => sharedPool(null as never), 'invalid_option', /the options of sharedPool to be an object/);
    bad(() => sharedPool({ executor: { kind: 'x', maxParallel: 0, dispatch: async () => 'ok' } }), 'invalid_option', /`executor`/);
    bad(() => sharedPool({ executor: {} as Executor }), 'invalid_option', /`executor`/);
    bad(() => sharedPool({ executor: directExecutor({ maxParallel: 2 }), maxParallel: 3 }), 'invalid_option', /at most the executor's `maxParallel` \(2\), got 3/);
    bad(() => sharedPool({ clock: { now: () => 0 } as never }), 'invalid_option', /`clock`/);
    bad(() => sharedPool({ signal: 'stop' as never }), 'invalid_option', /`signal`/);
    const pool = sharedPool({ maxParallel: 4 });
    for (const weight of [0, -2, '2'] as unknown[]) bad(() => pool.executor('w', { weight: weight as number }), 'invalid_option', /`weight` to be a positive number/);
    for (const weight of [Number.POSITIVE_INFINITY, Number.NaN]) bad(() => pool.executor('w', { weight }), 'invalid_option', /`weight` to be a finite number, got (Infinity|NaN) \(number\)/);
    for (const max of [0, 2.5, '2'] as unknown[]) bad(() => pool.executor('m', { maxParallel: max as number }), 'invalid_option', /`maxParallel` to be a positive integer/);
    bad(() => pool.executor('m', { maxParallel: 5 }), 'invalid_option', /at most the pool's `maxParallel` \(4\), got 5/);
    bad(() => pool.executor('o', null as never), 'invalid_option', /the options of SharedPool.executor to be an object/);
    bad(() => pool.executor('', {}), 'invalid_argument', /non-empty string/);
    bad(() => pool.executor(7 as never), 'invalid_argument', /non-empty string, got 7/);
    pool.executor('web');
    bad(() => pool.executor('web'), 'invalid_argument', /already has a share named "web"/);
    // Nothing was half made: the failed calls left no share behind.
    expect(pool.stats().map((s) => s.name)).toEqual(['web']);
  });

  it('rejects an attempt whose signal aborts while it waits, and never starts it', async () => {
    const clock = new SimulatedClock();
    const started: string[] = [];
    const inner: Executor = { kind: 'inner', maxParallel: 1, dispatch: async (job) => (started.push(job.chunk.title), sleep(clock, 10).then(() => 'ok')) };
    const pool = sharedPool({ executor: inner, clock });
    const share = pool.executor('a');
    const first = share.dispatch(job('first'));
    const stop = new AbortController();
    const second = share.dispatch(job('second', stop.signal));
    const third = share.dispatch(job('third'));
    await clock.advance(1);
    stop.abort(new TimeoutError('too slow'));
    await expect(second).rejects.toThrow('too slow');
    await clock.advance(20);
    expect(await first).toBe('ok');
    expect(await third).toBe('ok');
    expect(started).toEqual(['first', 'third']);
    // Dispatched already aborted while the slot is taken: rejected at once.
    const blocker = share.dispatch(job('blocker'));
    await clock.advance(1);
    const late = new AbortController();
    late.abort();
    await expect(share.dispatch(job('aborted', late.signal))).rejects.toBeInstanceOf(CancelledError);
    await clock.advance(20);
    expect(await blocker).toBe('ok');
    expect(started).toEqual(['first', 'third', 'blocker']);
    expect(pool.stats()[0]).toMatchObject({ queued: 0, running: 0, settled: 3 });
  });

  it('counts an attempt\'s wait for a slot in its time-out, and a timed-out attempt never starts', async () => {
    const clock = new SimulatedClock();
    const pool = sharedPool({ maxParallel: 1, clock });
    const [a, b] = [tally(), tally()];
    const busy = executePlan(flat(1), { clock, executor: pool.executor('busy'), runChunk: worker(clock, a, 100) });
    const waiting = executePlan(flat(1), { clock, chunkTimeoutMs: 30, retry: { maxRetries: 0 }, executor: pool.executor('waiting'), runChunk: worker(clock, b) });
    const [, outcome] = await drive(clock, Promise.all([busy, waiting]));
    expect(outcome.results[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/timed out after 30 ms/) });
    expect(b.started).toEqual([]);
  });

  it('closes: waiting attempts reject, new dispatches and shares are refused, running attempts finish; the signal closes it too', async () => {
    const clock = new SimulatedClock();
    const stop = new AbortController();
    const pool = sharedPool({ maxParallel: 1, clock, signal: stop.signal });
    const share = pool.executor('a');
    const running = share.dispatch(job('running', undefined, clock));
    const waiting = share.dispatch(job('waiting', undefined, clock));
    await clock.advance(1);
    stop.abort(new CancelledError('shutting down'));
    expect(pool.closed).toBe(true);
    await expect(waiting).rejects.toThrow('shutting down');
    await expect(share.dispatch(job('later'))).rejects.toThrow('shutting down');
    expect(() => pool.executor('b')).toThrow('shutting down');
    await clock.advance(20);
    expect(await running).toBe('ok');

    const other = sharedPool({ maxParallel: 1, clock });
    const left = other.executor('left');
    const blocked = left.dispatch(job('blocked', undefined, clock));
    const queued = left.dispatch(job('queued', undefined, clock));
    await clock.advance(1);
    left.close();
    await expect(queued).rejects.toBeInstanceOf(CancelledError);
    await expect(left.dispatch(job('again'))).rejects.toThrow('The pool\'s share "left" is closed');
    expect(other.stats()).toEqual([]);
    expect(other.executor('left').name).toBe('left'); // the name is free again
    await clock.advance(20);
    expect(await blocked).toBe('ok');
    const closedAlready = new AbortController();
    closedAlready.abort();
    expect(sharedPool({ signal: closedAlready.signal }).closed).toBe(true);
  });

  it('releases the slot of an attempt whose executor throws or rejects', async () => {
    const clock = new SimulatedClock();
    let calls = 0;
    const flaky: Executor = {
      kind: 'flaky',
      maxParallel: 1,
      dispatch: (j) => {
        calls++;
        if (j.chunk.title === 'throws') throw new Error('no worker');
        if (j.chunk.title === 'rejects') return Promise.reject(new Error('worker lost'));
        return Promise.resolve('ok');
      },
    };
    const share = sharedPool({ executor: flaky, clock }).executor('a');
    const results = await Promise.allSettled([share.dispatch(job('throws')), share.dispatch(job('rejects')), share.dispatch(job('fine'))]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['no worker', 'worker lost', 'ok']);
    expect(calls).toBe(3);
  });

  it('wraps a p-limit inProcessExecutor and shares its slots by weight', async () => {
    const clock = new SimulatedClock();
    const limit = inProcessExecutor({ maxParallel: 3 });
    const fair = sharedPool({ executor: limit, clock });
    const [a, b] = [tally(), tally()];
    const both = Promise.all([
      executePlan(flat(30), { clock, executor: fair.executor('a', { weight: 2 }), runChunk: worker(clock, a) }),
      executePlan(flat(30), { clock, executor: fair.executor('b'), runChunk: worker(clock, b) }),
    ]);
    await until(clock, 25);
    expect(`${a.running}:${b.running}`).toBe('2:1');
    await drive(clock, both);
  });
});

/** A job of its own (the pool needs only its signal and what the executor reads). */
function job(title: string, signal: AbortSignal = new AbortController().signal, clock?: SimulatedClock): ChunkJob {
  const c = { ...chunk(0), title };
  const at = new SimulatedClock();
  const ctx = RunContext.create({ runId: 'run', clock: at, signal, root: createOp('op-0', 'plan', 'plan', at.now()) });
  return {
    ctx,
    runId: 'run',
    planId: 'plan',
    chunk: c,
    prompt: title,
    role: { system: '', preferredTools: [] },
    attempt: 1,
    signal,
    execute: async () => (clock ? sleep(clock, 10).then(() => 'ok') : 'ok'),
    recordUsage: () => undefined,
    toJSON: () => ({ runId: 'run', planId: 'plan', chunk: c, prompt: title, role: { system: '', preferredTools: [] }, attempt: 1, checkpointPath: '/plan' }),
  };
}

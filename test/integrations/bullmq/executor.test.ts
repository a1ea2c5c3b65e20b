import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TroupeEvent } from '../../../src/core/events.js';
import { walk, type OpNode } from '../../../src/core/ops.js';
import { defineTool } from '../../../src/core/tools.js';
import { ConfigurationError } from '../../../src/core/errors.js';
import { bullmqExecutor, startWorker, type BullmqExecutor, type TroupeWorker } from '../../../src/integrations/bullmq/index.js';
import { chunkJobId } from '../../../src/integrations/bullmq/wire.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { readRun } from '../../../src/persistence/run-log.js';
import { run } from '../../../src/core/run.js';
import { executePlan, planRunnable } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter, type ScriptedAdapterOptions } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe('bullmqExecutor options', () => {
  it('refuses bad options with a ConfigurationError, before connecting', () => {
    const bad: unknown[] = [
      undefined,
      {},
      { connection: '' },
      { connection: 'redis://127.0.0.1:1', queueName: 'a b' },
      { connection: 'redis://127.0.0.1:1', prefix: '' },
      { connection: 'redis://127.0.0.1:1', maxParallel: 0 },
      { connection: 'redis://127.0.0.1:1', timeoutMs: -1 },
      { connection: 'redis://127.0.0.1:1', keepJobs: { completed: 1.5 } },
      { connection: 'redis://127.0.0.1:1', traceContext: 'yes' },
    ];
    for (const options of bad) expect(() => bullmqExecutor(options as never), JSON.stringify(options)).toThrow(ConfigurationError);
    const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:1', queueName: 'plans', maxParallel: 8 });
    expect(executor).toMatchObject({ kind: 'bullmq', maxParallel: 8, queueName: 'plans' });
  });

  it('gives each attempt of each chunk its own job id, with no `:` (BullMQ refuses it)', () => {
    const a = chunkJobId('run:1', '/plan:p#0/chunk-3', 1);
    expect(a).not.toContain(':');
    expect(new Set([a, chunkJobId('run:1', '/plan:p#0/chunk-3', 2), chunkJobId('run:1', '/plan:p#0/chunk-30', 1), chunkJobId('run%3A1', '/plan:p#0/chunk-3', 1)]).size).toBe(4);
  });
});

describe.skipIf(!url)('bullmqExecutor on Redis', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  /** A queue of its own, an executor on it, and workers on the scripted adapter. */
  async function setup(options: { workers?: number; adapter?: ScriptedAdapterOptions; capacity?: number; concurrency?: number; tools?: Parameters<typeof startWorker>[0]['tools'] } = {}) {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const workers: TroupeWorker[] = [];
    for (let i = 0; i < (options.workers ?? 2); i++) {
      const adapter = scriptedAdapter(options.adapter ?? { fallback: (r) => `w${i} did chunk ${chunkOf(r.text)}` });
      const worker = await startWorker({ ...place, adapter, name: `w${i}`, maxParallel: options.concurrency ?? 2, ...(options.tools ? { tools: options.tools } : {}) });
      open.push(worker);
      workers.push(worker);
    }
    const executor: BullmqExecutor = bullmqExecutor({ ...place, maxParallel: options.capacity ?? 8, reconcileIntervalMs: 500 });
    open.push(executor);
    return { place, workers, executor };
  }

  it('brings every chunk’s result to the plan exactly once, whichever worker ran it', async () => {
    const { executor } = await setup();
    const completed: Array<{ sequenceIndex?: number; worker: string }> = [];
    executor.events.on('job.completed', (e) => completed.push(e));
    const chunks = [chunk(0), chunk(1), chunk(2), chunk(3, [0]), chunk(4, [1, 2]), chunk(5, [3, 4]), chunk(6), chunk(7, [6])];
    const outcome = await executePlan(plan(chunks), { executor, retry: { maxRetries: 0 } });
    expect(outcome.status).toBe('completed');
    expect(completed.map((c) => c.sequenceIndex).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const r of outcome.results) {
      const ran = completed.find((c) => c.sequenceIndex === r.sequenceIndex)!;
      expect(r.output).toBe(`${ran.worker} did chunk ${r.sequenceIndex}`);
      expect(r.attempts).toBe(1);
    }
    // The dependency results travelled in the prompt: chunk 5's answer depends on 3 and 4, which ran before it.
    expect(new Set(completed.map((c) => c.worker)).size).toBeGreaterThan(0);
  });

  it('refuses a plan with a role no worker knows before anything is queued, and a chunk a worker could not read before its job is added', async () => {
    const { executor } = await setup({ workers: 1 });
    const queued: unknown[] = [];
    executor.events.on('job.queued', (e) => queued.push(e));
    const bogus = { ...chunk(1), role: 'Bogus' } as unknown as ReturnType<typeof chunk>;
    const error = await executePlan(plan([chunk(0), bogus]), { executor }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('chunk 1 has unknown role "Bogus"') });
    // A chunk the schema refuses (a prompt too short to be one) fails each attempt here, typed, and no job is added for it.
    const outcome = await executePlan(plan([chunk(0), { ...chunk(1), prompt: 'Do it.' }]), { executor, retry: { maxRetries: 1, delayMs: 0 } });
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'failed']);
    expect(outcome.results[1]).toMatchObject({ attempts: 2, error: expect.stringContaining('cannot be sent to a worker: chunk.prompt') });
    expect(queued).toEqual([expect.objectContaining({ sequenceIndex: 0 })]);
  });

  it('counts attempts with the scheduler’s retry policy; a worker’s failure comes back typed', async () => {
    const { executor } = await setup({
      workers: 1,
      adapter: { rules: [{ match: '# Chunk 1:', reply: { fault: 'throw', error: 'model overloaded' }, times: 1 }], fallback: (r) => `did ${chunkOf(r.text)}` },
    });
    const failures: Array<{ code: string; error: string }> = [];
    executor.events.on('job.failed', (e) => failures.push(e));
    const statuses: TroupeEvent[] = [];
    const outcome = await executePlan(plan([chunk(0), chunk(1), chunk(2, [1])]), { executor, retry: { delayMs: 0 }, onEvent: (e) => e.type === 'chunk.status' && statuses.push(e) });
    expect(outcome.status).toBe('completed');
    expect(outcome.results.map((r) => r.attempts)).toEqual([1, 2, 1]);
    expect(failures).toEqual([expect.objectContaining({ code: 'remote_failed', error: expect.stringContaining('model overloaded') })]);
    const retrying = statuses.find((e) => e.type === 'chunk.status' && e.status === 'retrying');
    expect(retrying).toMatchObject({ sequenceIndex: 1, error: expect.stringContaining('model overloaded') });
    // The retry's prompt carried the previous error, as in process.
    expect(outcome.results[2]!.output).toBe('did 2');
  });

  it('streams the workers’ events, tool calls, text deltas and usage into the run as if the chunks ran here', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look a word up', parameters: z.object({ word: z.string() }), execute: ({ word }) => `${word}: found` });
    const script: ScriptedAdapterOptions = {
      rules: [
        { match: (r) => r.turn === 1, reply: (r) => ({ toolCalls: [{ name: 'lookup', arguments: { word: `w${chunkOf(r.text)}` } }], usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.001 } }) },
        { reply: { text: 'looked it up', usage: { inputTokens: 7, outputTokens: 4, costUsd: 0.002 } } },
      ],
    };
    const chunks = [chunk(0), chunk(1), chunk(2, [0, 1])];
    const local = await runLogged((onEvent) => run(planRunnable(plan(chunks), { tools: [lookup] }), 'task', { adapter: scriptedAdapter(script), store: memoryStore(), onEvent }));
    const { executor } = await setup({ workers: 2, adapter: script, tools: [lookup] });
    const store = memoryStore();
    // On a worker an agent built from a role gets only the tools the role allows: here, as in process, `lookup`.
    const remote = await runLogged((onEvent) => run(planRunnable(plan(chunks), { executor, roles: { Generic: { tools: ['lookup'] } } }), 'task', { store, onEvent }));

    expect(remote.outcome.status).toBe('completed');
    expect(remote.outcome.usage).toEqual(local.outcome.usage);
    expect(remote.outcome.usage).toMatchObject({ inputTokens: 51, outputTokens: 21, turns: 6 });
    expect(remote.outcome.usage.costUsd).toBeCloseTo(0.009, 10);
    // The same kinds of events, as many of each, and where each chunk waited and ran.
    const { 'remote.queued': queued, 'remote.started': started, ...same } = countTypes(remote.events);
    expect(same).toEqual(countTypes(local.events));
    expect([queued, started]).toEqual([3, 3]);
    // Per chunk: one tool call and its result, one text delta (the second turn), two model turns.
    expect(countTypes(remote.events)).toMatchObject({ 'tool.called': 3, 'tool.completed': 3, 'session.event': 3, 'model.turn': 6, 'agent.turn': 6 });
    const toolResults = remote.events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(toolResults.map((e) => [e.name, e.isError])).toEqual([0, 1, 2].map(() => ['lookup', false]));
    // The op tree has the same shape, and every event's op is a node of it.
    expect(shape(remote.outcome.trace)).toEqual(shape(local.outcome.trace));
    const ids = new Set<string>();
    walk(remote.outcome.trace, (n) => void ids.add(n.id));
    for (const e of remote.events) if (e.opId !== undefined) expect(ids.has(e.opId), `${e.type} ${e.opId}`).toBe(true);
    // A chunk's ops sit under its checkpoint path, as views expect.
    const agentStarts = remote.events.filter((e): e is TroupeEvent<'op.started'> => e.type === 'op.started' && e.kind === 'agent');
    expect(agentStarts.map((e) => e.path).sort()).toEqual(['/plan:plan#0/chunk-0/agent:Generic#0', '/plan:plan#0/chunk-1/agent:Generic#0', '/plan:plan#0/chunk-2/agent:Generic#0']);
    // Model turns get session ordinals of the coordinator's run (1, 2, 3 for the three sessions of Generic).
    const sessions = new Set(remote.events.filter((e): e is TroupeEvent<'model.turn'> => e.type === 'model.turn').map((e) => e.session));
    expect([...sessions].sort()).toEqual([1, 2, 3]);
    // The run log in the store holds the remote events too.
    const log = await readRun(remote.outcome.runId, { store });
    expect(countTypes(log.events as TroupeEvent[])).toEqual(countTypes(remote.events));
  });

  it('counts the workers’ turns toward the run’s budgets once, and has workers run each attempt under what is left', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look a word up', parameters: z.object({ word: z.string() }), execute: ({ word }) => `${word}: found` });
    const script: ScriptedAdapterOptions = {
      rules: [
        { match: (r) => r.turn === 1, reply: (r) => ({ toolCalls: [{ name: 'lookup', arguments: { word: `w${chunkOf(r.text)}` } }], usage: { inputTokens: 10, outputTokens: 3 } }) },
        { reply: { text: 'looked it up', usage: { inputTokens: 7, outputTokens: 4 } } },
      ],
    };
    const { executor } = await setup({ workers: 1, adapter: script, tools: [lookup] });
    // The plan budget's final spend, wall-clock time aside (the queue takes longer).
    const closed = (events: TroupeEvent[]) => {
      const { wallClockMs: _time, ...spent } = events.filter((e): e is TroupeEvent<'budget.closed'> => e.type === 'budget.closed' && e.budget === 'plan').at(-1)!.spent;
      return spent;
    };
    // A plan budget with room: the workers' six turns count toward it once each, as in process.
    const budgeted = (options: Parameters<typeof planRunnable>[1]) => runLogged((onEvent) => run(planRunnable(plan([chunk(0), chunk(1), chunk(2, [0, 1])]), { ...options, budget: { run: { name: 'plan', modelCalls: 100 } } }), 'task', { onEvent }));
    const local = await budgeted({ adapter: scriptedAdapter(script), tools: [lookup] });
    const remote = await budgeted({ executor, roles: { Generic: { tools: ['lookup'] } } });
    expect(closed(remote.events)).toMatchObject({ modelCalls: 6, inputTokens: 51, outputTokens: 21 });
    expect(closed(remote.events)).toEqual(closed(local.events));
    // A chunk budget of one model call: the worker stops the attempt before its second turn, as the plan does in process.
    const tight = (options: Parameters<typeof planRunnable>[1]) => run(planRunnable(plan([chunk(0)]), { ...options, budget: { chunk: { modelCalls: 1 } }, retry: { maxRetries: 0 } }), 'task');
    const inProcess = await tight({ adapter: scriptedAdapter(script), tools: [lookup] });
    const onWorker = await tight({ executor });
    expect(inProcess.results[0]!.status).toBe('failed');
    expect(onWorker.results[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/budget/i) });
    expect(onWorker.usage.turns).toBe(1);
  });

  it('times an attempt out as in process: the worker aborts it and the scheduler retries', async () => {
    const { executor, workers } = await setup({
      workers: 1,
      adapter: { rules: [{ match: '# Chunk 1:', reply: { fault: 'hang' }, times: 1 }], fallback: (r) => `did ${chunkOf(r.text)}` },
    });
    const failed: Array<{ label: string; cancelled: boolean }> = [];
    workers[0]!.events.on('job.failed', (e) => failed.push(e));
    const outcome = await executePlan(plan([chunk(0), chunk(1)]), { executor, chunkTimeoutMs: 2000, retry: { delayMs: 0 } });
    expect(outcome.status).toBe('completed');
    expect(outcome.results[1]).toMatchObject({ status: 'completed', attempts: 2, output: 'did 1' });
    await until(() => failed.length === 1);
    expect(failed[0]).toMatchObject({ label: expect.stringContaining('chunk 1'), cancelled: true });
  });

  it('skips dependents and stops at the abort threshold as in process', async () => {
    const script: ScriptedAdapterOptions = {
      rules: [{ match: /^# Chunk [01]:/, reply: { fault: 'throw', error: 'cannot do it' } }],
      fallback: (r) => `did ${chunkOf(r.text)}`,
    };
    const chunks = [chunk(0), chunk(1), chunk(2, [0]), chunk(3, [2]), chunk(4), chunk(5, [4])];
    const options = { abortThreshold: 2, retry: { maxRetries: 0 }, maxParallel: 1 } as const;
    const local = await executePlan(plan(chunks), { ...options, adapter: scriptedAdapter(script) });
    const { executor } = await setup({ workers: 1, adapter: script, capacity: 1, concurrency: 1 });
    const remote = await executePlan(plan(chunks), { ...options, executor });
    expect(remote.status).toBe('failed');
    expect(remote.reason).toBe('abort-threshold');
    expect(remote.results.map((r) => r.status)).toEqual(local.results.map((r) => r.status));
    expect(remote.results.map((r) => r.status)).toContain('skipped');
  });

  it('does not take the results of an earlier run that had the same run id', async () => {
    const { place, executor } = await setup({ workers: 1 });
    const runId = `same-${randomUUID()}`;
    const first = await executePlan(plan([chunk(0)]), { executor, runId });
    expect(first.results[0]!.output).toBe('w0 did chunk 0');
    const other = await startWorker({ ...place, adapter: scriptedAdapter({ fallback: 'the second answer' }), name: 'w9' });
    open.push(other);
    await open[0]!.close(); // the first worker leaves
    const second = await executePlan(plan([chunk(0)]), { executor, runId });
    expect(second.results[0]!.output).toBe('the second answer');
  });

  it('reports queue depth, active jobs and wait times in stats()', async () => {
    const { executor } = await setup({ workers: 1, concurrency: 1, adapter: { fallback: { text: 'ok', delayMs: 150 } } });
    const running = executePlan(plan([chunk(0), chunk(1), chunk(2), chunk(3)]), { executor });
    let seen = await executor.stats();
    while (!(seen.active === 1 && seen.waiting >= 1)) seen = await executor.stats();
    expect(seen).toMatchObject({ active: 1, inFlight: 4, workers: expect.any(Number) });
    expect(seen.oldestWaitingMs).toBeGreaterThanOrEqual(0);
    await running;
    const after = await executor.stats();
    expect(after).toMatchObject({ waiting: 0, active: 0, inFlight: 0 });
    expect(after.recentWaitMs.count).toBe(4);
    expect(after.recentWaitMs.max).toBeGreaterThanOrEqual(after.recentWaitMs.median);
  });
});

async function runLogged<T>(fn: (onEvent: (e: TroupeEvent) => void) => Promise<T>): Promise<{ outcome: T; events: TroupeEvent[] }> {
  const events: TroupeEvent[] = [];
  const outcome = await fn((e) => events.push(e));
  return { outcome, events };
}

function countTypes(events: readonly TroupeEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  return counts;
}

/** The op tree as kinds and names, children sorted (chunks run in any order). */
function shape(node: OpNode): unknown {
  return { kind: node.kind, name: node.name, status: node.status, usage: node.usage, children: node.children.map(shape).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))) };
}

/** Resolve once `check()` holds, checking on each turn of the event loop (a hang guard is the test's time-out). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

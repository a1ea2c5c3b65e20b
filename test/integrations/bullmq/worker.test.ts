import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { ConfigurationError } from '../../../src/core/errors.js';
import { bullmqExecutor, startWorker, type StartWorkerOptions } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { gitWorktree } from '../../../src/workspaces/git-worktree.js';
import { chunk, chunkOf, plan, startWorkerProcess, stopAll, type WorkerProcess } from '../../helpers/bullmq.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';
import { tempDirs } from '../../helpers/temp-dirs.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);
const temp = tempDirs('troupe-worker-');

describe('startWorker options', () => {
  it('refuses bad options with a ConfigurationError before connecting', async () => {
    const adapter = scriptedAdapter();
    const base = { connection: 'redis://127.0.0.1:1', adapter };
    const bad: unknown[] = [
      undefined,
      { connection: 'redis://127.0.0.1:1' }, // no adapter
      { ...base, adapter: {} },
      { ...base, adapters: { a: 1 } },
      { ...base, maxParallel: 0 },
      { ...base, roles: { Wizard: 'x' } },
      { ...base, roles: { Testing: '' } },
      { ...base, agents: 42 },
      { ...base, agents: [{ name: 'x' }] },
      { ...base, store: {} },
      { ...base, workspace: {} },
      { ...base, name: '' },
      { ...base, lockDurationMs: -5 },
      { ...base, closeTimeoutMs: 1.5 },
      { ...base, handleSignals: 'yes' },
      { ...base, observe: 'x' },
      { ...base, tools: [{}] },
      { ...base, queueName: 'has space' },
    ];
    for (const options of bad) await expect(startWorker(options as StartWorkerOptions), JSON.stringify(options)).rejects.toThrow(ConfigurationError);
  });

  it('refuses an agents folder whose graph is invalid, naming the problem', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'a.md'), '---\nname: a\nhandoff: missing\n---\nYou are a.\n');
    await expect(startWorker({ connection: 'redis://127.0.0.1:1', adapter: scriptedAdapter(), agents: dir })).rejects.toThrow(/missing/);
  });
});

describe.skipIf(!url)('startWorker on Redis', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  const procs: WorkerProcess[] = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
    await stopAll(procs);
  });

  function place() {
    return { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
  }

  it('resolves a chunk’s role to its own agents (from an agents folder, or mapped with `roles`), else to the role configuration the job carries', async () => {
    const p = place();
    const dir = temp();
    writeFileSync(join(dir, 'CodeAnalysis.md'), '---\nname: CodeAnalysis\nmodel: reader-model\n---\nYou read code for this worker.\n');
    writeFileSync(join(dir, 'tester.md'), '---\nname: tester\n---\nYou test for this worker.\n');
    const adapter = scriptedAdapter({ fallback: (r) => `${r.agent} via ${r.spec.model ?? 'default'}` });
    const cheap = scriptedAdapter({ id: 'cheap', fallback: (r) => `cheap ${r.agent} via ${r.spec.model}` });
    open.push(await startWorker({ ...p, adapter, adapters: { cheap }, agents: dir, roles: { Testing: 'tester' } }));
    const executor = bullmqExecutor(p);
    open.push(executor);
    const chunks = [{ ...chunk(0), role: 'CodeAnalysis' as const }, { ...chunk(1), role: 'Testing' as const }, { ...chunk(2), role: 'Performance' as const }];
    const outcome = await executePlan(plan(chunks), { executor, roles: { Performance: { model: 'fast-model', adapter: 'cheap' } } });
    expect(outcome.results.map((r) => r.output)).toEqual(['CodeAnalysis via reader-model', 'tester via default', 'cheap Performance via fast-model']);
    expect(adapter.sessions.map((s) => s.system)).toEqual(['You read code for this worker.', 'You test for this worker.']);
    expect(cheap.sessions[0]!.system).toMatch(/You measure before and after/);
  });

  it('fails a chunk whose role is mapped to an agent the worker lacks, or names an adapter it lacks', async () => {
    const p = place();
    open.push(await startWorker({ ...p, adapter: scriptedAdapter({ fallback: 'ok' }), roles: { Testing: 'nobody' } }));
    const executor = bullmqExecutor(p);
    open.push(executor);
    const outcome = await executePlan(plan([{ ...chunk(0), role: 'Testing' }, chunk(1)]), { executor, retry: { maxRetries: 0 }, roles: { Generic: { adapter: 'absent' } } });
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(outcome.results[0]!.error).toMatch(/maps role Testing to agent "nobody"/);
    expect(outcome.results[1]!.error).toMatch(/adapter "absent"/);
  });

  it('prepares, merges and cleans up each chunk’s workspace on the worker', async () => {
    const { repo, root, dispose } = makeRepo();
    try {
      const p = place();
      const adapter = scriptedAdapter({
        fallback: (r) => {
          writeFileSync(join(r.spec.workspace!, `chunk-${chunkOf(r.text)}.txt`), 'written on the worker\n');
          return 'wrote it';
        },
      });
      open.push(await startWorker({ ...p, adapter, workspace: gitWorktree({ root }), baseDir: repo, maxParallel: 1 }));
      const executor = bullmqExecutor(p);
      open.push(executor);
      const outcome = await executePlan(plan([chunk(0), chunk(1, [0])]), { executor });
      expect(outcome.status).toBe('completed');
      expect(existsSync(join(repo, 'chunk-0.txt')) && existsSync(join(repo, 'chunk-1.txt'))).toBe(true);
      expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    } finally {
      dispose();
    }
  });

  it('closes gracefully: a running job finishes, then the worker takes no more', async () => {
    const p = place();
    const worker = await startWorker({ ...p, adapter: scriptedAdapter({ fallback: { text: 'finished', delayMs: 200 } }) });
    open.push(worker);
    const executor = bullmqExecutor({ ...p, maxParallel: 1 });
    open.push(executor);
    const started = new Promise<void>((resolve) => worker.events.once('job.started', () => resolve()));
    const running = executePlan(plan([chunk(0), chunk(1, [0])]), { executor, chunkTimeoutMs: 3000, retry: { maxRetries: 0 } });
    await started;
    const completed: string[] = [];
    worker.events.on('job.completed', (e) => completed.push(e.label));
    await worker.close();
    expect(completed).toEqual(['chunk 0 "Step 0" (Generic)']);
    expect(worker.running).toBe(0);
    // Chunk 1 stays queued with no worker, until its time-out.
    const outcome = await running;
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'failed']);
    expect(outcome.results[1]!.error).toMatch(/timed out/);
  });

  it('hands a job that outlives the grace period back to the queue, where another worker finishes it', { timeout: 30_000 }, async () => {
    const p = place();
    const a = await startWorker({ ...p, name: 'A', adapter: scriptedAdapter({ fallback: { text: 'A finished', delayMs: 60_000 } }), closeTimeoutMs: 100 });
    open.push(a);
    const executor = bullmqExecutor({ ...p, maxParallel: 1 });
    open.push(executor);
    const handedBack = new Promise<string>((resolve) => a.events.once('job.handedBack', (e) => resolve(e.label)));
    const started = new Promise<void>((resolve) => a.events.once('job.started', () => resolve()));
    const running = executePlan(plan([chunk(0)]), { executor });
    await started;
    const b = await startWorker({ ...p, name: 'B', adapter: scriptedAdapter({ fallback: 'B finished' }) });
    open.push(b);
    await a.close();
    expect(await handedBack).toBe('chunk 0 "Step 0" (Generic)');
    const outcome = await running;
    expect(outcome.results[0]).toMatchObject({ status: 'completed', output: 'B finished', attempts: 1 });
  });

  it('closes on SIGTERM when asked to, after its running job has finished', { timeout: 30_000 }, async () => {
    const p = place();
    const worker = await startWorkerProcess({ url: url!, queueName: p.queueName, prefix: p.prefix, name: 'term', delayMs: 500 });
    procs.push(worker);
    const executor = bullmqExecutor(p);
    open.push(executor);
    const running = executePlan(plan([chunk(0)]), { executor });
    await worker.waitFor((l) => l.t === 'call');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines.map((l) => l.t)).toEqual(['ready', 'started', 'call', 'completed', 'closed']);
    expect((await running).results[0]!.output).toBe('term did chunk 0');
  });

  it('fails a job it cannot read with a readable, typed reason, and goes on taking jobs', async () => {
    const p = place();
    const worker = await startWorker({ ...p, adapter: scriptedAdapter({ fallback: 'fine' }) });
    open.push(worker);
    const failed = new Promise<{ error: string; code?: string }>((resolve) => worker.events.once('job.failed', resolve));
    const queue = new Queue(p.queueName, { connection: { url: url! }, prefix: p.prefix });
    try {
      await queue.add('chunk', { v: 1, kind: 'chunk', runId: 'r', prompt: 42 }, { jobId: 'garbage' });
      expect(await failed).toMatchObject({ code: 'invalid_argument', error: expect.stringMatching(/not a troupe job this worker can read \(wire version 1\): .*prompt/) });
      while ((await queue.getJobState('garbage')) !== 'failed') await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await queue.getJob('garbage'))?.failedReason).toMatch(/not a troupe job/);
    } finally {
      await queue.close();
    }
    const executor = bullmqExecutor(p);
    open.push(executor);
    expect((await executePlan(plan([chunk(0)]), { executor })).results[0]!.output).toBe('fine');
  });

  it('tells when it has been idle for a while (on its clock), and when it closes', async () => {
    const clock = new SimulatedClock();
    const p = place();
    const worker = await startWorker({ ...p, adapter: scriptedAdapter({ fallback: 'ok' }), clock });
    open.push(worker);
    let idle = false;
    const waiting = worker.onIdle(1000).then(() => (idle = true));
    await clock.advance(999);
    expect(idle).toBe(false);
    await clock.advance(1);
    await waiting;
    expect(idle).toBe(true);
    const abort = new AbortController();
    const aborted = worker.onIdle(5000, { signal: abort.signal }).catch((e: unknown) => e);
    abort.abort();
    expect(await aborted).toBeInstanceOf(Error);
    const untilClosed = worker.onIdle(60_000);
    await worker.close();
    await untilClosed;
  });
});


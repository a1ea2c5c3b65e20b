import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { coordinate } from '../../../src/coordination/coordinate.js';
import type { TurnExecutor } from '../../../src/coordination/index.js';
import { ConfigurationError } from '../../../src/core/errors.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { run } from '../../../src/core/run.js';
import { bullmqExecutor, startWorker, type TroupeWorker, type WorkerJobEvent } from '../../../src/integrations/bullmq/index.js';
import { defineTool, type ToolDefinition } from '../../../src/core/tools.js';
import { agent } from '../../../src/patterns/agent.js';
import { z } from 'zod';
import { inProcessExecutor } from '../../../src/plan/engine/executor.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);
const stuck = { expectedTaskMs: 60_000, statusTimeoutMs: 60_000 };
const taskOf = (text: string) => /Task (\S+):/.exec(text)?.[1];

describe('coordinate with an executor', () => {
  it('refuses an executor that is not one, and an executor with a workspace', () => {
    const lead = agent({ name: 'lead' });
    const workers = [agent({ name: 'w1' })];
    expect(() => coordinate({ lead, workers, stuck, executor: {} as never })).toThrow(ConfigurationError);
    const workspace = { strategy: { kind: 'none', prepare: async () => ({ kind: 'none', path: '.', chunkId: 'x', baseDir: '.' }), merge: async () => ({ status: 'merged', files: [] }), cleanup: async () => undefined }, baseDir: '.' };
    expect(() => coordinate({ lead, workers, stuck, executor: inProcessExecutor(), workspace: workspace as never })).toThrow(/do not go together/);
  });

  it('takes every executor of troupe/plan (a type check)', () => {
    const executors: TurnExecutor[] = [inProcessExecutor(), bullmqExecutor({ connection: 'redis://127.0.0.1:1' })];
    expect(executors.map((e) => e.kind)).toEqual(['in-process', 'bullmq']);
  });

  it('runs each worker turn as an executor job in process, with the same results', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', match: 'Every task is resolved', reply: 'All done.' }, { agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: (r) => `Report: ${taskOf(r.text)}` }] });
    const executor = inProcessExecutor({ maxParallel: 2 });
    const dispatched: string[] = [];
    const counting = { ...executor, dispatch: (job: Parameters<typeof executor.dispatch>[0]) => (dispatched.push(job.toJSON().agent!), executor.dispatch(job)) };
    const flow = coordinate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'w1' }), agent({ name: 'w2' })], tasks: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }], stuck, executor: counting });
    const result = await run(flow, 'Build it', { adapter });
    expect(result.tasks.map((t) => [t.id, t.status, t.result])).toEqual([
      ['a', 'done', 'Report: a'],
      ['b', 'done', 'Report: b'],
    ]);
    expect(dispatched).toHaveLength(2);
    expect(result.synthesis).toBe('All done.');
  });

  it('names the worker agent’s tools in each turn’s job: a queue worker that builds the agent gives it only those', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'lead', reply: 'OK' }, { agent: /^w/, reply: 'Report.' }] });
    const executor = inProcessExecutor();
    const roles: unknown[] = [];
    const recording = { ...executor, dispatch: (job: Parameters<typeof executor.dispatch>[0]) => (roles.push(job.toJSON().role), executor.dispatch(job)) };
    const search = defineTool({ name: 'search', description: 'Search', parameters: z.object({ q: z.string() }), execute: () => 'found' }) as ToolDefinition;
    for (const worker of [agent({ name: 'w1', system: 'You search.', tools: [search] }), agent({ name: 'w2' })]) {
      await run(coordinate({ lead: agent({ name: 'lead' }), workers: [worker], tasks: [{ id: 'a', title: 'A' }], stuck, executor: recording }), 'Go', { adapter });
    }
    expect(roles).toEqual([
      { system: 'You search.', preferredTools: [], tools: ['search'] },
      { system: '', preferredTools: [] },
    ]);
  });
});

describe.skipIf(!url)('coordinate with a queue-backed executor', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  it('runs the workers’ turns on queue workers; the lead answers a question between two jobs', { timeout: 60_000 }, async () => {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    // Two queue workers. Neither has the coordination's agents in a registry: each builds them from the job (name, system prompt).
    const prompts: Array<{ worker: string; agent: string; text: string; system: string | undefined }> = [];
    const workers: TroupeWorker[] = [];
    const started: WorkerJobEvent[] = [];
    for (const name of ['qa', 'qb']) {
      const adapter = scriptedAdapter({
        fallback: (r) => {
          prompts.push({ worker: name, agent: r.agent, text: r.text, system: r.spec.system });
          const task = taskOf(r.text);
          if (task === 'q' && !r.text.includes('Answer from the lead')) return 'QUESTION: blue or green?';
          return `${name} did ${task}${r.text.includes('Answer from the lead: green') ? ' in green' : ''}`;
        },
      });
      const worker = await startWorker({ ...place, adapter, name, maxParallel: 1 });
      worker.events.on('job.started', (e) => started.push(e));
      open.push(worker);
      workers.push(worker);
    }
    const executor = bullmqExecutor({ ...place, maxParallel: 4, reconcileIntervalMs: 500 });
    open.push(executor);

    // The lead runs here, on an adapter of its own; the coordinator's adapter never answers a worker.
    const local = scriptedAdapter({
      rules: [
        { agent: 'lead', match: 'Every task is resolved', reply: 'Synthesis.' },
        { agent: 'lead', match: 'blue or green', reply: (r) => `ANSWER ${/QUESTION from (w\d)/.exec(r.text)?.[1]}: green` },
        { agent: 'lead', reply: 'OK' },
        { agent: /^w/, reply: 'worker ran here' },
      ],
    });
    const events: TroupeEvent[] = [];
    const flow = coordinate({
      lead: agent({ name: 'lead' }),
      workers: [agent({ name: 'w1', system: 'You are w1.' }), agent({ name: 'w2', system: 'You are w2.' })],
      tasks: [{ id: 'p', title: 'Plain' }, { id: 'q', title: 'Asks' }, { id: 'r', title: 'Another' }],
      stuck,
      executor,
    });
    const result = await run(flow, 'Do the three things', { adapter: local, onEvent: (e) => events.push(e) });

    expect(result.status).toBe('completed');
    const byId = Object.fromEntries(result.tasks.map((t) => [t.id, t]));
    expect(Object.values(byId).map((t) => t.status)).toEqual(['done', 'done', 'done']);
    expect(byId.q!.result).toMatch(/^q[ab] did q in green$/);
    expect(byId.p!.result).toMatch(/^q[ab] did p$/);
    // Every worker turn ran on a queue worker, on an agent named after the coordination's worker, with its system prompt.
    expect(prompts.every((p) => (p.agent === 'w1' || p.agent === 'w2') && p.system === `You are ${p.agent}.`)).toBe(true);
    expect(local.calls.filter((c) => c.agent !== 'lead')).toHaveLength(0);
    // Task q took two jobs (the question, then the work with the lead's answer in the job's input).
    const qJobs = prompts.filter((p) => taskOf(p.text) === 'q');
    expect(qJobs).toHaveLength(2);
    expect(qJobs[1]!.text).toContain('## EARLIER IN THIS TASK');
    expect(qJobs[1]!.text).toContain('QUESTION: blue or green?');
    expect(started).toHaveLength(4);
    for (const e of started) expect(e.label).toMatch(/^task "(Plain|Asks|Another)" \(w[12]\)$/);
    // The workers' events joined the coordinator's run.
    expect(events.filter((e) => e.type === 'remote.started')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'agent.turn' && (e.agent === 'w1' || e.agent === 'w2'))).toHaveLength(4);
    expect(result.usage.turns).toBeGreaterThanOrEqual(4);
  });
});

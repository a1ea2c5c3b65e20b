import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TroupeEvent } from '../../../src/core/events.js';
import { ConfigurationError } from '../../../src/core/errors.js';
import { GuardrailTripError, defineGuardrail, defineToolGuardrail } from '../../../src/core/guardrails.js';
import { run } from '../../../src/core/run.js';
import { defineTool } from '../../../src/core/tools.js';
import { withGuardrails } from '../../../src/guardrails/with-guardrails.js';
import { bullmqExecutor, remote, startWorker, type WorkerJobEvent } from '../../../src/integrations/bullmq/index.js';
import { agent } from '../../../src/patterns/agent.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { chunk, chunkOf, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

const noSecrets = defineGuardrail({
  name: 'no-secrets',
  check: (text) => (text.includes('SECRET') ? { tripped: true, reason: 'the answer leaks a secret', info: { rule: 'SECRET' } } : { tripped: false }),
});

describe('startWorker guardrails option', () => {
  it('refuses guardrails that are not guardrail options, before connecting', async () => {
    const adapter = scriptedAdapter({ fallback: 'ok' });
    const bad: unknown[] = ['no', { input: 'no' }, { output: [{ name: 'x' }] }, { tools: [{ name: 'y' }] }];
    for (const guardrails of bad) {
      await expect(startWorker({ connection: 'redis://127.0.0.1:1', adapter, guardrails: guardrails as never })).rejects.toThrow(ConfigurationError);
    }
  });
});

describe.skipIf(!url)('guardrails that trip on a worker', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  function place() {
    return { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
  }

  it('halts the coordinator’s run with the worker’s GuardrailTripError: no retry, and chunks not yet started never run', { timeout: 30_000 }, async () => {
    const where = place();
    // Chunk 1 answers with a secret; every model call is counted by chunk.
    const calls: number[] = [];
    const adapter = scriptedAdapter({
      fallback: (r) => {
        const n = chunkOf(r.text)!;
        calls.push(n);
        return n === 1 ? 'done, and the SECRET is 42' : `did ${n}`;
      },
    });
    // The chunks run on agents the worker builds from their role: guarded by the worker's `guardrails`.
    const worker = await startWorker({ ...where, adapter, name: 'guarded', maxParallel: 1, guardrails: { output: [noSecrets] } });
    open.push(worker);
    const failed: WorkerJobEvent[] = [];
    worker.events.on('job.failed', (e) => failed.push(e));
    const executor = bullmqExecutor({ ...where, maxParallel: 1, reconcileIntervalMs: 500 });
    open.push(executor);
    const queued: number[] = [];
    executor.events.on('job.queued', (e) => queued.push(e.sequenceIndex!));

    // Chunk 1 heads the longest chain, so it is dispatched first; with one slot, nothing else is in flight.
    const events: TroupeEvent[] = [];
    const error = await executePlan(plan([chunk(0), chunk(1), chunk(2, [1]), chunk(3)]), { executor, retry: { maxRetries: 2, delayMs: 0 }, onEvent: (e) => events.push(e) }).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(GuardrailTripError);
    const trip = error as GuardrailTripError;
    expect(trip).toMatchObject({ code: 'guardrail_tripped', guardrail: 'no-secrets', stage: 'output', verdict: { tripped: true, reason: 'the answer leaks a secret', info: { rule: 'SECRET' } } });
    expect(trip.details).toMatchObject({ runnable: 'chunk 1' });
    // The trace is the coordinator's run, with the worker's ops mirrored under the chunk.
    expect(trip.trace.kind).toBe('run');
    // The worker's job failed with the trip's code; BullMQ did not retry it and neither did the scheduler.
    expect(failed).toEqual([expect.objectContaining({ code: 'guardrail_tripped', runId: expect.any(String), label: 'chunk 1 "Step 1" (Generic)' })]);
    expect(queued).toEqual([1]);
    // The worker's verdict and trip are events of the coordinator's run, and the run failed with the trip's code.
    expect(events.filter((e) => e.type === 'guardrail.tripped')).toEqual([expect.objectContaining({ guardrail: 'no-secrets', stage: 'output', runnable: 'chunk 1' })]);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', code: 'guardrail_tripped' });
    expect(events.some((e) => e.type === 'chunk.status' && e.status === 'retrying')).toBe(false);
    // Give a stray dispatch time to show up: none comes, and the queue is empty.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls).toEqual([1]);
    expect(await executor.stats()).toMatchObject({ waiting: 0, active: 0, inFlight: 0 });
  });

  it('halts a remote run whose registry agent carries its own guardrails; a tool guardrail’s stop crosses the wire', { timeout: 30_000 }, async () => {
    const where = place();
    let deleted = 0;
    const deleteFile = defineTool({ name: 'delete_file', description: 'Delete a file', parameters: z.object({ path: z.string() }), execute: () => (deleted++, 'deleted') });
    const adapter = scriptedAdapter({ rules: [{ match: (r) => r.turn === 1, reply: { toolCalls: [{ name: 'delete_file', arguments: { path: 'notes.md' } }] } }], fallback: 'cleaned up' });
    const janitor = withGuardrails(agent({ name: 'janitor', tools: [deleteFile] }), {
      tools: [defineToolGuardrail({ name: 'no-deletes', tools: ['delete_file'], beforeCall: () => ({ action: 'stop', reason: 'deleting files' }) })],
    });
    const worker = await startWorker({ ...where, adapter, agents: [janitor] });
    open.push(worker);
    const janitorRemote = remote('janitor', where);
    open.push(janitorRemote);

    const error = await run(janitorRemote, 'Tidy the folder').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GuardrailTripError);
    expect(error).toMatchObject({ guardrail: 'no-deletes', stage: 'tool', verdict: { action: 'stop', reason: 'deleting files' }, details: { tool: 'delete_file' } });
    expect(deleted).toBe(0);
  });
});

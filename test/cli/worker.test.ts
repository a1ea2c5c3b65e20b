import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { run } from '../../src/core/run.js';
import { bullmqExecutor, remote } from '../../src/integrations/bullmq/index.js';
import { checkpointStream } from '../../src/core/checkpoint.js';
import { redisStore } from '../../src/integrations/redis/index.js';
import { executePlan } from '../../src/plan/engine/execute.js';
import { chunk, plan } from '../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../helpers/redis.js';
import { cliBundle } from '../helpers/bundle.js';

const root = join(import.meta.dirname, '..', '..');
const { url } = redisTarget();
const prefixes = testPrefixes(url);

function io(env: Record<string, string | undefined> = {}, extra: Partial<Parameters<typeof main>[1]> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t), env, ...extra } };
}

describe('troupe worker', () => {
  it('asks for a Redis, and refuses bad numbers, with exit code 2', async () => {
    const none = io();
    expect(await main(['worker'], none.io)).toBe(2);
    expect(none.err.join('\n')).toMatch(/--redis redis:\/\/host:6379/);
    const bad = io({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await main(['worker', '--concurrency', '0'], bad.io)).toBe(2);
    expect(await main(['worker', '--exit-when-idle', 'soon'], bad.io)).toBe(2);
    expect(await main(['worker', 'extra'], bad.io)).toBe(2);
    expect(await main(['worker', '--signing-key-file', '/nonexistent/troupe.key'], bad.io)).toBe(2);
    expect(bad.err.at(-1)).toMatch(/Could not read --signing-key-file/);
    const help = io();
    expect(await main(['worker', '--help'], help.io)).toBe(0);
    expect(help.out.join('\n')).toContain('--exit-when-idle <s>');
  });

  describe.skipIf(!url)('on Redis', () => {
    const open: Array<{ close(): Promise<void> }> = [];
    afterEach(async () => {
      for (const thing of open.splice(0)) await thing.close();
    });

    it('runs chunks and remote runs on the agents of a folder, one line per job, records chunk results in the plan’s checkpoint, and exits when idle', async () => {
      const queue = `q-${randomUUID().slice(0, 8)}`;
      const prefix = prefixes().slice(0, -1);
      const storePrefix = prefixes();
      const clock = new SimulatedClock();
      const cli = io({}, { clock });
      const exited = main(
        ['worker', '--redis', url!, '--agents', join(root, 'test', 'fixtures', 'cli', 'desk'), '--queue', queue, '--prefix', prefix, '--store-prefix', storePrefix, '--concurrency', '2', '--name', 'cli-1', '--exit-when-idle', '5'],
        cli.io,
      );
      while (!cli.err.some((l) => l.includes('taking jobs'))) await new Promise((resolve) => setTimeout(resolve, 10));
      const executor = bullmqExecutor({ connection: url!, queueName: queue, prefix });
      open.push(executor);
      const store = redisStore({ connection: url!, prefix: storePrefix });
      open.push(store);
      const runId = `cli-${randomUUID()}`;
      const outcome = await executePlan(plan([chunk(0), chunk(1, [0])]), { executor, runId, store });
      expect(outcome.results.map((r) => r.output)).toEqual(['Generic handled: # Chunk 0: Step 0', 'Generic handled: # Chunk 1: Step 1']);
      const answer = await run(remote('legal', { executor }), 'Can I cancel?');
      expect(answer.output).toBe('legal handled: Can I cancel?');
      await clock.advance(5000);
      expect(await exited).toBe(0);
      expect(cli.out).toEqual([
        expect.stringMatching(/^✓ chunk 0 "Step 0" \(Generic\) · run cli-[0-9a-f]{4} · attempt 1 · \d+ ms$/),
        expect.stringMatching(/^✓ chunk 1 "Step 1" \(Generic\) · run cli-[0-9a-f]{4} · attempt 1 · \d+ ms$/),
        expect.stringMatching(/^✓ legal · run [0-9a-f-]{8} · \d+ ms$/),
      ]);
      expect(cli.err.at(-1)).toBe('worker cli-1 closed: 3 completed, 0 failed, 0 handed back');
      // Recorded once each, by the worker (the scheduler, told so, did not append them again).
      const { records } = await store.read(checkpointStream(runId, '/plan:plan#0'));
      expect(records).toEqual([
        { sequenceIndex: 0, status: 'completed', attempts: 1, output: 'Generic handled: # Chunk 0: Step 0' },
        { sequenceIndex: 1, status: 'completed', attempts: 1, output: 'Generic handled: # Chunk 1: Step 1' },
      ]);
    });

    it('names the run and the chunk of a job it cannot read (a role it does not know) on its line', async () => {
      const queueName = `q-${randomUUID().slice(0, 8)}`;
      const prefix = prefixes().slice(0, -1);
      const clock = new SimulatedClock();
      const cli = io({}, { clock });
      const exited = main(['worker', '--redis', url!, '--queue', queueName, '--prefix', prefix, '--name', 'cli-2', '--exit-when-idle', '5'], cli.io);
      while (!cli.err.some((l) => l.includes('taking jobs'))) await new Promise((resolve) => setTimeout(resolve, 10));
      // A job as an older coordinator (which did not check roles) would have sent it.
      const queue = new Queue(queueName, { connection: { url: url! }, prefix });
      try {
        const bogus = { ...chunk(4), role: 'Bogus' };
        await queue.add('chunk', { v: 1, kind: 'chunk', runId: 'run-7f3a9c2e-1', planId: 'plan', chunk: bogus, prompt: bogus.prompt, role: { system: 's', preferredTools: [] }, attempt: 2, path: '/p', checkpointPath: '/p' }, { jobId: 'bogus' });
        while (cli.out.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        await queue.close();
      }
      await clock.advance(5000);
      expect(await exited).toBe(0);
      expect(cli.out).toEqual([expect.stringMatching(/^✗ chunk 4 "Step 4" \(Bogus\) · run run-7f3a · attempt 2 · \d+ ms · failed: Job bogus is not a troupe job this worker can read .*chunk\.role/)]);
    });

    it('with --signing-key-file, runs the jobs a coordinator signed with the same key and refuses an unsigned one, on its line', async () => {
      const queueName = `q-${randomUUID().slice(0, 8)}`;
      const prefix = prefixes().slice(0, -1);
      const key = randomBytes(32).toString('hex');
      const keyFile = join(mkdtempSync(join(tmpdir(), 'troupe-key-')), 'signing.key');
      writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
      const clock = new SimulatedClock();
      const cli = io({}, { clock });
      const exited = main(
        ['worker', '--redis', url!, '--agents', join(root, 'test', 'fixtures', 'cli', 'desk'), '--queue', queueName, '--prefix', prefix, '--name', 'cli-3', '--exit-when-idle', '5', '--signing-key-file', keyFile],
        cli.io,
      );
      while (!cli.err.some((l) => l.includes('taking jobs'))) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(cli.err.find((l) => l.includes('taking jobs'))).toContain('signed jobs only');
      const signed = bullmqExecutor({ connection: url!, queueName, prefix, signingKey: key });
      open.push(signed);
      expect((await executePlan(plan([chunk(0)]), { executor: signed })).results[0]!.output).toBe('Generic handled: # Chunk 0: Step 0');
      const unsigned = bullmqExecutor({ connection: url!, queueName, prefix });
      open.push(unsigned);
      const refused = await executePlan(plan([chunk(1)]), { executor: unsigned, retry: { maxRetries: 0 } });
      expect(refused.results[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/is not signed/) });
      await clock.advance(5000);
      expect(await exited).toBe(0);
      expect(cli.out).toEqual([
        expect.stringMatching(/^✓ chunk 0 "Step 0" \(Generic\) · run [0-9a-f-]{8} · attempt 1 · \d+ ms$/),
        expect.stringMatching(/^✗ chunk 1 "Step 1" \(Generic\) · run [0-9a-f-]{8} · attempt 1 · \d+ ms · failed: Job .* is not signed/),
      ]);
      rmSync(dirname(keyFile), { recursive: true, force: true });
    });

    it('is the `troupe worker` executable: it starts, finds no job, and exits 0 when idle', () => {
      const output = execFileSync(process.execPath, [cliBundle(), 'worker', '--redis', url!, '--queue', `q-${randomUUID().slice(0, 8)}`, '--prefix', prefixes().slice(0, -1), '--exit-when-idle', '0.3'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TROUPE_ADAPTER: '' },
        timeout: 30_000,
      });
      expect(output).toBe('');
    });
  });
});

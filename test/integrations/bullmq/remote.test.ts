import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, isTroupeError } from '../../../src/core/errors.js';
import { walk, type OpNode } from '../../../src/core/ops.js';
import { run } from '../../../src/core/run.js';
import { bullmqExecutor, remote, startWorker, type TroupeWorker } from '../../../src/integrations/bullmq/index.js';
import { agent } from '../../../src/patterns/agent.js';
import { advisors } from '../../../src/patterns/advisors.js';
import { broadcast } from '../../../src/patterns/broadcast.js';
import { scriptedAdapter } from '../../../src/testing/index.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';

const { url } = redisTarget();
const prefixes = testPrefixes(url);

describe('remote options', () => {
  it('refuses a bad name or options with a ConfigurationError', () => {
    expect(() => remote('', { connection: 'redis://127.0.0.1:1' })).toThrow(ConfigurationError);
    expect(() => remote('a', undefined as never)).toThrow(ConfigurationError);
    expect(() => remote('a', { connection: '' })).toThrow(ConfigurationError);
    expect(() => remote('a', { executor: {} as never })).toThrow(/bullmqExecutor/);
    expect(() => remote('a', { connection: 'redis://127.0.0.1:1', traceContext: 1 as never })).toThrow(ConfigurationError);
    expect(remote('security', { connection: 'redis://127.0.0.1:1' })).toMatchObject({ name: 'security', kind: 'remote' });
  });
});

describe.skipIf(!url)('remote runnables on Redis', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  async function setup() {
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const workerAdapter = scriptedAdapter({ fallback: (r) => ({ text: `${r.agent} says: fine`, usage: { inputTokens: 5, outputTokens: 2 } }) });
    const agents = { security: agent({ name: 'security', system: 'Check security.' }), style: agent({ name: 'style', system: 'Check style.' }) };
    const workers: TroupeWorker[] = [];
    for (const name of ['w1', 'w2']) {
      const worker = await startWorker({ ...place, adapter: workerAdapter, agents, name, maxParallel: 2 });
      open.push(worker);
      workers.push(worker);
    }
    const executor = bullmqExecutor(place);
    open.push(executor);
    return { place, executor, workers };
  }

  it('runs advisors on workers: their answers, ops and usage join the run', async () => {
    const { executor } = await setup();
    const main = agent({ name: 'main', system: 'Decide.' });
    const flow = advisors(main, [remote('security', { executor }), remote('style', { executor })]);
    const local = scriptedAdapter({ fallback: (r) => ({ text: `decided on ${r.text.length} chars`, usage: { inputTokens: 1, outputTokens: 1 } }) });
    const result = await run(flow, 'Ship it?', { adapter: local });
    expect(result.status).toBe('completed');
    expect(local.inputsOf('main')[0]).toContain('### From security\nsecurity says: fine');
    expect(local.inputsOf('main')[0]).toContain('### From style\nstyle says: fine');
    const remotes: OpNode[] = [];
    walk(result.trace, (n) => void (n.kind === 'remote' && remotes.push(n)));
    expect(remotes.map((n) => [n.name, n.status, n.children.map((c) => `${c.kind}:${c.name}:${c.status}`)])).toEqual([
      ['security', 'completed', ['agent:security:completed']],
      ['style', 'completed', ['agent:style:completed']],
    ]);
    expect(result.usage).toMatchObject({ inputTokens: 11, outputTokens: 5, turns: 3 });
  });

  it('fans a broadcast out over workers, with its own connection when no executor is given', async () => {
    const { place } = await setup();
    const members = ['security', 'style'].map((name) => remote(name, place));
    for (const m of members) open.push(m);
    const result = await run(broadcast(members), 'Review this');
    expect(result.output).toContain('security says: fine');
    expect(result.output).toContain('style says: fine');
  });

  it('fails a run of an agent the workers do not have with a typed RemoteJobError; advisors tolerate it as a note', async () => {
    const { executor } = await setup();
    const error = await run(remote('nobody', { executor }), 'hi').then(() => undefined, (e: unknown) => e);
    expect(isTroupeError(error, 'remote_failed')).toBe(true);
    expect(error).toMatchObject({ remoteCode: 'unknown_agent', message: expect.stringContaining('no agent "nobody"') });
    const local = scriptedAdapter({ fallback: 'decided' });
    const result = await run(advisors(agent({ name: 'main' }), [remote('nobody', { executor }), remote('style', { executor })]), 'Ship it?', { adapter: local });
    expect(result.status).toBe('completed');
    expect(local.inputsOf('main')[0]).toMatch(/nobody[\s\S]*no agent "nobody"/);
  });
});

// The deployment files of examples/distributed, without Docker or a cluster:
// the Dockerfile's ENTRYPOINT and CMD run as a plain process, in a folder
// laid out like its WORKDIR (the agents it copies), with its ENV, against a
// real Redis (the one substitution: the package's executable,
// `node_modules/troupe/dist/cli.js` as package.json `bin` names it, runs
// from the sources here); kubernetes.yaml runs that image as it is, and
// scales on the list where BullMQ keeps a queue's waiting jobs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { run } from '../../../src/core/run.js';
import { bullmqExecutor, remote } from '../../../src/integrations/bullmq/index.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import { chunk, plan } from '../../helpers/bullmq.js';
import { redisTarget, testPrefixes } from '../../helpers/redis.js';
import { cliBundle } from '../../helpers/bundle.js';

const root = join(import.meta.dirname, '..', '..', '..');
const { url } = redisTarget();
const prefixes = testPrefixes(url);

/** The instructions of the Dockerfile's last stage that the container's process depends on. */
interface Image {
  workdir: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  /** `COPY <source> <dest>` from the build context (not from another stage). */
  copies: Array<{ from: string; to: string }>;
}

/** Read the last stage of a Dockerfile: line continuations joined, comments dropped, exec-form (JSON) ENTRYPOINT and CMD. */
function readImage(text: string): Image {
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const stage = lines.slice(lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true));
  const image: Image = { workdir: '/', env: {}, entrypoint: [], cmd: [], copies: [] };
  for (const line of stage) {
    const space = line.indexOf(' ');
    const [word, rest] = [line.slice(0, space).toUpperCase(), line.slice(space + 1).trim()];
    if (word === 'WORKDIR') image.workdir = rest;
    else if (word === 'ENV') for (const pair of rest.split(/\s+/)) image.env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
    else if (word === 'ENTRYPOINT') image.entrypoint = JSON.parse(rest) as string[];
    else if (word === 'CMD') image.cmd = JSON.parse(rest) as string[];
    else if (word === 'COPY' && !rest.startsWith('--from')) {
      const [from, to] = rest.split(/\s+/);
      image.copies.push({ from: from!, to: to! });
    }
  }
  return image;
}

const image = readImage(readFileSync(join(root, 'examples', 'distributed', 'Dockerfile'), 'utf8'));

describe('examples/distributed/Dockerfile', () => {
  it('runs the package’s own executable with node as PID 1, in exec form', () => {
    const bin = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: { troupe: string } }).bin.troupe;
    expect(image.entrypoint).toEqual(['node', `node_modules/troupe/${bin.replace(/^\.\//, '')}`, 'worker']);
    expect(image.workdir).toBe('/app');
    expect(image.copies).toContainEqual({ from: 'examples/distributed/agents/', to: './agents/' });
  });

  describe.skipIf(!url)('as a plain process', () => {
    let child: ChildProcess | undefined;
    let dir: string | undefined;
    const open: Array<{ close(): Promise<void> }> = [];
    afterEach(async () => {
      for (const thing of open.splice(0)) await thing.close();
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('takes chunks and remote runs on the image’s agents, one line per job, and exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
      // The WORKDIR as the image has it: the agents the Dockerfile copies.
      dir = mkdtempSync(join(tmpdir(), 'troupe-image-'));
      for (const { from, to } of image.copies) cpSync(join(root, from), join(dir, to), { recursive: true });
      const queue = `q-${randomUUID().slice(0, 8)}`;
      const prefix = prefixes().slice(0, -1);
      const [, , ...command] = image.entrypoint;
      // `docker run <image> <args>` replaces CMD: the image's CMD, then where this test's queue is.
      const args = [...image.cmd, '--queue', queue, '--prefix', prefix, '--store-prefix', prefixes(), '--name', 'image-1'];
      const env: Record<string, string | undefined> = { ...process.env, ...image.env, REDIS_URL: url! };
      delete env.TROUPE_ADAPTER; // the scripted adapter, offline
      child = spawn(process.execPath, [cliBundle(), ...command, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.setEncoding('utf8').on('data', (text: string) => (out += text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => (err += text));
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      while (!err.includes('taking jobs')) {
        if (child.exitCode !== null) throw new Error(`The worker exited: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(err).toContain('(concurrency 4)');

      const executor = bullmqExecutor({ connection: url!, queueName: queue, prefix });
      open.push(executor);
      const implementation = { ...chunk(1, [0]), role: 'Implementation' as const };
      const outcome = await executePlan(plan([chunk(0), implementation]), { executor });
      // Chunk 0 on an agent built from its role; chunk 1 on the image's Implementation agent.
      expect(outcome.results.map((r) => r.output)).toEqual(['Generic handled: # Chunk 0: Step 0', 'Implementation handled: # Chunk 1: Step 1']);
      const summary = await run(remote('summarizer', { executor }), 'A long text.');
      expect(summary.output).toBe('summarizer handled: A long text.');

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out.trim().split('\n')).toEqual([
        expect.stringMatching(/^✓ chunk 0 "Step 0" \(Generic\) · /),
        expect.stringMatching(/^✓ chunk 1 "Step 1" \(Implementation\) · /),
        expect.stringMatching(/^✓ summarizer · /),
      ]);
      expect(err.trim().split('\n').at(-1)).toBe('worker image-1 closed: 3 completed, 0 failed, 0 handed back');
    });
  });
});

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: {
    template?: { spec: { terminationGracePeriodSeconds: number; containers: Array<{ command?: string[]; args?: string[]; env: Array<{ name: string }> }> } };
    scaleTargetRef?: { name: string };
    minReplicaCount?: number;
    triggers?: Array<{ type: string; metadata: { listName: string; listLength: string } }>;
  };
}

const manifests = parseAllDocuments(readFileSync(join(root, 'examples', 'distributed', 'kubernetes.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
const deployment = manifests.find((m) => m.kind === 'Deployment')!;
const scaled = manifests.find((m) => m.kind === 'ScaledObject')!;

describe('examples/distributed/kubernetes.yaml', () => {
  it('runs the image’s entry point with its arguments, and outlasts the worker’s grace period on SIGTERM', () => {
    const pod = deployment.spec.template!.spec;
    const container = pod.containers[0]!;
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual(image.cmd);
    expect(container.env.map((e) => e.name)).toContain('REDIS_URL');
    // startWorker's closeTimeoutMs is 25 s by default: running jobs finish or go back to the queue before the kill.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(25);
    expect(scaled.spec.scaleTargetRef!.name).toBe(deployment.metadata.name);
    expect(scaled.spec.minReplicaCount).toBe(0);
  });

  it.skipIf(!url)('scales on the list that holds exactly the queue’s waiting jobs (<prefix>:<queue>:wait, troupe:troupe:wait by default)', { timeout: 30_000 }, async () => {
    const trigger = scaled.spec.triggers!.find((t) => t.type === 'redis')!;
    const defaults = bullmqExecutor({ connection: 'redis://127.0.0.1:1' });
    expect(trigger.metadata.listName).toBe(`troupe:${defaults.queueName}:wait`);
    await defaults.close();
    // The same layout on a queue of the test's own: three jobs and no worker.
    const place = { connection: url!, queueName: `q-${randomUUID().slice(0, 8)}`, prefix: prefixes().slice(0, -1) };
    const executor = bullmqExecutor(place);
    const stop = new AbortController();
    const running = executePlan(plan([chunk(0), chunk(1), chunk(2)]), { executor, signal: stop.signal }).catch(() => undefined);
    while ((await executor.stats()).waiting < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const redis = new Redis(url!);
    try {
      expect(await redis.llen(trigger.metadata.listName.replace(/^troupe:troupe:/, `${place.prefix}:${place.queueName}:`))).toBe(3);
    } finally {
      redis.disconnect();
      stop.abort();
      await running;
      await executor.close();
    }
  });
});

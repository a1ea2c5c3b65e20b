/**
 * `troupe worker`: take troupe jobs (plan chunks a `bullmqExecutor` sends,
 * runs a `remote(name)` sends) from a BullMQ queue on Redis and run them on
 * the agents of a folder, one status line per job.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { compileAgents } from '../agents/compile.js';
import type { AgentDefinition } from '../agents/definition.js';
import { loadAgents } from '../agents/load.js';
import { validateAgents } from '../agents/validate.js';
import { errorMessage } from '../core/errors.js';
import type { Runnable } from '../core/runnable.js';
import { defined } from '../core/defined.js';
import { startWorker } from '../integrations/bullmq/worker.js';
import { redisStore } from '../integrations/redis/store.js';
import { adapterLine, cliAdapterName, cliAdapters, createCliAdapter } from './adapters.js';
import type { CliIo } from './io.js';

/** The help of `troupe worker`. */
export const WORKER_HELP = `Usage: troupe worker --redis <url> [--agents <dir>] [--adapter <name>] [--script <file.json>] [--concurrency <n>]
                     [--queue <name>] [--prefix <prefix>] [--store-prefix <prefix>] [--name <name>] [--exit-when-idle <seconds>]
                     [--signing-key-file <file>]

Take troupe jobs from a BullMQ queue on Redis and run them: the plan chunks a
coordinator's bullmqExecutor sends (each on the agent named after its role, or
an agent built from the role), and the runs remote(name) sends (on the agent
<name>). Prints one line per job. Ctrl-C or SIGTERM stops taking jobs, lets
running ones finish (25 s at most, then hands them back to the queue) and exits.

  --redis <url>           the Redis (default: $REDIS_URL)
  --agents <dir>          agent files this worker can run
  --adapter <name>        ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>         for the scripted adapter (see \`troupe run --help\`)
  --concurrency <n>       jobs at once (default: 1)
  --queue <name>          the queue (default: troupe)
  --prefix <prefix>       the queue's key prefix (default: troupe)
  --store-prefix <prefix> record finished chunks in their plan's checkpoint in the Redis store with this
                          prefix, so a resumed coordinator does not run them again (default: troupe:, as redisStore)
  --name <name>           the worker's name in events and results (default: <host>:<pid>:<id>)
  --exit-when-idle <s>    exit once no job has run for <s> seconds
  --signing-key-file <f>  run only jobs signed with the key in this file (its text, without the line end), as
                          coordinators sign them with bullmqExecutor({ signingKey }); default: $TROUPE_SIGNING_KEY,
                          else jobs are not checked (anyone who can write to the Redis can have them run)`;

/** The flags `troupe worker` reads. */
export interface WorkerFlags {
  redis?: string | undefined;
  agents?: string | undefined;
  adapter?: string | undefined;
  script?: string | undefined;
  concurrency?: string | undefined;
  queue?: string | undefined;
  prefix?: string | undefined;
  'store-prefix'?: string | undefined;
  name?: string | undefined;
  'exit-when-idle'?: string | undefined;
  'signing-key-file'?: string | undefined;
}

/** Run `troupe worker`; resolves with the exit code once the worker has closed. */
export async function workerCommand(values: WorkerFlags, io: CliIo): Promise<number> {
  const url = values.redis ?? (io.env.REDIS_URL || undefined);
  if (url === undefined) {
    io.err(`Give the Redis to take jobs from: --redis redis://host:6379 (or set REDIS_URL).\n\n${WORKER_HELP}`);
    return 2;
  }
  const concurrency = Number(values.concurrency ?? '1');
  const idleSeconds = values['exit-when-idle'] === undefined ? undefined : Number(values['exit-when-idle']);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    io.err(`Expected --concurrency to be a positive integer, got "${values.concurrency}".`);
    return 2;
  }
  if (idleSeconds !== undefined && !(Number.isFinite(idleSeconds) && idleSeconds > 0)) {
    io.err(`Expected --exit-when-idle to be a positive number of seconds, got "${values['exit-when-idle']}".`);
    return 2;
  }
  let signingKey: string | undefined = io.env.TROUPE_SIGNING_KEY || undefined;
  if (values['signing-key-file'] !== undefined) {
    try {
      signingKey = (await readFile(values['signing-key-file'], 'utf8')).replace(/\r?\n$/, '');
    } catch (error) {
      io.err(`Could not read --signing-key-file: ${errorMessage(error)}`);
      return 2;
    }
  }
  let defs: AgentDefinition[] = [];
  let agents: Record<string, Runnable> = {};
  if (values.agents !== undefined) {
    defs = await loadAgents(values.agents, defined({ signal: io.signal }));
    const { errors } = validateAgents(defs);
    for (const e of errors) io.err(`error    ${e.file ? `${e.file}: ` : ''}${e.message}`);
    if (errors.length > 0) return 1;
    agents = compileAgents(defs, { unknownTools: 'skip' });
  }
  io.err(adapterLine('troupe worker', values.adapter, io.env, values.script));
  const adapter = await createCliAdapter(cliAdapterName(values.adapter, io.env), {
    defs,
    env: io.env,
    ...defined({ script: values.script, clock: io.clock }),
  });
  const store = redisStore({ connection: url, prefix: values['store-prefix'] ?? 'troupe:' });
  try {
    const worker = await startWorker({
      connection: url,
      agents,
      adapter,
      store,
      maxParallel: concurrency,
      handleSignals: true,
      ...defined({ queueName: values.queue, prefix: values.prefix, name: values.name, signal: io.signal, clock: io.clock, signingKey }),
    });
    const counts = { completed: 0, failed: 0, handedBack: 0 };
    // A job whose data has no run id (not written by a troupe coordinator) gets no run on its line.
    const run = (runId: string) => (runId === '' ? 'no run id' : `run ${runId.slice(0, 8)}`);
    const attempt = (n: number | undefined) => (n === undefined ? '' : ` · attempt ${n}`);
    worker.events.on('job.completed', (e) => {
      counts.completed++;
      io.out(`✓ ${e.label} · ${run(e.runId)}${attempt(e.attempt)} · ${seconds(e.durationMs)}`);
    });
    worker.events.on('job.failed', (e) => {
      counts.failed++;
      io.out(`✗ ${e.label} · ${run(e.runId)}${attempt(e.attempt)} · ${seconds(e.durationMs)} · ${e.cancelled ? 'cancelled' : 'failed'}: ${firstLine(e.error)}`);
    });
    worker.events.on('job.handedBack', (e) => {
      counts.handedBack++;
      io.out(`↩ ${e.label} · ${run(e.runId)}${attempt(e.attempt)} · handed back to the queue`);
    });
    worker.events.on('worker.warning', (e) => io.err(`warning  ${e.message}`));
    const closed = new Promise<void>((resolve) => worker.events.once('worker.closed', () => resolve()));
    io.err(`worker ${worker.name}: taking jobs from queue "${worker.queueName}" (concurrency ${concurrency}${signingKey === undefined ? '' : ', signed jobs only'}); Ctrl-C or SIGTERM stops it`);
    if (idleSeconds !== undefined) void worker.onIdle(idleSeconds * 1000).then(() => worker.close());
    await closed;
    io.err(`worker ${worker.name} closed: ${counts.completed} completed, ${counts.failed} failed, ${counts.handedBack} handed back`);
    return 0;
  } catch (error) {
    io.err(`Could not start the worker: ${errorMessage(error)}`);
    return 1;
  } finally {
    await store.close();
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

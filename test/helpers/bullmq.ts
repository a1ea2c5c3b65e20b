// Distributed execution in tests: worker child processes (the real thing,
// so a test can kill -9 one), plans of numbered chunks, and a scripted
// adapter that records which chunks it was called for.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundled } from './bundle.js';
import type { Plan, PlanChunk } from '../../src/plan/model/plan.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'bullmq');

/** The config of a worker child process (`test/fixtures/bullmq/worker-process.ts`). */
export interface WorkerProcessConfig {
  url: string;
  queueName: string;
  prefix: string;
  name: string;
  /** Record finished attempts in a redisStore with this prefix. */
  storePrefix?: string;
  /** Latency of the model turns of chunks (named runs answer at once). */
  delayMs?: number;
  /** Latency of the model turns of some chunks (by index), instead of `delayMs`. */
  delays?: Record<string, number>;
  /** The model turns of these chunks wait until the Redis key `key` exists. */
  gate?: { key: string; chunks: number[] };
  concurrency?: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  closeTimeoutMs?: number;
  /** Run only jobs signed with this key. */
  signingKey?: string;
  maxJobBytes?: number;
  maxPromptBytes?: number;
  /**
   * Give the worker a `read_file` tool (it reads the file), and have its
   * model ask for it when a prompt says `read_file <path>` and the session
   * offers it.
   */
  readFileTool?: boolean;
  /** Write a `warning` line for each of the worker's warnings. */
  warnings?: boolean;
}

/** One line a worker process wrote. */
export type WorkerLine = { t: string; worker?: string; chunk?: number; jobId?: string; label?: string; cancelled?: boolean } & Record<string, unknown>;

/** A child process (worker or coordinator) and what it has written. */
export interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: WorkerLine[];
  /** Resolves with the first line (now or later) that matches. */
  waitFor(match: (line: WorkerLine) => boolean): Promise<WorkerLine>;
  /** Resolves once the process has exited. */
  readonly exited: Promise<number | null>;
}

/** Start a worker process and resolve once it is taking jobs. */
export function startWorkerProcess(config: WorkerProcessConfig): Promise<WorkerProcess> {
  return startChild('worker-process.ts', config.name, config);
}

/** The config of a coordinator child process (`test/fixtures/bullmq/coordinator-process.ts`), which runs {@link crashPlan}. */
export interface CoordinatorProcessConfig {
  url: string;
  queueName: string;
  prefix: string;
  storePrefix: string;
  runId: string;
}

/** Start a coordinator process running {@link crashPlan}; resolves once it has started. */
export function startCoordinatorProcess(config: CoordinatorProcessConfig): Promise<WorkerProcess> {
  return startChild('coordinator-process.ts', 'coordinator', config);
}

async function startChild(script: string, name: string, config: object): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [bundled(join(fixtures, script)), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: WorkerLine[] = [];
  const waiters = new Set<{ match: (line: WorkerLine) => boolean; resolve: (line: WorkerLine) => void }>();
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: WorkerLine;
    try {
      line = JSON.parse(text) as WorkerLine;
    } catch {
      return;
    }
    lines.push(line);
    for (const w of [...waiters]) if (w.match(line)) (waiters.delete(w), w.resolve(line));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: WorkerProcess = {
    name,
    child,
    lines,
    exited,
    waitFor(match) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.add({ match, resolve });
        void exited.then((code) => reject(new Error(`${name} exited (${code}) before the line came:\n${stderr}`)));
      });
    },
  };
  await proc.waitFor((l) => l.t === 'ready');
  return proc;
}

/** Kill every process that is still running (after each test). */
export async function stopAll(procs: WorkerProcess[]): Promise<void> {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
}

/** A chunk with a prompt of its own. */
export function chunk(sequenceIndex: number, dependsOnIndexes: number[] = []): PlanChunk {
  return { sequenceIndex, title: `Step ${sequenceIndex}`, prompt: `Carry out step number ${sequenceIndex}.`, dependsOnIndexes, complexity: 'Low', role: 'Generic' };
}

/** A plan of `n` independent chunks (and the chunks after them that depend on them, `deps`). */
export function plan(chunks: PlanChunk[]): Plan {
  return { planSummary: 'A distributed plan', chunks };
}

/** How many model calls each chunk got, over all the given call lists. */
export function callsPerChunk(lines: readonly WorkerLine[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const l of lines) if (l.t === 'call' && typeof l.chunk === 'number') counts.set(l.chunk, (counts.get(l.chunk) ?? 0) + 1);
  return counts;
}

/** The chunk index a prompt is about (`# Chunk <n>: ...`). */
export function chunkOf(text: string): number | undefined {
  const found = /^# Chunk (\d+):/.exec(text)?.[1];
  return found === undefined ? undefined : Number(found);
}

/** The plan of the coordinator-crash tests: 4..7 depend on 0..3. */
export function crashPlan(): Plan {
  return plan([chunk(0), chunk(1), chunk(2), chunk(3), chunk(4, [0]), chunk(5, [1]), chunk(6, [2]), chunk(7, [3, 4, 5, 6])]);
}

/**
 * One job on a worker: read its data, resolve what to run, run it in a run
 * of its own (in a workspace, for a chunk, when the worker has a strategy),
 * send its events to the coordinator, record a finished chunk in its plan's
 * checkpoint in the shared store, and return the result.
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import type { Clock } from '../../core/clock.js';
import { CancelledError, ConfigurationError, WorkspaceError, errorMessage, isTroupeError } from '../../core/errors.js';
import type { TroupeEvent } from '../../core/events.js';
import { startRun } from '../../core/run.js';
import type { Outcome, Runnable } from '../../core/runnable.js';
import { runGuarded } from '../../core/guard-scope.js';
import { GuardrailTripError, type GuardrailOptions } from '../../core/guardrails.js';
import type { ToolDefinition } from '../../core/tools.js';
import type { Store } from '../../core/store.js';
import { defined } from '../../core/defined.js';
import { recordChunkResult } from '../../plan/engine/checkpoint.js';
import type { Workspace, WorkspaceStrategy } from '../../workspaces/types.js';
import { EventOutbox } from './outbox.js';
import { checkJobSize, isGranted, verifyJob, type JobTrust } from './trust.js';
import { chunkRunnable, namedRunnable, type RoleAgents } from './registry.js';
import { WIRE_VERSION, jobDataSchema, type GuardrailTripWire, type JobFailureWire, type JobResultWire, type JobWire } from './wire.js';

/** What a worker tells `observe` about a job it starts. */
export interface WorkerJobInfo {
  jobId: string;
  kind: JobWire['kind'];
  /** The coordinator's run. */
  runId: string;
  /** What runs: `chunk 3 "Title" (Role)`, or the runnable's name. */
  label: string;
  /** For a chunk, the scheduler's attempt number. */
  attempt?: number;
  /** The trace context the coordinator sent (for `otelTracing({ parent: extractTraceContext(job.traceContext) })`). */
  traceContext?: Record<string, string>;
}

/** What every job of a worker shares. */
export interface JobHost {
  readonly worker: string;
  readonly registry: ReadonlyMap<string, Runnable>;
  readonly roles: RoleAgents;
  readonly adapter: ModelAdapter | undefined;
  readonly adapters: Record<string, ModelAdapter>;
  readonly tools: readonly ToolDefinition[];
  /** Guardrails on every job (`StartWorkerOptions.guardrails`). */
  readonly guardrails: GuardrailOptions | undefined;
  readonly store: Store | undefined;
  readonly workspace: WorkspaceStrategy | undefined;
  readonly baseDir: string;
  readonly clock: Clock;
  /** The signing key jobs must verify with (when set) and the size limits they must keep. */
  readonly trust: JobTrust;
  readonly observe: ((job: WorkerJobInfo) => ((event: TroupeEvent) => void) | undefined) | undefined;
  /** Publish one batch of a job's events (the first of an execution tells the coordinator it started here). */
  publish(jobId: string, exec: string, data: string): Promise<void>;
  /**
   * Why job `jobId` was cancelled, read from Redis, when this worker heard
   * of its cancellation before it started or may have missed it;
   * `undefined` (no look-up) otherwise: a job cancelled before a worker
   * took it carries its mark, which BullMQ acts on before the job reaches
   * here, and one cancelled after is aborted on the message.
   */
  readCancel(jobId: string): Promise<string | undefined> | undefined;
  warn(message: string): void;
  started(info: WorkerJobInfo): void;
}

/** A job's data, id and name, as the worker got it. */
export interface IncomingJob {
  id: string;
  /** BullMQ's job name (`chunk`, `run`): signed with the rest. */
  name: string;
  data: unknown;
}

/**
 * Refuse a job that must not run here, before anything of it does: one
 * over the size limits, and with a signing key, one whose signature is
 * missing or does not verify. A `JobRefusedError`.
 */
export function admitJob(trust: JobTrust, job: IncomingJob): void {
  checkJobSize(trust, job.id, job.data);
  if (trust.key !== undefined) verifyJob(trust.key, job.id, job.name, job.data);
}

/** The data of a job, checked; a `ConfigurationError` when it is not what a coordinator sends. */
export function readJob(job: IncomingJob): JobWire {
  const parsed = jobDataSchema.safeParse(job.data);
  if (!parsed.success) {
    throw new ConfigurationError(`Job ${job.id} is not a troupe job this worker can read (wire version ${WIRE_VERSION}): ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, {
      code: 'invalid_argument',
    });
  }
  return parsed.data;
}

/** A job's label for events and status lines. */
export function jobInfo(jobId: string, data: JobWire): WorkerJobInfo {
  const info: WorkerJobInfo =
    data.kind === 'chunk'
      ? { jobId, kind: 'chunk', runId: data.runId, label: data.agent === undefined ? `chunk ${data.chunk.sequenceIndex} "${data.chunk.title}" (${data.chunk.role})` : `task "${data.chunk.title}" (${data.agent})`, attempt: data.attempt }
      : { jobId, kind: 'run', runId: data.runId, label: data.name };
  if (data.traceContext) info.traceContext = data.traceContext;
  return info;
}

/**
 * What can be told of a job whose data the worker could not read: its run
 * id, kind and chunk as far as its data has them, for events and status
 * lines.
 */
export function unreadJobInfo(jobId: string, data: unknown): WorkerJobInfo {
  const d = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const chunk = typeof d.chunk === 'object' && d.chunk !== null ? (d.chunk as Record<string, unknown>) : undefined;
  const kind = d.kind === 'run' ? 'run' : 'chunk';
  const label = chunk
    ? `chunk ${typeof chunk.sequenceIndex === 'number' ? chunk.sequenceIndex : '?'} "${text(chunk.title) ?? ''}" (${text(chunk.role) ?? '?'})`
    : (text(d.name) ?? `job ${jobId}`);
  return { jobId, kind, runId: text(d.runId) ?? '', label, ...(typeof d.attempt === 'number' ? { attempt: d.attempt } : {}) };
}

/** Most characters of JSON of the events a result carries (more are sent as batches before it). */
export const MAX_RESULT_EVENTS_CHARS = 64 * 1024;

/**
 * Run `job` until it ends or `signal` aborts. Resolves with the result (the
 * events still queued in it); rejects with the run's error once its events
 * and why it failed are on their way. Either way the events go ahead of
 * the job's end on the worker's connection, so the coordinator has them
 * all when it hears of the end.
 */
export async function runJob(host: JobHost, job: IncomingJob, exec: string, signal: AbortSignal): Promise<JobResultWire> {
  const id = job.id;
  const outbox = new EventOutbox((batch) => host.publish(id, exec, batch), host.warn, { clock: host.clock });
  try {
    admitJob(host.trust, job);
    const data = readJob(job);
    const info = jobInfo(id, data);
    const observer = host.observe?.(info);
    const reading = host.readCancel(id);
    const reason = reading === undefined ? undefined : await reading;
    if (reason !== undefined) throw new CancelledError(`Job ${id} was cancelled before it started: ${reason}`);
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new CancelledError();
    // Only a job that runs is said to start; one dropped above ends with `job.failed` alone. The coordinator hears of the start
    // with the run's first op (or, should this turn end before the run starts one, on its own), or else from the result.
    outbox.begin();
    host.started(info);
    const onEvent = (event: TroupeEvent) => {
      outbox.push(event);
      observer?.(event);
    };
    const done = data.kind === 'chunk' ? await runChunk(host, job, data, exec, signal, onEvent) : await runNamed(host, data, exec, signal, onEvent);
    const events = outbox.takeTail(MAX_RESULT_EVENTS_CHARS);
    return events ? { ...done, events } : done;
  } catch (error) {
    outbox.fail(describeFailure(error));
    throw error;
  }
}

/** Why a job failed, for the coordinator: the message, the error's name and code, and for a guardrail trip, the guardrail, stage and verdict. */
export function describeFailure(error: unknown): JobFailureWire {
  const failure: JobFailureWire = { message: errorMessage(error), ...(error instanceof Error ? { name: error.name } : {}), ...(isTroupeError(error) ? { code: error.code } : {}) };
  if (error instanceof GuardrailTripError) failure.guardrail = tripOf(error);
  return failure;
}

/** A trip's fields that cross the wire (its trace is the worker's; the coordinator has its own). */
function tripOf(error: GuardrailTripError): GuardrailTripWire {
  const place = (key: 'runnable' | 'agent' | 'tool') => (typeof error.details[key] === 'string' ? { [key]: error.details[key] as string } : {});
  return { guardrail: error.guardrail, stage: error.stage, verdict: error.verdict, ...place('runnable'), ...place('agent'), ...place('tool') };
}

/**
 * `runnable` under the worker's guardrails, named `label` in their events
 * and trip errors: the path `planRunnable(plan, { guardrails })` takes for
 * each attempt in process (no op of its own).
 */
function guardedAs(runnable: Runnable, label: string, guards: GuardrailOptions | undefined): Runnable {
  if (guards === undefined) return runnable;
  return { name: runnable.name, kind: runnable.kind, run: (input, ctx) => runGuarded<Outcome>(ctx, label, guards, input, (inner) => runnable.run(input, inner)) };
}

type Listener = (event: TroupeEvent) => void;

async function runNamed(host: JobHost, data: Extract<JobWire, { kind: 'run' }>, exec: string, signal: AbortSignal, onEvent: Listener): Promise<JobResultWire> {
  const runnable = guardedAs(namedRunnable(data.name, host.registry), data.name, host.guardrails);
  const result = await startRun(runnable, data.input, runOptions(host, `${data.runId}:${exec}`, signal, onEvent)).result;
  return { v: WIRE_VERSION, exec, worker: host.worker, output: result.output, agent: result.agent, status: result.status, usage: result.usage };
}

async function runChunk(host: JobHost, job: IncomingJob, data: Extract<JobWire, { kind: 'chunk' }>, exec: string, signal: AbortSignal, onEvent: Listener): Promise<JobResultWire> {
  const id = job.id;
  const strategy = host.workspace;
  const c = data.chunk;
  let workspace: Workspace | undefined;
  if (strategy) {
    const scope = { id: String(c.sequenceIndex), baseDir: host.baseDir, planId: data.planId, title: c.title, ...(c.workingScope ? { workingScope: c.workingScope } : {}) };
    workspace = await strategy.prepare(scope, { signal });
  }
  try {
    const runnable = guardedAs(chunkRunnable(data, workspace?.path ?? host.baseDir, host), data.agent ?? `chunk ${c.sequenceIndex}`, host.guardrails);
    // Under what is left of the coordinator's budgets: the worker's turns also count there, as they come back.
    const options = { ...runOptions(host, `${data.runId}:${exec}`, signal, onEvent), ...defined({ budget: data.budget }) };
    const result = await startRun(runnable, data.prompt, options).result;
    if (strategy && workspace) {
      const merged = await strategy.merge(workspace, { signal });
      if (merged.status === 'conflict') {
        throw new WorkspaceError(`Merging chunk ${c.sequenceIndex} conflicted in ${merged.conflicts.join(', ')}`, { details: { conflicts: merged.conflicts } });
      }
    }
    const done: JobResultWire = { v: WIRE_VERSION, exec, worker: host.worker, output: result.output, agent: result.agent, status: result.status, usage: result.usage };
    if (host.store && data.agent === undefined) {
      // In the plan's checkpoint, so a coordinator that resumes the run counts the chunk as done, even one that was not up to hear of it;
      // only for a job its coordinator handed out (the grant it wrote before adding the job), never for one someone else wrote to the queue.
      try {
        if (await isGranted(host.store, data.runId, id, job.data, { signal })) {
          await recordChunkResult(host.store, data, result.output);
          done.recorded = true;
        } else {
          host.warn(`The result of job ${id} was not recorded in run ${data.runId}: no coordinator of the run handed out this job (no grant in the store for its data and id)`);
        }
      } catch (error) {
        host.warn(`The result of job ${id} could not be recorded in the store: ${errorMessage(error)}`);
      }
    }
    return done;
  } finally {
    if (strategy && workspace) await strategy.cleanup(workspace).catch((error: unknown) => host.warn(`Workspace cleanup failed: ${errorMessage(error)}`));
  }
}

function runOptions(host: JobHost, runId: string, signal: AbortSignal, onEvent: Listener) {
  return {
    runId,
    signal,
    clock: host.clock,
    onEvent,
    adapters: host.adapters,
    ...defined({ adapter: host.adapter }),
  };
}

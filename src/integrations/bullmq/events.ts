/**
 * The typed events of the queue's two sides: what a coordinator (an
 * executor or remote runnables) sees of its jobs, and what a worker does;
 * and the `remote.*` events a remote attempt or run adds to the run it
 * belongs to (merged into the run's event map, see `TroupeLayerEvents` in
 * `src/core/events.ts`).
 * @module
 */
import type { JobKind } from './wire.js';

/**
 * The events of remote work in the run it belongs to, by name: emitted in
 * the op of the chunk attempt (or of the `remote` runnable), so the run
 * log, `onEvent`, the report and an event stream say where each piece of
 * work waited and ran. What the worker did comes back as the ordinary
 * events of its ops (`op.*`, `agent.*`, `tool.*`, ...).
 */
export interface RemoteEvents {
  /**
   * The work is a job in queue `queue`: added now, or (`adopted`) found
   * there — a resumed run takes over the job an earlier coordinator added
   * for the same attempt, queued, running or finished, instead of adding
   * another.
   */
  'remote.queued': { jobId: string; queue: string; kind: JobKind; adopted: boolean };
  /** Worker `worker` started the job, `waitMs` after it was queued (on this run's clock). */
  'remote.started': { jobId: string; queue: string; worker: string; waitMs: number };
  /**
   * The job's worker was lost (its lock expired, `kill -9`, a cut cable):
   * BullMQ put the job back in the queue, and the ops the lost worker left
   * open are closed as failed. The attempt goes on on another worker; the
   * scheduler does not count a new one.
   */
  'remote.stalled': { jobId: string; queue: string; worker?: string };
}

declare global {
  interface TroupeLayerEvents extends RemoteEvents {}
}

/** Which job an event is about. */
export interface JobRef {
  /** The BullMQ job id. */
  jobId: string;
  /** The queue the job is in. */
  queue: string;
  /** A chunk attempt, or a run of a named runnable. */
  kind: JobKind;
  /** The coordinator's run. */
  runId: string;
  /** For a chunk: its plan, index and attempt; for a run: the runnable's name. */
  planId?: string;
  sequenceIndex?: number;
  attempt?: number;
  name?: string;
}

/** Events of a coordinator's jobs (`executor.events`, `remote(...).events`), dot-namespaced. */
export interface QueueClientEvents {
  /** The job was added to the queue (or, in a resumed run, found there and taken over). */
  'job.queued': (event: JobRef & { adopted: boolean }) => void;
  /** A worker started the job; `waitMs` is the time since it was queued, on the coordinator's clock. */
  'job.started': (event: JobRef & { worker: string; waitMs: number }) => void;
  /** The job's result arrived; `durationMs` is the time since it was queued. */
  'job.completed': (event: JobRef & { worker: string; durationMs: number }) => void;
  /** The job failed (on its worker, or because the queue lost it). */
  'job.failed': (event: JobRef & { worker?: string; error: string; code: string }) => void;
  /** The job was cancelled: `removed` when it was still queued (it never starts); otherwise its worker is told to abort it. */
  'job.cancelled': (event: JobRef & { removed: boolean }) => void;
  /** The job's worker was lost (its lock expired): BullMQ put the job back in the queue for another worker. */
  'job.stalled': (event: JobRef & { worker?: string }) => void;
  /** The connection to Redis was lost. Jobs in flight wait for it to come back, up to `unavailableTimeoutMs`. */
  'queue.down': (event: { queueName: string }) => void;
  /** The connection to Redis is back after `downMs`. */
  'queue.up': (event: { queueName: string; downMs: number }) => void;
  /** Something went wrong that no caller is waiting for (a cancellation that could not reach Redis, ...). */
  'queue.warning': (event: { message: string }) => void;
}

/** What a worker's job events carry. */
export interface WorkerJobEvent {
  jobId: string;
  kind: JobKind;
  /** The coordinator's run (for a job the worker could not read, what its data says, else `''`). */
  runId: string;
  /** What ran: `chunk 3 "Title" (Role)`, `task "Title" (agent)` or the runnable's name. */
  label: string;
  /** For a chunk, the scheduler's attempt number. */
  attempt?: number;
}

/** Events of a worker (`worker.events`), dot-namespaced. */
export interface WorkerEvents {
  /** A job started on this worker. A job cancelled before it started is not said to start: it ends with `job.failed` (`cancelled: true`) alone. */
  'job.started': (event: WorkerJobEvent) => void;
  /** A job finished; its result is on its way to the coordinator. */
  'job.completed': (event: WorkerJobEvent & { durationMs: number }) => void;
  /** A job failed; `cancelled` when the coordinator cancelled it (or it timed out there). */
  'job.failed': (event: WorkerJobEvent & { durationMs: number; error: string; code?: string; cancelled: boolean }) => void;
  /** The worker was closing and its grace period ended: the job went back to the queue for another worker. */
  'job.handedBack': (event: WorkerJobEvent) => void;
  /** The worker is closing: it takes no new job. */
  'worker.closing': (event: { name: string }) => void;
  /** The worker has closed. */
  'worker.closed': (event: { name: string }) => void;
  /** Something went wrong outside a job (a lost connection, an event batch that could not be sent, ...). */
  'worker.warning': (event: { message: string }) => void;
}

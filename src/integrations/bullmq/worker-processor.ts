/**
 * A worker's BullMQ processor: run each job it takes (`runJob`), tell the
 * worker's events, and hand a job back to the queue when the worker closes
 * before the job ends.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'eventemitter3';
import type { Job } from 'bullmq';
import type { Clock } from '../../core/clock.js';
import { CancelledError, errorMessage, isTroupeError } from '../../core/errors.js';
import { defined } from '../../core/defined.js';
import type { WorkerEvents, WorkerJobEvent } from './events.js';
import { runJob, unreadJobInfo, type JobHost, type WorkerJobInfo } from './worker-job.js';
import type { IdleTracker, RunningJobs } from './worker-parts.js';

/** Why a job's run is aborted when the worker hands it back. */
export class HandedBack extends CancelledError {
  constructor() {
    super('The worker is closing: the job goes back to the queue');
  }
}

/** What the processor works with. */
export interface ProcessorParts {
  /** Everything a job needs but its events (`started` is added here). */
  host: Omit<JobHost, 'started'>;
  jobs: RunningJobs;
  idle: IdleTracker;
  events: EventEmitter<WorkerEvents>;
  clock: Clock;
  /** BullMQ's error that tells it the job was moved back to wait. */
  waitingError: () => Error;
  /** BullMQ's error that fails a job without retrying it (whatever `attempts` the job asks for). */
  unrecoverableError: (message: string) => Error;
}

/** What the worker's job events say about a job. */
export function jobEvent(info: WorkerJobInfo): WorkerJobEvent {
  return { jobId: info.jobId, kind: info.kind, runId: info.runId, label: info.label, ...defined({ attempt: info.attempt }) };
}

/** The processor to give BullMQ's `Worker`. */
export function jobProcessor(parts: ProcessorParts): (job: Job, token?: string) => Promise<unknown> {
  const { jobs, idle, events, clock } = parts;
  const infos = new Map<string, WorkerJobEvent>();
  const host: JobHost = {
    ...parts.host,
    started(info: WorkerJobInfo) {
      const event = jobEvent(info);
      infos.set(info.jobId, event);
      events.emit('job.started', event);
    },
  };
  return async (job, token) => {
    const id = job.id ?? '';
    const controller = jobs.start(id);
    const start = clock.now();
    idle.enter();
    try {
      const result = await runJob(host, { id, name: job.name, data: job.data }, randomUUID(), controller.signal);
      const info = infos.get(id);
      if (info) events.emit('job.completed', { ...info, durationMs: clock.now() - start });
      return result;
    } catch (error) {
      // A job whose data could not be read was never started: say what its data does tell.
      const info = infos.get(id) ?? jobEvent(unreadJobInfo(id, job.data));
      if (controller.signal.reason instanceof HandedBack && token !== undefined) {
        await job.moveToWait(token).catch((e: unknown) => host.warn(`Job ${id} could not be handed back (another worker takes it once its lock expires): ${errorMessage(e)}`));
        events.emit('job.handedBack', info);
        throw parts.waitingError();
      }
      const code = isTroupeError(error) ? { code: error.code } : {};
      events.emit('job.failed', { ...info, durationMs: clock.now() - start, error: errorMessage(error), ...code, cancelled: controller.signal.aborted });
      // A refused job is never run, here or on another worker: no retry.
      if (isTroupeError(error, 'job_refused')) throw parts.unrecoverableError(errorMessage(error));
      throw error instanceof Error ? error : new Error(errorMessage(error));
    } finally {
      jobs.end(id);
      infos.delete(id);
      idle.leave();
    }
  };
}

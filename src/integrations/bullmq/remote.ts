/**
 * `remote(name)`: a runnable whose every run is a job for a worker that has
 * a runnable called `name`, so any pattern can fan out across machines
 * (advisors, broadcast, team members, router destinations).
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'eventemitter3';
import type { RunContext } from '../../core/context.js';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import type { Outcome } from '../../core/outcome.js';
import type { Runnable } from '../../core/runnable.js';
import { JobClient } from './client.js';
import { checkPlace } from './connection.js';
import type { QueueClientEvents } from './events.js';
import { clientOf, type BullmqExecutor, type TraceCarrier } from './executor.js';
import { RemoteMirror, watchJob } from './mirror.js';
import { clientSettings, queueClientShape, queueLocationShape, type QueueClientOptions } from './options.js';
import { anything, defineOptions, func } from '../../core/options.js';
import type { RunJobWire } from './wire.js';
import { coordinatorError } from './errors.js';

/** Options of {@link remote}: where the queue is, or the executor whose connections to share (and which of its queues, when it has several). */
export type RemoteOptions = (QueueClientOptions | { executor: BullmqExecutor; queueName?: string }) & {
  /** The trace context each job carries, from the remote op (with `troupe/otel`: `(op) => tracing.inject(op)`). */
  traceContext?: (op: { runId: string; opId: string }) => TraceCarrier | undefined;
};

const remoteOptions = defineOptions<QueueClientOptions & { executor?: BullmqExecutor; traceContext?: RemoteOptions['traceContext'] }>('remote', {
  ...queueClientShape,
  ...queueLocationShape,
  executor: anything,
  traceContext: func,
});

/** A runnable that runs on a worker. */
export interface RemoteRunnable extends Runnable<Outcome> {
  readonly kind: 'remote';
  /** Typed events of its jobs (shared with the executor when it uses one). */
  readonly events: EventEmitter<QueueClientEvents>;
  /** Close its connections (not the executor's, when it shares one); runs in flight fail with a `QueueError`. */
  close(): Promise<void>;
}

/**
 * A runnable that sends each run to the queue, where a worker runs its own
 * runnable called `name` on the input and returns the outcome. The run opens
 * one op (kind `remote`); the worker's ops, events and usage join it as if
 * they had run here. Aborting the run's signal cancels the job (removed if
 * still queued, aborted on its worker otherwise).
 *
 * @example
 * ```ts
 * import { bullmqExecutor, remote } from 'troupe/bullmq';
 * const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:6379' });
 * const panel = advisors(main, [remote('security', { executor }), remote('style', { executor })]);
 * ```
 */
export function remote(name: string, options: RemoteOptions): RemoteRunnable {
  if (typeof name !== 'string' || name === '') throw new ConfigurationError(`Expected \`name\` to be a runnable's name, got ${describeValue(name)}`);
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected remote options, got ${describeValue(options)}`);
  remoteOptions.check(options as QueueClientOptions);
  const traceContext = options.traceContext;
  if (traceContext !== undefined && typeof traceContext !== 'function') {
    throw new ConfigurationError(`Expected \`traceContext\` to be a function of an op, got ${describeValue(traceContext)}`);
  }
  let client: JobClient;
  let owned: boolean;
  if ('executor' in options) {
    const shared = clientOf(options.executor, options.queueName);
    if (!shared) throw new ConfigurationError(`Expected \`executor\` to be a bullmqExecutor, got ${describeValue(options.executor)}`);
    [client, owned] = [shared, false];
  } else {
    [client, owned] = [new JobClient(checkPlace(options, 'remote'), clientSettings(options, 'remote')), true];
  }

  async function runRemote(input: string, ctx: RunContext): Promise<Omit<Outcome, 'usage'>> {
    const jobId = `${ctx.runId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'))}|remote|${randomUUID()}`;
    const carrier = traceContext?.({ runId: ctx.runId, opId: ctx.op.id });
    const data: RunJobWire = { v: 1, kind: 'run', runId: ctx.runId, name, input, path: ctx.checkpointPath, ...(carrier ? { traceContext: carrier } : {}) };
    const mirror = new RemoteMirror(ctx);
    try {
      const result = await client.submit({
        jobId,
        kind: 'run',
        data,
        ref: { jobId, kind: 'run', runId: ctx.runId, name },
        signal: ctx.signal,
        existing: 'fresh',
        watcher: watchJob(ctx, mirror, { jobId, queue: client.queueName, kind: 'run' }),
      });
      mirror.close('failed', 'The worker finished the job without closing this op');
      return { output: result.output, agent: result.agent, status: result.status };
    } catch (error) {
      mirror.close(ctx.signal.aborted ? 'cancelled' : 'failed', errorMessage(error));
      throw coordinatorError(ctx, error);
    }
  }

  return {
    name,
    kind: 'remote',
    events: client.events,
    run: (input, parent) => parent.enter({ kind: 'remote', name }, (ctx) => runRemote(input, ctx)),
    close: () => (owned ? client.close() : Promise.resolve()),
  };
}

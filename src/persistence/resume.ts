/**
 * `resume`: continue a run that was cancelled, crashed or timed out, from
 * the checkpoints its patterns saved to the run's store.
 * @module
 */
import { ConfigurationError, StoreError, describeValue } from '../core/errors.js';
import { run, type RunOptions, type RunResult } from '../core/run.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { readRun } from './run-log.js';
import type { Store } from '../core/store.js';

/** Options of {@link resume}: those of `run`, with the store required. */
export interface ResumeOptions extends Omit<RunOptions, 'store' | 'runId' | 'resume'> {
  /** The store the run was logged in. */
  store: Store;
}

/** Options of the `resume(runId, options)` call shape: {@link ResumeOptions} plus the runnable to continue. */
export interface ResumeRunOptions<O extends Outcome = Outcome> extends ResumeOptions {
  /** The runnable the run was started with (the same name as in its log). */
  runnable: Runnable<O>;
}

/**
 * Continue run `runId`: read its input back from its run log, then run
 * `runnable` again under the same run id, marked as resuming. Every
 * checkpointing pattern (reflect and orchestrate loops, teams, plan
 * executions, coordinations) loads its checkpoint: a finished one returns its saved
 * outcome with no model call, an unfinished one continues at its next
 * iteration, round or chunk. Events are appended to the same run log.
 * Work that is not inside a checkpointing pattern runs again.
 *
 * Two call shapes do the same: `resume(runnable, runId, options)` (the
 * order of `run`) and `resume(runId, { runnable, store, ... })`.
 *
 * @example
 * ```ts
 * const first = startRun(loop, 'Ship the feature', { adapter, store, runId: 'ship-1' });
 * // ... the process dies, or first.abort() ...
 * const result = await resume(loop, 'ship-1', { adapter, store });
 * // or: await resume('ship-1', { runnable: loop, adapter, store });
 * ```
 */
export function resume<O extends Outcome>(runnable: Runnable<O>, runId: string, options: ResumeOptions): Promise<RunResult<O>>;
/** Continue run `runId` with `options.runnable`; see the other overload. */
export function resume<O extends Outcome>(runId: string, options: ResumeRunOptions<O>): Promise<RunResult<O>>;
export async function resume<O extends Outcome>(
  first: Runnable<O> | string,
  second: string | ResumeRunOptions<O>,
  third?: ResumeOptions,
): Promise<RunResult<O>> {
  if (typeof first === 'string') {
    if (second === null || typeof second !== 'object') {
      throw new ConfigurationError(`Expected the options of \`resume(runId, options)\` to be an object, got ${describeValue(second)}`);
    }
    const { runnable, ...rest } = second;
    return resumeRun(runnable, first, rest);
  }
  return resumeRun(first, second as string, third as ResumeOptions);
}

async function resumeRun<O extends Outcome>(runnable: Runnable<O>, runId: string, options: ResumeOptions): Promise<RunResult<O>> {
  if (!runnable || typeof runnable.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable (an object with a \`run\` method), got ${describeValue(runnable)}`);
  }
  if (typeof runId !== 'string' || runId === '') throw new ConfigurationError(`Expected \`runId\` to be a non-empty string, got ${describeValue(runId)}`);
  if (!options || typeof options.store?.read !== 'function') {
    throw new ConfigurationError(`Expected \`store\` to be a store (an object with \`read\`), got ${describeValue(options?.store)}`);
  }
  const { store } = options;
  const log = await readRun(store, runId, options.signal ? { signal: options.signal } : {});
  const started = log.events.find((e) => e.type === 'run.started');
  if (!started || started.type !== 'run.started') {
    throw new StoreError(`Cannot resume run "${runId}": the store holds no run log for it (no run.started event)`, { details: { runId } });
  }
  if (started.runnable !== runnable.name) {
    throw new ConfigurationError(`Cannot resume run "${runId}" with "${runnable.name}": it was a run of "${started.runnable}"`, {
      details: { runId, runnable: started.runnable },
    });
  }
  return run(runnable, started.input, { ...options, store, runId, resume: true });
}

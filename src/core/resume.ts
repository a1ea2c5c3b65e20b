/**
 * `resume(runnable, runId, options)`: continue a run that was cancelled,
 * crashed or timed out, from the checkpoints its patterns saved to the run's
 * store. The one way to resume.
 * @module
 */
import type { ConversationMessage } from './adapter.js';
import { defined } from './defined.js';
import { ConfigurationError, StoreError, describeValue } from './errors.js';
import type { TroupeEvent } from './events.js';
import type { Outcome } from './outcome.js';
import { readRunEvents } from './run-log-reader.js';
import { defineOptions, required, store as storeCheck } from './options.js';
import { launch, runOptions, type RunOptions, type RunResult } from './run.js';
import type { Runnable } from './runnable.js';
import type { Store } from './store.js';

/** Options of {@link resume}: those of `run`, with the store required and no `runId` (it is the second argument). */
export interface ResumeOptions extends Omit<RunOptions, 'store' | 'runId'> {
  /** The store the run was logged in. */
  store: Store;
}

const { store: _store, runId: _runId, ...shared } = runOptions.shape;
/** The description {@link resume} checks its options against: those of `run`, the store required, no `runId`. */
const resumeOptions = defineOptions<ResumeOptions>('resume', { ...shared, store: required(storeCheck) });

/**
 * Continue run `runId`: read its input back from its run log in `store`,
 * then run `runnable` again under the same run id, marked as resuming.
 * Every checkpointing pattern (reflect and orchestrate loops, teams, plans,
 * planning sessions, coordinations) loads its checkpoint: a finished one
 * returns its saved outcome with no model call, an unfinished one continues
 * at its next iteration, round, batch or chunk (a plan also counts the
 * chunks other processes recorded as done in its checkpoint). A fork
 * (`forkRun` of `troupe/travel`) is continued the same way. Events are
 * appended to the same run log. Work that is not inside a checkpointing
 * pattern runs again.
 *
 * @example
 * ```ts
 * const first = startRun(loop, 'Ship the feature', { adapter, store, runId: 'ship-1' });
 * // ... the process dies, or first.cancel() ...
 * const result = await resume(loop, 'ship-1', { adapter, store });
 * ```
 */
export async function resume<O extends Outcome>(runnable: Runnable<O>, runId: string, options: ResumeOptions): Promise<RunResult<O>> {
  if (!runnable || typeof runnable.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable (an object with a \`run\` method), got ${describeValue(runnable)}`);
  }
  if (typeof runId !== 'string' || runId === '') throw new ConfigurationError(`Expected \`runId\` to be a non-empty string, got ${describeValue(runId)}`);
  resumeOptions.check(options ?? ({} as ResumeOptions));
  const { store } = options;
  const started = await firstStart(store, runId, options.signal);
  if (started.runnable !== runnable.name) {
    throw new ConfigurationError(`Cannot resume run "${runId}" with "${runnable.name}": it was a run of "${started.runnable}"`, {
      details: { runId, runnable: started.runnable },
    });
  }
  // A run on a thread takes it again and gives its entry agent the history it had; a fork of one is given that history and leaves the thread alone.
  const thread =
    started.type === 'run.started' && started.thread !== undefined
      ? { id: started.thread, persist: true, ...defined({ history: started.history }) }
      : started.type === 'run.forked' && started.loaded !== undefined
        ? { id: started.loaded.thread, history: started.loaded.messages, runs: started.loaded.runs, persist: false }
        : undefined;
  const resource = started.type === 'run.started' ? started.resource : undefined;
  return launch(runnable, started.input, { ...options, store, runId, ...defined({ resource }) }, true, started.parent, thread).result;
}

/**
 * The run's first `run.started` event in its log, or the `run.forked` record
 * a fork starts with; for a run on a thread, with the history its entry
 * agent was given (its `thread.loaded`), so the resumed run sees the same.
 */
async function firstStart(
  store: Store,
  runId: string,
  signal: AbortSignal | undefined,
): Promise<TroupeEvent<'run.started' | 'run.forked'> & { history?: ConversationMessage[]; loaded?: TroupeEvent<'thread.loaded'> }> {
  const { events } = await readRunEvents(runId, { store, ...(signal ? { signal } : {}) });
  const loaded = events.find((x) => x.type === 'thread.loaded') as TroupeEvent<'thread.loaded'> | undefined;
  for (const event of events) {
    if (event.type === 'run.started' || event.type === 'run.forked') {
      const e = event as Partial<TroupeEvent<'run.started' | 'run.forked'>>;
      if (typeof e.runnable !== 'string' || typeof e.input !== 'string') continue;
      const history = e.type === 'run.started' && e.thread !== undefined && loaded?.thread === e.thread ? loaded.messages : undefined;
      return { ...(e as TroupeEvent<'run.started' | 'run.forked'>), ...defined({ history, loaded }) };
    }
  }
  throw new StoreError(`Cannot resume run "${runId}": the store holds no run log for it (no run.started event)`, { details: { runId } });
}

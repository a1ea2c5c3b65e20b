/**
 * Parallel fan-out, once for every pattern that runs several things at
 * the same time (`broadcast`, `advisors`, `orchestrate`'s dispatch,
 * `team`'s parallel rounds): at most `maxParallel` at once, and the
 * first failure cancels the siblings.
 * @module
 */
import pLimit from 'p-limit';
import { combineSignals, throwIfAborted } from '../core/abort.js';
import type { RunContext } from '../core/context.js';

/** Runs a task when a place is free: at most `maxParallel` tasks of one limiter run at once. */
export type Limiter = <R>(task: () => Promise<R>) => Promise<R>;

/**
 * A limiter for tasks that arrive one by one (the `delegate_to_worker`
 * calls of a lead's turn): at most `maxParallel` run at once, the others
 * wait in order. Without `maxParallel`, no limit.
 */
export function limiter(maxParallel: number | undefined): Limiter {
  if (maxParallel === undefined) return (task) => task();
  const limit = pLimit(maxParallel);
  return (task) => limit(task);
}

/** Options of {@link fanOut}. */
export interface FanOutOptions {
  /** Most tasks at once. Default: all of them. */
  maxParallel?: number | undefined;
}

/**
 * Run `task` for every item in parallel (at most `maxParallel` at once)
 * and resolve with the results in the items' order. Each task gets a
 * context whose signal also aborts when a sibling fails: the first task
 * that throws cancels the ones running, the ones still queued never start,
 * and, once every started task has settled, the fan-out rejects with that
 * first error (with the run's own cancellation when the run was cancelled).
 * A pattern whose rule tolerates a failure turns it into a result inside
 * `task` instead of throwing.
 */
export async function fanOut<T, R>(
  ctx: RunContext,
  items: readonly T[],
  task: (item: T, branch: RunContext, index: number) => Promise<R>,
  options: FanOutOptions = {},
): Promise<R[]> {
  // A limit no lower than the number of items limits nothing: no queue to build.
  const limit = limiter(options.maxParallel !== undefined && options.maxParallel < items.length ? Math.max(1, options.maxParallel) : undefined);
  const siblings = new AbortController();
  const branch = ctx.withSignal(combineSignals(ctx.signal, siblings.signal));
  const settled = await Promise.allSettled(
    items.map((item, i) =>
      limit(async () => {
        throwIfAborted(branch.signal);
        try {
          return await task(item, branch, i);
        } catch (error) {
          if (!siblings.signal.aborted && !ctx.signal.aborted) siblings.abort(error);
          throw error;
        }
      }),
    ),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
  throwIfAborted(ctx.signal);
  throw siblings.signal.aborted ? siblings.signal.reason : failed.reason;
}

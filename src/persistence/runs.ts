/**
 * Listing the runs logged in a store, from their meta documents.
 * @module
 */
import { parseRunMeta } from '../core/run-log-reader.js';
import type { RunMeta } from '../core/run-log-writer.js';
import { runStoreOptions, type RunStoreOptions } from './run-log.js';

/**
 * Every run logged in `options.store` (its `runs/<runId>/meta` documents), the
 * latest started first: id, runnable, start and end, status, usage and the
 * run it was made from. A run that is still going, or was cut short, has no
 * `endedAt`.
 *
 * @example
 * ```ts
 * for (const r of await listRuns({ store })) console.log(r.runId, r.status ?? 'unfinished', r.usage?.costUsd);
 * ```
 */
export async function listRuns(options: RunStoreOptions): Promise<RunMeta[]> {
  runStoreOptions.check(options ?? ({} as RunStoreOptions), '', 'listRuns');
  const { store } = options;
  const call = options.signal ? { signal: options.signal } : {};
  const runs: RunMeta[] = [];
  for (const key of await store.list('runs/', call)) {
    if (!key.endsWith('/meta')) continue;
    const meta = parseRunMeta(await store.get(key, call), key);
    if (!meta || typeof meta.startedAt !== 'number') continue;
    runs.push(meta);
  }
  return runs.sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? -1 : 1));
}

/**
 * Taking a run id before a run is started under it, so that of concurrent
 * requests for one id exactly one starts a run. Internal to the handler.
 * @module
 */
import { supportsCompareAndSet, type Store } from '../../core/store.js';

/** The document that says run `runId` was created: `runs/<runId>/created` (deleted with the run's other documents). */
export function createdKey(runId: string): string {
  return `runs/${runId}/created`;
}

/**
 * Takes run ids in a store: `take` is true for exactly one caller per id.
 * On a store with compare-and-set it writes `runs/<runId>/created` with
 * `setIf(..., { ifVersion: null })`, one atomic step for every process that
 * shares the store (memory, file, Redis); on a store without, the check and
 * the write are ordered within this process only.
 * @internal
 */
export class RunIds {
  /** Ids being taken in this process (`<scope> <runId>`), for stores without compare-and-set. */
  readonly #taking = new Set<string>();

  /** Take `runId` in `store` (a tenant's store; `scope` names the tenant); false when it is taken already. */
  async take(store: Store, scope: string, runId: string, signal: AbortSignal, time: number): Promise<boolean> {
    const key = createdKey(runId);
    const doc = { runId, createdAt: time };
    if (supportsCompareAndSet(store)) return (await store.setIf(key, doc, { ifVersion: null, signal })).ok;
    const local = `${scope} ${runId}`;
    if (this.#taking.has(local)) return false;
    this.#taking.add(local);
    try {
      if ((await store.get(key, { signal })) !== undefined) return false;
      await store.set(key, doc, { signal });
      return true;
    } finally {
      this.#taking.delete(local);
    }
  }

  /** Give `runId` back (its start failed), so that a later request may start it. */
  async release(store: Store, runId: string): Promise<void> {
    await store.delete(createdKey(runId)).catch(() => undefined);
  }
}

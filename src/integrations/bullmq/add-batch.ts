/**
 * The coordinator's job adds, gathered over one turn of the event loop:
 * the attempts a plan dispatches together (its ready set, or the chunks
 * that became ready on the results of one read of the event stream) reach
 * Redis in one round trip. Ahead of the adds, on the same connection, one
 * script clears the cancellation marks of earlier jobs with the same ids
 * and says which ids already had a job: for those the add was a no-op, and
 * the caller replaces the earlier job (a run that reuses an earlier run's
 * id) before adding again.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { JobKind, JobWire } from './wire.js';

/** One job to add. */
export interface JobToAdd {
  jobId: string;
  kind: JobKind;
  data: JobWire;
  /** Clear the job's cancellation mark and look for an earlier job with its id (`exists`). False for ids that are new (random). */
  check: boolean;
}

/**
 * What became of one add: the job is in Redis; (checked jobs only) an
 * earlier job had its id and the add did nothing; or it was not sent, its
 * attempt having been cancelled while it waited for the batch.
 */
export type AddOutcome = 'added' | 'exists' | 'dropped';

/**
 * Clears the cancellation marks (`KEYS[n+1..2n]`) and returns, for each
 * job key (`KEYS[1..n]`), whether it exists. Keys of one queue share a
 * hash tag on Redis Cluster, so they live in one slot.
 */
export const PREPARE_ADDS = `local n = #KEYS / 2
local found = {}
for i = 1, n do
  redis.call('DEL', KEYS[n + i])
  found[i] = redis.call('EXISTS', KEYS[i])
end
return found`;

interface Waiting {
  job: JobToAdd;
  resolve(outcome: AddOutcome): void;
  reject(error: unknown): void;
}

/** Gathers adds made in one turn of the event loop and sends them with `send`, which resolves with one outcome per job, in order. */
export class AddBatch {
  readonly #send: (jobs: JobToAdd[]) => Promise<AddOutcome[]>;
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(send: (jobs: JobToAdd[]) => Promise<AddOutcome[]>) {
    this.#send = send;
  }

  /** Add `job` with the others of this turn of the event loop. */
  add(job: JobToAdd): Promise<AddOutcome> {
    return new Promise<AddOutcome>((resolve, reject) => {
      this.#waiting.push({ job, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // After the microtasks of this turn: every attempt dispatched on the results of one read goes in the batch.
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#waiting;
    this.#waiting = [];
    this.#send(batch.map((w) => w.job)).then(
      (outcomes) => batch.forEach((w, i) => w.resolve(outcomes[i] ?? 'added')),
      (error: unknown) => batch.forEach((w) => w.reject(error)),
    );
  }
}

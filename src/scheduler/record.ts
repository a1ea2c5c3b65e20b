/**
 * The scheduler's record of one chunk: its status, attempts, result and the
 * attempt that runs. One record per chunk, with every field set from the
 * start, so every record has the same shape.
 * @module
 */
import type { Attempt } from './attempt.js';
import type { PlanChunk } from './plan.js';
import type { ChunkStatus } from './state.js';
import type { ChunkResult } from './types.js';

/** Everything the scheduler knows about one chunk. */
export class ChunkRecord {
  status: ChunkStatus = 'Pending';
  /** Attempts started so far. */
  attempts = 0;
  /** Dependencies that have not succeeded yet. */
  unmet = 0;
  output: string | undefined = undefined;
  /** The last error (or why the chunk was skipped). */
  error: string | undefined = undefined;
  files: string[] | undefined = undefined;
  /** Clock time of the first start, of the current attempt's start and of the end (-1 until then). */
  firstStart = -1;
  attemptStart = -1;
  end = -1;
  /** The attempt the scheduler waits for; undefined once it settled or was abandoned. */
  attempt: Attempt | undefined = undefined;
  /** Ends a pending retry delay early (the chunk then becomes `Aborted`). */
  cancelRetry: (() => void) | undefined = undefined;
  #id: string | undefined = undefined;

  constructor(
    /** Position in `plan.chunks`. */
    readonly position: number,
    readonly chunk: PlanChunk,
  ) {}

  /** The chunk's id in events (`String(sequenceIndex)`), made once. */
  get id(): string {
    return (this.#id ??= String(this.chunk.sequenceIndex));
  }

  /** The public result of the chunk. */
  result(): ChunkResult {
    const c = this.chunk;
    const r: ChunkResult = {
      sequenceIndex: c.sequenceIndex,
      title: c.title,
      role: c.role,
      status: this.status,
      attempts: this.attempts,
      durationMs: this.firstStart < 0 || this.end < 0 ? 0 : this.end - this.firstStart,
    };
    if (this.output !== undefined) r.output = this.output;
    if (this.error !== undefined) r.error = this.error;
    if (this.files !== undefined) r.files = this.files;
    return r;
  }
}

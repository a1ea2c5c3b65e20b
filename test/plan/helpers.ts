import type { SimulatedClock } from '../../src/core/clock.js';
import type { ChunkRole, Plan, PlanChunk } from '../../src/plan/model/plan.js';

/** A chunk with defaults. */
export function chunk(sequenceIndex: number, dependsOnIndexes: number[] = [], extra: Partial<PlanChunk> = {}): PlanChunk {
  return {
    sequenceIndex,
    title: `Chunk ${String.fromCharCode(65 + sequenceIndex)}`,
    prompt: `Do the work of chunk ${sequenceIndex} carefully.`,
    dependsOnIndexes,
    complexity: 'Medium',
    role: 'Generic' as ChunkRole,
    ...extra,
  };
}

/** A plan of chunks. */
export function planOf(...chunks: PlanChunk[]): Plan {
  return { planSummary: 'A test plan', chunks };
}

/** Advance the simulated clock 1 ms at a time until `promise` settles. */
export async function drive<T>(clock: SimulatedClock, promise: Promise<T>, limitMs = 100_000): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  for (let i = 0; i < limitMs && !settled; i++) await clock.advance(1);
  return watched;
}

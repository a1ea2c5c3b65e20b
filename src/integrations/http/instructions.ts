/**
 * Instructions a person sends to a running team, kept in the run's store:
 * the HTTP handler appends them to the run's instruction stream, and the
 * run's process (in any process that shares the store) reads them and
 * passes them to its running workers.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { expectPositiveNumber } from '../../core/options.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { DEFAULT_POLL_MS } from './follow.js';
import { checkId } from './ids.js';

/** The longest instruction accepted, in characters. */
export const MAX_INSTRUCTION_LENGTH = 10_000;

/** The stream of run `runId`'s instructions. */
export function instructionsStream(runId: string): string {
  return `runs/${runId}/instructions`;
}

/** One instruction as the stream keeps it. */
export interface InstructionRecord {
  schemaVersion: 1;
  /** A random id, so a client can tell its own instruction in the run's events. */
  id: string;
  text: string;
  /** Clock time it was sent. */
  sentAt: number;
}

/** True for a record of the instruction stream. */
function isInstructionRecord(record: unknown): record is InstructionRecord {
  const r = record as Partial<InstructionRecord> | null;
  return r !== null && typeof r === 'object' && r.schemaVersion === 1 && typeof r.text === 'string' && typeof r.id === 'string';
}

/** Check an instruction's text: a non-empty string of at most {@link MAX_INSTRUCTION_LENGTH} characters. */
export function checkInstruction(text: unknown): asserts text is string {
  if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_INSTRUCTION_LENGTH) {
    throw new ConfigurationError(`Expected an instruction of 1-${MAX_INSTRUCTION_LENGTH} characters, got ${describeValue(text)}`, { code: 'invalid_argument' });
  }
}

/**
 * Send an instruction to run `runId` (what `POST /runs/:id/instructions`
 * calls): appended to the run's instruction stream, where the run's process
 * reads it (see {@link followInstructions}, which `runPlanningSession` and
 * {@link remoteInstructions} use).
 *
 * @example
 * ```ts
 * await sendInstruction(store, runId, 'Keep the public API unchanged.');
 * ```
 */
export async function sendInstruction(store: Store, runId: string, text: string, options: StoreCallOptions & { now?: number } = {}): Promise<InstructionRecord> {
  checkId('runId', runId);
  checkInstruction(text);
  const record: InstructionRecord = { schemaVersion: 1, id: randomUUID(), text, sentAt: options.now ?? Date.now() };
  await store.append(instructionsStream(runId), record, options.signal ? { signal: options.signal } : {});
  return record;
}

/** Options of {@link followInstructions} and {@link remoteInstructions}. */
export interface FollowInstructionsOptions {
  /** Stops following. */
  signal?: AbortSignal;
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look, in ms. Default: 250. */
  pollMs?: number;
}

/**
 * The instructions sent to run `runId`, in order, as they arrive (polling
 * the store every `pollMs`), until `signal` aborts; then it returns.
 */
export async function* followInstructions(store: Store, runId: string, options: FollowInstructionsOptions = {}): AsyncGenerator<InstructionRecord> {
  checkId('runId', runId);
  const clock = options.clock ?? realClock;
  const pollMs = expectPositiveNumber('pollMs', options.pollMs) ?? DEFAULT_POLL_MS;
  const stream = instructionsStream(runId);
  let next = 0;
  while (!options.signal?.aborted) {
    const { records, next: after } = await store.read(stream, { from: next, ...(options.signal ? { signal: options.signal } : {}) }).catch(() => ({ records: [], next }));
    for (const record of records) if (isInstructionRecord(record)) yield record;
    next = Math.max(after, next + records.length);
    try {
      await sleep(clock, pollMs, options.signal);
    } catch {
      return;
    }
  }
}

/**
 * The instructions of run `runId` as a plan reads them: pass `instructions`
 * as `executePlan`'s (or `planRunnable`'s) `instructions` option, and call
 * `stop()` when the run has ended.
 *
 * @example
 * ```ts
 * const feed = remoteInstructions(store, runId);
 * try { await run(planRunnable(plan, { adapter, instructions: feed.instructions }), task, { store, runId }) } finally { feed.stop() }
 * ```
 */
export function remoteInstructions(store: Store, runId: string, options: FollowInstructionsOptions = {}): { instructions: () => string[]; stop(): void } {
  const stopped = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
  const received: string[] = [];
  void (async () => {
    for await (const record of followInstructions(store, runId, { ...options, signal })) received.push(record.text);
  })().catch(() => undefined);
  return { instructions: () => [...received], stop: () => stopped.abort() };
}

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
import { abortSignal, clock as clockCheck, defineOptions, positiveNumber, required, store as storeCheck } from '../../core/options.js';
import type { Store } from '../../core/store.js';
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

/** Options of {@link sendInstruction}. */
export interface SendInstructionOptions {
  /** The run's store (for a tenant: its namespaced store). */
  store: Store;
  /** The clock of the instruction's time (`sentAt`). Default: the real clock. */
  clock?: Clock;
  /** Cancels the write. */
  signal?: AbortSignal;
}

const sendInstructionOptions = defineOptions<SendInstructionOptions>('sendInstruction', { store: required(storeCheck), clock: clockCheck, signal: abortSignal });

/**
 * Send an instruction to run `runId` (what `POST /runs/:id/instructions`
 * calls): appended to the run's instruction stream in `options.store`, where
 * the run's process reads it (see {@link followInstructions}, which
 * `runPlanningSession` and {@link remoteInstructions} use).
 *
 * @example
 * ```ts
 * await sendInstruction(runId, 'Keep the public API unchanged.', { store });
 * ```
 */
export async function sendInstruction(runId: string, text: string, options: SendInstructionOptions): Promise<InstructionRecord> {
  sendInstructionOptions.check(options ?? ({} as SendInstructionOptions));
  checkId('runId', runId);
  checkInstruction(text);
  const record: InstructionRecord = { schemaVersion: 1, id: randomUUID(), text, sentAt: (options.clock ?? realClock).now() };
  await options.store.append(instructionsStream(runId), record, options.signal ? { signal: options.signal } : {});
  return record;
}

/** Options of {@link followInstructions} and {@link remoteInstructions}. */
export interface FollowInstructionsOptions {
  /** The run's store (for a tenant: its namespaced store). */
  store: Store;
  /** Stops following. */
  signal?: AbortSignal;
  /** The clock of the polling. Default: the real clock. */
  clock?: Clock;
  /** How often to look, in ms. Default: 250. */
  pollMs?: number;
}

const followInstructionsOptions = defineOptions<FollowInstructionsOptions>('followInstructions', { store: required(storeCheck), signal: abortSignal, clock: clockCheck, pollMs: positiveNumber });

/**
 * The instructions sent to run `runId`, in order, as they arrive (polling
 * `options.store` every `pollMs`), until `signal` aborts; then it returns.
 *
 * @example
 * ```ts
 * for await (const { text } of followInstructions(runId, { store, signal })) console.log(text);
 * ```
 */
export function followInstructions(runId: string, options: FollowInstructionsOptions): AsyncGenerator<InstructionRecord> {
  followInstructionsOptions.check(options ?? ({} as FollowInstructionsOptions));
  checkId('runId', runId);
  return follow(runId, options);
}

async function* follow(runId: string, options: FollowInstructionsOptions): AsyncGenerator<InstructionRecord> {
  const { store, signal } = options;
  const clock = options.clock ?? realClock;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const stream = instructionsStream(runId);
  let next = 0;
  while (!signal?.aborted) {
    const { records, next: after } = await store.read(stream, { from: next, ...(signal ? { signal } : {}) }).catch(() => ({ records: [], next }));
    for (const record of records) if (isInstructionRecord(record)) yield record;
    next = Math.max(after, next + records.length);
    try {
      await sleep(clock, pollMs, signal);
    } catch {
      return;
    }
  }
}

/** What {@link remoteInstructions} returns: the instructions so far, and `close()` to stop following. */
export interface RemoteInstructions {
  /** The texts received so far, in order (pass it as a plan's `instructions` option). */
  readonly instructions: () => string[];
  /** Stop following the store (call it when the run has ended). */
  close(): void;
}

/**
 * The instructions of run `runId` as a plan reads them: pass `instructions`
 * as `executePlan`'s (or `planRunnable`'s) `instructions` option, and call
 * `close()` when the run has ended.
 *
 * @example
 * ```ts
 * const feed = remoteInstructions(runId, { store });
 * try { await run(planRunnable(plan, { adapter, instructions: feed.instructions }), task, { store, runId }) } finally { feed.close() }
 * ```
 */
export function remoteInstructions(runId: string, options: FollowInstructionsOptions): RemoteInstructions {
  followInstructionsOptions.check(options ?? ({} as FollowInstructionsOptions), '', 'remoteInstructions');
  checkId('runId', runId);
  const closed = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, closed.signal]) : closed.signal;
  const received: string[] = [];
  void (async () => {
    for await (const record of follow(runId, { ...options, signal })) received.push(record.text);
  })().catch(() => undefined);
  return { instructions: () => [...received], close: () => closed.abort() };
}

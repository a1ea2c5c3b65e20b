/**
 * Threads: conversations that continue across runs. A run given a thread
 * (`run(flow, input, { store, thread })`) takes the thread for itself with
 * a compare-and-set (a second run on it at once is refused with a
 * {@link ThreadBusyError}), hands its earlier messages to the run's entry
 * agent as the history of its session, and, when it completes, appends its
 * input and answer and gives the thread back.
 *
 * In the store a thread is one document and one stream:
 *
 * - `threads/<id>/thread`: a {@link ThreadDocument} (how many messages, the
 *   generation of the stream, the run that holds it), only ever written
 *   with `setIf`;
 * - `threads/<id>/messages-<generation>`: its messages, one record each;
 *   the first `messages` records are the thread (records past them were
 *   appended by a run whose document update never landed, and are cut off
 *   before the next append). Truncating writes the kept messages to the
 *   next generation.
 * @module
 */
import { MAX_ID_LENGTH, isSafeId } from './safe-id.js';
import type { ConversationMessage } from './adapter.js';
import type { Clock } from './clock.js';
import { ConfigurationError, StoreError, TroupeError, describeValue } from './errors.js';
import { runMetaKey } from './run-log-writer.js';
import { supportsCompareAndSet, type CompareAndSetStore, type Store, type StoreCallOptions } from './store.js';

/** The schema version of a {@link ThreadDocument}. */
export const THREAD_SCHEMA_VERSION = 1;

/** The longest thread id. */
export const MAX_THREAD_ID_LENGTH = MAX_ID_LENGTH;

/** One message of a thread, as the store keeps it: a {@link ConversationMessage} and where it came from. */
export interface ThreadMessage extends ConversationMessage {
  /** The run that added it. */
  runId: string;
  /** When it was added (the run's clock). */
  at: number;
  /** The agent that answered (assistant messages). */
  agent?: string;
}

/** The document of a thread: `threads/<id>/thread`. */
export interface ThreadDocument {
  schemaVersion: typeof THREAD_SCHEMA_VERSION;
  threadId: string;
  /** When its first run took it. */
  createdAt: number;
  /** When a run last took it or added to it. */
  updatedAt: number;
  /** How many messages it holds: the first `messages` records of its stream. */
  messages: number;
  /** The generation of its stream (`threads/<id>/messages-<generation>`); a truncation writes the next one. */
  generation: number;
  /** How many runs took it. */
  runs: number;
  /** The latest run that took it. */
  lastRunId?: string;
  /** The run that holds it now, and since when. */
  busy?: { runId: string; since: number };
  /** Set while `deleteThread` removes it: no run may take it. */
  deleting?: true;
}

/** The document of thread `threadId`. */
export function threadKey(threadId: string): string {
  return `threads/${threadId}/thread`;
}

/** The stream of thread `threadId`'s messages, generation `generation`. */
export function threadMessagesStream(threadId: string, generation: number): string {
  return `threads/${threadId}/messages-${generation}`;
}

/** The prefix every thread's document is under. */
export const THREADS_PREFIX = 'threads/';

/**
 * True when `id` can name a thread: 1 to {@link MAX_THREAD_ID_LENGTH}
 * characters of `A-Z a-z 0-9 - _ .`, starting with a letter or digit (the
 * ids `troupe/http` accepts: one rule, `isSafeId`). One pass over the text.
 */
export function isThreadId(id: unknown): id is string {
  return isSafeId(id);
}

/** Throw a `ConfigurationError` (`invalid_argument`) unless `id` can name a thread. */
export function checkThreadId(id: unknown, what = 'thread'): asserts id is string {
  if (!isThreadId(id)) {
    throw new ConfigurationError(
      `Expected \`${what}\` to be a thread id: 1-${MAX_THREAD_ID_LENGTH} characters of A-Z, a-z, 0-9, '-', '_' or '.', starting with a letter or digit; got ${describeValue(id)}`,
      { code: 'invalid_argument', details: { [what]: id } },
    );
  }
}

/**
 * A thread is held by another run (or is being deleted): code
 * `thread_busy`. Two runs never interleave on one thread; the second is
 * refused with this error, and may try again once the first has ended.
 */
export class ThreadBusyError extends TroupeError {
  /** The thread. */
  readonly thread: string;
  /** The run that holds it (absent while it is being deleted). */
  readonly heldBy: string | undefined;
  constructor(thread: string, heldBy: string | undefined) {
    super(
      'thread_busy',
      heldBy === undefined ? `Thread "${thread}" is being deleted` : `Thread "${thread}" is busy: run "${heldBy}" holds it; one run at a time continues a thread`,
      { details: { thread, ...(heldBy === undefined ? { deleting: true } : { heldBy }) } },
    );
    this.thread = thread;
    this.heldBy = heldBy;
  }
}

/** The store of a thread: it needs compare-and-set. */
export function threadStore(store: Store): CompareAndSetStore {
  if (!supportsCompareAndSet(store)) {
    throw new ConfigurationError('A thread needs a store with compare-and-set (getVersioned and setIf): memoryStore, fileStore and redisStore have it', { code: 'invalid_option' });
  }
  return store;
}

/** A thread's document read from the store with its version, or undefined. */
export async function readThreadDocument(store: CompareAndSetStore, threadId: string, call: StoreCallOptions): Promise<{ doc: ThreadDocument; version: string } | undefined> {
  const current = await store.getVersioned(threadKey(threadId), call);
  if (current === undefined) return undefined;
  return { doc: parseThreadDocument(current.value, threadId), version: current.version };
}

/** Check a stored thread document; a document that is not one is a `StoreError`. */
export function parseThreadDocument(value: unknown, threadId: string): ThreadDocument {
  const doc = value as Partial<ThreadDocument> | null;
  const ok =
    doc !== null &&
    typeof doc === 'object' &&
    doc.schemaVersion === THREAD_SCHEMA_VERSION &&
    doc.threadId === threadId &&
    Number.isInteger(doc.messages) &&
    (doc.messages as number) >= 0 &&
    Number.isInteger(doc.generation) &&
    (doc.generation as number) >= 0 &&
    Number.isInteger(doc.runs) &&
    typeof doc.createdAt === 'number' &&
    typeof doc.updatedAt === 'number' &&
    (doc.busy === undefined || (typeof doc.busy === 'object' && doc.busy !== null && typeof doc.busy.runId === 'string'));
  if (!ok) {
    const version = doc && typeof doc === 'object' ? doc.schemaVersion : undefined;
    const why = typeof version === 'number' && version > THREAD_SCHEMA_VERSION ? `it was written in schema version ${version}, newer than this troupe reads` : 'it is not a thread document';
    throw new StoreError(`The document of thread "${threadId}" cannot be read: ${why}`, { details: { thread: threadId, key: threadKey(threadId) } });
  }
  return doc as ThreadDocument;
}

/** Check a stored message; anything else is a `StoreError`. */
function parseThreadMessage(value: unknown, threadId: string, index: number): ThreadMessage {
  const m = value as Partial<ThreadMessage> | null;
  if (m === null || typeof m !== 'object' || (m.role !== 'user' && m.role !== 'assistant') || typeof m.text !== 'string') {
    throw new StoreError(`Message ${index} of thread "${threadId}" is not a message`, { details: { thread: threadId, index } });
  }
  return m as ThreadMessage;
}

/** The messages of a thread as its document counts them (records past the count are not the thread's). */
export async function readThreadMessages(store: Store, doc: ThreadDocument, call: StoreCallOptions): Promise<ThreadMessage[]> {
  if (doc.messages === 0) return [];
  const { records } = await store.read(threadMessagesStream(doc.threadId, doc.generation), call);
  if (records.length < doc.messages) {
    throw new StoreError(`Thread "${doc.threadId}" holds ${records.length} of its ${doc.messages} messages: its stream was cut`, { details: { thread: doc.threadId } });
  }
  return records.slice(0, doc.messages).map((r, i) => parseThreadMessage(r, doc.threadId, i));
}

/** Whether the run that holds a thread has ended (its run log's meta says so): its hold is stale. */
async function holderEnded(store: Store, runId: string, call: StoreCallOptions): Promise<boolean> {
  const meta = (await store.get(runMetaKey(runId), call)) as { endedAt?: unknown } | undefined;
  return typeof meta?.endedAt === 'number';
}

/** Where a thread stands: see {@link threadState}. */
export interface ThreadState {
  /** There is a thread of that id. */
  exists: boolean;
  /** A run holds it (and its log does not say it ended), or it is being deleted: a run started now is refused. */
  busy: boolean;
  /** The run that holds it. */
  heldBy?: string;
  /** The latest run that took it. */
  lastRunId?: string;
}

/** Where thread `threadId` stands now. A check, not a claim: `run` takes the thread atomically. */
export async function threadState(store: Store, threadId: string, call: StoreCallOptions): Promise<ThreadState> {
  const current = await readThreadDocument(threadStore(store), threadId, call);
  if (!current) return { exists: false, busy: false };
  const { doc } = current;
  const held = doc.busy !== undefined && !(await holderEnded(store, doc.busy.runId, call));
  const state: ThreadState = { exists: !doc.deleting, busy: held || doc.deleting === true };
  if (held) state.heldBy = doc.busy!.runId;
  if (doc.lastRunId !== undefined) state.lastRunId = doc.lastRunId;
  return state;
}

/** What {@link claimThread} took: the thread's document and its messages. */
export interface ClaimedThread {
  doc: ThreadDocument;
  messages: ThreadMessage[];
}

/**
 * Take thread `threadId` for run `runId` (creating it when there is none):
 * one compare-and-set, retried while other writers change the document.
 * Refused with a {@link ThreadBusyError} while another run holds it, unless
 * that run's log says it ended; the same run may take it again (`resume`).
 */
export async function claimThread(store: Store, threadId: string, runId: string, options: StoreCallOptions & { clock: Clock }): Promise<ClaimedThread> {
  const cas = threadStore(store);
  const call = options.signal ? { signal: options.signal } : {};
  for (;;) {
    const current = await readThreadDocument(cas, threadId, call);
    const doc = current?.doc;
    if (doc?.deleting) throw new ThreadBusyError(threadId, undefined);
    if (doc?.busy && doc.busy.runId !== runId && !(await holderEnded(store, doc.busy.runId, call))) throw new ThreadBusyError(threadId, doc.busy.runId);
    const now = options.clock.now();
    const sameRun = doc?.busy?.runId === runId || doc?.lastRunId === runId;
    const next: ThreadDocument = doc
      ? { ...doc, updatedAt: now, runs: doc.runs + (sameRun ? 0 : 1), lastRunId: runId, busy: { runId, since: now } }
      : { schemaVersion: THREAD_SCHEMA_VERSION, threadId, createdAt: now, updatedAt: now, messages: 0, generation: 0, runs: 1, lastRunId: runId, busy: { runId, since: now } };
    const written = await cas.setIf(threadKey(threadId), next, { ifVersion: current?.version ?? null, ...call });
    if (written.ok) return { doc: next, messages: await readThreadMessages(store, next, call) };
  }
}

/**
 * Give thread `threadId` back from run `runId`, first adding `add` (a
 * completed run's input and answer). Records past the document's count
 * (left by a run whose update never landed) are cut off first, by copying
 * the thread to the next generation. Does nothing when the run no longer
 * holds the thread (it was deleted, or taken over). Returns the new
 * document, or undefined.
 */
export async function releaseThread(
  store: Store,
  threadId: string,
  runId: string,
  options: StoreCallOptions & { clock: Clock; add?: readonly ThreadMessage[] },
): Promise<ThreadDocument | undefined> {
  const cas = threadStore(store);
  const call = options.signal ? { signal: options.signal } : {};
  const add = options.add ?? [];
  for (;;) {
    const current = await readThreadDocument(cas, threadId, call);
    if (!current || current.doc.busy?.runId !== runId) return undefined;
    const { doc } = current;
    let generation = doc.generation;
    if (add.length > 0) {
      const stream = threadMessagesStream(threadId, generation);
      const { next } = await store.read(stream, { from: doc.messages, ...call });
      if (next > doc.messages) generation = await copyThread(store, doc, doc.messages, call);
      for (const m of add) await store.append(threadMessagesStream(threadId, generation), m, call);
    }
    const { busy: _busy, ...rest } = doc;
    const next: ThreadDocument = { ...rest, messages: doc.messages + add.length, generation, updatedAt: options.clock.now() };
    const written = await cas.setIf(threadKey(threadId), next, { ifVersion: current.version, ...call });
    if (written.ok) {
      if (generation !== doc.generation) await store.deleteStream?.(threadMessagesStream(threadId, doc.generation), call).catch(() => undefined);
      return next;
    }
  }
}

/**
 * Copy the first `keep` messages of a thread to a fresh stream of a later
 * generation and return that generation (the document is not changed).
 */
export async function copyThread(store: Store, doc: ThreadDocument, keep: number, call: StoreCallOptions): Promise<number> {
  const kept = keep === 0 ? [] : (await readThreadMessages(store, doc, call)).slice(0, keep);
  let generation = doc.generation + 1;
  // A generation a crashed copy left behind is skipped, never appended to.
  while ((await store.read(threadMessagesStream(doc.threadId, generation), { from: 0, ...call })).next > 0) generation++;
  for (const m of kept) await store.append(threadMessagesStream(doc.threadId, generation), m, call);
  return generation;
}

/** The plain messages of a thread, as a session's history. */
export function conversationOf(messages: readonly ThreadMessage[]): ConversationMessage[] {
  return messages.map((m) => ({ role: m.role, text: m.text }));
}

/**
 * Threads kept in a store: list them, read one, cut one short, delete one.
 * A run continues a thread with `run(flow, input, { store, thread })`
 * (the kernel's `src/core/thread.ts` takes it, loads it and adds to it);
 * these functions are what an application does with threads between runs.
 * @module
 */
import { realClock, type Clock } from '../core/clock.js';
import { abortSignal, clock as clockCheck, defineOptions, nonNegativeInteger, boolean, required, store as storeCheck } from '../core/options.js';
import type { Store, StoreCallOptions } from '../core/store.js';
import {
  THREADS_PREFIX,
  ThreadBusyError,
  checkThreadId,
  copyThread,
  isThreadId,
  readThreadDocument,
  readThreadMessages,
  threadKey,
  threadMessagesStream,
  threadStore,
  type ThreadDocument,
  type ThreadMessage,
} from '../core/thread.js';

export { ThreadBusyError, type ThreadMessage } from '../core/thread.js';

/** A thread as {@link listThreads} and {@link readThread} describe it. */
export interface ThreadSummary {
  /** The thread's id. */
  threadId: string;
  /** How many messages it holds. */
  messages: number;
  /** How many runs took it. */
  runs: number;
  /** When its first run took it. */
  createdAt: number;
  /** When a run last took it or added to it. */
  updatedAt: number;
  /** The latest run that took it. */
  lastRunId?: string;
  /** The run that holds it now (it is busy), and since when. */
  busy?: { runId: string; since: number };
}

/** A thread read back: what it is, and its messages. */
export interface ThreadLog {
  thread: ThreadSummary;
  /** Its messages, oldest first. */
  messages: ThreadMessage[];
}

/** Options of {@link listThreads} and {@link readThread}: where the threads are. */
export interface ThreadStoreOptions {
  /** The store the runs kept their threads in (`run(..., { store, thread })`). */
  store: Store;
  /** Cancels the reads. */
  signal?: AbortSignal;
}

/** Options of {@link truncateThread}. */
export interface TruncateThreadOptions extends ThreadStoreOptions {
  /** How many messages to keep, from the first: the later ones are removed. */
  keep: number;
  /** The clock of the thread's `updatedAt`. Default: the real clock. */
  clock?: Clock;
}

/** Options of {@link deleteThread}. */
export interface DeleteThreadOptions extends ThreadStoreOptions {
  /** Delete it even while a run holds it (a run whose process died). Default: false. */
  force?: boolean;
}

const threadStoreOptions = defineOptions<ThreadStoreOptions>('readThread', { store: required(storeCheck), signal: abortSignal });
const truncateThreadOptions = defineOptions<TruncateThreadOptions>('truncateThread', { ...threadStoreOptions.shape, keep: required(nonNegativeInteger), clock: clockCheck });
const deleteThreadOptions = defineOptions<DeleteThreadOptions>('deleteThread', { ...threadStoreOptions.shape, force: boolean });

function summaryOf(doc: ThreadDocument): ThreadSummary {
  const out: ThreadSummary = { threadId: doc.threadId, messages: doc.messages, runs: doc.runs, createdAt: doc.createdAt, updatedAt: doc.updatedAt };
  if (doc.lastRunId !== undefined) out.lastRunId = doc.lastRunId;
  if (doc.busy !== undefined) out.busy = { ...doc.busy };
  return out;
}

function callOf(options: { signal?: AbortSignal | undefined }): StoreCallOptions {
  return options.signal ? { signal: options.signal } : {};
}

/**
 * The threads of `options.store`, the most recently used first.
 *
 * @example
 * ```ts
 * for (const t of await listThreads({ store })) console.log(t.threadId, t.messages, t.busy ? 'busy' : '');
 * ```
 */
export async function listThreads(options: ThreadStoreOptions): Promise<ThreadSummary[]> {
  threadStoreOptions.check(options ?? ({} as ThreadStoreOptions), '', 'listThreads');
  const store = threadStore(options.store);
  const call = callOf(options);
  const out: ThreadSummary[] = [];
  for (const key of await store.list(THREADS_PREFIX, call)) {
    if (!key.endsWith('/thread')) continue;
    const id = key.slice(THREADS_PREFIX.length, -'/thread'.length);
    if (!isThreadId(id)) continue;
    const current = await readThreadDocument(store, id, call);
    if (current && !current.doc.deleting) out.push(summaryOf(current.doc));
  }
  return out.sort((a, b) => b.updatedAt - a.updatedAt || (a.threadId < b.threadId ? -1 : 1));
}

/**
 * Thread `threadId` of `options.store` with its messages, or `undefined`
 * when there is none.
 *
 * @example
 * ```ts
 * const thread = await readThread('customer-42', { store });
 * for (const m of thread?.messages ?? []) console.log(`${m.role}: ${m.text}`);
 * ```
 */
export async function readThread(threadId: string, options: ThreadStoreOptions): Promise<ThreadLog | undefined> {
  threadStoreOptions.check(options ?? ({} as ThreadStoreOptions));
  checkThreadId(threadId, 'threadId');
  const store = threadStore(options.store);
  const call = callOf(options);
  const current = await readThreadDocument(store, threadId, call);
  if (!current || current.doc.deleting) return undefined;
  return { thread: summaryOf(current.doc), messages: await readThreadMessages(store, current.doc, call) };
}

/**
 * Cut thread `threadId` short: keep its first `keep` messages and remove
 * the later ones (to take back the latest exchange, say). The next run on
 * the thread continues from there. Refused with a `ThreadBusyError` while
 * a run holds the thread. Returns how many messages were removed (0 for a
 * thread that has no more than `keep`, or none at all).
 *
 * @example
 * ```ts
 * const thread = await readThread('customer-42', { store });
 * await truncateThread('customer-42', { store, keep: thread!.messages.length - 2 }); // undo the last exchange
 * ```
 */
export async function truncateThread(threadId: string, options: TruncateThreadOptions): Promise<number> {
  truncateThreadOptions.check(options ?? ({} as TruncateThreadOptions));
  checkThreadId(threadId, 'threadId');
  const store = threadStore(options.store);
  const call = callOf(options);
  const clock = options.clock ?? realClock;
  for (;;) {
    const current = await readThreadDocument(store, threadId, call);
    if (!current || current.doc.messages <= options.keep) return 0;
    const { doc } = current;
    if (doc.deleting) throw new ThreadBusyError(threadId, undefined);
    if (doc.busy) throw new ThreadBusyError(threadId, doc.busy.runId);
    const generation = await copyThread(store, doc, options.keep, call);
    const next: ThreadDocument = { ...doc, messages: options.keep, generation, updatedAt: clock.now() };
    const written = await store.setIf(threadKey(threadId), next, { ifVersion: current.version, ...call });
    if (written.ok) {
      await store.deleteStream?.(threadMessagesStream(threadId, doc.generation), call).catch(() => undefined);
      return doc.messages - options.keep;
    }
    // Someone wrote first: the copy is left unused (a later copy skips its generation); read again.
    await store.deleteStream?.(threadMessagesStream(threadId, generation), call).catch(() => undefined);
  }
}

/**
 * Delete thread `threadId` with its messages and the working memory kept
 * per thread; true when there was one.
 * Refused with a `ThreadBusyError` while a run holds it, unless `force`
 * (for a thread left held by a process that died). The thread is marked
 * first, so no run takes it while its messages go.
 *
 * @example
 * ```ts
 * await deleteThread('customer-42', { store });
 * ```
 */
export async function deleteThread(threadId: string, options: DeleteThreadOptions): Promise<boolean> {
  deleteThreadOptions.check(options ?? ({} as DeleteThreadOptions));
  checkThreadId(threadId, 'threadId');
  const store = threadStore(options.store);
  const call = callOf(options);
  let doc: ThreadDocument;
  for (;;) {
    const current = await readThreadDocument(store, threadId, call);
    if (!current) return false;
    doc = current.doc;
    if (doc.busy && !options.force) throw new ThreadBusyError(threadId, doc.busy.runId);
    if (doc.deleting) break;
    const marked = await store.setIf(threadKey(threadId), { ...doc, deleting: true }, { ifVersion: current.version, ...call });
    if (marked.ok) break;
  }
  for (let g = 0; g <= doc.generation + 1; g++) await store.deleteStream?.(threadMessagesStream(threadId, g), call).catch(() => undefined);
  // The working memory kept per thread goes with it.
  for (const key of await store.list(`${THREADS_PREFIX}${threadId}/memory/`, call)) await store.delete(key, call);
  await store.delete(threadKey(threadId), call);
  return true;
}

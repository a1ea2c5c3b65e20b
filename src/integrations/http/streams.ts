/**
 * The two event streams of a run: troupe's own events, and AG-UI.
 * @module
 */
import { realClock, sleep } from '../../core/clock.js';
import type { TroupeEvent } from '../../core/events.js';
import { runEventsStream, runMetaKey, type RunMeta } from '../../core/run-log-writer.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { AguiMapper } from './agui.js';
import { followRunLog, isEventRecord } from './follow.js';
import { checkId } from './ids.js';
import { readRequest } from './requests.js';
import { sseFrame, sseStream, type SseOptions } from './sse.js';
import { defined } from '../../core/defined.js';

/** Options of {@link runEventStream}. */
export interface RunEventStreamOptions extends SseOptions {
  /** The store the run logs to (for a tenant: its namespaced store). */
  store: Store;
  /** The run. */
  runId: string;
  /** The first position of the log to send. Default: 0 (see {@link positionAfter}). */
  from?: number;
  /** How often to look for new events, in ms. Default: 250. */
  pollMs?: number;
}

/**
 * The run's events as SSE: every event of the run log from `from` on, then
 * each event as it is logged, until the run ends. Each event is a `message`
 * whose `id` is its position in the log, so a client that reconnects with
 * `Last-Event-ID` (see {@link positionAfter}) continues with the next one:
 * nothing is lost and nothing repeated.
 *
 * @example
 * ```ts
 * return new Response(runEventStream({ store, runId, from: positionAfter(request.headers.get('last-event-id')) }), { headers: SSE_HEADERS });
 * ```
 */
export function runEventStream(options: RunEventStreamOptions): ReadableStream<Uint8Array> {
  checkId('runId', options.runId);
  const clock = options.clock ?? realClock;
  return sseStream(async (sink) => {
    const follow = followRunLog(options.store, options.runId, {
      from: options.from ?? 0,
      signal: sink.signal,
      clock,
      ...defined({ pollMs: options.pollMs }),
    });
    for await (const { seq, event } of follow) await sink.send(sseFrame(event, { id: seq }));
  }, options);
}

/**
 * The position after a `Last-Event-ID`: 0 without one, the id plus one for
 * an id of digits; undefined for anything else (answer 400).
 */
export function positionAfter(lastEventId: string | null | undefined): number | undefined {
  if (lastEventId === null || lastEventId === undefined || lastEventId.trim() === '') return 0;
  const text = lastEventId.trim();
  if (text.length > 15) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  return Number(text) + 1;
}

/** Whether a run is known, and whether it has ended. */
export async function runState(store: Store, runId: string, options: StoreCallOptions = {}): Promise<{ exists: boolean; ended: boolean; meta?: RunMeta }> {
  const meta = (await store.get(runMetaKey(runId), options)) as RunMeta | undefined;
  if (meta && typeof meta === 'object') return { exists: true, ended: meta.endedAt !== undefined, meta };
  const { records } = await store.read(runEventsStream(runId), { ...options, from: 0 });
  return { exists: records.length > 0, ended: records.some((r) => isEventRecord(r) && (r.type === 'run.completed' || r.type === 'run.failed')) };
}

/** Options of {@link aguiEventStream}. */
export interface AguiEventStreamOptions extends RunEventStreamOptions {
  /** The AG-UI run id (of this request). */
  aguiRunId: string;
  /** The request's input, echoed in `RUN_STARTED`. */
  input?: unknown;
}

/**
 * The run as an AG-UI event stream, from position `from` (events before it
 * rebuild the open steps and the state, without being sent). Ends with
 * `RUN_FINISHED` (success, cancelled, or an interrupt when the run waits
 * for a person) or `RUN_ERROR`.
 */
export function aguiEventStream(options: AguiEventStreamOptions): ReadableStream<Uint8Array> {
  checkId('runId', options.runId);
  const clock = options.clock ?? realClock;
  const from = options.from ?? 0;
  return sseStream(async (sink) => {
    const mapper = new AguiMapper(options.runId, options.aguiRunId);
    if (from > 0) {
      const { records } = await options.store.read(runEventsStream(options.runId), { from: 0, signal: sink.signal });
      for (const record of records.slice(0, from)) if (isEventRecord(record)) mapper.prime(record);
    }
    for (const event of mapper.open(clock.now(), options.input)) await sink.send(sseFrame(event));
    const follow = followRunLog(options.store, options.runId, {
      from,
      signal: sink.signal,
      clock,
      ...defined({ pollMs: options.pollMs }),
    });
    for await (const { seq, event } of follow) {
      const pending = event.type === 'input.requested' ? (await readRequest(options.store, options.runId, event.requestId, { signal: sink.signal }))?.status === 'pending' : false;
      const { events, end } = mapper.map(seq, event, pending);
      for (const e of events) await sink.send(sseFrame(e, { id: seq }));
      if (end) return;
    }
  }, options);
}

/** The position after the last `input.requested` of `requestIds` in the run log (0 when none is found). */
export async function positionAfterRequests(store: Store, runId: string, requestIds: readonly string[], options: StoreCallOptions = {}): Promise<number> {
  if (requestIds.length === 0) return 0;
  const wanted = new Set(requestIds);
  const { records } = await store.read(runEventsStream(runId), { ...options, from: 0 });
  let after = 0;
  records.forEach((record, index) => {
    if (isEventRecord(record) && record.type === 'input.requested' && wanted.has((record as TroupeEvent<'input.requested'>).requestId)) after = index + 1;
  });
  return after;
}

/** Wait (polling on the clock) until run `runId` has a log, at most `timeoutMs`; true when it has. */
export async function waitForRun(store: Store, runId: string, options: SseOptions & { timeoutMs?: number; pollMs?: number } = {}): Promise<boolean> {
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if ((await runState(store, runId, options.signal ? { signal: options.signal } : {})).exists) return true;
    if (clock.now() >= deadline) return false;
    await sleep(clock, Math.min(options.pollMs ?? 50, Math.max(deadline - clock.now(), 1)), options.signal);
  }
}

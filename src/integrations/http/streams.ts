/**
 * The two event streams of a run: troupe's own events, and AG-UI.
 * @module
 */
import { realClock, sleep, type Clock } from '../../core/clock.js';
import type { TroupeEvent } from '../../core/events.js';
import { abortSignal, anything, check, clock, defineOptions, listOf, nonEmptyString, nonNegativeInteger, nonNegativeNumber, positiveNumber, required, store as storeCheck, string } from '../../core/options.js';
import { readRunEvents, readRunMeta } from '../../core/run-log-reader.js';
import type { RunMeta } from '../../core/run-log-writer.js';
import type { Store } from '../../core/store.js';
import { AguiMapper, type AguiEvent } from './agui.js';
import { followRunLog } from './follow.js';
import { checkId } from './ids.js';
import { readRequest } from './requests.js';
import { sseFrame, sseOptions, sseStream, type SseOptions } from './sse.js';
import { defined } from '../../core/defined.js';

/** Options of {@link runEventStream}. */
export interface RunEventStreamOptions extends SseOptions {
  /** The store the run logs to (for a tenant: its namespaced store). */
  store: Store;
  /** The first position of the log to send. Default: 0 (see {@link positionAfter}). */
  from?: number;
  /** How often to look for new events, in ms. Default: 250. */
  pollMs?: number;
}

const runEventStreamOptions = defineOptions<RunEventStreamOptions>('runEventStream', {
  ...sseOptions.shape,
  store: required(storeCheck),
  from: nonNegativeInteger,
  pollMs: positiveNumber,
});

/**
 * Run `runId`'s events as SSE: every event of the run log from `from` on, then
 * each event as it is logged, until the run ends. Each event is a `message`
 * whose `id` is its position in the log, so a client that reconnects with
 * `Last-Event-ID` (see {@link positionAfter}) continues with the next one:
 * nothing is lost and nothing repeated.
 *
 * @example
 * ```ts
 * return new Response(runEventStream(runId, { store, from: positionAfter(request.headers.get('last-event-id')) }), { headers: SSE_HEADERS });
 * ```
 */
export function runEventStream(runId: string, options: RunEventStreamOptions): ReadableStream<Uint8Array> {
  runEventStreamOptions.check(options ?? ({} as RunEventStreamOptions));
  checkId('runId', runId);
  const clock = options.clock ?? realClock;
  return sseStream(async (sink) => {
    const follow = followRunLog(runId, {
      store: options.store,
      from: options.from ?? 0,
      signal: sink.signal,
      clock,
      ...defined({ pollMs: options.pollMs }),
    });
    for await (const { seq, event } of follow) await sink.send(sseFrame(event, { id: seq }));
  }, sseOf(options));
}

/** The SSE options among a stream's options. */
function sseOf(options: SseOptions): SseOptions {
  const { signal, clock, heartbeatMs, bufferBytes, drainTimeoutMs, retryMs } = options;
  return defined({ signal, clock, heartbeatMs, bufferBytes, drainTimeoutMs, retryMs });
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

/** Options of the functions about one run's log in a store: {@link runState}, {@link positionAfterRequests}. */
export interface RunLogOptions {
  /** The store the run logs to (for a tenant: its namespaced store). */
  store: Store;
  /** Cancels the reads. */
  signal?: AbortSignal;
}

/** The description of {@link RunLogOptions} (checked under the name of the function that takes them). */
const runLogOptions = defineOptions<RunLogOptions>('runState', { store: required(storeCheck), signal: abortSignal });

/** Whether a run is known, and whether it has ended. */
export interface RunState {
  exists: boolean;
  ended: boolean;
  /** Its meta document, when it was written (a status logged in older words reads as status and reason). */
  meta?: RunMeta;
}

/** Whether run `runId` is known in `options.store`, and whether it has ended. */
export async function runState(runId: string, options: RunLogOptions): Promise<RunState> {
  runLogOptions.check(options ?? ({} as RunLogOptions));
  const { store, signal } = options;
  const meta = await readRunMeta(runId, { store, signal });
  if (meta) return { exists: true, ended: meta.endedAt !== undefined, meta };
  const { events, next } = await readRunEvents(runId, { store, ...defined({ signal }) });
  return { exists: next > 0, ended: events.some((e) => e.type === 'run.completed' || e.type === 'run.failed') };
}

/** Options of {@link aguiEventStream}. */
export interface AguiEventStreamOptions extends RunEventStreamOptions {
  /** The AG-UI run id (of this request). */
  aguiRunId: string;
  /** The request's input, echoed in `RUN_STARTED`. */
  input?: unknown;
  /**
   * The AG-UI thread the run belongs to (`threadId` of `RUN_STARTED` and
   * `RUN_FINISHED`): a thread's later runs have ids of their own. Default:
   * the run's id (a thread's first run has the thread's id).
   */
  threadId?: string;
  /**
   * The id of the last event a client got of this stream (its
   * `Last-Event-ID`): the stream continues with the event after it (see
   * {@link parseAguiEventId}). Give the same `from` as the first time.
   */
  lastEventId?: string;
}

const aguiEventStreamOptions = defineOptions<AguiEventStreamOptions>('aguiEventStream', {
  ...runEventStreamOptions.shape,
  aguiRunId: required(nonEmptyString),
  input: anything,
  threadId: nonEmptyString,
  lastEventId: check('an AG-UI event id (`<position>.<index>`)', (v) => typeof v === 'string' && parseAguiEventId(v) !== undefined),
});

/** Where an AG-UI event is in its stream: after the first `position` events of the run log, the `index`-th event sent there. */
export interface AguiEventId {
  position: number;
  index: number;
}

/**
 * The place of an AG-UI event id: `<position>.<index>` (digits, each at
 * most 15) is the `index`-th AG-UI event sent once the first `position`
 * events of the run log were read (`RUN_STARTED` and what opens a stream
 * are at the stream's `from`). Plain digits, a troupe event id `n`, are
 * taken as everything of log position `n` sent. Undefined for anything
 * else. One pass over the text.
 */
export function parseAguiEventId(id: string): AguiEventId | undefined {
  const text = id.trim();
  const dot = text.indexOf('.');
  const digits = (part: string): number | undefined => {
    if (part.length === 0 || part.length > 15) return undefined;
    for (let i = 0; i < part.length; i++) {
      const c = part.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return undefined;
    }
    return Number(part);
  };
  if (dot < 0) {
    const position = digits(text);
    return position === undefined ? undefined : { position: position + 1, index: Number.MAX_SAFE_INTEGER };
  }
  const position = digits(text.slice(0, dot));
  const index = digits(text.slice(dot + 1));
  return position === undefined || index === undefined ? undefined : { position, index };
}

/**
 * Run `runId` as an AG-UI event stream, from position `from` (events before it
 * rebuild the open steps and the state, without being sent). Ends with
 * `RUN_FINISHED` (success, cancelled, or an interrupt when the run waits
 * for a person) or `RUN_ERROR`. Every event has an id of its own
 * (`<position>.<index>`, see {@link parseAguiEventId}), so a client that
 * reconnects with `lastEventId` gets the rest: nothing lost, nothing twice.
 */
export function aguiEventStream(runId: string, options: AguiEventStreamOptions): ReadableStream<Uint8Array> {
  aguiEventStreamOptions.check(options ?? ({} as AguiEventStreamOptions));
  checkId('runId', runId);
  return sseStream(async (sink) => {
    for await (const { id, event } of aguiEvents(runId, options, sink.signal)) await sink.send(sseFrame(event, { id }));
  }, sseOf(options));
}

/**
 * The AG-UI events of `runId` with their ids, as {@link aguiEventStream}
 * sends them: from `from`, after `lastEventId` when there is one. Ends
 * after the event that ends the AG-UI run.
 * @internal
 */
export async function* aguiEvents(runId: string, options: AguiEventStreamOptions, signal: AbortSignal): AsyncGenerator<{ id: string; event: AguiEvent }> {
  const clock = options.clock ?? realClock;
  const from = options.from ?? 0;
  const { store } = options;
  const given = options.lastEventId === undefined ? undefined : parseAguiEventId(options.lastEventId);
  // An id from before this stream's start (another `from`) says nothing was seen of it.
  const after = given && given.position >= from ? given : undefined;
  const sent = (position: number, index: number) => after !== undefined && (position < after.position || (position === after.position && index <= after.index));
  const mapper = new AguiMapper(options.threadId ?? runId, options.aguiRunId, runId);
  if (from > 0) {
    const { events, positions } = await readRunEvents(runId, { store, signal });
    events.forEach((event, i) => positions[i]! < from && mapper.prime(event, positions[i]!));
  }
  const opening = mapper.open(clock.now(), options.input);
  for (const [index, event] of opening.entries()) if (!sent(from, index)) yield { id: `${from}.${index}`, event };
  const follow = followRunLog(runId, { store, from, signal, clock, ...defined({ pollMs: options.pollMs }) });
  for await (const { seq, event } of follow) {
    const position = seq + 1;
    if (after !== undefined && position < after.position) {
      // Sent before the client reconnected: it only moves the mapper on.
      mapper.prime(event, seq);
      continue;
    }
    const pending = event.type === 'input.requested' ? (await readRequest(runId, event.requestId, { store, signal }))?.status === 'pending' : false;
    const { events, end } = mapper.map(seq, event, pending);
    for (const [index, mapped] of events.entries()) if (!sent(position, index)) yield { id: `${position}.${index}`, event: mapped };
    if (end) return;
  }
}

/** The position in run `runId`'s log after the last `input.requested` of `requestIds` (0 when none is found). */
export async function positionAfterRequests(runId: string, requestIds: readonly string[], options: RunLogOptions): Promise<number> {
  runLogOptions.check(options ?? ({} as RunLogOptions), '', 'positionAfterRequests');
  listOf(string)('requestIds', requestIds);
  if (requestIds.length === 0) return 0;
  const wanted = new Set(requestIds);
  const { store, signal } = options;
  const { events, positions } = await readRunEvents(runId, { store, ...defined({ signal }) });
  let after = 0;
  events.forEach((event, i) => {
    if (event.type === 'input.requested' && wanted.has((event as TroupeEvent<'input.requested'>).requestId)) after = positions[i]! + 1;
  });
  return after;
}

/** Options of {@link waitForRun}. */
export interface WaitForRunOptions extends RunLogOptions {
  /** The longest wait, in ms. Default: 10000. */
  timeoutMs?: number;
  /** How often to look, in ms. Default: 50. */
  pollMs?: number;
  /** The clock of the wait. Default: the real clock. */
  clock?: Clock;
}

const waitForRunOptions = defineOptions<WaitForRunOptions>('waitForRun', { ...runLogOptions.shape, timeoutMs: nonNegativeNumber, pollMs: positiveNumber, clock });

/** Wait (polling on the clock) until run `runId` has a log in `options.store`, at most `timeoutMs`; true when it has. */
export async function waitForRun(runId: string, options: WaitForRunOptions): Promise<boolean> {
  waitForRunOptions.check(options ?? ({} as WaitForRunOptions));
  const { store, signal } = options;
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if ((await runState(runId, { store, ...defined({ signal }) })).exists) return true;
    if (clock.now() >= deadline) return false;
    await sleep(clock, Math.min(options.pollMs ?? 50, Math.max(deadline - clock.now(), 1)), signal);
  }
}

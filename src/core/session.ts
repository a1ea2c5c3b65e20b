/**
 * The session handle: wraps every adapter session and enforces the session
 * invariants so adapters do not have to.
 * @module
 */
import type { ModelAdapter, ModelSession, ModelTurn, OpenSessionOptions, SendOptions, SessionEvent, SessionSpec, ToolCall, ToolResult } from './adapter.js';
import { abortError, raceAbort, throwIfAborted } from './abort.js';
import { AdapterError, ModelBehaviorError, SessionBusyError, TroupeError, errorMessage } from './errors.js';
import { defined } from './defined.js';
import { abortSignal, check, defineOptions, func, required, string } from './options.js';

/** Options of a {@link SessionHandle}. */
export interface SessionHandleOptions {
  /** The agent the session speaks for (for messages). */
  agent: string;
  /** Receives the events of the current session only. */
  onEvent?: (event: SessionEvent, sessionId: string) => void;
  /**
   * Called around every send: how guardrails watch model calls (`sendGuard` makes one from a run context).
   * @internal
   */
  guard?: SendGuard;
}

/**
 * Hooks around each send of a {@link SessionHandle} (guardrails use them):
 * `begin` may wait or throw before the call, and its watch sees the
 * streamed events and may hold or refuse the reply.
 * @internal
 */
export interface SendGuard {
  /** Before the call: may wait (for a check still running) or throw. */
  begin(): Promise<SendWatch>;
}

/**
 * One send as a {@link SendGuard} watches it.
 * @internal
 */
export interface SendWatch {
  /** Each event the adapter streams during the send. */
  event(event: SessionEvent): void;
  /** The reply arrived: resolve to hand it on, reject to discard it. */
  end(turn: ModelTurn): Promise<void>;
}

const sessionHandleOptions = defineOptions<SessionHandleOptions>('SessionHandle', {
  agent: required(string),
  onEvent: func,
  guard: check('a send guard (with begin())', (v) => typeof (v as SendGuard | null)?.begin === 'function'),
});

const openSessionOptions = defineOptions<OpenSessionOptions>('openSession', { signal: abortSignal });

/**
 * Wraps a {@link ModelSession}:
 *
 * - one `send` at a time: a second concurrent `send` rejects with a
 *   {@link SessionBusyError};
 * - the busy flag is cleared before the turn's promise settles, on success
 *   and on failure, so a continuation may send again at once;
 * - events from a session that was closed or replaced are dropped;
 * - an aborted `send` rejects at once even if the adapter ignores the
 *   signal; the session is then closed, since its history is unknown;
 * - every failure is a `TroupeError`: a cancellation rejects with the
 *   signal's abort error, an adapter's own error (a plain `Error`, a thrown
 *   string) becomes an `AdapterError` with the original as `cause`, and a
 *   turn that is not an object is a `ModelBehaviorError`.
 */
export class SessionHandle {
  #session: ModelSession;
  #generation = 0;
  #busy = false;
  #closed = false;
  readonly #options: SessionHandleOptions;

  constructor(session: ModelSession, options: SessionHandleOptions) {
    sessionHandleOptions.check(options);
    this.#session = session;
    this.#options = options;
  }

  /** The wrapped session's id. */
  get id(): string {
    return this.#session.id;
  }
  /** True while a `send` is in flight. */
  get busy(): boolean {
    return this.#busy;
  }
  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Send a message or tool results; see {@link ModelSession.send}. */
  async send(input: string | ToolResult[], options: SendOptions = {}): Promise<ModelTurn> {
    if (this.#closed) {
      throw new TroupeError('session_closed', `Session ${this.id} of agent "${this.#options.agent}" is closed`);
    }
    if (this.#busy) throw new SessionBusyError(this.id);
    throwIfAborted(options.signal);
    this.#busy = true;
    const generation = this.#generation;
    const session = this.#session;
    let watch: SendWatch | undefined;
    const onEvent = (event: SessionEvent) => {
      if (this.#closed || generation !== this.#generation) return;
      watch?.event(event);
      this.#options.onEvent?.(event, session.id);
      options.onEvent?.(event);
    };
    try {
      const guard = this.#options.guard;
      if (guard) {
        watch = await raceAbort(guard.begin(), options.signal);
        throwIfAborted(options.signal);
      }
      const sendOptions: SendOptions = { onEvent };
      if (options.signal) sendOptions.signal = options.signal;
      const raw = await raceAbort(Promise.resolve().then(() => session.send(input, sendOptions)), options.signal);
      const turn = normalizeTurn(raw, this.#options.agent);
      if (watch) await raceAbort(watch.end(turn), options.signal);
      this.#busy = false;
      return turn;
    } catch (error) {
      this.#busy = false;
      if (options.signal?.aborted) await this.close().catch(() => undefined);
      throw adapterFailure(error, { agent: this.#options.agent, sessionId: session.id, action: 'send', signal: options.signal });
    }
  }

  /**
   * Replace the wrapped session (for example after reopening it). Events
   * still arriving from the old session are dropped; the old one is closed.
   */
  async replace(session: ModelSession): Promise<void> {
    if (this.#busy) throw new SessionBusyError(this.id);
    const old = this.#session;
    this.#generation++;
    this.#session = session;
    this.#closed = false;
    await old.close();
  }

  /** Close the session; later events are dropped. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#generation++;
    const session = this.#session;
    try {
      await session.close();
    } catch (error) {
      throw adapterFailure(error, { agent: this.#options.agent, sessionId: session.id, action: 'close' });
    }
  }
}

/** Where an adapter failed, for {@link adapterFailure}. */
export interface AdapterFailureContext {
  /** The agent the session speaks for. */
  agent: string;
  /** The adapter's id, when known. */
  adapter?: string;
  /** The session's id, once open. */
  sessionId?: string;
  /** What was being done. */
  action: 'open' | 'send' | 'close';
  /** The call's signal: once it has aborted, the failure is a cancellation. */
  signal?: AbortSignal | undefined;
}

const ACTIONS: Record<AdapterFailureContext['action'], string> = { open: 'open a session', send: 'answer', close: 'close the session' };

/**
 * The error to throw for a failure at the session boundary: the abort error
 * when the call's signal has aborted (a cancellation or a time-out stays
 * one, whatever the adapter threw), a `TroupeError` as it is, and anything
 * else (a plain `Error` such as `socket hang up`, a thrown string) as an
 * {@link AdapterError} with the original as `cause`.
 */
export function adapterFailure(error: unknown, context: AdapterFailureContext): Error {
  if (context.signal?.aborted) return abortError(context.signal);
  if (error instanceof TroupeError) return error;
  const who = context.adapter === undefined ? 'The adapter' : `Adapter "${context.adapter}"`;
  return new AdapterError(`${who} failed to ${ACTIONS[context.action]} for agent "${context.agent}": ${errorMessage(error)}`, {
    cause: error,
    details: {
      agent: context.agent,
      action: context.action,
      ...defined({ adapter: context.adapter, sessionId: context.sessionId }),
    },
  });
}

/**
 * Open a session on `adapter` behind the session boundary: a failure to
 * open (a throw, a rejection, something that is not a session) is an
 * `AdapterError` with the original as `cause`, an abort rejects at once with
 * the abort error (a session that opens later is closed), and the session's
 * own failures are classified by {@link adapterFailure} and its turns
 * checked, so whatever wraps it (recording, model fallback, the
 * {@link SessionHandle}) only ever sees typed errors and well-formed turns.
 */
export async function openSession(adapter: ModelAdapter, spec: SessionSpec, options: OpenSessionOptions = {}): Promise<ModelSession> {
  const { signal } = openSessionOptions.check(options);
  throwIfAborted(signal);
  const context = { agent: spec.agent, adapter: adapter.id };
  const opening = Promise.resolve().then(() => adapter.openSession(spec, signal ? { signal } : {}));
  let session: ModelSession;
  try {
    session = await raceAbort(opening, signal);
  } catch (error) {
    if (signal?.aborted) opening.then((late) => late?.close?.(), () => undefined).catch(() => undefined);
    throw adapterFailure(error, { ...context, action: 'open', signal });
  }
  if (!session || typeof session !== 'object' || typeof session.send !== 'function' || typeof session.close !== 'function') {
    throw new AdapterError(`Adapter "${adapter.id}" returned no session for agent "${spec.agent}"`, { details: { ...context, action: 'open' } });
  }
  return guardSession(session, context);
}

/** A session whose failures are typed (see {@link adapterFailure}) and whose turns are checked. */
function guardSession(session: ModelSession, context: { agent: string; adapter: string }): ModelSession {
  const where = (action: 'send' | 'close', signal?: AbortSignal) => ({ ...context, sessionId: session.id, action, signal });
  return {
    get id() {
      return session.id;
    },
    async send(input, options) {
      let turn: unknown;
      try {
        turn = await session.send(input, options);
      } catch (error) {
        throw adapterFailure(error, where('send', options?.signal));
      }
      return normalizeTurn(turn, context.agent);
    },
    async close() {
      try {
        await session.close();
      } catch (error) {
        throw adapterFailure(error, where('close'));
      }
    },
  };
}

/** Check a turn's shape and fill defaults; a malformed turn is the model's (or adapter's) fault. */
function normalizeTurn(turn: unknown, agent: string): ModelTurn {
  if (!turn || typeof turn !== 'object') {
    throw new ModelBehaviorError(`Adapter returned no turn for agent "${agent}" (got ${turn === null ? 'null' : typeof turn})`, { details: { agent } });
  }
  const t = turn as Partial<ModelTurn>;
  const text = typeof t.text === 'string' ? t.text : '';
  const raw: unknown[] = Array.isArray(t.toolCalls) ? t.toolCalls : [];
  const toolCalls: ToolCall[] = raw.map((c, i) => {
    const call = (c ?? {}) as Partial<ToolCall>;
    const out: ToolCall = {
      id: typeof call.id === 'string' && call.id ? call.id : `call_${i}`,
      name: typeof call.name === 'string' ? call.name : '',
      arguments: call.arguments,
    };
    if (typeof call.rawArguments === 'string') out.rawArguments = call.rawArguments;
    return out;
  });
  const out: ModelTurn = { text, toolCalls };
  if (t.usage) out.usage = t.usage;
  return out;
}

/**
 * The session handle: wraps every adapter session and enforces the session
 * invariants so adapters do not have to.
 * @module
 */
import type { ModelSession, ModelTurn, SendOptions, SessionEvent, ToolCall, ToolResult } from './adapter.js';
import { raceAbort, throwIfAborted } from './abort.js';
import { ModelBehaviorError, SessionBusyError, TroupeError } from './errors.js';

/** Options of a {@link SessionHandle}. */
export interface SessionHandleOptions {
  /** The agent the session speaks for (for messages). */
  agent: string;
  /** Receives the events of the current session only. */
  onEvent?: (event: SessionEvent, sessionId: string) => void;
}

/**
 * Wraps a {@link ModelSession}:
 *
 * - one `send` at a time: a second concurrent `send` rejects with a
 *   {@link SessionBusyError};
 * - the busy flag is cleared before the turn's promise settles, on success
 *   and on failure, so a continuation may send again at once;
 * - events from a session that was closed or replaced are dropped;
 * - an aborted `send` rejects at once even if the adapter ignores the
 *   signal; the session is then closed, since its history is unknown.
 */
export class SessionHandle {
  #session: ModelSession;
  #generation = 0;
  #busy = false;
  #closed = false;
  readonly #options: SessionHandleOptions;

  constructor(session: ModelSession, options: SessionHandleOptions) {
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
    const onEvent = (event: SessionEvent) => {
      if (this.#closed || generation !== this.#generation) return;
      this.#options.onEvent?.(event, session.id);
      options.onEvent?.(event);
    };
    try {
      const sendOptions: SendOptions = { onEvent };
      if (options.signal) sendOptions.signal = options.signal;
      const turn = await raceAbort(Promise.resolve().then(() => session.send(input, sendOptions)), options.signal);
      this.#busy = false;
      return normalizeTurn(turn, this.#options.agent);
    } catch (error) {
      this.#busy = false;
      if (options.signal?.aborted) await this.close().catch(() => undefined);
      throw error;
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
    await this.#session.close();
  }
}

/** Check a turn's shape and fill defaults; a malformed turn is the model's (or adapter's) fault. */
function normalizeTurn(turn: unknown, agent: string): ModelTurn {
  if (!turn || typeof turn !== 'object') {
    throw new ModelBehaviorError(`Adapter returned no turn for agent "${agent}"`);
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

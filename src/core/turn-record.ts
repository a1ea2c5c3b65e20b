/**
 * Turn records: one model turn (request and reply) as plain JSON. The
 * recording adapter writes them; every agent session also emits them as
 * `model.turn` events, so a run log can be replayed.
 * @module
 */
import type { ModelSession, ModelTurn, SessionSpec, ToolResult } from './adapter.js';
import { errorMessage } from './errors.js';
import { defined } from './defined.js';

/** One recorded turn. */
export interface TurnRecord {
  /** Format version. */
  v: 1;
  /** The adapter that answered. */
  adapter: string;
  /** The agent of the session. */
  agent: string;
  /** Which session of this agent (1 for the first opened, 2 for the next, ...). */
  session: number;
  /** 1-based turn within the session. */
  turn: number;
  /** The session's spec (on every record, so any record can start a session). */
  spec: SessionSpec;
  /** What was sent. */
  input: string | ToolResult[];
  /** What came back. */
  reply?: ModelTurn;
  /** The error message, when the turn failed. */
  error?: string;
}

/** Where a recorded session belongs: see {@link recordSession}. */
export interface RecordedSessionInfo {
  /** The adapter's id. */
  adapter: string;
  /** Which session of the agent this is (1-based, in opening order). */
  session: number;
  /** The session's spec. */
  spec: SessionSpec;
}

/**
 * Wrap a session so that every turn (input and reply, or error) is passed
 * to `onRecord` as a {@link TurnRecord}. The recording adapter and the
 * run log (the `model.turn` event) both record through this.
 */
export function recordSession(session: ModelSession, info: RecordedSessionInfo, onRecord: (record: TurnRecord) => void): ModelSession {
  let turn = 0;
  return {
    id: session.id,
    async send(input, sendOptions) {
      turn++;
      const base = { v: 1 as const, adapter: info.adapter, agent: info.spec.agent, session: info.session, turn, spec: info.spec, input };
      try {
        const reply = await session.send(input, sendOptions);
        onRecord({ ...base, reply: { text: reply.text, toolCalls: reply.toolCalls, ...(reply.usage ? { usage: reply.usage } : {}) } });
        return reply;
      } catch (error) {
        onRecord({ ...base, error: errorMessage(error) });
        throw error;
      }
    },
    close: () => session.close(),
  };
}

/**
 * The turn records held by a run's events (its `model.turn` events), in
 * order; other events are ignored.
 */
export function turnRecordsFromEvents(events: readonly unknown[]): TurnRecord[] {
  const out: TurnRecord[] = [];
  for (const e of events) {
    if (!e || typeof e !== 'object' || (e as { type?: unknown }).type !== 'model.turn') continue;
    const { v, adapter, agent, session, turn, spec, input, reply, error } = e as TurnRecord;
    out.push({ v, adapter, agent, session, turn, spec, input, ...defined({ reply, error }) });
  }
  return out;
}


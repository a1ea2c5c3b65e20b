/**
 * Record and replay: a recording adapter wraps any adapter and writes each
 * turn (request and reply) as a JSONL record; a replay adapter answers from
 * such a recording with zero model calls.
 * @module troupe/adapters/recording
 * @category Adapters
 */
import { appendFileSync } from 'node:fs';
import type { AdapterCapabilities, ModelAdapter, ModelSession, OpenSessionOptions, SessionSpec } from '../core/adapter.js';
import { abortError } from '../core/clock.js';
import { AdapterError, ParseError, TroupeError } from '../core/errors.js';
import { defineOptions, func, object, string } from '../core/options.js';
import { parseJsonLines } from '../core/run-log-reader.js';
import { recordSession, turnRecordsFromEvents, type TurnRecord } from '../core/turn-record.js';
import { readableText } from '../text/lines.js';

export { recordSession, turnRecordsFromEvents, type RecordedSessionInfo, type TurnRecord } from '../core/turn-record.js';

/** Options of {@link recordingAdapter}. */
export interface RecordingOptions {
  /** Append each record as a JSON line to this file. */
  path?: string;
  /** Receives each record. */
  onRecord?: (record: TurnRecord) => void;
}

/** A recording adapter and what it has recorded. */
export interface RecordingAdapter extends ModelAdapter {
  /** Every record so far. */
  readonly records: TurnRecord[];
  /** The records as JSONL text. */
  toJsonl(): string;
}

const recordingOptions = defineOptions<RecordingOptions>('recordingAdapter', { path: string, onRecord: func });

/** Wrap `inner` so that every turn is recorded. */
export function recordingAdapter(inner: ModelAdapter, options: RecordingOptions = {}): RecordingAdapter {
  recordingOptions.check(options);
  const records: TurnRecord[] = [];
  const opened = new Map<string, number>();
  const write = (record: TurnRecord) => {
    records.push(record);
    if (options.path) appendFileSync(options.path, `${JSON.stringify(record)}\n`);
    options.onRecord?.(record);
  };
  return {
    id: inner.id,
    capabilities: inner.capabilities,
    records,
    toJsonl: () => records.map((r) => `${JSON.stringify(r)}\n`).join(''),
    async openSession(spec, options) {
      const session = await inner.openSession(spec, options);
      const ordinal = (opened.get(spec.agent) ?? 0) + 1;
      opened.set(spec.agent, ordinal);
      return recordSession(session, { adapter: inner.id, session: ordinal, spec }, write);
    },
  };
}

/** True when `value` has what replay needs of a turn record: an agent, a session and a turn number. */
function isTurnRecord(value: unknown): value is TurnRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { agent, session, turn } = value as Partial<TurnRecord>;
  return typeof agent === 'string' && Number.isInteger(session) && Number.isInteger(turn) && (turn as number) >= 1;
}

/**
 * Parse JSONL text into turn records, by the run-log reader's rule: a torn
 * last line (no line end: a crash mid-append) is left out; line ends `\n`,
 * `\r\n` or `\r` and a BOM read the same. A line that is not JSON, or not
 * a turn record, throws a `ParseError` naming it; a non-string throws a
 * `ConfigurationError` (`invalid_argument`). Linear.
 */
export function parseRecording(text: string): TurnRecord[] {
  const { records } = parseJsonLines(readableText(text, 'the recording given to parseRecording'), 'the recording');
  return records.map((record, i) => {
    if (!isTurnRecord(record)) throw new ParseError(`Record ${i + 1} of the recording is not a turn record (it needs \`agent\`, \`session\` and \`turn\`)`, { details: { record: i + 1 } });
    return record;
  });
}

/** Raised when a replayed run asks for something the recording does not hold. */
export class ReplayDivergenceError extends TroupeError {
  constructor(message: string, details: Record<string, unknown>) {
    super('replay_divergence', message, { details });
  }
}

/** Options of {@link replayAdapter}. */
export interface ReplayOptions {
  /** The adapter id. Default: `replay`. */
  id?: string;
  /** Capability flags. Default: tools and no streaming. */
  capabilities?: Partial<AdapterCapabilities>;
}

const replayOptions = defineOptions<ReplayOptions>('replayAdapter', { id: string, capabilities: object });

/** A replay adapter, with how many turns it served. */
export interface ReplayAdapter extends ModelAdapter {
  /** Turns answered from the recording. */
  readonly served: number;
  /** Recorded turns not (yet) asked for. */
  readonly remaining: number;
}

/** What a replay adapter answers from: turn records, JSONL text, or a run (a run log or an exported run: anything with `events`). */
export type ReplaySource = TurnRecord[] | string | { readonly events: readonly unknown[] };

/**
 * Answer from a recording (records, JSONL text, or a run log or exported
 * run holding `model.turn` events) with zero model calls.
 * Sessions are matched by agent and opening order, turns by number; the
 * first input that differs from the recording fails with a
 * {@link ReplayDivergenceError} naming the agent, session, turn and the
 * first differing character.
 */
export function replayAdapter(recording: ReplaySource, options: ReplayOptions = {}): ReplayAdapter {
  replayOptions.check(options);
  const records =
    typeof recording === 'string' ? parseRecording(recording) : Array.isArray(recording) ? recording : turnRecordsFromEvents(recording.events);
  const bySession = new Map<string, TurnRecord[]>();
  for (const r of records) {
    const key = `${r.agent}#${r.session}`;
    const list = bySession.get(key) ?? [];
    list[r.turn - 1] = r;
    bySession.set(key, list);
  }
  const opened = new Map<string, number>();
  let served = 0;
  let nextId = 1;
  return {
    id: options.id ?? 'replay',
    capabilities: { tools: true, streaming: false, ...options.capabilities },
    get served() {
      return served;
    },
    get remaining() {
      return records.length - served;
    },
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      if (signal?.aborted) throw abortError(signal);
      const ordinal = (opened.get(spec.agent) ?? 0) + 1;
      opened.set(spec.agent, ordinal);
      const turns = bySession.get(`${spec.agent}#${ordinal}`);
      if (!turns) {
        throw new ReplayDivergenceError(
          `Replay diverged: the recording has no session ${ordinal} for agent "${spec.agent}"`,
          { agent: spec.agent, session: ordinal },
        );
      }
      let turn = 0;
      return {
        id: `replay-${nextId++}`,
        async send(input, sendOptions) {
          if (sendOptions?.signal?.aborted) throw abortError(sendOptions.signal);
          turn++;
          const rec = turns[turn - 1];
          const where = `agent "${spec.agent}", session ${ordinal}, turn ${turn}`;
          if (!rec) {
            throw new ReplayDivergenceError(`Replay diverged at ${where}: the recording has no such turn`, {
              agent: spec.agent,
              session: ordinal,
              turn,
            });
          }
          const expected = JSON.stringify(rec.input);
          const actual = JSON.stringify(input);
          if (expected !== actual) {
            let at = 0;
            while (at < expected.length && expected[at] === actual[at]) at++;
            throw new ReplayDivergenceError(
              `Replay diverged at ${where}: input differs at character ${at}: ` +
                `expected …${expected.slice(Math.max(0, at - 20), at + 40)}… got …${actual.slice(Math.max(0, at - 20), at + 40)}…`,
              { agent: spec.agent, session: ordinal, turn, position: at },
            );
          }
          served++;
          if (rec.error !== undefined) throw new AdapterError(`Recorded failure: ${rec.error}`);
          return structuredClone(rec.reply ?? { text: '', toolCalls: [] });
        },
        async close() {},
      };
    },
  };
}

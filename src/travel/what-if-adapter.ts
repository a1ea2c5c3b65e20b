/**
 * The adapter of a what-if replay: every model call whose input is the
 * same as a call of the recorded run — the same agent, model, system
 * prompt, tools and temperature, and the same inputs so far in the
 * session — is answered from the recording; the first call that differs
 * opens a session on the live adapter, which from then on answers that
 * session.
 * @module
 */
import { createHash } from 'node:crypto';
import type { AdapterCapabilities, ModelAdapter, ModelSession, ModelTurn, OpenSessionOptions, SendOptions, SessionSpec, ToolResult } from '../core/adapter.js';
import { abortError } from '../core/clock.js';
import { AdapterError, ConfigurationError, describeValue } from '../core/errors.js';
import { turnRecordsFromEvents, type TurnRecord } from '../core/turn-record.js';
import { adapter as adapterCheck, anything, defineOptions, func, listOf, object, string } from '../core/options.js';
import type { Usage } from '../core/usage.js';
import { ReplayDivergenceError } from '../adapters/recording.js';

/** Give one agent another system prompt, another model, or both. */
export interface AgentChange {
  /** The agent whose sessions change. */
  agent: string;
  /** Its system prompt: the new text, or a function of the old one. */
  prompt?: string | ((prompt: string | undefined) => string);
  /** Its model. */
  model?: string;
}

/** Give a tool another result: the model sees `result` instead of what the tool returned. */
export interface ToolResultChange {
  /** The tool's name. */
  tool: string;
  /** The result the model sees: text, or a function of the real result. */
  result: string | ((result: ToolResult) => string);
  /** Only for the calls of this agent. Default: every agent's. */
  agent?: string;
  /** Whether the model sees it as a failure. Default: as the tool's own result was. */
  isError?: boolean;
}

/** One change of a what-if replay. */
export type WhatIfChange = AgentChange | ToolResultChange;

/** Where the answer of a model call of a what-if replay came from. */
export type WhatIfSource = 'recorded' | 'live' | 'context';

/** One model call of a what-if replay. */
export interface WhatIfCall {
  agent: string;
  /** Which session of the agent in the what-if run (1-based, in opening order). */
  session: number;
  /** The turn within the session. */
  turn: number;
  /**
   * `recorded`: answered from the recording, no model call; `live`: sent to
   * the model; `context`: an earlier input of the session sent to the
   * model again, because the session went live after answers from the
   * recording (an adapter's session keeps its own history).
   */
  source: WhatIfSource;
  /** The usage the model reported (`live` and `context` calls), or the recorded usage (`recorded`). */
  usage?: Partial<Usage>;
}

/** Options of {@link whatIfAdapter}. */
export interface WhatIfAdapterOptions {
  /** Where calls that are not in the recording go. Without one, such a call fails with a `ReplayDivergenceError`. */
  live?: ModelAdapter;
  /** The changes to apply to sessions and tool results. */
  changes?: readonly WhatIfChange[];
  /** The adapter's id. Default: the live adapter's, else `what-if`. */
  id?: string;
  /** Capability flags. Default: the live adapter's, else tools and no streaming (as the replay adapter). */
  capabilities?: AdapterCapabilities;
  /** Receives every call as it is answered. */
  onCall?: (call: WhatIfCall) => void;
}

const whatIfAdapterOptions = defineOptions<WhatIfAdapterOptions>('whatIfAdapter', { live: adapterCheck, changes: listOf(anything), id: string, capabilities: object, onCall: func });

/** A what-if adapter and the calls it answered. */
export interface WhatIfAdapter extends ModelAdapter {
  /** Every call so far, in the order answered. */
  readonly calls: readonly WhatIfCall[];
}

/** The recorded answers by call, shared by the what-if adapters of one replay (internal). */
export class Recording {
  readonly #answers = new Map<string, TurnRecord[]>();

  constructor(records: readonly TurnRecord[]) {
    const keys = new Map<string, string>();
    for (const r of records) {
      const session = `${r.agent}#${r.session}`;
      const key = nextKey(r.turn === 1 ? specKey(r.spec) : (keys.get(session) ?? specKey(r.spec)), r.input);
      keys.set(session, key);
      const list = this.#answers.get(key);
      if (list) list.push(r);
      else this.#answers.set(key, [r]);
    }
  }

  /** The next recorded answer to the call `key`, taken (each recorded answer serves one call). */
  take(key: string): TurnRecord | undefined {
    const list = this.#answers.get(key);
    return list?.shift();
  }
}

/**
 * An adapter that answers from `recording` the calls that are unchanged,
 * and sends the others to `options.live`. `changes` give an agent another
 * prompt or model (its sessions then go to the model) and a tool another
 * result (the model sees it instead of the tool's). Calls are counted in
 * `calls` by where their answer came from.
 */
export function whatIfAdapter(recording: readonly TurnRecord[] | { readonly events: readonly unknown[] }, options: WhatIfAdapterOptions = {}): WhatIfAdapter {
  whatIfAdapterOptions.check(options);
  const records = Array.isArray(recording) ? (recording as readonly TurnRecord[]) : turnRecordsFromEvents((recording as { events: readonly unknown[] }).events);
  return adapterOn(new Recording(records), options);
}

/** A what-if adapter answering from `cache`, which other adapters of the same replay share. */
export function adapterOn(cache: Recording, options: WhatIfAdapterOptions = {}): WhatIfAdapter {
  const changes = checkChanges(options.changes ?? []);
  const calls: WhatIfCall[] = [];
  const opened = new Map<string, number>();
  let sessions = 0;
  const record = (call: WhatIfCall) => {
    calls.push(call);
    options.onCall?.(call);
  };
  return {
    id: options.id ?? options.live?.id ?? 'what-if',
    capabilities: options.capabilities ?? options.live?.capabilities ?? { tools: true, streaming: false },
    calls,
    async openSession(spec: SessionSpec, { signal }: OpenSessionOptions = {}): Promise<ModelSession> {
      if (signal?.aborted) throw abortError(signal);
      const changed = changeSpec(spec, changes);
      const ordinal = (opened.get(spec.agent) ?? 0) + 1;
      opened.set(spec.agent, ordinal);
      return new WhatIfSession(`what-if-${++sessions}`, changed, { cache, changes, live: options.live, ordinal, record });
    },
  };
}

interface SessionHost {
  cache: Recording;
  changes: readonly WhatIfChange[];
  live: ModelAdapter | undefined;
  ordinal: number;
  record(call: WhatIfCall): void;
}

class WhatIfSession implements ModelSession {
  readonly id: string;
  readonly #spec: SessionSpec;
  readonly #host: SessionHost;
  #key: string;
  readonly #inputs: Array<string | ToolResult[]> = [];
  #live: ModelSession | undefined;

  constructor(id: string, spec: SessionSpec, host: SessionHost) {
    this.id = id;
    this.#spec = spec;
    this.#host = host;
    this.#key = specKey(spec);
  }

  async send(raw: string | ToolResult[], options: SendOptions = {}): Promise<ModelTurn> {
    if (options.signal?.aborted) throw abortError(options.signal);
    const input = changeResults(raw, this.#spec.agent, this.#host.changes);
    const turn = this.#inputs.length + 1;
    const call = { agent: this.#spec.agent, session: this.#host.ordinal, turn };
    if (!this.#live) {
      this.#key = nextKey(this.#key, input);
      const recorded = this.#host.cache.take(this.#key);
      if (recorded) {
        this.#inputs.push(input);
        this.#host.record({ ...call, source: 'recorded', ...(recorded.reply?.usage ? { usage: recorded.reply.usage } : {}) });
        if (recorded.error !== undefined) throw new AdapterError(`Recorded failure: ${recorded.error}`);
        return structuredClone(recorded.reply ?? { text: '', toolCalls: [] });
      }
      this.#live = await this.#goLive(options.signal);
    }
    this.#inputs.push(input);
    const reply = await this.#live.send(input, options);
    this.#host.record({ ...call, source: 'live', ...(reply.usage ? { usage: reply.usage } : {}) });
    return reply;
  }

  /** Open the live session and send it the inputs this session was answered from the recording for. */
  async #goLive(signal: AbortSignal | undefined): Promise<ModelSession> {
    const { live } = this.#host;
    if (!live) {
      throw new ReplayDivergenceError(
        `Replay diverged: agent "${this.#spec.agent}", session ${this.#host.ordinal}, turn ${this.#inputs.length + 1} is not in the recording, and no live adapter was given`,
        { agent: this.#spec.agent, session: this.#host.ordinal, turn: this.#inputs.length + 1 },
      );
    }
    const session = await live.openSession(this.#spec, signal ? { signal } : {});
    for (let i = 0; i < this.#inputs.length; i++) {
      const reply = await session.send(this.#inputs[i]!, signal ? { signal } : {});
      this.#host.record({ agent: this.#spec.agent, session: this.#host.ordinal, turn: i + 1, source: 'context', ...(reply.usage ? { usage: reply.usage } : {}) });
    }
    return session;
  }

  async close(): Promise<void> {
    await this.#live?.close();
  }
}

/** One line saying what `change` does, for reports and the `run.forked` record. */
export function describeChange(change: WhatIfChange): string {
  if (isAgentChange(change)) {
    const parts = [change.prompt !== undefined ? `prompt of ${change.agent}` : '', change.model !== undefined ? `model of ${change.agent}: ${change.model}` : ''];
    return parts.filter((p) => p !== '').join('; ');
  }
  return `result of tool ${change.tool}${change.agent === undefined ? '' : ` (for ${change.agent})`}`;
}

function isAgentChange(change: WhatIfChange): change is AgentChange {
  return typeof (change as AgentChange).agent === 'string' && (change as ToolResultChange).tool === undefined;
}

function checkChanges(changes: readonly WhatIfChange[]): readonly WhatIfChange[] {
  for (const c of changes) {
    const agentChange = c && isAgentChange(c) && (c.prompt !== undefined || c.model !== undefined);
    const toolChange = c && typeof (c as ToolResultChange).tool === 'string' && (c as ToolResultChange).result !== undefined;
    if (!agentChange && !toolChange) {
      throw new ConfigurationError(`Expected a change { agent, prompt?, model? } or { tool, result, agent? }, got ${describeValue(c)}`, { code: 'invalid_edit' });
    }
  }
  return changes;
}

/** The spec with the changes of its agent applied. */
function changeSpec(spec: SessionSpec, changes: readonly WhatIfChange[]): SessionSpec {
  let out = spec;
  for (const c of changes) {
    if (!isAgentChange(c) || c.agent !== spec.agent) continue;
    out = { ...out };
    if (c.prompt !== undefined) out.system = typeof c.prompt === 'function' ? c.prompt(out.system) : c.prompt;
    if (c.model !== undefined) out.model = c.model;
  }
  return out;
}

/** Tool results with the changes of their tool applied. */
function changeResults(input: string | ToolResult[], agent: string, changes: readonly WhatIfChange[]): string | ToolResult[] {
  if (typeof input === 'string') return input;
  return input.map((result) => {
    let out = result;
    for (const c of changes) {
      if (isAgentChange(c) || c.tool !== result.name || (c.agent !== undefined && c.agent !== agent)) continue;
      out = { ...out, content: typeof c.result === 'function' ? c.result(out) : c.result };
      if (c.isError !== undefined) out.isError = c.isError;
    }
    return out;
  });
}

/** The key of a session before its first call: what the model is given besides the inputs (a continued conversation's history included). */
function specKey(spec: SessionSpec): string {
  return hash(canonical({ agent: spec.agent, model: spec.model, system: spec.system, tools: spec.tools, temperature: spec.temperature, history: spec.history }));
}

/** The key of the next call of a session: the session's key so far and the input. */
function nextKey(key: string, input: string | ToolResult[]): string {
  return hash(`${key}\n${canonical(input)}`);
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, `undefined` fields left out. */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v)).join(',')}]`;
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

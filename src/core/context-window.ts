/**
 * Context budgets: keep a long conversation inside the model's window. A
 * session with a {@link ContextBudget} keeps a copy of what it has sent and
 * received (with token counts from a pluggable counter); when the next turn
 * would send more than the budget, older turns are compacted — summarised
 * by a summariser runnable, or without one dropped, tool output and
 * earlier iterations' worker results first — always keeping the system
 * prompt, the request and the latest exchange verbatim. The conversation
 * goes on in a new session of the same adapter whose first message holds
 * the compacted history, so it works with every adapter, and a compaction
 * is a `context.compacted` event in the run log. A conversation that
 * continues a thread starts with the thread's messages as earlier
 * exchanges: when they do not fit, they are compacted the same way before
 * the session opens, and the session gets what is left as its history.
 * @module
 */
import type { ConversationMessage, ModelSession, ModelTurn, SendOptions, ToolResult } from './adapter.js';
import { RunContext } from './context.js';
import { ConfigurationError, describeValue, errorMessage } from './errors.js';
import { boolean, check, defineOptions, func, required, string } from './options.js';
import type { Runnable } from './runnable.js';

/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

/** Estimated tokens of a text: 4 characters a token (at least 1 for non-empty text). The default {@link TokenCounter}. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

/** An input as the model reads it: a string as it is, tool results one per line. */
export function inputTokensOf(input: string | ToolResult[]): string {
  if (typeof input === 'string') return input;
  return input.map((r) => `[${r.isError ? 'tool error' : 'tool result'} ${r.name}#${r.callId}] ${r.content}`).join('\n');
}

/** How a conversation was compacted (the `strategy` of a `context.compacted` event). */
export type CompactionStrategy = 'summary' | 'drop';

/**
 * What an input is, for compaction: `results` (worker results, dropped
 * before other messages of earlier iterations) or a plain `message`. Tool
 * results are `tool-output` by themselves.
 */
export type ContextInputKind = 'message' | 'results';

/** A context budget for a session (`agent({ context })`). */
export interface ContextBudget {
  /** The most tokens one turn may send: system prompt, history and input. */
  maxTokens: number;
  /** Counts tokens. Default: {@link estimateTokens}. */
  counter?: TokenCounter;
  /**
   * Where the size of what was sent comes from: `estimate` (the counter
   * over the kept copy) or `reported` (the adapter's `usage.inputTokens` and
   * `outputTokens` of the last turn, plus the counter for the new input;
   * for adapters whose usage counts the whole context re-sent, which say so
   * with `capabilities.contextUsage`). Default: `reported` when the adapter
   * says so, else `estimate`.
   */
  usage?: 'estimate' | 'reported';
  /**
   * Summarises the earlier turns (an agent on a cheaper model, say): it
   * runs in the conversation's op on the text of the turns to compact, and
   * its answer replaces them. Without one, turns are dropped.
   */
  summarizer?: Runnable;
}

/** Check a context budget given as an option. */
export function validateContextBudget(option: string, budget: ContextBudget | undefined): ContextBudget | undefined {
  if (budget === undefined) return undefined;
  if (budget === null || typeof budget !== 'object') throw new ConfigurationError(`Expected \`${option}\` to be an object, got ${describeValue(budget)}`);
  if (!(Number.isInteger(budget.maxTokens) && budget.maxTokens > 0)) {
    throw new ConfigurationError(`Expected \`${option}.maxTokens\` to be a positive integer, got ${describeValue(budget.maxTokens)}`);
  }
  if (budget.counter !== undefined && typeof budget.counter !== 'function') {
    throw new ConfigurationError(`Expected \`${option}.counter\` to be a function of a text, got ${describeValue(budget.counter)}`);
  }
  if (budget.usage !== undefined && budget.usage !== 'estimate' && budget.usage !== 'reported') {
    throw new ConfigurationError(`Expected \`${option}.usage\` to be "estimate" or "reported", got ${describeValue(budget.usage)}`);
  }
  if (budget.summarizer !== undefined && typeof budget.summarizer?.run !== 'function') {
    throw new ConfigurationError(`Expected \`${option}.summarizer\` to be a runnable, got ${describeValue(budget.summarizer)}`);
  }
  return budget;
}

/** One message of the kept copy. */
interface Entry {
  role: 'user' | 'assistant' | 'tool';
  kind: 'request' | ContextInputKind | 'reply' | 'tool-output' | 'note';
  text: string;
  tokens: number;
  /** The exchange it belongs to (a message and its tool loop; several messages of one iteration when the sender says so). */
  exchange: number;
}

/** What the compacting session needs. */
export interface ContextWindowOptions {
  budget: ContextBudget;
  /** The agent the session speaks for. */
  agent: string;
  /** The system prompt (kept verbatim: it is in every session's spec). */
  system: string | undefined;
  /** The conversation's context: the summariser runs in it, events go to it. */
  ctx: RunContext;
  /** Whether the adapter's usage counts the whole context (`reported` by default then). */
  contextUsage: boolean;
  /** Open a new session to continue the conversation in (same adapter and spec, recorded); returns it with its ordinal. */
  reopen(signal: AbortSignal | undefined): Promise<{ session: ModelSession; ordinal: number }>;
  /** Earlier messages the conversation continues (a thread's): kept as earlier exchanges, compacted first. */
  history?: readonly ConversationMessage[];
}

const contextWindowOptions = defineOptions<ContextWindowOptions>('ContextWindow', {
  budget: required((name, value) => void validateContextBudget(name, value as ContextBudget)),
  agent: required(string),
  system: string,
  ctx: required(check('a RunContext', (v) => v instanceof RunContext)),
  contextUsage: boolean,
  reopen: required(func),
  history: check('a list of messages ({ role, text })', (v) => Array.isArray(v) && v.every((m) => typeof (m as ConversationMessage)?.text === 'string')),
});

/**
 * The kept copy of a conversation and its budget: wraps the session, counts
 * what each turn sends, and compacts before a turn that would pass the
 * budget. Patterns label what they send with {@link ContextWindow.label}.
 */
export class ContextWindow {
  readonly #o: ContextWindowOptions;
  readonly #count: TokenCounter;
  readonly #reported: boolean;
  readonly #systemTokens: number;
  #entries: Entry[] = [];
  #exchange = 0;
  #group: number | undefined;
  #nextKind: ContextInputKind = 'message';
  /** The size of the context after the last turn, as the adapter reported it. */
  #reportedSize: number | undefined;
  /** Set after a compaction: the next send goes to a new session, prefixed with the compacted history. */
  #prefix: string | undefined;
  /** Tokens of the lines around a compacted history, once there has been one. */
  #framing = 0;
  /** Tokens of the kept entries. */
  #total = 0;
  /** The conversation's request (its first message in this window) is kept. */
  #hasRequest = false;
  /** The session is opened on its first send (`deferred`), and is not yet. */
  #unopened = false;

  constructor(options: ContextWindowOptions) {
    contextWindowOptions.check(options);
    this.#o = options;
    this.#count = options.budget.counter ?? estimateTokens;
    this.#reported = (options.budget.usage ?? (options.contextUsage ? 'reported' : 'estimate')) === 'reported';
    this.#systemTokens = options.system ? this.#count(options.system) : 0;
    this.#seed(options.history ?? []);
  }

  /** Keep a continued conversation's messages as earlier exchanges (each user message opens one), numbered below every later one and the notes. */
  #seed(history: readonly ConversationMessage[]): void {
    const exchanges = history.filter((m, i) => m.role === 'user' || i === 0).length;
    let exchange = -exchanges - 2;
    history.forEach((m, i) => {
      if (m.role === 'user' || i === 0) exchange++;
      this.#push(this.#entry(m.role, m.role === 'user' ? 'message' : 'reply', m.text, exchange));
    });
  }

  /**
   * A session that opens on its first send: when the conversation's earlier
   * messages and that first input would pass the budget, the messages are
   * compacted first (a `context.compacted` event), and `open` is given
   * what is left, as the history of the new session.
   */
  deferred(open: (history: ConversationMessage[], signal: AbortSignal | undefined) => Promise<{ session: ModelSession; ordinal: number }>): ModelSession {
    let current: ModelSession | undefined;
    let opening: Promise<ModelSession> | undefined;
    this.#unopened = true;
    const start = async (input: string | ToolResult[], options: SendOptions | undefined): Promise<ModelSession> => {
      const { budget, ctx, agent } = this.#o;
      const before = this.projected(input);
      const shrunk = before > budget.maxTokens && this.#compactable() ? await this.#shrink(input, options) : undefined;
      const { session, ordinal } = await open(this.#messages(), options?.signal);
      if (shrunk) ctx.emit('context.compacted', { agent, budget: budget.maxTokens, before, after: this.projected(input), ...shrunk, session: ordinal });
      return session;
    };
    const lazy: ModelSession = {
      get id() {
        return current?.id ?? 'unopened';
      },
      send: async (input, options) => {
        if (!current) {
          opening ??= start(input, options);
          try {
            current = await opening;
            this.#unopened = false;
          } finally {
            opening = undefined;
          }
        }
        return current.send(input, options);
      },
      close: async () => {
        await current?.close();
      },
    };
    return this.wrap(lazy);
  }

  /** The kept copy as a session's history: notes (a summary, what was dropped) are the user's. */
  #messages(): ConversationMessage[] {
    return this.#entries.map((e) => ({ role: e.role === 'assistant' ? 'assistant' : 'user', text: e.text }));
  }

  /**
   * Label the next message: its kind (`results` are dropped before other
   * messages of earlier iterations) and its iteration (messages with the
   * same iteration are one exchange, kept or compacted together; without
   * one, each message is its own exchange).
   */
  label(next: { kind?: ContextInputKind; iteration?: number }): void {
    this.#nextKind = next.kind ?? 'message';
    if (next.iteration !== undefined && next.iteration !== this.#group) {
      this.#group = next.iteration;
      this.#exchange++;
    } else if (next.iteration === undefined) {
      this.#group = undefined;
      this.#exchange++;
    }
  }

  /** The tokens a turn sending `input` would send now. */
  projected(input: string | ToolResult[]): number {
    const next = this.#count(inputTokensOf(input));
    // After a compaction the new session's first message is the compacted history and the input.
    if (this.#prefix !== undefined) return this.#systemTokens + this.#count(this.#prefix) + next;
    if (this.#reported && this.#reportedSize !== undefined) return this.#reportedSize + next;
    return this.#systemTokens + this.#size() + next;
  }

  /** Wrap `session` so that every turn goes through the window. */
  wrap(session: ModelSession): ModelSession {
    let current = session;
    return {
      get id() {
        return current.id;
      },
      send: async (input, options) => {
        // A session not opened yet fits its history before it opens (see `deferred`).
        if (!this.#unopened && this.projected(input) > this.#o.budget.maxTokens && this.#compactable()) {
          current = await this.#compact(current, input, options);
        }
        return this.#send(current, input, options);
      },
      close: () => current.close(),
    };
  }

  async #send(session: ModelSession, input: string | ToolResult[], options: SendOptions | undefined): Promise<ModelTurn> {
    const prefix = this.#prefix;
    const sent = prefix === undefined ? input : `${prefix}${inputTokensOf(input)}`;
    this.#prefix = undefined;
    const turn = await session.send(sent, options);
    this.#keepInput(input);
    this.#keepReply(turn);
    const usage = turn.usage;
    this.#reportedSize = usage?.inputTokens === undefined ? undefined : usage.inputTokens + (usage.outputTokens ?? 0);
    return turn;
  }

  #keepInput(input: string | ToolResult[]): void {
    const exchange = this.#exchange;
    if (typeof input !== 'string') {
      for (const r of input) this.#push(this.#entry('tool', 'tool-output', inputTokensOf([r]), exchange));
      return;
    }
    const kind = this.#hasRequest ? this.#nextKind : 'request';
    this.#hasRequest = true;
    this.#nextKind = 'message';
    this.#push(this.#entry('user', kind, input, exchange));
  }

  #keepReply(turn: ModelTurn): void {
    const calls = turn.toolCalls.map((c) => `[called ${c.name} ${JSON.stringify(c.arguments ?? {})}]`).join('\n');
    const text = [turn.text, calls].filter((t) => t !== '').join('\n');
    this.#push(this.#entry('assistant', 'reply', text, this.#exchange));
  }

  /** An entry, counted as it would be rendered in a compacted history (so the count after a compaction holds). */
  #entry(role: Entry['role'], kind: Entry['kind'], text: string, exchange: number): Entry {
    const entry: Entry = { role, kind, text, tokens: 0, exchange };
    entry.tokens = this.#count(renderEntry(entry)) + 1;
    return entry;
  }

  #size(): number {
    return this.#framing + this.#total;
  }

  /** Replace the kept entries (and their total). */
  #set(entries: Entry[]): void {
    this.#entries = entries;
    this.#total = 0;
    for (const e of entries) this.#total += e.tokens;
  }

  #push(entry: Entry): void {
    this.#entries.push(entry);
    this.#total += entry.tokens;
  }

  /** Something before the latest exchange could go. */
  #compactable(): boolean {
    return this.#entries.some((e) => e.kind !== 'request' && e.kind !== 'note' && e.exchange < this.#exchange);
  }

  /** Compact the kept copy and continue in a new session (the old one is closed). */
  async #compact(old: ModelSession, input: string | ToolResult[], options: SendOptions | undefined): Promise<ModelSession> {
    const { budget, ctx, agent } = this.#o;
    const before = this.projected(input);
    this.#framing = this.#count(FRAME_START + FRAME_END);
    const shrunk = await this.#shrink(input, options);
    this.#prefix = this.#render();
    const { session, ordinal } = await this.#o.reopen(options?.signal);
    await old.close().catch(() => undefined);
    this.#reportedSize = undefined;
    ctx.emit('context.compacted', { agent, budget: budget.maxTokens, before, after: this.projected(input), ...shrunk, session: ordinal });
    return session;
  }

  /** Summarise or drop earlier turns until the next turn fits (or nothing more can go); says how. */
  async #shrink(input: string | ToolResult[], options: SendOptions | undefined): Promise<{ strategy: CompactionStrategy; dropped: { toolOutputs: number; results: number; exchanges: number } }> {
    const { budget, ctx, agent } = this.#o;
    const dropped = { toolOutputs: 0, results: 0, exchanges: 0 };
    let strategy: CompactionStrategy = 'drop';
    if (budget.summarizer) {
      try {
        await this.#summarise(budget.summarizer, options?.signal);
        strategy = 'summary';
      } catch (error) {
        if (options?.signal?.aborted || ctx.signal.aborted) throw error;
        ctx.emit('warning', { message: `Agent "${agent}": the summariser failed (${errorMessage(error)}); dropping earlier turns instead`, code: 'context_summary_failed' });
      }
    }
    const fits = () => this.projected(input) <= budget.maxTokens;
    if (!fits()) dropped.toolOutputs = this.#replace('tool-output', '[tool output dropped to fit the context budget]', fits);
    if (!fits()) dropped.results = this.#replace('results', '[worker results of an earlier iteration dropped to fit the context budget]', fits);
    if (!fits()) dropped.exchanges = this.#dropExchanges(fits);
    return { strategy, dropped };
  }

  /** Replace older entries of `kind`, oldest first, with `note` until the next turn fits; returns how many. */
  #replace(kind: Entry['kind'], note: string, fits: () => boolean): number {
    let n = 0;
    for (const e of this.#entries) {
      if (fits()) break;
      if (e.kind !== kind || e.exchange >= this.#exchange) continue;
      e.kind = 'note';
      e.text = note;
      this.#total -= e.tokens;
      e.tokens = this.#count(renderEntry(e)) + 1;
      this.#total += e.tokens;
      n++;
    }
    return n;
  }

  /** Drop whole earlier exchanges, oldest first (the request stays), until the next turn fits; returns how many. */
  #dropExchanges(fits: () => boolean): number {
    const older = [...new Set(this.#entries.filter((e) => e.kind !== 'request' && e.exchange < this.#exchange).map((e) => e.exchange))];
    let n = 0;
    for (const exchange of older) {
      if (fits()) break;
      this.#set(this.#entries.filter((e) => e.kind === 'request' || e.exchange !== exchange));
      n++;
    }
    if (n > 0) {
      const kept = [...this.#entries];
      const at = kept.findIndex((e) => e.kind !== 'request');
      kept.splice(at < 0 ? kept.length : at, 0, this.#entry('user', 'note', `[${n} earlier exchange${n === 1 ? '' : 's'} dropped to fit the context budget]`, -1));
      this.#set(kept);
    }
    return n;
  }

  /** Replace every earlier exchange but the request by the summariser's answer. */
  async #summarise(summarizer: Runnable, signal: AbortSignal | undefined): Promise<void> {
    const older = this.#entries.filter((e) => e.kind !== 'request' && e.exchange < this.#exchange);
    if (older.length === 0) return;
    const ctx = signal ? this.#o.ctx.withSignal(signal) : this.#o.ctx;
    const outcome = await summarizer.run(`Summarise this conversation so far; keep every decision, result and open question.\n\n${renderEntries(older)}`, ctx);
    const summary = this.#entry('user', 'note', `## Summary of the earlier conversation\n${outcome.output}`, -1);
    const kept = this.#entries.filter((e) => !older.includes(e));
    const at = kept.findIndex((e) => e.kind !== 'request');
    kept.splice(at < 0 ? kept.length : at, 0, summary);
    this.#set(kept);
  }

  /** The compacted history as the first message of the new session. */
  #render(): string {
    return `${FRAME_START}${renderEntries(this.#entries)}${FRAME_END}`;
  }
}

const FRAME_START = '[The conversation so far, compacted to fit the context budget]\n\n';
const FRAME_END = '\n\n[The conversation continues]\n\n';

function renderEntry(e: Entry): string {
  return `### ${e.role === 'user' ? 'User' : e.role === 'assistant' ? 'Assistant' : 'Tool'}\n${e.text}`;
}

function renderEntries(entries: readonly Entry[]): string {
  return entries.map(renderEntry).join('\n\n');
}

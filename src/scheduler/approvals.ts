/**
 * The approval queue: tool-approval requests from any worker reach the
 * application's handler one at a time; decisions with the scope `session`
 * or `global` are remembered in a store (a memory store of the queue's own
 * by default; a shared store shares them between processes), `once` is not.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { abortError } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { memoryStore } from '../core/memory-store.js';
import type { Store } from '../core/store.js';

/** How long a decision holds: this request, the requesting session, or everyone. */
export type ApprovalScope = 'once' | 'session' | 'global';

/** A worker asks to use a tool. */
export interface ApprovalRequest {
  /** The tool. */
  tool: string;
  /** The worker (agent) asking. */
  agent: string;
  /** The worker's session (the `session` scope is per session; default: the agent). */
  sessionId?: string;
  /** The run the worker belongs to (`guard` sets it); `session` decisions are kept per run. */
  runId?: string;
  /** The id of the tool call (`guard` sets it). */
  toolCallId?: string;
  /** The tool's arguments, for the handler to show. */
  arguments?: unknown;
}

/** The application's answer. */
export interface ApprovalDecision {
  approved: boolean;
  /** Default: `once`. */
  scope?: ApprovalScope;
}

/**
 * Decides one request at a time. `ctx` is the run context of the calling
 * agent when the request comes through {@link ApprovalQueue.guard} (a
 * handler that asks a person remotely emits its request on the run).
 */
export type ApprovalHandler = (request: ApprovalRequest, signal: AbortSignal, ctx?: RunContext) => ApprovalDecision | Promise<ApprovalDecision>;

/** Options of an {@link ApprovalQueue}. */
export interface ApprovalQueueOptions {
  /** Decides the requests no remembered decision answers. */
  handler: ApprovalHandler;
  /**
   * Where `session` and `global` decisions are remembered, under
   * `approvals/`. Default: a memory store of this queue. Give a shared store
   * (a file or Redis store, namespaced per tenant) so that every process of
   * the application sees the same decisions.
   */
  store?: Store;
}

/** Events of an {@link ApprovalQueue}. */
export interface ApprovalQueueEvents {
  /** The number of requests waiting for a decision (including the one being decided). */
  pending: (count: number) => void;
}

interface Waiting {
  request: ApprovalRequest;
  signal: AbortSignal | undefined;
  ctx: RunContext | undefined;
  resolve(approved: boolean): void;
  reject(error: unknown): void;
}

/**
 * Serialises tool approvals and remembers scoped decisions.
 *
 * @example
 * ```ts
 * const approvals = new ApprovalQueue({ handler: async (r) => ({ approved: await ask(r), scope: 'session' }) });
 * approvals.on('pending', (n) => showBadge(n));
 * if (await approvals.request({ tool: 'write_file', agent: 'Implementation' })) write();
 * ```
 */
export class ApprovalQueue extends EventEmitter<ApprovalQueueEvents> {
  readonly #handler: ApprovalHandler;
  readonly #queue: Waiting[] = [];
  readonly #store: Store;
  #busy = false;

  constructor(options: ApprovalQueueOptions) {
    super();
    if (typeof options?.handler !== 'function') {
      throw new ConfigurationError(`Expected \`handler\` to be a function, got ${describeValue(options?.handler)}`);
    }
    if (options.store !== undefined && (typeof options.store !== 'object' || options.store === null || typeof options.store.get !== 'function')) {
      throw new ConfigurationError(`Expected \`store\` to be a store, got ${describeValue(options.store)}`);
    }
    this.#handler = options.handler;
    this.#store = options.store ?? memoryStore();
  }

  /** Requests waiting for a decision, including the one being decided. */
  get pending(): number {
    return this.#queue.length + (this.#busy ? 1 : 0);
  }

  /**
   * Ask for approval; resolves `true` when approved. Rejects when `signal`
   * aborts first. `ctx` (the caller's run context) is handed to the handler.
   */
  async request(request: ApprovalRequest, options: { signal?: AbortSignal; ctx?: RunContext } = {}): Promise<boolean> {
    const known = await this.#remembered(request, options.signal);
    if (known !== undefined) return known;
    if (options.signal?.aborted) throw abortError(options.signal);
    return new Promise<boolean>((resolve, reject) => {
      const item: Waiting = { request, signal: options.signal, ctx: options.ctx, resolve, reject };
      const onAbort = () => {
        const at = this.#queue.indexOf(item);
        if (at >= 0) {
          this.#queue.splice(at, 1);
          this.emit('pending', this.pending);
        }
        reject(abortError(options.signal));
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      item.resolve = (v) => {
        options.signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      item.reject = (e) => {
        options.signal?.removeEventListener('abort', onAbort);
        reject(e);
      };
      this.#queue.push(item);
      this.emit('pending', this.pending);
      void this.#drain();
    });
  }

  /**
   * The same tool, asking this queue before every call. The request names
   * the calling agent, its session (the agent's op node) and the arguments;
   * a denied call does not run and the model is told so.
   *
   * @example
   * ```ts
   * await executePlan(plan, { adapter, tools: [approvals.guard(writeFile)] });
   * ```
   */
  guard<Args>(tool: ToolDefinition<Args>): ToolDefinition<Args> {
    return defineTool<Args>({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      execute: async (args, context) => {
        const request: ApprovalRequest = {
          tool: tool.name,
          agent: context.agent,
          sessionId: context.ctx.op.id,
          runId: context.ctx.runId,
          toolCallId: context.callId,
          arguments: args,
        };
        const approved = await this.request(request, { signal: context.signal, ctx: context.ctx });
        return approved ? tool.execute(args, context) : `Not approved: the use of \`${tool.name}\` was denied.`;
      },
    });
  }

  /** Forget the decisions remembered for one session (of any run, or of `runId`). */
  async forgetSession(sessionId: string, runId?: string): Promise<void> {
    for (const key of await this.#store.list(SESSION_PREFIX)) {
      const [run, session] = key.slice(SESSION_PREFIX.length).split('/');
      if (session === encodeURIComponent(sessionId) && (runId === undefined || run === encodeURIComponent(runId))) await this.#store.delete(key);
    }
  }

  /** Forget every remembered decision. */
  async forgetAll(): Promise<void> {
    for (const key of await this.#store.list(DECISIONS_PREFIX)) await this.#store.delete(key);
  }

  async #remembered(request: ApprovalRequest, signal: AbortSignal | undefined): Promise<boolean | undefined> {
    const call = signal ? { signal } : {};
    for (const scope of REMEMBERED_SCOPES) {
      const value = await this.#store.get(decisionKey(request, scope), call);
      if (typeof value === 'boolean') return value;
    }
    return undefined;
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    for (let item = this.#queue.shift(); item; item = this.#queue.shift()) {
      this.#busy = true;
      try {
        const known = await this.#remembered(item.request, item.signal);
        if (known !== undefined) {
          item.resolve(known);
          continue;
        }
        const signal = item.signal ?? new AbortController().signal;
        const decision = await this.#handler(item.request, signal, item.ctx);
        const scope = decision.scope ?? 'once';
        if (scope !== 'once') await this.#store.set(decisionKey(item.request, scope), decision.approved);
        item.resolve(decision.approved);
      } catch (error) {
        item.reject(error);
      } finally {
        this.#busy = false;
        this.emit('pending', this.pending);
      }
    }
  }
}

const DECISIONS_PREFIX = 'approvals/';
const SESSION_PREFIX = 'approvals/session/';
/** Looked up in this order: a session's decision wins over a global one. */
const REMEMBERED_SCOPES = ['session', 'global'] as const;

/**
 * The one place that says what a scope covers: the store key a decision of
 * `scope` on `request` is remembered under. `session`: this tool in this
 * session (the agent's op, or the agent when there is none) of this run;
 * `global`: this tool, everywhere the store is shared.
 */
function decisionKey(request: ApprovalRequest, scope: 'session' | 'global'): string {
  const tool = encodeURIComponent(request.tool);
  if (scope === 'global') return `${DECISIONS_PREFIX}global/${tool}`;
  const run = encodeURIComponent(request.runId ?? '-');
  return `${SESSION_PREFIX}${run}/${encodeURIComponent(request.sessionId ?? request.agent)}/${tool}`;
}

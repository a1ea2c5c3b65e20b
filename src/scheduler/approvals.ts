/**
 * The approval queue: tool-approval requests from any worker reach the
 * application's handler one at a time; decisions with the scope `session`
 * or `global` are remembered, `once` is not.
 * @module
 */
import { EventEmitter } from 'eventemitter3';
import { abortError } from '../core/clock.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';

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
  /** The tool's arguments, for the handler to show. */
  arguments?: unknown;
}

/** The application's answer. */
export interface ApprovalDecision {
  approved: boolean;
  /** Default: `once`. */
  scope?: ApprovalScope;
}

/** Decides one request at a time. */
export type ApprovalHandler = (request: ApprovalRequest, signal: AbortSignal) => ApprovalDecision | Promise<ApprovalDecision>;

/** Events of an {@link ApprovalQueue}. */
export interface ApprovalQueueEvents {
  /** The number of requests waiting for a decision (including the one being decided). */
  pending: (count: number) => void;
}

interface Waiting {
  request: ApprovalRequest;
  signal: AbortSignal | undefined;
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
  readonly #global = new Map<string, boolean>();
  readonly #session = new Map<string, boolean>();
  #busy = false;

  constructor(options: { handler: ApprovalHandler }) {
    super();
    if (typeof options?.handler !== 'function') {
      throw new ConfigurationError(`Expected \`handler\` to be a function, got ${describeValue(options?.handler)}`);
    }
    this.#handler = options.handler;
  }

  /** Requests waiting for a decision, including the one being decided. */
  get pending(): number {
    return this.#queue.length + (this.#busy ? 1 : 0);
  }

  /** Ask for approval; resolves `true` when approved. Rejects when `signal` aborts first. */
  request(request: ApprovalRequest, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const known = this.#remembered(request);
    if (known !== undefined) return Promise.resolve(known);
    if (options.signal?.aborted) return Promise.reject(abortError(options.signal));
    return new Promise<boolean>((resolve, reject) => {
      const item: Waiting = { request, signal: options.signal, resolve, reject };
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
        const request: ApprovalRequest = { tool: tool.name, agent: context.agent, sessionId: context.ctx.op.id, arguments: args };
        const approved = await this.request(request, { signal: context.signal });
        return approved ? tool.execute(args, context) : `Not approved: the use of \`${tool.name}\` was denied.`;
      },
    });
  }

  /** Forget the decisions remembered for one session. */
  forgetSession(sessionId: string): void {
    for (const key of [...this.#session.keys()]) if (key.startsWith(`${sessionId}\u0000`)) this.#session.delete(key);
  }

  /** Forget every remembered decision. */
  forgetAll(): void {
    this.#session.clear();
    this.#global.clear();
  }

  #remembered(request: ApprovalRequest): boolean | undefined {
    return this.#session.get(sessionKey(request)) ?? this.#global.get(request.tool);
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    for (let item = this.#queue.shift(); item; item = this.#queue.shift()) {
      this.#busy = true;
      try {
        const known = this.#remembered(item.request);
        if (known !== undefined) {
          item.resolve(known);
          continue;
        }
        const signal = item.signal ?? new AbortController().signal;
        const decision = await this.#handler(item.request, signal);
        const scope = decision.scope ?? 'once';
        if (scope === 'session') this.#session.set(sessionKey(item.request), decision.approved);
        if (scope === 'global') this.#global.set(item.request.tool, decision.approved);
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

function sessionKey(request: ApprovalRequest): string {
  return `${request.sessionId ?? request.agent}\u0000${request.tool}`;
}

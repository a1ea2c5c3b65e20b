/**
 * Approvals: a person decides whether a tool call runs. The approval queue
 * takes requests from any worker to the application's handler one at a
 * time, and its {@link ApprovalQueue.guardrail} is the tool guardrail that
 * asks it: on a guarded runnable (`withGuardrails(flow, { tools:
 * [approvals.guardrail()] })`) or a plan (`approvals`), every tool call of
 * everything under it asks — nested agents, every pattern, every plan chunk,
 * a plan's `runChunk` — as guardrails are inherited along the op tree. A decision holds for one call
 * (`once`), for the orchestration the call belongs to (`session`: the plan,
 * coordination or planning session, remembered in a store so that every
 * process of that orchestration sees it) or for this process (`global`,
 * kept by the queue). Tools carry a risk level; read-only tools are
 * approved without asking, dangerous ones are asked about every time.
 * @module
 */
import { defined } from '../core/defined.js';
import { EventEmitter } from 'eventemitter3';
import { abortError } from '../core/clock.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineToolGuardrail, type ToolGuardrail, type ToolGuardrailDecision } from '../core/guardrails.js';
import { check, defineOptions, func, listOf, oneOf, required, store as storeCheck, string } from '../core/options.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { memoryStore } from '../core/memory-store.js';
import type { Store } from '../core/store.js';

/**
 * How long a decision holds: `once` this call; `session` the orchestration
 * the call belongs to (a plan, a coordination, a planning session: every
 * worker of it); `global` this process (as long as the queue lives).
 */
export type ApprovalScope = 'once' | 'session' | 'global';

/**
 * How much harm a tool can do: `read-only` tools only read (approved
 * without asking, by default), `writes` tools change files or state (asked
 * once per scope), `dangerous` tools can do harm that is hard to undo
 * (asked about every call: a decision on them is never remembered).
 */
export type ToolRisk = 'read-only' | 'writes' | 'dangerous';

/** Every risk level, from least to most harmful. */
export const toolRisks: readonly ToolRisk[] = ['read-only', 'writes', 'dangerous'];

/** A worker asks to use a tool. */
export interface ApprovalRequest {
  /** The tool. */
  tool: string;
  /** The worker (agent) asking. */
  agent: string;
  /** The worker's session (its agent op; `guard` sets it), for the handler to show. */
  sessionId?: string;
  /** The run the worker belongs to (`guard` sets it). */
  runId?: string;
  /**
   * The orchestration the call belongs to: a `session` decision holds for
   * every call of it. Default: the run (`runId`), which is the orchestration
   * of a plan, a coordination or a planning session's execution.
   */
  orchestrationId?: string;
  /** The tool's risk level. Default: `writes`. */
  risk?: ToolRisk;
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
   * Where `session` decisions (per orchestration) are remembered, under
   * `approvals/`. Default: a memory store of this queue. Give a shared store
   * (a file or Redis store, namespaced per tenant) so that every process of
   * an orchestration (the workers of a queue-backed executor) sees them.
   * `global` decisions stay in this queue: they hold for this process.
   */
  store?: Store;
  /** Risk levels approved without asking the handler. Default: `['read-only']`; `[]` asks about every tool. */
  autoApprove?: readonly ToolRisk[];
}

/** How a request was decided: by the handler, by a remembered decision, or automatically for its risk level. */
export type ApprovalSource = 'handler' | 'remembered' | 'auto';

/** Events of an {@link ApprovalQueue}. */
export interface ApprovalQueueEvents {
  /** The number of requests waiting for a decision (including the one being decided). */
  pending: (count: number) => void;
  /** A request was decided: `approved`, and by whom (`source`). */
  decided: (request: ApprovalRequest, approved: boolean, source: ApprovalSource) => void;
}

/** Options of {@link ApprovalQueue.guard}. */
export interface GuardOptions {
  /** The tool's risk level. Default: `writes`. */
  risk?: ToolRisk;
}

/** Options of {@link ApprovalQueue.guardrail}. */
export interface ApprovalGuardrailOptions {
  /** The risk level of each tool, by name (see {@link ToolRisk}). Default: `writes`. */
  risks?: Record<string, ToolRisk>;
  /** The tools it asks about, by name. Default: every tool. */
  tools?: readonly string[];
}

const riskLevel = oneOf(toolRisks);

/** A risk level by tool name. */
const riskMap = (name: string, value: unknown): void => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to map tool names to risk levels, got ${describeValue(value)}`);
  for (const [tool, risk] of Object.entries(value)) riskLevel(`${name}.${tool}`, risk);
};

const approvalQueueOptions = defineOptions<ApprovalQueueOptions>('ApprovalQueue', {
  handler: required(func),
  store: storeCheck,
  autoApprove: listOf(riskLevel),
});
const guardOptions = defineOptions<GuardOptions>('ApprovalQueue.guard', { risk: riskLevel });
const guardrailOptions = defineOptions<ApprovalGuardrailOptions>('ApprovalQueue.guardrail', { risks: riskMap, tools: listOf(string) });

/** Whether `value` is an {@link ApprovalQueue} (an option that takes one checks this). */
export const approvalQueue = check('an ApprovalQueue', (v) => v instanceof ApprovalQueue);

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
  readonly #autoApprove: ReadonlySet<ToolRisk>;
  /** `global` decisions: this process, as long as the queue lives. */
  readonly #global = new Map<string, boolean>();
  #busy = false;

  constructor(options: ApprovalQueueOptions) {
    super();
    if (options === undefined) throw new ConfigurationError('Expected the options of ApprovalQueue to be an object with a `handler`, got undefined');
    approvalQueueOptions.check(options);
    this.#handler = options.handler;
    this.#store = options.store ?? memoryStore();
    this.#autoApprove = new Set(options.autoApprove ?? ['read-only']);
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
    if (request?.risk !== undefined && !toolRisks.includes(request.risk)) {
      throw new ConfigurationError(`Expected \`risk\` to be one of ${toolRisks.join(', ')}, got ${describeValue(request.risk)}`);
    }
    if (this.#autoApprove.has(request.risk ?? 'writes')) return this.#decided(request, true, 'auto');
    const known = await this.#remembered(request, options.signal);
    if (known !== undefined) return this.#decided(request, known, 'remembered');
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
   * The tool guardrail that asks this queue before each tool call (of
   * `tools`, default every tool): a call is allowed when the request is
   * approved, refused otherwise (the tool does not run; the model is told
   * `Not approved: ...`). The request names the calling agent, its session
   * (the agent's op), its run (the orchestration a `session` decision holds
   * for), the tool's risk level (`risks`, default `writes`) and the
   * arguments. Put it on any runnable (`withGuardrails`); a plan with
   * `approvals` puts it on every chunk, whatever runs it.
   *
   * @example
   * ```ts
   * const guarded = withGuardrails(team({ members }), { tools: [approvals.guardrail({ risks: { read_file: 'read-only', rm: 'dangerous' } })] });
   * ```
   */
  guardrail(options: ApprovalGuardrailOptions = {}): ToolGuardrail {
    guardrailOptions.check(options);
    const risks = options.risks ?? {};
    return defineToolGuardrail({
      name: 'approvals',
      ...(options.tools === undefined ? {} : { tools: [...options.tools] }),
      beforeCall: async (call, { ctx, agent, signal }): Promise<ToolGuardrailDecision> => {
        const risk = Object.hasOwn(risks, call.name) ? risks[call.name] : undefined;
        const request: ApprovalRequest = { tool: call.name, agent, sessionId: ctx.op.id, runId: ctx.runId, toolCallId: call.id, arguments: call.arguments, ...defined({ risk }) };
        const approved = await this.request(request, { signal, ctx });
        return approved ? { action: 'allow' } : { action: 'refuse', message: `Not approved: the use of \`${call.name}\` was denied.` };
      },
    });
  }

  /**
   * The same tool, asking this queue before every call: {@link ApprovalQueue.guardrail}
   * for one tool, wherever the tool goes (for a tool handed to an agent
   * whose runnable is not guarded). A denied call does not run and the
   * model is told so.
   *
   * @example
   * ```ts
   * const agentWithApprovals = agent({ name: 'ops', tools: [approvals.guard(deploy, { risk: 'dangerous' })] });
   * ```
   */
  guard<Args>(tool: ToolDefinition<Args>, options: GuardOptions = {}): ToolDefinition<Args> {
    guardOptions.check(options, '', 'ApprovalQueue.guard');
    const asks = this.guardrail(options.risk === undefined ? {} : { risks: { [tool.name]: options.risk } });
    return defineTool<Args>({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      execute: async (args, context) => {
        const decision = await asks.beforeCall!({ id: context.callId, name: tool.name, arguments: args }, { ctx: context.ctx, agent: context.agent, signal: context.signal });
        return decision.action === 'allow' ? tool.execute(args, context) : decision.action === 'refuse' ? decision.message : decision.reason;
      },
    });
  }

  /** Forget the `session` decisions of one orchestration (a run id, or the `orchestrationId` of the requests). */
  async forgetOrchestration(orchestrationId: string): Promise<void> {
    const prefix = `${SESSION_PREFIX}${encodeURIComponent(orchestrationId)}/`;
    for (const key of await this.#store.list(prefix)) await this.#store.delete(key);
  }

  /** Forget every remembered decision: the `global` ones and the `session` ones in the store. */
  async forgetAll(): Promise<void> {
    this.#global.clear();
    for (const key of await this.#store.list(DECISIONS_PREFIX)) await this.#store.delete(key);
  }

  /** An orchestration's decision wins over a process-wide one; `dangerous` tools have none. */
  async #remembered(request: ApprovalRequest, signal: AbortSignal | undefined): Promise<boolean | undefined> {
    if (request.risk === 'dangerous') return undefined;
    const value = await this.#store.get(orchestrationKey(request), signal ? { signal } : {});
    if (typeof value === 'boolean') return value;
    return this.#global.get(request.tool);
  }

  async #remember(request: ApprovalRequest, scope: ApprovalScope, approved: boolean): Promise<void> {
    if (scope === 'once' || request.risk === 'dangerous') return;
    if (scope === 'global') this.#global.set(request.tool, approved);
    else await this.#store.set(orchestrationKey(request), approved);
  }

  #decided(request: ApprovalRequest, approved: boolean, source: ApprovalSource): boolean {
    this.emit('decided', request, approved, source);
    return approved;
  }

  async #drain(): Promise<void> {
    if (this.#busy) return;
    for (let item = this.#queue.shift(); item; item = this.#queue.shift()) {
      this.#busy = true;
      try {
        const known = await this.#remembered(item.request, item.signal);
        if (known !== undefined) {
          item.resolve(this.#decided(item.request, known, 'remembered'));
          continue;
        }
        const signal = item.signal ?? new AbortController().signal;
        const decision = await this.#handler(item.request, signal, item.ctx);
        if (typeof decision?.approved !== 'boolean') throw new ConfigurationError(`Expected the approval handler to return { approved: boolean, scope? }, got ${describeValue(decision)}`);
        const scope = decision.scope ?? 'once';
        if (!['once', 'session', 'global'].includes(scope)) throw new ConfigurationError(`Expected the decision's \`scope\` to be once, session or global, got ${describeValue(scope)}`);
        await this.#remember(item.request, scope, decision.approved);
        item.resolve(this.#decided(item.request, decision.approved, 'handler'));
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
const SESSION_PREFIX = 'approvals/orchestration/';

/**
 * The one place that says what the `session` scope covers: the store key
 * of a decision on this tool in this orchestration (`orchestrationId`, else
 * the run; a request with neither is its own orchestration, `-`). `global`
 * decisions are keyed by the tool alone, in the queue.
 */
function orchestrationKey(request: ApprovalRequest): string {
  const orchestration = encodeURIComponent(request.orchestrationId ?? request.runId ?? '-');
  return `${SESSION_PREFIX}${orchestration}/${encodeURIComponent(request.tool)}`;
}

/**
 * The first runnable: a named agent with a system prompt, a model, an
 * adapter and tools.
 * @module
 */
import { CLI_SYSTEM_PROMPT_KEY, CLI_TOOLS_KEY, MCP_SERVERS_KEY, type CliToolList, type ConversationMessage, type ModelAdapter, type ModelSession, type SessionSpec } from '../core/adapter.js';
import { withTimeout } from '../core/abort.js';
import { validateBudget, type Budget } from '../core/budget.js';
import { ContextWindow, validateContextBudget, type ContextBudget, type ContextInputKind } from '../core/context-window.js';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import { defineOptions, check, either, listOf, nonEmptyString, object, oneOf, positiveInteger, positiveNumber, required, string, adapter as adapterCheck } from '../core/options.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { SessionHandle, openSession, type SendGuard, type SessionHandleOptions } from '../core/session.js';
import { haltOnDivergence, runToolLoop, type ToolLoopOptions, type ToolLoopResult } from '../core/tool-loop.js';
import { enabledTools, toToolSchema, type ToolDefinition } from '../core/tools.js';
import { sendGuard } from '../core/guard-scope.js';
import { recordSession } from '../core/turn-record.js';
import { openWithModelFallback } from './model-fallback.js';
import { defined } from '../core/defined.js';
import { checkMemories, openWorkingMemory, type WorkingMemory } from './working-memory.js';

/** Options of {@link agent}. */
export interface AgentOptions {
  /** Unique name; it is also the terminal agent of its outcomes. */
  name: string;
  /** One line on what the agent does (for routers, planners and the CLI). */
  description?: string;
  /** The system prompt. */
  system?: string;
  /** The model; the adapter's default when absent. */
  model?: string;
  /**
   * Models to fall back on, in order of preference (after `model`, which
   * defaults to the first): when a session's first turn fails with an
   * `AdapterError`, the session is reopened on the next model and the input
   * sent again (a `warning` event with code `model_fallback` says so). Once
   * a turn has succeeded the model stays. Default: none.
   */
  models?: string[];
  /** The adapter, or the name of one registered with `run(..., { adapters })`. Default: the run's `adapter`. */
  adapter?: ModelAdapter | string;
  /** Tools the agent may call. */
  tools?: ToolDefinition[];
  /** Sampling temperature. */
  temperature?: number;
  /** Most model turns in one tool loop. Default: 10. */
  maxTurns?: number;
  /** Time limit of one run of the agent, in ms. Default: none. */
  timeoutMs?: number;
  /** A working directory for adapters that act on files. */
  workspace?: string;
  /**
   * Free-form data handed to the adapter. `metadata[MCP_SERVERS_KEY]` (the
   * agent's own MCP servers) on an adapter that does not start them gives
   * a `warning` event (`mcp_servers_unused`) each time a session opens.
   */
  metadata?: Record<string, unknown>;
  /**
   * What the agent gets of the coding-agent CLI it runs on (the process
   * adapter's profiles): the CLI's own tools and how its system prompt
   * reaches the CLI. Adapters that are not a CLI ignore it. Default: no
   * tool of the CLI's own, the system prompt appended to the CLI's.
   */
  cli?: AgentCliOptions;
  /**
   * A budget for each run of the agent (tokens, cost, model calls, time;
   * see `Budget`), on top of every enclosing one. When it runs out the
   * agent's op ends with status `budget-exhausted` and a
   * `BudgetExhaustedError` carrying its last answer. Patterns that run
   * the agent as a member (an orchestration's worker) give the budget to
   * the member's op. Default: none.
   */
  budget?: Budget;
  /**
   * A context budget for the agent's sessions: before a turn that would
   * send more tokens than `maxTokens`, older turns are compacted (see
   * `ContextBudget`). Default: none (the whole conversation is sent).
   */
  context?: ContextBudget;
  /**
   * The agent's working memory (see `workingMemory`), or several: kept per
   * thread or per resource in the run's store, given to the agent in its
   * system prompt when its conversation opens, changed through the tool
   * `update_<name>` (a JSON patch or a whole value, checked against the
   * schema, written with compare-and-set). Needs a run with a `store`, and
   * a `thread` or `resource` for the memory's scope. Default: none.
   */
  memory?: WorkingMemory | readonly WorkingMemory[];
}

/**
 * What an agent gets of the coding-agent CLI it runs on. It reaches the
 * adapter in the session's metadata ({@link CLI_TOOLS_KEY},
 * {@link CLI_SYSTEM_PROMPT_KEY}); the built-in profiles of the process
 * adapter map it onto the CLI's own switches.
 *
 * @example
 * ```ts
 * // A lead that only delegates: no tool of the CLI, troupe's tools over MCP, a one-line system prompt of its own.
 * agent({ name: 'lead', system: 'You plan and delegate.', adapter: claude, cli: { systemPrompt: 'replace' } });
 * // A coder: exactly read, edit and shell of the CLI (Claude Code: Read, Edit, Write, Bash).
 * agent({ name: 'coder', adapter: claude, cli: { tools: ['read', 'edit', 'execute'] } });
 * ```
 */
export interface AgentCliOptions {
  /**
   * The CLI's own tools the agent may use, by the CLI's names (`Read`,
   * `Bash(git *)`, `view`, `exec_command`) or the aliases every profile
   * knows (`read`, `edit`, `search`, `execute`, `web`): exactly these;
   * `[]` for none; `'all'` for every tool of the CLI. A name the CLI does
   * not have gives a `warning` event (`unknown_cli_tool`). troupe's own
   * tools (the agent's `tools`, `delegate_to_worker`, ...) reach the CLI
   * over MCP whatever this says. Default: none (the profile's
   * `defaultCliTools`).
   */
  tools?: readonly string[] | 'all';
  /** The CLI's tools the agent may never use, whatever `tools` says. Default: none. */
  disallowedTools?: readonly string[];
  /**
   * How the agent's system prompt reaches the CLI: `append`ed to the
   * CLI's own system prompt, or `replace`-ing it (the CLI's own prompt,
   * written for its own tools and habits, is then not sent). Default: the
   * profile's `systemPrompt` (`append`).
   */
  systemPrompt?: 'append' | 'replace';
}

const names = listOf(nonEmptyString);
/** The description of {@link AgentCliOptions}. */
const agentCliOptions = defineOptions<AgentCliOptions>('agent', {
  tools: check("a list of tool names or 'all'", (v) => v === 'all' || (Array.isArray(v) && v.every((t) => typeof t === 'string' && t !== ''))),
  disallowedTools: names,
  systemPrompt: oneOf(['append', 'replace']),
});

/** The session metadata that carries `cli` ({@link CLI_TOOLS_KEY}, {@link CLI_SYSTEM_PROMPT_KEY}) over `metadata`. */
/** The description {@link agent} checks its options against. */
const agentOptions = defineOptions<AgentOptions>('agent', {
  name: required(check('a non-empty string', (v) => typeof v === 'string' && v.trim() !== '')),
  description: string,
  system: string,
  model: nonEmptyString,
  models: check('a list of non-empty strings', (v) => Array.isArray(v) && v.every((m) => typeof m === 'string' && m !== '')),
  adapter: either('a model adapter or the name of one', adapterCheck, nonEmptyString),
  tools: listOf(check('a tool (from defineTool)', (v) => typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string')),
  temperature: check('a non-negative number', (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0),
  maxTurns: positiveInteger,
  timeoutMs: positiveNumber,
  workspace: string,
  metadata: object,
  cli: agentCliOptions,
  budget: (name, value) => void validateBudget(name, value as Budget | undefined),
  context: (name, value) => void validateContextBudget(name, value as ContextBudget | undefined),
  memory: checkMemories,
});

function cliMetadata(cli: AgentCliOptions | undefined, metadata: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (cli === undefined || (cli.tools === undefined && cli.disallowedTools === undefined && cli.systemPrompt === undefined)) return metadata;
  const out: Record<string, unknown> = { ...metadata };
  if (cli.tools !== undefined || cli.disallowedTools !== undefined) {
    const list: CliToolList = { disallowed: [...(cli.disallowedTools ?? [])] };
    if (cli.tools !== undefined) list.allowed = cli.tools === 'all' ? ['*'] : [...cli.tools];
    out[CLI_TOOLS_KEY] = list;
  }
  if (cli.systemPrompt !== undefined) out[CLI_SYSTEM_PROMPT_KEY] = cli.systemPrompt;
  return out;
}

/** How a message is labelled for compaction: see {@link ContextWindow.label}. */
export interface ConversationContextLabel {
  /** `results` (worker results) are dropped before other messages of earlier iterations. Default: `message`. */
  kind?: ContextInputKind;
  /** Messages of one iteration are one exchange, kept or compacted together. Default: each message is its own. */
  iteration?: number;
}

/** One reply of a {@link Conversation}. */
export type ConversationReply = ToolLoopResult;

/** A session with an agent that stays open across several messages. */
export interface Conversation {
  /** The agent's name. */
  readonly agent: string;
  /** The underlying handle. */
  readonly handle: SessionHandle;
  /** Send a message and run the tool loop to the final answer. */
  send(input: string, options?: { signal?: AbortSignal; tools?: ToolDefinition[]; context?: ConversationContextLabel }): Promise<ConversationReply>;
  /** Close the session. */
  close(): Promise<void>;
}

/** What {@link Agent.converse} accepts to adjust the session. */
export interface ConverseOptions {
  /** Extra tools for this conversation (for protocol tools such as `route_to`). */
  extraTools?: ToolDefinition[];
  /** Replace the system prompt for this conversation. */
  system?: string;
  /** Override the workspace. */
  workspace?: string;
  /**
   * Earlier messages the conversation continues, oldest first (the
   * session's `history`). Default: a run's thread gives its history to
   * the first conversation opened in the run (its entry agent); any other
   * starts new. Under a context budget they are compacted like earlier
   * turns.
   */
  history?: ConversationMessage[];
}

/** A runnable agent, which can also hold a multi-message {@link Conversation}. */
export interface Agent extends Runnable<Outcome> {
  /** Always `agent`. */
  readonly kind: 'agent';
  /** The options it was created with (validated, defaults applied). */
  readonly options: Readonly<AgentOptions> & { readonly maxTurns: number };
  /** The adapter this agent would use in `ctx`. */
  resolveAdapter(ctx: RunContext): ModelAdapter;
  /** Open a session that stays open across messages. Close it when done. */
  converse(ctx: RunContext, options?: ConverseOptions): Promise<Conversation>;
}

/**
 * Create an agent.
 *
 * @example
 * ```ts
 * const helper = agent({ name: 'helper', system: 'Answer briefly.' });
 * const { output } = await run(helper, 'What is 2 + 2?', { adapter });
 * ```
 */
export function agent(options: AgentOptions): Agent {
  const opts = validateAgentOptions(options);
  const runnable = defineRunnable<Outcome>({
    name: opts.name,
    kind: 'agent',
    agent: opts.name,
    ...defined({ budget: opts.budget }),
    async run(input, ctx) {
      ctx.emit('agent.started', { agent: opts.name, input });
      let conversation: Conversation | undefined;
      try {
        conversation = await self.converse(ctx);
        const reply = await conversation.send(input);
        ctx.emit('agent.completed', { agent: opts.name, output: reply.text, turns: reply.turns, usage: reply.usage });
        return { output: reply.text, agent: opts.name, status: 'completed' };
      } catch (error) {
        ctx.emit('agent.failed', {
          agent: opts.name,
          error: errorMessage(error),
          ...(isTroupeError(error) ? { code: error.code } : {}),
        });
        throw error;
      } finally {
        await conversation?.close().catch(() => undefined);
      }
    },
  });
  const self: Agent = {
    ...runnable,
    kind: 'agent',
    options: opts,
    resolveAdapter(ctx) {
      return resolveAdapter(ctx, opts.adapter, opts.name);
    },
    async converse(ctx, converse = {}) {
      const adapter = self.resolveAdapter(ctx);
      // The working memory goes into the system prompt, its update tools beside the agent's own.
      const memories = memoriesOf(opts);
      const memory = memories.length === 0 ? undefined : await openWorkingMemory(memories, ctx, opts.name, converse.system ?? opts.system);
      const tools = await enabledTools([...(opts.tools ?? []), ...(memory?.tools ?? []), ...(converse.extraTools ?? [])], ctx, opts.name);
      if (tools.length > 0 && !adapter.capabilities.tools) {
        throw new ConfigurationError(
          `Agent "${opts.name}" has tools but adapter "${adapter.id}" does not support tools`,
          { details: { agent: opts.name, adapter: adapter.id } },
        );
      }
      const spec = sessionSpec(opts, memory === undefined ? converse : { ...converse, ...defined({ system: memory.system }) }, adapter, ctx);
      if (tools.length > 0) spec.tools = tools.map((t) => toToolSchema(t));
      // The run's entry agent continues its thread's conversation.
      const history = converse.history ?? ctx.takeThreadHistory();
      const { handle, window } = await openAgentSession(opts, adapter, spec, ctx, history);
      return {
        agent: opts.name,
        handle,
        send(input, sendOptions = {}) {
          window?.label(sendOptions.context ?? {});
          const loop = (signal: AbortSignal) => {
            // The loop only reads its tools: the conversation's own list serves when the send adds none.
            const options: ToolLoopOptions = { ctx, agent: opts.name, tools: sendOptions.tools === undefined ? tools : [...tools, ...sendOptions.tools], maxTurns: opts.maxTurns, signal };
            if (window) options.promptTokens = (next) => window.projected(next);
            return runToolLoop(handle, input, options);
          };
          const signal = sendOptions.signal ?? ctx.signal;
          if (opts.timeoutMs === undefined) return loop(signal);
          return withTimeout(loop, { signal, clock: ctx.clock, timeoutMs: opts.timeoutMs, message: `Agent "${opts.name}" timed out after ${opts.timeoutMs} ms` });
        },
        close: () => handle.close(),
      };
    },
  };
  return self;
}

/** An agent's options with their defaults. */
type ResolvedAgentOptions = AgentOptions & { maxTurns: number };

/** The session spec of an agent's conversation (its tools are added by the caller); warns when the adapter will not start the agent's MCP servers. */
function sessionSpec(opts: ResolvedAgentOptions, converse: ConverseOptions, adapter: ModelAdapter, ctx: RunContext): SessionSpec {
  const spec: SessionSpec = { agent: opts.name };
  const system = converse.system ?? opts.system;
  if (system !== undefined) spec.system = system;
  const model = opts.model ?? opts.models?.[0];
  if (model !== undefined) spec.model = model;
  if (opts.temperature !== undefined) spec.temperature = opts.temperature;
  const workspace = converse.workspace ?? opts.workspace;
  if (workspace !== undefined) spec.workspace = workspace;
  const metadata = cliMetadata(opts.cli, opts.metadata);
  if (metadata !== undefined) spec.metadata = metadata;
  const servers = opts.metadata?.[MCP_SERVERS_KEY];
  if (Array.isArray(servers) && servers.length > 0 && adapter.capabilities.mcpServers !== true) {
    const names = servers.map((s: { name?: unknown }) => String(s?.name)).join(', ');
    ctx.emit('warning', {
      message: `Agent "${opts.name}": its MCP servers (${names}) are not started: adapter "${adapter.id}" does not start an agent's own MCP servers`,
      code: 'mcp_servers_unused',
      data: { agent: opts.name, adapter: adapter.id },
    });
  }
  return spec;
}

/**
 * Open the agent's session, recorded (every turn a `model.turn` event, so a
 * run log can be replayed), with model fallback when it lists several
 * models, and behind a context window when it has a context budget.
 */
async function openAgentSession(
  opts: ResolvedAgentOptions, adapter: ModelAdapter, spec: SessionSpec, ctx: RunContext, history: ConversationMessage[] | undefined,
): Promise<{ handle: SessionHandle; window: ContextWindow | undefined }> {
  const withHistory = (messages: ConversationMessage[] | undefined): SessionSpec => (messages && messages.length > 0 ? { ...spec, history: messages } : spec);
  const guard = sendGuard(ctx, opts.name);
  // One model and no context budget (the common case): one recorded session, opened at once.
  if (!opts.context && !hasFallbackModels(opts)) {
    const { session } = await openRecordedSession(opts.name, adapter, withHistory(history), ctx, ctx.signal);
    return { handle: agentSessionHandle(opts.name, adapter, session, ctx, guard), window: undefined };
  }
  let lastOrdinal = 0;
  const openOrdinal = (sessionSpec: SessionSpec, signal: AbortSignal | undefined) => {
    lastOrdinal = ctx.nextSessionOrdinal(opts.name);
    return openRecordedSession(opts.name, adapter, sessionSpec, ctx, signal, lastOrdinal);
  };
  const openRecorded = async (sessionSpec: SessionSpec, signal: AbortSignal | undefined) => (await openOrdinal(sessionSpec, signal)).session;
  const models = modelList(opts);
  let lastModel = spec.model;
  const open = (opened: SessionSpec): Promise<ModelSession> =>
    models.length > 1
      ? openWithModelFallback(models, (model, signal) => openRecorded({ ...opened, model: (lastModel = model) }, signal ?? ctx.signal), ctx.signal, ({ from, to, error }) =>
          ctx.emit('warning', {
            message: `Agent "${opts.name}": model "${from}" failed (${error.message}); trying "${to}"`,
            code: 'model_fallback',
            data: { agent: opts.name, from, to },
          }),
        )
      : openRecorded(opened, ctx.signal);
  // A compacted conversation continues in a new session on the model the first one settled on, its history in the first message.
  const window = opts.context
    ? new ContextWindow({
        budget: opts.context, agent: opts.name, system: spec.system, ctx, contextUsage: adapter.capabilities.contextUsage === true,
        reopen: (signal) => openOrdinal({ ...spec, ...(lastModel === undefined ? {} : { model: lastModel }) }, signal ?? ctx.signal),
        ...(history && history.length > 0 ? { history } : {}),
      })
    : undefined;
  let session: ModelSession;
  if (window && history && history.length > 0) {
    // A continued conversation under a context budget opens on its first send, its history fitted to the budget first.
    session = window.deferred(async (fitted) => ({ session: await open(withHistory(fitted)), ordinal: lastOrdinal }));
  } else {
    const opened = await open(withHistory(history));
    session = window ? window.wrap(opened) : opened;
  }
  return { handle: agentSessionHandle(opts.name, adapter, session, ctx, guard), window };
}

/**
 * Open a session of `agent` on `adapter`, recorded (every turn a
 * `model.turn` event) as the agent's session number `ordinal` (default:
 * its next in the run). A replay that diverged on opening halts the run.
 */
async function openRecordedSession(
  agent: string, adapter: ModelAdapter, spec: SessionSpec, ctx: RunContext, signal: AbortSignal | undefined, ordinal = ctx.nextSessionOrdinal(agent),
): Promise<{ session: ModelSession; ordinal: number }> {
  let opened: ModelSession;
  try {
    opened = await openSession(adapter, spec, signal === undefined ? {} : { signal });
  } catch (error) {
    haltOnDivergence(ctx, error);
    throw error;
  }
  const session = recordSession(opened, { adapter: adapter.id, session: ordinal, spec }, (record) => ctx.emit('model.turn', record));
  return { session, ordinal };
}

/** The handle of an agent's session: its events are the run's `session.event`s, and what the adapter could not do as asked a `warning`. */
function agentSessionHandle(agent: string, adapter: ModelAdapter, session: ModelSession, ctx: RunContext, guard: SendGuard | undefined): SessionHandle {
  const options: SessionHandleOptions = {
    agent,
    onEvent: (event, sessionId) => {
      // What the adapter could not do as asked (a CLI tool it does not have, ...) is a warning of the run.
      if (event.type === 'warning') ctx.emit('warning', { message: event.message, code: event.code, data: { agent, adapter: adapter.id, ...(isRecord(event.data) ? event.data : {}) } });
      ctx.emit('session.event', { agent, sessionId, event });
    },
  };
  if (guard !== undefined) options.guard = guard;
  return new SessionHandle(session, options);
}

/** The adapter for `choice` in `ctx`: an adapter object, a registered name, or the run's default. */
export function resolveAdapter(ctx: RunContext, choice: ModelAdapter | string | undefined, agentName: string): ModelAdapter {
  if (choice !== undefined && typeof choice !== 'string') return choice;
  if (typeof choice === 'string') {
    const found = ctx.adapters[choice];
    if (!found) {
      const known = Object.keys(ctx.adapters);
      throw new ConfigurationError(
        `Agent "${agentName}" names adapter "${choice}", which is not registered` +
          (known.length ? ` (registered: ${known.join(', ')})` : ' (pass `adapters` to run())'),
        { code: 'unknown_adapter', details: { agent: agentName, adapter: choice } },
      );
    }
    return found;
  }
  if (!ctx.defaultAdapter) {
    throw new ConfigurationError(`Agent "${agentName}" has no adapter: pass \`adapter\` to agent() or to run()`, {
      code: 'unknown_adapter',
      details: { agent: agentName },
    });
  }
  return ctx.defaultAdapter;
}

function validateAgentOptions(options: AgentOptions): ResolvedAgentOptions {
  if (!options || typeof options !== 'object') {
    throw new ConfigurationError(`Expected agent options to be an object, got ${describeValue(options)}`);
  }
  agentOptions.check(options);
  const maxTurns = options.maxTurns ?? 10;
  const names = new Set<string>();
  for (const t of options.tools ?? []) {
    if (names.has(t.name)) throw new ConfigurationError(`Agent "${options.name}" declares tool "${t.name}" twice`);
    names.add(t.name);
  }
  return { ...options, maxTurns };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const noMemories: readonly WorkingMemory[] = [];

/** The agent's working memories, as a list. */
function memoriesOf(opts: AgentOptions): readonly WorkingMemory[] {
  const memory = opts.memory;
  return memory === undefined ? noMemories : Array.isArray(memory) ? (memory as readonly WorkingMemory[]) : [memory as WorkingMemory];
}

/** True when the agent has models to fall back on: {@link modelList} gives more than one. */
function hasFallbackModels(opts: AgentOptions): boolean {
  return opts.models !== undefined && opts.models.length > 0 && modelList(opts).length > 1;
}

/** The models to try in order: `model` (default: the first of `models`), then the rest of `models`. */
function modelList(opts: AgentOptions): string[] {
  const list = [...(opts.model === undefined ? [] : [opts.model]), ...(opts.models ?? [])];
  return [...new Set(list)];
}

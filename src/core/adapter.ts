/**
 * # The model-session adapter contract
 *
 * This file is the whole contract between troupe and a model. Implement
 * {@link ModelAdapter} and every troupe pattern runs on your model: a hosted
 * API, a local server, a coding-agent CLI, or a scripted fake.
 *
 * The contract is deliberately small:
 *
 * - An adapter opens **sessions**. A session is one conversation with one
 *   agent: it keeps its own history, so each `send` carries only what is new
 *   (the user's next message, or the results of the tools the model called).
 * - A `send` returns one **turn**: the model's text and the tool calls it
 *   wants made. troupe runs the tool loop itself (execute the calls, send the
 *   results back, repeat), so an adapter never executes a tool.
 * - Tools reach the adapter as JSON Schema ({@link ToolSchema}), made from the
 *   tool's zod schema by zod's own converter. An adapter without tool support
 *   sets `capabilities.tools = false`; every troupe protocol that uses a tool
 *   has a text form (for example a line `ROUTE: billing`).
 * - Every call takes an `AbortSignal`. An adapter must stop work and reject
 *   promptly when it aborts, with `abortError(signal)`: the signal's reason
 *   when it is an `Error` (time-outs reach the adapter as aborts whose reason
 *   is a `TimeoutError`), else a `CancelledError`. `adapterSuite` checks it.
 *
 * Invariants that troupe enforces around every session (see `SessionHandle`),
 * so an adapter does not need to: one `send` at a time; the busy flag is
 * cleared before the turn's promise settles; events that arrive from a closed
 * or replaced session are dropped.
 *
 * @module
 */
import type { Usage } from './usage.js';

/** A JSON Schema object, as produced by `z.toJSONSchema`. */
export type JsonSchema = { [key: string]: unknown };

/**
 * What an adapter learns of a tool: its name, what it does, and the JSON
 * Schema of its arguments.
 */
export interface ToolSchema {
  /** Unique within a session; `[a-zA-Z0-9_-]{1,64}`. */
  readonly name: string;
  /** What the tool does, written for the model. */
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: JsonSchema;
}

/** A tool call requested by the model. */
export interface ToolCall {
  /** The adapter's id for this call; echoed back in the {@link ToolResult}. */
  id: string;
  /** The tool's name. */
  name: string;
  /**
   * The arguments, parsed from JSON when the provider sends a string. A call
   * whose arguments could not be parsed carries the raw text in `rawArguments`
   * and `arguments` undefined; troupe answers it with an error result.
   */
  arguments: unknown;
  /** The raw argument text, when the provider sent text. */
  rawArguments?: string;
}

/** The result of one tool call, sent back to the model in the next `send`. */
export interface ToolResult {
  /** The id of the {@link ToolCall} this answers. */
  callId: string;
  /** The tool's name. */
  name: string;
  /** The result as text (JSON for structured results). */
  content: string;
  /** True when the tool failed; `content` then explains the failure. */
  isError?: boolean;
}

/** One message of a conversation's history ({@link SessionSpec.history}): who said it and what. */
export interface ConversationMessage {
  /** `user`: what the agent was asked; `assistant`: what it answered. */
  role: 'user' | 'assistant';
  /** The message's text. */
  text: string;
}

/** How a session should be set up. */
export interface SessionSpec {
  /** The agent this session speaks for (used for routing in fakes and for logs). */
  agent: string;
  /** The model to use; adapters choose a default when absent. */
  model?: string;
  /** The system prompt. */
  system?: string;
  /** Tools the model may call. Empty or absent: no tools. */
  tools?: ToolSchema[];
  /**
   * Earlier messages of the conversation this session continues (a
   * thread's: `run(..., { thread })`), oldest first. The adapter gives them
   * to the model before the first `send`: a chat API as messages of the
   * conversation, an adapter that cannot (a coding-agent CLI) as well as it
   * can (in its first prompt). Absent: a new conversation.
   */
  history?: ConversationMessage[];
  /** Sampling temperature. */
  temperature?: number;
  /** A working directory for adapters that act on files (coding-agent CLIs). */
  workspace?: string;
  /**
   * Free-form data passed through to the adapter. Three keys have a
   * meaning every adapter may rely on: `cliTools` (a {@link CliToolList}),
   * `cliSystemPrompt` (`append` or `replace`) and `mcpServers` (a list of
   * {@link McpServerSpec}).
   */
  metadata?: Record<string, unknown>;
}

/**
 * The key of `SessionSpec.metadata` under which an agent that runs on a
 * coding-agent CLI carries the CLI's own tools it may use
 * ({@link CliToolList}); the process adapter's profiles turn it into the
 * CLI's own switches (`--tools` of Claude Code, ...), and its `toolArgs`
 * into arguments of a CLI without a profile. `agent({ cli: { tools } })`
 * and `compileAgents` (for an agent file run on its vendor's CLI) set it.
 * @internal
 */
export const CLI_TOOLS_KEY = 'cliTools';

/**
 * The CLI's own tools an agent may use and may not use, by the CLI's names
 * (or the aliases its profile knows: `read`, `edit`, `search`, `execute`,
 * `web`).
 */
export interface CliToolList {
  /**
   * Exactly these (`[]`: none; `*` among them: every tool of the CLI).
   * Absent: the agent names none, and gets what its adapter gives such an
   * agent (the built-in profiles: none, unless `defaultCliTools: 'all'`).
   */
  allowed?: string[];
  /** Never these, whatever `allowed` says. */
  disallowed: string[];
}

/**
 * The key of `SessionSpec.metadata` under which an agent that runs on a
 * coding-agent CLI says how its system prompt reaches the CLI: `append`
 * (after the CLI's own system prompt) or `replace` (instead of it). The
 * process adapter's profiles read it (the profile's `systemPrompt` when
 * absent); `agent({ cli: { systemPrompt } })` sets it.
 * @internal
 */
export const CLI_SYSTEM_PROMPT_KEY = 'cliSystemPrompt';

/**
 * The key of `SessionSpec.metadata` under which an agent carries its own
 * MCP servers (a list of {@link McpServerSpec}, from its file's
 * `mcpServers` / `mcp-servers`). An adapter whose
 * `capabilities.mcpServers` is true starts them for the session (the
 * process adapter's CLI profiles declare them to the CLI); others ignore
 * them, and troupe says so with a `warning` event (`mcp_servers_unused`).
 * @internal
 */
export const MCP_SERVERS_KEY = 'mcpServers';

/**
 * How to reach an MCP server: a program spoken to over stdio, or a server
 * at a URL (streamable HTTP, or the older SSE transport).
 */
export type McpServerConfig =
  | {
      type: 'stdio';
      /** The program. */
      command: string;
      /** Its arguments. */
      args?: string[];
      /** Variables set in its environment, besides what the CLI passes on. */
      env?: Record<string, string>;
      /** Only these of its tools (absent: all). */
      tools?: string[];
    }
  | {
      type: 'http' | 'sse';
      /** The server's URL. */
      url: string;
      /** Headers sent with every request. */
      headers?: Record<string, string>;
      /** Only these of its tools (absent: all). */
      tools?: string[];
    };

/** An MCP server of an agent: its name (`[A-Za-z0-9_-]{1,64}`, unique in the agent) and how to reach it. */
export type McpServerSpec = McpServerConfig & {
  /** The name the CLI knows it by (Claude Code: `mcp__<name>__<tool>`). */
  name: string;
};

/** Options of {@link ModelAdapter.openSession}. */
export interface OpenSessionOptions {
  /** Aborts the opening. The adapter should reject promptly, with `abortError(signal)`. */
  signal?: AbortSignal;
}

/** An event a session may report while a turn is in progress. */
export type SessionEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'log'; message: string; data?: unknown }
  /** Something the adapter could not do as the session asked (a CLI tool it does not have, ...); the agent reports it as a `warning` event. */
  | { type: 'warning'; message: string; code: string; data?: unknown };

/** Options of one `send`. */
export interface SendOptions {
  /** Aborts the turn. The adapter must reject promptly, with `abortError(signal)`. */
  signal?: AbortSignal;
  /** Receives streamed events while the turn runs. */
  onEvent?: (event: SessionEvent) => void;
}

/** One model turn: what the model said and which tools it wants called. */
export interface ModelTurn {
  /** The model's text; may be empty when it only calls tools. */
  text: string;
  /** Tool calls to execute before the next turn; empty when the turn is final. */
  toolCalls: ToolCall[];
  /** Tokens and cost of this turn, when known. */
  usage?: Partial<Usage>;
}

/** One conversation with one agent. */
export interface ModelSession {
  /** Unique per adapter instance. */
  readonly id: string;
  /**
   * Send the next user message, or the results of the previous turn's tool
   * calls, and return the model's next turn. Never called concurrently on
   * one session (troupe guarantees it).
   */
  send(input: string | ToolResult[], options?: SendOptions): Promise<ModelTurn>;
  /** Release resources. Called once; later sends are not made. */
  close(): Promise<void>;
}

/** What an adapter can do; patterns pick the tool or text form of their protocols from these flags. */
export interface AdapterCapabilities {
  /** The model can call tools. */
  readonly tools: boolean;
  /** The adapter reports `text-delta` events while a turn runs. */
  readonly streaming: boolean;
  /** The adapter starts an agent's own MCP servers (`metadata[MCP_SERVERS_KEY]`). Default: false. */
  readonly mcpServers?: boolean;
  /**
   * A turn's `usage.inputTokens` counts the whole context the model read
   * (system prompt, history and input), as chat APIs that re-send the
   * conversation report it; a context budget then measures with it.
   * Default: false.
   */
  readonly contextUsage?: boolean;
}

/** A source of model sessions. */
export interface ModelAdapter {
  /** A short name for logs and the CLI (`scripted`, `openai`, ...). */
  readonly id: string;
  /** What the adapter supports. */
  readonly capabilities: AdapterCapabilities;
  /** Open a new session for one agent. */
  openSession(spec: SessionSpec, options?: OpenSessionOptions): Promise<ModelSession>;
  /**
   * Optional: the names of the models this adapter can open sessions on
   * (what a `SessionSpec.model` may name). An adapter that cannot tell
   * leaves it out; callers then use model names unchecked. Squad presets
   * check their workers' models against it.
   */
  listModels?(options?: ListModelsOptions): Promise<readonly string[]>;
}

/** Options of {@link ModelAdapter.listModels}. */
export interface ListModelsOptions {
  /** Aborts the listing. The adapter should reject promptly, with `abortError(signal)`. */
  signal?: AbortSignal;
}

/**
 * Agent definitions: the data an agent file (of any format, or
 * `defineAgent`) describes, and the issues reported about it.
 * @module
 */
import type { ParseIssue, SafeParseResult as CoreSafeParseResult } from '../core/parse-result.js';

/** One problem found in an agent file or an agent graph. */
export interface AgentIssue extends ParseIssue {
  /** Which rule failed: `unknown_key`, `invalid_value`, `unknown_reference`, `cycle`, ... */
  code: string;
  /** A readable message. */
  message: string;
  /** The agent concerned, when there is one. */
  agent?: string;
  /** A key path (`['limits', 'maxTurns']`) or, for cycles, the agents on it (`['a', 'b', 'a']`). */
  path?: Array<string | number>;
  /** The file it came from, when known. */
  file?: string;
}

/** A team declared by an agent (compiled by the team pattern). */
export interface TeamDefinition {
  /** The members' names. */
  members: string[];
  /** The lead's name (files may say `coordinator`); it owns the team's answer. */
  lead?: string;
  /** How the team decides it is done (files may say `maxRounds`, `coordinatorDecides`, `lead` or `coordinator`). */
  terminationMode?: 'consensus' | 'max-rounds' | 'lead-decides';
  /** Most deliberation rounds. */
  maxRounds?: number;
  /** Members speak in turn rather than all at once. */
  turnBased?: boolean;
}

/** The file formats troupe reads agent definitions from (see `docs/agent-files.md`). */
export const AGENT_FORMATS = ['troupe', 'ai-agent', 'claude-code', 'copilot', 'opencode'] as const;

/** One of {@link AGENT_FORMATS}: troupe's own, netdata ai-agent `.ai`, Claude Code, GitHub Copilot, OpenCode. */
export type AgentFormat = (typeof AGENT_FORMATS)[number];

/**
 * A hand-off an agent may take once it has answered (GitHub Copilot's
 * `handoffs:`): the model chooses it, and unless `send` is true the person
 * confirms it first, through the approval queue.
 */
export interface HandoffChoiceDefinition {
  /** The agent that takes over. */
  agent: string;
  /** The button's text in the editor; the model chooses by it (or by the agent's name). */
  label?: string;
  /** The prompt the next agent gets with the work so far. */
  prompt?: string;
  /** True: the hand-off goes ahead without asking. Default: false (the person confirms). */
  send?: boolean;
}

/** What may happen when an agent calls a tool: it runs, the person is asked first, or it is refused. */
export type ToolDecision = 'allow' | 'ask' | 'deny';

/**
 * Which tool calls need the person's approval (Claude Code's
 * `permissionMode`, OpenCode's `permission`), by tool name as the file
 * writes it. Compiled onto the approval queue: `ask` tools go through
 * `ApprovalQueue.guard`, `deny` tools are not given to the agent.
 */
export interface ApprovalPolicy {
  /** The decision for tools not named in `tools`. Default: `allow`. */
  default?: ToolDecision;
  /** Decisions by tool name. */
  tools?: Record<string, ToolDecision>;
}

/** An MCP server an agent file asks for: a name, and its configuration when the file gives one inline. */
export interface McpServerReference {
  name: string;
  config?: Record<string, unknown>;
}

/** A validated agent definition, from a file or from {@link defineAgent}. */
export interface AgentDefinition {
  /** Unique (case-insensitive) name. */
  name: string;
  /** The system prompt (the body of an agent file). */
  system: string;
  /** One line on what the agent does. */
  description?: string;
  /** The model (the first of `models` when only a list is given). */
  model?: string;
  /** Models in order of preference. */
  models?: string[];
  /** The name of a registered adapter. */
  adapter?: string;
  /** Sampling temperature. */
  temperature?: number;
  /**
   * Names of the tools the agent may call, as the file writes them
   * (`read_file`, `Read`, `github/issue_read`, `mcp__server__tool`); `*`
   * is every tool. Resolved when compiled (see `resolveAgentTools`).
   */
  tools?: string[];
  /** Tools the agent may not call, as the file writes them. */
  disallowedTools?: string[];
  /**
   * Models named the way a coding tool names them (`sonnet`, `Claude
   * Sonnet 4.6 (copilot)`), in order of preference: resolved through the
   * app's model map, or passed as they are to that tool's own CLI; an
   * unresolved one is a warning.
   */
  modelAliases?: string[];
  /** Agents this one may call as tools (ai-agent's and Copilot's `agents:`); each runs nested in the caller's op. */
  subAgents?: string[];
  /** Hand-offs this agent may take once it has answered (Copilot's `handoffs:`). */
  handoffs?: HandoffChoiceDefinition[];
  /** How the agent is used: `primary` (the person talks to it), `subagent` (only called by others), or `all` (either). */
  mode?: 'primary' | 'subagent' | 'all';
  /** Which tool calls need the person's approval. */
  approval?: ApprovalPolicy;
  /**
   * MCP servers the file asks for, as written: started by the coding-agent
   * CLI the agent runs on, beside troupe's own (see `resolveAgentMcpServers`).
   */
  mcpServers?: McpServerReference[];
  /** Turn and time limits. */
  limits?: { maxTurns?: number; timeoutMs?: number };
  /** The agent that receives this one's output and owns the answer. */
  handoff?: string;
  /** Routes each request to one destination. */
  router?: { destinations: string[]; fallback?: string };
  /** Agents consulted before this one answers. */
  advisors?: string[];
  /** A team this agent stands for. */
  team?: TeamDefinition;
  /** A free-form role. */
  role?: string;
  /** Free-form data handed to the adapter. */
  metadata?: Record<string, unknown>;
  /** Frontmatter keys troupe does not use, kept as they were. */
  extra?: Record<string, unknown>;
  /** Warnings found while reading it (unknown keys ...). */
  warnings?: AgentIssue[];
  /** The file it was read from. */
  file?: string;
  /** The format it was read from (`troupe` for definitions made in code). */
  format?: AgentFormat;
}

/**
 * What an agent name must match: 1-64 letters, digits, `.`, `_`, `-` or
 * inner spaces, starting with a letter or digit (`devsquad.plan`, `Beast
 * Mode`). No backtracking: the last character class is fixed.
 */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._ -]{0,62}[A-Za-z0-9._-])?$/;

/** True when `name` is a valid agent name. */
export function isAgentName(name: unknown): name is string {
  return typeof name === 'string' && AGENT_NAME_PATTERN.test(name);
}

/**
 * True when a reference to another agent is a path to its file, relative to
 * the referring file (`./reviewer.ai`, `../x/y.md`): it holds a `/` or ends
 * in `.ai` or `.md`. The loader resolves such references to names.
 */
export function isPathReference(ref: string): boolean {
  return ref.includes('/') || ref.endsWith('.ai') || ref.endsWith('.md');
}

/** The result of `safeParseAgentFile`: the definition, or the issues that refused it. */
export type AgentParseResult<T> = CoreSafeParseResult<T, AgentIssue>;

/**
 * Teams as MCP tools: each runnable (an entry agent of a folder, a team, a
 * plan) is one tool that takes the request as `input`, runs it with
 * `run()`, and answers its output. While it works the client gets progress
 * notifications (an agent starts, calls a tool, answers); when the client
 * cancels the call, the run is cancelled.
 * @module
 */
import type { AgentDefinition } from '../../agents/definition.js';
import { entryAgents } from '../../agents/validate.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { abortSignal, anything, defineOptions, nonEmptyString, store as storeCheck, string, type OptionsShape } from '../../core/options.js';
import type { TroupeEvent } from '../../core/events.js';
import { run, type RunOptions } from '../../core/run.js';
import type { Runnable } from '../../core/runnable.js';
import type { Store } from '../../core/store.js';
import { createToolServer, type McpProgress, type ToolServer } from '../mcp/server.js';

/** One team served as a tool. */
export interface McpTeam {
  /** The team's name (its runnable's, or its entry agent's). */
  name: string;
  /** What it does: the tool's description. */
  description?: string;
  /** What a call runs. */
  runnable: Runnable;
  /** The tool's name. Default: `name`, with every character MCP does not allow in a tool name made `_`. */
  tool?: string;
}

/** The run options of every call (the store and the signal are the server's). */
export type McpRunOptions = Pick<RunOptions, 'adapter' | 'adapters' | 'timeoutMs' | 'maxDepth' | 'budget' | 'onEvent' | 'clock'>;

/** Options of {@link serveTeams}. */
export interface ServeTeamsOptions {
  /** The teams, one tool each. */
  teams: readonly McpTeam[];
  /** Run options of every call (the adapter ...). */
  run?: McpRunOptions;
  /** Where every call's run is logged (and checkpointed). */
  store?: Store;
  /** The server's name, reported to clients. Default: `troupe`. */
  name?: string;
  /** The server's version. Default: `1.0.0`. */
  version?: string;
  /** Aborts creating the server. */
  signal?: AbortSignal;
}

/** The longest MCP tool name clients accept. */
const MAX_TOOL_NAME = 64;

/** A tool name for `name`: letters, digits, `_` and `-` only (others become `_`), at most 64 characters. */
export function teamToolName(name: string): string {
  let out = '';
  for (const c of name.slice(0, MAX_TOOL_NAME)) out += /[A-Za-z0-9_-]/.test(c) ? c : '_';
  return out === '' ? 'team' : out;
}

const INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', minLength: 1, description: 'The request for the team, as you would give it to a person.' } },
  required: ['input'],
  additionalProperties: false,
} as const;

/** What a troupe event says to the client while a call works, if anything. */
function progressMessage(event: TroupeEvent): string | undefined {
  switch (event.type) {
    case 'op.started':
      return event.kind === 'agent' || event.kind === 'tool' ? undefined : `${event.kind} ${event.name} started`;
    case 'agent.started':
      return `${event.agent} is working`;
    case 'tool.called':
      return `${event.agent} calls ${event.call.name}`;
    case 'agent.completed':
      return `${event.agent} answered`;
    default:
      return undefined;
  }
}

const mcpRunOptions = defineOptions<McpRunOptions>('serveTeams', { adapter: anything, adapters: anything, timeoutMs: anything, maxDepth: anything, budget: anything, onEvent: anything, clock: anything });

/** The shape of {@link ServeTeamsOptions} (`teams` is checked by `serveTeams` itself; the run options by `run`). */
export const serveTeamsShape: OptionsShape<ServeTeamsOptions> = { teams: anything, run: mcpRunOptions, store: storeCheck, name: nonEmptyString, version: string, signal: abortSignal };

const serveTeamsOptions = defineOptions<ServeTeamsOptions>('serveTeams', serveTeamsShape);

/**
 * An MCP server whose tools are `teams`: a call of one runs it on the
 * call's `input` (with `run()`; logged in `store` when given) and answers
 * the output. Progress notifications follow the run (each agent that
 * starts, each tool call, each answer); cancelling the call cancels the
 * run. A failed run is an error result with the error's message. Connect
 * the server to any transport of the MCP SDK. Loads
 * `@modelcontextprotocol/sdk` (an optional peer).
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * const server = await serveTeams({ teams: [{ name: 'review-panel', description: 'Reviews a change', runnable: panel }], run: { adapter } });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export async function serveTeams(options: ServeTeamsOptions): Promise<ToolServer> {
  serveTeamsOptions.check(options);
  const byTool = checkTeams(options.teams);
  const { run: runOptions = {}, store } = options;
  return createToolServer({
    tools: [...byTool].map(([tool, team]) => ({ name: tool, description: team.description ?? `Run the troupe team ${team.name} on a request and answer with its result`, parameters: INPUT_SCHEMA })),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    async call({ name, arguments: args, signal, progress }) {
      const team = byTool.get(name)!;
      const input = args['input'];
      if (typeof input !== 'string' || input.trim() === '') return { content: `Error: expected \`input\` to be the request (a non-empty string), got ${describeValue(input)}`, isError: true };
      let step = 0;
      const report = (update: Omit<McpProgress, 'progress'>) => progress({ progress: ++step, ...update });
      report({ message: `${team.name} started` });
      const result = await run(team.runnable, input, {
        ...runOptions,
        signal,
        ...(store === undefined ? {} : { store }),
        onEvent: (event) => {
          runOptions.onEvent?.(event);
          const message = progressMessage(event);
          if (message !== undefined) report({ message });
        },
      });
      report({ message: `${team.name} finished (${result.status})` });
      return { content: result.output };
    },
  });
}

function checkTeams(teams: readonly McpTeam[]): Map<string, McpTeam> {
  if (!Array.isArray(teams) || teams.length === 0) throw new ConfigurationError(`Expected \`teams\` to be a non-empty list of { name, runnable }, got ${describeValue(teams)}`);
  const byTool = new Map<string, McpTeam>();
  for (const team of teams) {
    if (typeof team?.name !== 'string' || team.name === '' || typeof team.runnable?.run !== 'function') throw new ConfigurationError(`Expected every team to be { name, runnable }, got ${describeValue(team)}`);
    const tool = team.tool ?? teamToolName(team.name);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool)) throw new ConfigurationError(`Expected the tool name of team "${team.name}" to be 1-64 letters, digits, _ or -, got ${describeValue(tool)}`);
    if (byTool.has(tool)) throw new ConfigurationError(`Two teams would be the tool "${tool}" ("${byTool.get(tool)!.name}" and "${team.name}"): give one a \`tool\` name`);
    byTool.set(tool, team);
  }
  return byTool;
}

/**
 * The teams of an agent folder: one for each entry agent (see
 * `entryAgents`: the agents no other agent names — front desks, teams,
 * single agents), or for each of `only`, with the description of its file.
 * `flows` are the folder's compiled runnables (`compileAgents(defs)`).
 */
export function folderTeams(defs: readonly AgentDefinition[], flows: Readonly<Record<string, Runnable>>, only?: readonly string[]): McpTeam[] {
  const names = only && only.length > 0 ? [...only] : entryAgents(defs);
  return names.map((name) => {
    const def = defs.find((d) => d.name === name);
    const runnable = flows[name];
    if (!def || !runnable) throw new ConfigurationError(`Unknown agent "${name}" (agents: ${defs.map((d) => d.name).join(', ')})`, { code: 'unknown_agent' });
    const kind = def.team ? 'A team' : def.router ? 'A front desk' : 'An agent';
    return { name, runnable, description: def.description?.trim() || `${kind} of troupe: ${name}` };
  });
}

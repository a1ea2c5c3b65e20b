/**
 * `troupe serve --a2a <dir>` and `troupe mcp serve <dir>`: an agent
 * folder's entry agents and teams served to other agents, as A2A agents
 * (one per entry agent, each at `/<name>` with its card) or as MCP tools
 * (over stdio, or streamable HTTP with `--http`).
 * @module
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileAgents } from '../agents/compile.js';
import type { AgentDefinition, AgentIssue } from '../agents/definition.js';
import { entryAgents, reachableAgents, validateAgents } from '../agents/validate.js';
import type { ToolDefinition } from '../core/tools.js';
import type { ModelAdapter } from '../core/adapter.js';
import { defined } from '../core/defined.js';
import { ConfigurationError } from '../core/errors.js';
import { memoryStore } from '../core/memory-store.js';
import type { Runnable } from '../core/runnable.js';
import type { Store } from '../core/store.js';
import { a2aServer, type A2AServer } from '../integrations/a2a/server.js';
import { AGENT_CARD_PATH } from '../integrations/a2a/card.js';
import type { Authorize } from '../integrations/http/handler.js';
import { createNodeServer } from '../integrations/http/node.js';
import { askPersonTool, remoteApprovals } from '../integrations/http/remote.js';
import { folderTeams } from '../integrations/mcp-teams/teams.js';
import { mcpHttpHandler } from '../integrations/mcp-teams/http.js';
import { serveTeamsOverStdio } from '../integrations/mcp-teams/stdio.js';
import { fileStore } from '../persistence/file-store.js';
import { ApprovalQueue } from '../guardrails/approvals.js';
import { adapterLine, cliAdapterName, cliAdapters, createCliAdapter } from './adapters.js';
import { groupedWarnings, loadFolder, readModelMap, toolMapFor, where } from './agents.js';
import type { CliIo } from './io.js';

/** The help of `troupe serve`. */
export const SERVE_HELP = `Usage: troupe serve --a2a <dir> [--agent <name>] [--port <n>] [--host <host>] [--token <secret>] [--url <public URL>]
                    [--adapter <name>] [--script <file.json>] [--store <dir>] [--as <format>] [--models <map.json>] [--tool-map <map.json>]

Serve the entry agents of the agent folder <dir> (the agents no other agent
names: front desks, teams, single agents), or only --agent, as A2A agents:
each at http://<host>:<port>/<name>/, its Agent Card (name, description,
skills from the agent files) at /<name>/.well-known/agent-card.json. A
message starts a task (a troupe run); an approval or a question of the run
makes the task input-required, and the client's next message answers it.
Ctrl-C or SIGTERM cancels the running tasks and stops.

  --a2a <dir>        the agent folder
  --agent <name>     serve only this agent
  --port <n>         the port (default: 4100; 0 picks a free one)
  --host <host>      the address to listen on (default: 127.0.0.1)
  --token <secret>   require "Authorization: Bearer <secret>" (the card says so); without it, anyone who reaches the port may call
  --url <URL>        the public base URL for the cards (behind a proxy), e.g. https://agents.example.com
  --adapter <name>   ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter (see \`troupe run --help\`)
  --store <dir>      keep tasks in this file store (default: $TROUPE_STORE, else in memory)
  --tool-map <file>  a JSON tool map: tool names of the agent files to troupe serve's tools (ask_person: the
                     client's next message answers), or null to leave one out without a warning:
                     { "vscode/askQuestions": "ask_person", "read/readFile": null }`;

/** The help of `troupe mcp`. */
export const MCP_HELP = `Usage: troupe mcp serve <dir> [--agent <name>] [--http] [--port <n>] [--host <host>] [--token <secret>]
                      [--adapter <name>] [--script <file.json>] [--store <dir>] [--approve] [--as <format>] [--models <map.json>]
                      [--tool-map <map.json>]

Serve the entry agents and teams of the agent folder <dir> (or only --agent)
as MCP tools, one per agent, each taking { "input": "<the request>" } and
answering the team's result, with progress notifications while it works.
Cancelling a call cancels the run. Over stdio by default (what an MCP client
that starts the server runs: "command": "npx", "args": ["troupe", "mcp",
"serve", "<dir>"]); nothing but MCP is written to standard output.

  --http             serve streamable HTTP at http://<host>:<port>/mcp instead
  --port <n>         with --http: the port (default: 8931; 0 picks a free one)
  --host <host>      with --http: the address (default: 127.0.0.1)
  --token <secret>   with --http: require "Authorization: Bearer <secret>"
  --agent <name>     serve only this agent
  --approve          approve every request of the approval queue (tools an agent's permission mode asks for);
                     without it each is refused
  --adapter <name>   ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter (see \`troupe run --help\`)
  --store <dir>      log every run in this file store (default: $TROUPE_STORE, else no log)
  --tool-map <file>  a JSON tool map, { "<name>": null, ... }: tool names of the agent files left out without a
                     warning (troupe mcp serve has no tools of its own)`;

/** The flags both commands read. */
export interface ServeFlags {
  a2a?: string | undefined;
  agent?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  token?: string | undefined;
  url?: string | undefined;
  http?: boolean | undefined;
  approve?: boolean | undefined;
  adapter?: string | undefined;
  script?: string | undefined;
  store?: string | undefined;
  as?: string | undefined;
  models?: string | undefined;
  'tool-map'?: string | undefined;
}

/** An agent folder, loaded and checked, with its adapter and how its names resolve. */
interface Folder {
  defs: AgentDefinition[];
  adapter: ModelAdapter;
  names: string[];
  /** The command's tools, and the names of the agent files mapped to them (`--tool-map`). */
  tools: Record<string, ToolDefinition>;
  toolAliases?: Record<string, string | null>;
  modelMap?: Record<string, string>;
}

async function loadServed(dir: string, values: ServeFlags, io: CliIo, command: string, tools: Record<string, ToolDefinition>): Promise<Folder | number> {
  const loaded = await loadFolder(dir, values, io);
  if (loaded.agents.length === 0) {
    io.err(`No agent files in ${dir} (\`troupe validate --help\` lists the formats troupe reads)`);
    return 1;
  }
  const modelMap = await readModelMap(values.models);
  const toolAliases = await toolMapFor(values['tool-map'], tools, command);
  const { errors } = validateAgents(loaded.agents, { unknownTools: 'warn', ...defined({ modelMap }) });
  for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
  if (errors.length > 0) return 1;
  const names = values.agent === undefined ? entryAgents(loaded.agents) : [values.agent];
  if (values.agent !== undefined && !loaded.agents.some((d) => d.name === values.agent)) {
    io.err(`Unknown agent "${values.agent}" (agents: ${loaded.agents.map((d) => d.name).join(', ')})`);
    return 1;
  }
  if (names.length === 0) {
    io.err(`No entry agent in ${dir}: every agent is named by another; give --agent`);
    return 1;
  }
  io.err(adapterLine('troupe', values.adapter, io.env, values.script));
  const adapter = await createCliAdapter(cliAdapterName(values.adapter, io.env), { defs: loaded.agents, env: io.env, ...defined({ script: values.script, clock: io.clock }) });
  return { defs: loaded.agents, adapter, names, tools, ...defined({ toolAliases, modelMap }) };
}

/**
 * Compile the served folder; what compiles with a loss (tools and models
 * that resolve to nothing) is said on standard error, grouped, for the
 * agents the served ones reach.
 */
function compileServed(folder: Folder, approvals: ApprovalQueue, io: CliIo): Record<string, Runnable> {
  const losses: AgentIssue[] = [];
  const flows = compileAgents(folder.defs, {
    unknownTools: 'warn',
    approvals,
    tools: folder.tools,
    ...defined({ toolAliases: folder.toolAliases, modelMap: folder.modelMap }),
    onWarning: (w) => losses.push(w),
  });
  const served = new Set(folder.names.flatMap((name) => reachableAgents(folder.defs, name)));
  for (const line of groupedWarnings(folder.defs, losses.filter((w) => w.agent === undefined || served.has(w.agent)))) io.err(line);
  return flows;
}

function portOf(value: string | undefined, fallback: number): number {
  const port = Number(value ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigurationError(`Expected --port to be a port number (0-65535), got "${value}"`, { code: 'invalid_option' });
  return port;
}

/** Everyone is tenant `default`; with a token, only who sends it. */
function bearer(token: string | undefined): Authorize {
  if (token === undefined) return () => ({ tenant: 'default' });
  return (request) => (request.headers.get('authorization') === `Bearer ${token}` ? { tenant: 'default' } : { status: 401, message: 'Send Authorization: Bearer <token>' });
}

function storeOf(values: ServeFlags, io: CliIo): Store | undefined {
  const dir = values.store ?? (io.env.TROUPE_STORE || undefined);
  return dir === undefined ? undefined : fileStore(dir);
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Wait until the command is asked to stop (Ctrl-C, SIGTERM). */
function stopped(io: CliIo): Promise<void> {
  return new Promise((resolve) => {
    if (!io.signal || io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

async function closeHttp(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** `troupe serve --a2a <dir>`. */
export async function serveCommand(values: ServeFlags, io: CliIo): Promise<number> {
  if (values.a2a === undefined) {
    io.err(`Give the agent folder to serve: troupe serve --a2a <dir>\n\n${SERVE_HELP}`);
    return 2;
  }
  const folder = await loadServed(values.a2a, values, io, 'serve', { ask_person: askPersonTool() });
  if (typeof folder === 'number') return folder;
  const port = portOf(values.port, 4100);
  const host = values.host ?? '127.0.0.1';
  const store = storeOf(values, io) ?? memoryStore();
  const approvals = new ApprovalQueue({ handler: remoteApprovals() });
  const flows = compileServed(folder, approvals, io);
  const card = values.token === undefined ? {} : { securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } } };
  const servers = new Map<string, A2AServer>();
  const http = createNodeServer((request) => route(servers, request));
  const bound = await listen(http, port, host);
  const base = (values.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${bound}`).replace(/\/+$/, '');
  for (const name of folder.names) {
    servers.set(name, await a2aServer({
      runnable: flows[name] as Runnable,
      agents: { defs: folder.defs, entry: name },
      store,
      authorize: bearer(values.token),
      run: { adapter: folder.adapter },
      basePath: `/${name}`,
      url: `${base}/${name}/`,
      card,
      ...defined({ clock: io.clock }),
    }));
    io.out(`A2A agent ${name}: ${base}/${name}/ (card: ${base}/${name}${AGENT_CARD_PATH})`);
  }
  io.err(`serving ${servers.size} A2A agent${servers.size === 1 ? '' : 's'} on http://${host}:${bound}; Ctrl-C or SIGTERM stops`);
  await stopped(io);
  await Promise.all([...servers.values()].map((s) => s.close()));
  await closeHttp(http);
  io.err('stopped');
  return 0;
}

function route(servers: ReadonlyMap<string, A2AServer>, request: Request): Promise<Response> | Response {
  const path = new URL(request.url).pathname;
  const name = decodeURIComponent(path.split('/')[1] ?? '');
  const server = servers.get(name);
  if (server) return server.handle(request);
  const known = [...servers.keys()].map((n) => `/${n}`).join(', ');
  return new Response(JSON.stringify({ error: { code: 'not_found', message: `No agent here; agents: ${known}` } }), { status: 404, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

/** `troupe mcp serve <dir>`. */
export async function mcpServeCommand(dir: string, values: ServeFlags, io: CliIo): Promise<number> {
  const folder = await loadServed(dir, values, io, 'mcp serve', {});
  if (typeof folder === 'number') return folder;
  const approvals = new ApprovalQueue({
    handler: (request) => {
      io.err(`approval ${request.agent} uses ${request.tool}: ${values.approve ? 'approved (--approve)' : 'refused (pass --approve to allow)'}`);
      return { approved: values.approve === true };
    },
  });
  const flows = compileServed(folder, approvals, io);
  const teams = folderTeams(folder.defs, flows, folder.names);
  const store = storeOf(values, io);
  const shared = { teams, run: { adapter: folder.adapter, ...defined({ clock: io.clock }) }, ...defined({ store }) };
  if (!values.http) {
    const server = await serveTeamsOverStdio({ ...shared, ...defined({ stdin: io.stdin, stdout: io.stdout }) });
    io.err(`troupe MCP server on stdio: ${teams.map((t) => t.name).join(', ')}`);
    await Promise.race([server.closed, stopped(io)]);
    await server.close();
    return 0;
  }
  const mcp = await mcpHttpHandler({ ...shared, authorize: bearer(values.token), ...defined({ clock: io.clock }) });
  const http = createNodeServer((request) => mcp.handle(request));
  const host = values.host ?? '127.0.0.1';
  const bound = await listen(http, portOf(values.port, 8931), host);
  io.out(`MCP endpoint: http://${host.includes(':') ? `[${host}]` : host}:${bound}/mcp (tools: ${teams.map((t) => t.name).join(', ')})`);
  io.err('Ctrl-C or SIGTERM stops');
  await stopped(io);
  await mcp.close();
  await closeHttp(http);
  io.err('stopped');
  return 0;
}

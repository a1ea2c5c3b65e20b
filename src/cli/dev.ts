/**
 * `troupe dev [folder]`: `troupe/http` and the team interface on
 * 127.0.0.1, over a folder of agents. The adapter is chosen as `troupe run`
 * chooses it (`--adapter`, else `TROUPE_ADAPTER`, else the scripted one,
 * which answers offline: the lead plans from the task, workers stream what
 * they were asked); the command says which on standard error, lists what
 * the folder offers, prints the page's URL, and serves until stopped.
 * @module
 */
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { AgentDefinition } from '../agents/definition.js';
import type { ModelAdapter } from '../core/adapter.js';
import { defined } from '../core/defined.js';
import { ConfigurationError } from '../core/errors.js';
import { memoryStore } from '../core/memory-store.js';
import { createNodeServer } from '../integrations/http/node.js';
import { fileStore } from '../persistence/file-store.js';
import { scriptedAdapter, type ScriptedRequest, type ScriptedTurn } from '../adapters/scripted.js';
import { adapterLine, cliAdapterName, createCliAdapter } from './adapters.js';
import { devApp } from './dev-app.js';
import { catalogEntries, readCatalog } from './dev-catalog.js';
import { groupedWarnings, toolMapFor } from './agents.js';
import type { CliIo } from './io.js';
import { offlineTeam } from './squad.js';
import { usageError } from './usage.js';

/** The help of `troupe dev`. */
export const DEV_HELP = `Usage: troupe dev [folder] [--port <n>] [--adapter <name>] [--script <file.json>] [--store <dir>] [--tool-map <map.json>]

Serve the team interface and troupe/http on 127.0.0.1 over <folder> (default:
the current folder): pick the lead (it plans with you, then runs the plan
with workers), an agent or a team of the folder's agent files, a plan
template, or a squad preset (the folder's own, built in, or yours); watch
it work, answer its questions and approvals, edit its plan, instruct its
running workers, and open, replay or fork earlier runs.

  --port <n>         the port (default: 4680; 0 picks a free one)
  --adapter <name>   as for \`troupe run\` (default: $TROUPE_ADAPTER, else scripted:
                     offline replies, the lead plans from the task)
  --script <file>    for the scripted adapter: JSON { "replies": { "<agent>": [...] }, ... }
  --store <dir>      log runs in this file store, and read its templates and presets
                     (default: $TROUPE_STORE; without one, runs live in memory)
  --tool-map <file>  a JSON tool map, { "<name>": null, ... }: tool names of the agent files left out
                     without a warning (troupe dev has no tools of its own; see troupe validate --help)

Only this machine is served (127.0.0.1); a request from another page is refused.
Stop with Ctrl-C.`;

/** The flags `troupe dev` reads. */
export interface DevFlags {
  port?: string | undefined;
  adapter?: string | undefined;
  script?: string | undefined;
  store?: string | undefined;
  'tool-map'?: string | undefined;
}

/** `troupe dev [folder]`; resolves with the exit code once `io.signal` stops it. */
export async function devCommand(folderArg: string | undefined, flags: DevFlags, io: CliIo): Promise<number> {
  const port = flags.port === undefined ? 4680 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usageError(io, 'dev', DEV_HELP, `expected --port to be a port number, got "${flags.port}"`);
  const folder = resolve(folderArg ?? '.');
  const storeDir = flags.store ?? (io.env.TROUPE_STORE || undefined);
  const store = storeDir === undefined ? memoryStore() : fileStore(storeDir);
  const toolAliases = await toolMapFor(flags['tool-map'], {}, 'dev');
  const catalog = await readCatalog(folder, { ...(storeDir === undefined ? {} : { store, userStore: store }), ...defined({ signal: io.signal, toolAliases }) });
  const name = cliAdapterName(flags.adapter, io.env);
  const squadWorkers = catalog.squads.repo?.workers.map((w) => w.name) ?? [];
  const adapter = name === 'scripted' && flags.script === undefined ? offlineAdapter(catalog.agents, squadWorkers) : await createCliAdapter(name, { defs: catalog.agents, env: io.env, ...defined({ script: flags.script, clock: io.clock }) });
  io.err(adapterLine('troupe dev', flags.adapter, io.env, flags.script));
  io.err(`troupe dev: ${storeDir === undefined ? 'runs are kept in memory until troupe dev stops (--store <dir> keeps them)' : `runs are logged in ${storeDir}`}`);
  for (const problem of catalog.problems) io.err(`warning  ${problem}`);
  for (const line of groupedWarnings(catalog.agents, catalog.warnings.filter((w) => w.code === 'unresolved_tool' || w.code === 'unresolved_model'))) io.err(line);
  describeCatalog(catalogEntries(catalog), folder, io);

  const { handle } = devApp({ catalog, adapter, adapterName: name, store, ...defined({ toolAliases }) });
  const server = createNodeServer(handle);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done());
  }).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigurationError(error.code === 'EADDRINUSE' ? `Port ${port} is in use: pick another with --port (0: any free port)` : error.message, { code: 'invalid_option', cause: error });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  io.out(`troupe dev: ${url}`);
  await new Promise<void>((done) => {
    if (!io.signal) return; // serves until the process ends
    if (io.signal.aborted) return done();
    io.signal.addEventListener('abort', () => done(), { once: true });
  });
  await new Promise<void>((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });
  io.err('troupe dev: stopped');
  return 0;
}

function describeCatalog(entries: ReturnType<typeof catalogEntries>, folder: string, io: CliIo): void {
  const names = (test: (e: (typeof entries)[number]) => boolean) => entries.filter(test).map((e) => e.name);
  const line = (label: string, list: string[]) => io.out(`  ${label.padEnd(19)}${list.length ? list.join(', ') : '(none)'}`);
  io.out(`troupe dev: ${folder}`);
  line('agents', names((e) => e.kind === 'agent'));
  line('teams', names((e) => e.kind === 'team'));
  line('plan templates', names((e) => e.kind === 'template'));
  line('squads (repo)', names((e) => e.kind === 'squad' && e.source === 'repo'));
  line('squads (built in)', names((e) => e.kind === 'squad' && e.source === 'builtin'));
  line('squads (yours)', names((e) => e.kind === 'squad' && e.source === 'user'));
}

/**
 * The scripted adapter's offline replies for `troupe dev`: the lead plans
 * from the task (an analysis, the work, a check) without questions; the
 * workers stream what they were asked, a little at a time; the synthesis
 * sums up; routers take their first destination; squad teams run as
 * `troupe squad run` runs them offline.
 */
export function offlineAdapter(defs: readonly AgentDefinition[], squadWorkers: readonly string[]): ModelAdapter {
  const routes = new Map(defs.filter((d) => d.router).map((d) => [d.name, d.router!.destinations[0]]));
  const team = offlineTeam(squadWorkers);
  return scriptedAdapter({
    capabilities: { tools: true, streaming: true },
    fallback: (request: ScriptedRequest): string | ScriptedTurn => {
      const route = routes.get(request.agent);
      if (route !== undefined) return `ROUTE: ${route}`;
      if (request.agent === 'planner') return plannerReply(request.text);
      if (request.agent === 'orchestrator' || request.agent === 'evaluator') return team(request);
      const asked = firstLine(request.text);
      const text = request.agent === 'synthesis' ? `Done. Each part of the plan was worked on:\n\n${summaryOf(request.text)}` : `**${request.agent}** worked on: ${asked}\n\nNothing was changed: this is the offline scripted adapter. Pick a model with \`--adapter\`.`;
      return { chunks: splitWords(text, 4), chunkDelayMs: 150, delayMs: 300 };
    },
  });
}

function firstLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  return (lines[0] ?? text).slice(0, 200);
}

function summaryOf(text: string): string {
  const titles = text.split('\n').filter((l) => l.startsWith('### ')).map((l) => `- ${l.slice(4)}`);
  return titles.length ? titles.join('\n') : '- the task';
}

function splitWords(text: string, pieces: number): string[] {
  const size = Math.ceil(text.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The planner's offline reply: no questions; a plan of three chunks from the task. */
function plannerReply(prompt: string): string {
  if (prompt.endsWith('Answer with the JSON object only.')) return '{"action":"plan"}';
  const marker = '## Task\n\n';
  const at = prompt.indexOf(marker);
  const rest = at < 0 ? '' : prompt.slice(at + marker.length);
  const task = (rest.slice(0, rest.indexOf('\n') < 0 ? undefined : rest.indexOf('\n')).slice(0, 120)) || 'the task';
  return JSON.stringify({
    planSummary: `Work on: ${task}`,
    chunks: [
      { sequenceIndex: 0, title: 'Understand the task', prompt: `Read what is asked and list what it needs: ${task}`, dependsOnIndexes: [], complexity: 'Low', role: 'CodeAnalysis', estimatedMs: 2000 },
      { sequenceIndex: 1, title: 'Do the work', prompt: `Do what is asked: ${task}`, dependsOnIndexes: [0], complexity: 'Medium', role: 'Implementation', estimatedMs: 3000 },
      { sequenceIndex: 2, title: 'Check the result', prompt: `Check that the work answers the task: ${task}`, dependsOnIndexes: [1], complexity: 'Low', role: 'Testing', estimatedMs: 2000 },
    ],
  });
}

/**
 * The `troupe` command line: `validate`, `graph`, `run` and `agents
 * inspect` over a folder of agent files of any format (`graph` also draws
 * plan files), `report` for logged runs, `worker` to run distributed jobs,
 * `squad show|init|run` for squad team folders, and `dev` to serve the team
 * interface over a folder. Every command parsed
 * here is declared in {@link COMMANDS} (its help, options and arguments),
 * and every such command line is checked against its declaration in one
 * place (`./usage.ts`).
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { compileAgents } from '../agents/compile.js';
import type { AgentDefinition, AgentIssue } from '../agents/definition.js';
import { entryAgents, reachableAgents, validateAgents } from '../agents/validate.js';
import { ConfigurationError } from '../core/errors.js';
import { writeFileAtomic } from '../core/fs.js';
import { fileStore } from '../persistence/file-store.js';
import { readRun } from '../persistence/run-log.js';
import { validatePlanJson } from '../plan/model/plan.js';
import { parseRunLogFile } from './run-log-file.js';
import { ApprovalQueue, type ApprovalRequest } from '../guardrails/approvals.js';
import { renderRunReport } from '../views/report/render.js';
import { cliAdapters } from './adapters.js';
import { AGENTS_HELP, agentsInspect, groupedWarnings, loadFolder, readModelMap, toolMapFor, warningCount, where } from './agents.js';
import { executeRun, writeFailure, type RunFlags } from './execute.js';
import { formatAgentGraph, formatPlanGraph, formatTeam } from './graph.js';
import type { CliIo } from './io.js';
import { forkCommand, runsCommand } from './runs.js';
import { replayCommand } from './replay.js';
import { STATS_HELP, statsCommand } from './stats.js';
import { TEMPLATE_HELP, isTemplateFile, templateCommand, templateRunCommand, templateValidateCommand } from './templates.js';
import { SQUAD_HELP, squadInit, squadRun, squadShow } from './squad.js';
import { checkCommandLine, parseCommandLine, unknownCommand, usageError, type CommandSpec, type OptionSpec } from './usage.js';
import { troupeVersion } from './version.js';
import { defined } from '../core/defined.js';
import { WORKER_HELP, workerCommand } from './worker.js';
import { MCP_HELP, SERVE_HELP, mcpServeCommand, serveCommand } from './serve.js';
import { DEV_HELP, devCommand } from './dev.js';

export type { CliIo } from './io.js';
export { parseRunLogFile } from './run-log-file.js';

const HELP: Record<string, string> = {
  main: `troupe: run and check teams of agents defined in agent files

Usage:
  troupe --version                         print troupe's version
  troupe validate <dir> [--tool-map <map.json>] [--quiet]
                                           check every agent file and the agent graph, and show the team
  troupe graph <dir | plan.json> [--format mermaid|dot]
                                           print the agent graph, or a plan's dependency graph
  troupe run <dir> --agent <name> "<input>" [--adapter <name>] [--script <file.json>] [--approve] [--strict] [--store <dir> [--thread <id>]] [--json] [--trace]
                                           run an agent with its team, showing progress, and print its answer
  troupe run --template <name | file> [--set <key>=<value> ...] [--store <dir>] [--learn]
                                           fill a plan template in and execute the plan
  troupe validate <template file>          check a plan template's structure
  troupe template list|save|show           the plan templates saved in a store
  troupe stats [--store <dir>]             outcome statistics of earlier runs, per role, agent and model
  troupe agents inspect <dir>              one row per agent file: format, name, tools, model, sub-agents, hand-offs
  troupe report <run-id | run-log file> [--store <dir>] [--out <file.html>]
                                           write a run's report: one self-contained HTML page
  troupe runs [<run>] [--store <dir>]      the runs of a store, or one run's checkpoints
  troupe fork <run> --at <checkpoint> [--set <pointer>=<value>]... [--agents <dir>]
                                           a new run from a checkpoint, with its state edited
  troupe replay <run>... [--agents <dir>] [--what-if <change>]...
                                           replay logged runs with no model call, or with a change
                                           (plan runs from their log; agent-file runs from --agents)
  troupe worker --redis <url> [--agents <dir>] [--adapter <name>] [--concurrency <n>]
                                           take plan chunks and remote runs from a queue on Redis and run them
  troupe serve --a2a <dir> [--agent <name>] [--port <n>] [--token <secret>]
                                           serve a folder's entry agents as A2A agents, each with its Agent Card
  troupe mcp serve <dir> [--http] [--agent <name>]
                                           serve a folder's entry agents and teams as MCP tools (stdio, or streamable HTTP)
  troupe squad show <repo>                 print a repository's squad team as a table
  troupe squad init <repo> --preset <name> [--force]
                                           write a preset as a repository's squad folder
  troupe squad run <repo> "<input>" [--adapter <name>] [--script <file.json>] [--store <dir> [--thread <id>]] [--history] [--scribe] [--json] [--trace]
                                           run a repository's squad team on a request
  troupe dev [folder] [--port <n>] [--adapter <name>] [--store <dir>]
                                           serve the team interface on 127.0.0.1 over a folder of agents

Run \`troupe <command> --help\` for details.`,
  validate: `Usage: troupe validate <dir> [--as <format>] [--models <map.json>] [--tool-map <map.json>] [--quiet]

Load every agent file under <dir> (troupe's own .md, ai-agent .ai, Claude
Code, GitHub Copilot .agent.md and OpenCode files, each read in its own
format), print the team — each entry agent (one no other agent names),
what it calls indented under it, and each agent's hand-offs — and validate
the agent graph: unknown references (sub-agents, hand-offs, advisors,
router destinations, team members), duplicate names, cycles, routers with
tools, empty routers, team leads with a handoff. Warnings (unknown keys,
lines read leniently, tools and models that resolve to nothing: those in
one line per vendor, with how to map them) are printed but do not fail.
Exits 1 on any error, and when <dir> holds no agent file. Given a file,
check it as a plan template instead (see troupe run --template).

  --as <format>       read every file as troupe, ai-agent, claude-code, copilot or opencode
  --models <file>     a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }
  --tool-map <file>   a JSON tool map: the tool names of the files mapped to troupe tools, or to
                      null to leave one out without a warning: { "read/readFile": null, ... }
                      (troupe validate and troupe run have no tools of their own; troupe serve has
                      ask_person)
  --quiet             no warnings (errors still print)`,
  graph: `Usage: troupe graph <dir | plan.json> [--format mermaid|dot] [--as <format>]

Print the agent graph of the agent files in <dir>, edges labelled by kind
(handoff, router, advisor, team, subagent; hand-off choices dashed); or, for a plan file (the JSON a planner
writes: { "planSummary", "chunks": [...] }), its dependency graph, one
node per chunk. Default format: mermaid.`,
  run: `Usage: troupe run <dir> --agent <name> "<input>" [--adapter <name>] [--script <file.json>] [--approve] [--strict] [--store <dir> [--thread <id>]] [--json] [--quiet] [--trace] [--verbose]
       troupe run <dir> <agent> "<input>" [...]
       troupe run --template <name | file> [--set <key>=<value> ...] [...]   (see troupe run --template x --help)

Compile the agents in <dir> (any format), run the agent <name> with its team
(sub-agents as tools, hand-offs, advisors, routers) on <input>, and print
the answer, the terminal agent and the usage. Progress goes to standard
error: live on a terminal (the ops in flight, tokens and cost so far,
elapsed time, each plan's done/total chunks), one line per event otherwise.
Tools and models that resolve to nothing are left out, said on standard
error before the run in one line per vendor (see troupe validate).

  --agent <name>     the agent to run
  --strict           fail (exit 1) when a tool an agent file names resolves to nothing
  --approve          approve every request of the approval queue (hand-offs that
                     ask first, tools an agent's permission mode asks for);
                     without it each is refused, and said so on standard error
  --as <format>      read every file as troupe, ai-agent, claude-code, copilot or opencode
  --models <file>    a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }
  --tool-map <file>  a JSON tool map: { "read/readFile": null, ... } (see troupe validate --help)

  --adapter <name>   ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter: JSON { "replies": { "<agent>": [...] }, "fallback": ..., "latencyMs": ... }.
                     Without it, routers pick their first destination and agents echo the request.
"  --store <dir>      log the run in this file store (default: $TROUPE_STORE); \`troupe report\` reads it
  --thread <id>      continue the conversation <id> kept in the store: the agent gets its earlier
                     exchanges, and this one is added to it (the next run with --thread <id> goes on)
  --json             print every event as one JSON line on standard output, and nothing else
  --quiet            no progress, and no warnings
  --trace            also print the op tree with usage
  --verbose          on a failure, also print the failed command's stderr (the process adapter's)`,
  report: `Usage: troupe report <run-id | run-log file> [--store <dir>] [--out <file.html>]

Write one self-contained HTML page (no network; everything inline) showing
the run: a timeline of every op per pattern, chunk and agent, each plan's
dependency graph with its critical path, usage and cost per agent and
model, evaluator scores per iteration, and any op's details on click.

  <run-id>           a run logged in the file store --store <dir> (default: $TROUPE_STORE)
  <run-log file>     a run's events.jsonl, or a run exported as JSON
  --out <file>       where to write (default: troupe-report-<run-id>.html)`,
};

/** Commands that read their own options. */
const OWN_OPTIONS: Record<string, (args: readonly string[], io: CliIo) => Promise<number>> = { runs: runsCommand, fork: forkCommand, replay: replayCommand };

/** Every option of the command line; each command takes the ones its {@link COMMANDS} entry lists. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  format: { type: 'string' },
  adapter: { type: 'string' },
  script: { type: 'string' },
  trace: { type: 'boolean' },
  preset: { type: 'string' },
  force: { type: 'boolean' },
  store: { type: 'string' },
  thread: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  out: { type: 'string' },
  agent: { type: 'string' },
  approve: { type: 'boolean' },
  strict: { type: 'boolean' },
  verbose: { type: 'boolean' },
  as: { type: 'string' },
  models: { type: 'string' },
  redis: { type: 'string' },
  agents: { type: 'string' },
  concurrency: { type: 'string' },
  queue: { type: 'string' },
  prefix: { type: 'string' },
  'store-prefix': { type: 'string' },
  name: { type: 'string' },
  'exit-when-idle': { type: 'string' },
  'signing-key-file': { type: 'string' },
  template: { type: 'string' },
  set: { type: 'string', multiple: true },
  learn: { type: 'boolean' },
  record: { type: 'string' },
  a2a: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  url: { type: 'string' },
  http: { type: 'boolean' },
  'tool-map': { type: 'string' },
  history: { type: 'boolean' },
  scribe: { type: 'boolean' },
} as const satisfies Record<string, OptionSpec>;

/** The parsed options, by name. */
type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean;
};

/** A command: its declaration and what it does with its arguments. */
interface Command extends CommandSpec {
  run(args: readonly string[], values: Values, io: CliIo): Promise<number>;
}

/** The options every command that runs a team takes. */
const RUN_OPTIONS = ['adapter', 'script', 'store', 'thread', 'json', 'quiet', 'trace', 'verbose'] as const;

/** Every command, by its name (`squad init` for a subcommand). */
const COMMANDS: Readonly<Record<string, Command>> = {
  validate: { help: HELP.validate!, options: ['as', 'models', 'tool-map', 'quiet'], args: 1, run: (args, values, io) => folderCommand('validate', args, values, io) },
  graph: { help: HELP.graph!, options: ['format', 'as', 'models'], args: 1, run: (args, values, io) => folderCommand('graph', args, values, io) },
  run: {
    help: HELP.run!,
    options: ['agent', 'approve', 'strict', 'as', 'models', 'tool-map', ...RUN_OPTIONS],
    args: (values) => (values.agent === undefined ? 3 : 2),
    run: (args, values, io) => folderCommand('run', args, values, io),
  },
  report: { help: HELP.report!, options: ['store', 'out'], args: 1, run: (args, values, io) => reportCommand(args[0]!, values, io) },
  'agents inspect': { help: AGENTS_HELP, options: ['as', 'models', 'tool-map', 'json'], args: 1, run: (args, values, io) => agentsInspect(args[0]!, values, io) },
  'squad show': { help: SQUAD_HELP.show, options: [], args: 1, run: (args, _values, io) => squadShow(args[0]!, io) },
  'squad init': { help: SQUAD_HELP.init, options: ['preset', 'force', 'store'], args: 1, run: (args, values, io) => squadInit(args[0]!, values, io) },
  'squad run': { help: SQUAD_HELP.run, options: [...RUN_OPTIONS, 'history', 'scribe'], args: 2, run: (args, values, io) => squadRun(args[0]!, args[1]!, values, io) },
  stats: { help: STATS_HELP, options: ['store', 'json', 'record'], args: 0, run: (args, values, io) => statsCommand(args, values, io) },
  'template list': { help: TEMPLATE_HELP.template, options: ['store'], args: 0, run: (args, values, io) => templateCommand(['list', ...args], values, io) },
  'template save': { help: TEMPLATE_HELP.template, options: ['store'], args: 1, run: (args, values, io) => templateCommand(['save', ...args], values, io) },
  'template show': { help: TEMPLATE_HELP.template, options: ['store'], args: 1, run: (args, values, io) => templateCommand(['show', ...args], values, io) },
  serve: {
    help: SERVE_HELP,
    options: ['a2a', 'agent', 'port', 'host', 'token', 'url', 'adapter', 'script', 'store', 'as', 'models', 'tool-map'],
    args: 0,
    run: (_args, values, io) => serveCommand(values, io),
  },
  'mcp serve': {
    help: MCP_HELP,
    options: ['agent', 'http', 'port', 'host', 'token', 'approve', 'adapter', 'script', 'store', 'as', 'models', 'tool-map'],
    args: 1,
    run: (args, values, io) => mcpServeCommand(args[0]!, values, io),
  },
  dev: { help: DEV_HELP, options: ['port', 'adapter', 'script', 'store', 'tool-map'], args: { min: 0, max: 1 }, run: (args, values, io) => devCommand(args[0], values, io) },
  worker: {
    help: WORKER_HELP,
    options: ['redis', 'agents', 'adapter', 'script', 'concurrency', 'queue', 'prefix', 'store-prefix', 'name', 'exit-when-idle', 'signing-key-file'],
    args: 0,
    run: (_args, values, io) => workerCommand(values, io),
  },
};

/** Commands with subcommands, and the help that lists them. */
const GROUPS: Readonly<Record<string, string>> = { agents: AGENTS_HELP, squad: SQUAD_HELP[''], template: TEMPLATE_HELP.template, mcp: MCP_HELP };

/** `troupe run --template <name | file>`: a plan template filled in and executed, instead of an agent folder. */
const RUN_TEMPLATE: Command = {
  help: TEMPLATE_HELP.run,
  options: ['template', 'set', 'learn', 'adapter', 'script', 'store', 'json', 'quiet', 'verbose'],
  args: 0,
  run: (args, values, io) => templateRunCommand(args, values, io),
};

/** Run the CLI with `argv` (without `node` and the script); resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [first = ''] = argv;
  if (Object.hasOwn(OWN_OPTIONS, first)) return OWN_OPTIONS[first]!(argv.slice(1), io);
  const parsed = parseCommandLine<Values>(argv, OPTIONS);
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === undefined || command === 'help') {
    const other = parsed.options.find((o) => o.name !== 'help' && o.name !== 'version');
    if (other !== undefined) return usageError(io, '', HELP.main!, `unknown option ${other.rawName}`);
    if (values.version && command === undefined) {
      io.out((await troupeVersion()) ?? 'unknown');
      return 0;
    }
    (values.help || command === 'help' ? io.out : io.err)(HELP.main!);
    return values.help || command === 'help' ? 0 : 2;
  }
  let name = command;
  let args = rest;
  const group = GROUPS[command];
  if (group !== undefined) {
    const [sub, ...subArgs] = rest;
    if (sub === undefined || sub === 'help') {
      (values.help || sub === 'help' ? io.out : io.err)(group);
      return values.help || sub === 'help' ? 0 : 2;
    }
    name = `${command} ${sub}`;
    args = subArgs;
    if (COMMANDS[name] === undefined) return unknownCommand(io, command, sub, subcommandsOf(command));
  }
  const spec = name === 'run' && values.template !== undefined ? RUN_TEMPLATE : COMMANDS[name];
  if (spec === undefined) return unknownCommand(io, '', command, topCommands());
  if (values.help) {
    io.out(spec.help);
    return 0;
  }
  const problem = checkCommandLine(parsed, args, spec, OPTIONS);
  if (problem !== undefined) return usageError(io, name, spec.help, problem);
  try {
    return await spec.run(args, values, io);
  } catch (error) {
    writeFailure(io, error, values.verbose === true);
    return 1;
  }
}

/** The commands a first word can name: the commands of one word, and the groups (`agents`, `squad`, ...). */
function topCommands(): string[] {
  return [...new Set([...Object.keys(COMMANDS).map((c) => c.split(' ')[0]!), ...Object.keys(GROUPS)])];
}

/** The commands of group `group` (`inspect` for `agents inspect`). */
function subcommandsOf(group: string): string[] {
  return Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `)).map((c) => c.slice(group.length + 1));
}

/** `graph` (of a plan file or an agent folder), `validate` and `run`: the commands on a file or an agent folder. */
async function folderCommand(command: 'validate' | 'graph' | 'run', rest: readonly string[], values: Values, io: CliIo): Promise<number> {
  if (command === 'validate' && (await isTemplateFile(rest[0]!))) return templateValidateCommand(rest[0]!, io);
  const format = values.format ?? 'mermaid'; // only `graph` takes --format
  if (format !== 'mermaid' && format !== 'dot') {
    return usageError(io, 'graph', HELP.graph!, `expected --format to be mermaid or dot, got "${format}"`);
  }
  if (command === 'graph' && (await isFile(rest[0]!))) {
    io.out(formatPlanGraph(await readPlan(rest[0]!), format));
    return 0;
  }
  if ((await stat(rest[0]!).catch(() => undefined)) === undefined) {
    io.err(`${rest[0]}: no such ${command === 'graph' ? 'plan file or agent folder' : command === 'validate' ? 'agent folder or template file' : 'agent folder'}`);
    return 1;
  }
  const loaded = await loadFolder(rest[0]!, values, io);
  const defs = loaded.agents;
  if (defs.length === 0) {
    io.err(`No agent files in ${rest[0]} (\`troupe validate --help\` lists the formats troupe reads)`);
    return 1;
  }
  const modelMap = await readModelMap(values.models);
  // troupe validate checks the folder for troupe run: neither registers tools of its own.
  const toolAliases = command === 'graph' ? undefined : await toolMapFor(values['tool-map'], {}, command);
  const resolution = { unknownTools: values.strict ? ('error' as const) : ('warn' as const), ...defined({ modelMap, toolAliases }) };
  const { errors, warnings: found } = validateAgents(defs, resolution);
  if (command === 'validate') {
    const warnings = groupedWarnings(defs, [...loaded.warnings, ...found]);
    for (const line of formatTeam(defs)) io.out(line);
    io.out('');
    if (!values.quiet) for (const line of warnings) io.out(line);
    for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
    const count = warningCount(warnings);
    const entries = entryAgents(defs).length;
    io.out(`${defs.length} agent${defs.length === 1 ? '' : 's'} (${entries} entry), ${errors.length} error${errors.length === 1 ? '' : 's'}, ${count} warning${count === 1 ? '' : 's'}${values.quiet && count > 0 ? ' (--quiet)' : ''}`);
    return errors.length > 0 ? 1 : 0;
  }
  if (command === 'graph') {
    io.out(formatAgentGraph(defs, format));
    return 0;
  }
  if (errors.length > 0) {
    for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
    return 1;
  }
  const [agentName, input] = values.agent === undefined ? [rest[1]!, rest[2]!] : [values.agent, rest[1]!];
  return runCommand(defs, agentName, input, { ...values, ...defined({ modelMap, toolAliases }) }, io);
}

/** The flags `troupe run` reads. */
interface RunCommandFlags extends RunFlags {
  approve?: boolean | undefined;
  strict?: boolean | undefined;
  modelMap?: Record<string, string>;
  toolAliases?: Record<string, string | null>;
}

async function runCommand(defs: readonly AgentDefinition[], name: string, input: string, values: RunCommandFlags, io: CliIo): Promise<number> {
  if (!defs.some((d) => d.name === name)) {
    io.err(`Unknown agent "${name}" (agents: ${defs.map((d) => d.name).join(', ')})`);
    return 1;
  }
  const talk = !values.json && !values.quiet;
  if (defs.find((d) => d.name === name)?.mode === 'subagent' && talk) {
    io.err(`warning  "${name}" is a sub-agent: its file says only other agents call it; running it anyway`);
  }
  const approvals = new ApprovalQueue({
    handler: (request) => {
      io.err(`approval ${describeRequest(request)}: ${values.approve ? 'approved (--approve)' : 'refused (pass --approve to allow)'}`);
      return { approved: values.approve === true };
    },
  });
  const losses: AgentIssue[] = [];
  const flows = compileAgents(defs, {
    unknownTools: 'warn',
    approvals,
    ...defined({ modelMap: values.modelMap, toolAliases: values.toolAliases }),
    onWarning: (issue) => {
      if (issue.code === 'unresolved_model' || issue.code === 'unresolved_tool') losses.push(issue);
    },
  });
  // What compiles with a loss is said before the run, grouped, for the agents the run can reach: a tool left out, a model alias the map lacks.
  const team = new Set(reachableAgents(defs, name));
  if (talk) for (const line of groupedWarnings(defs, losses.filter((i) => i.agent !== undefined && team.has(i.agent)), { strict: true })) io.err(line);
  return executeRun(flows[name]!, input, defs, values, io);
}

/** A request of the approval queue, for a line of output. */
function describeRequest(request: ApprovalRequest): string {
  if (request.tool.startsWith('handoff:')) {
    const { label } = (request.arguments ?? {}) as { label?: string };
    return `${request.agent} hands off to ${request.tool.slice('handoff:'.length)}${label === undefined ? '' : ` ("${label}")`}`;
  }
  return `${request.agent} uses ${request.tool}`;
}

/** `troupe report <run-id | run-log file>`. */
async function reportCommand(source: string, values: { store?: string | undefined; out?: string | undefined }, io: CliIo): Promise<number> {
  let events: unknown[];
  let runId: string;
  if (await isFile(source)) {
    let torn: { reason: string } | undefined;
    ({ events, runId, torn } = parseRunLogFile(await readFile(source, 'utf8'), source));
    if (torn) io.err(`warning: ${torn.reason}; it is left out`);
  } else {
    const dir = values.store ?? (io.env.TROUPE_STORE || undefined);
    if (dir === undefined) {
      io.err(`"${source}" is not a file; to read run "${source}" from a store, give --store <dir> (or set TROUPE_STORE).`);
      return 2;
    }
    const log = await readRun(source, { store: fileStore(dir), ...defined({ signal: io.signal }) });
    if (log.events.length === 0) {
      io.err(`No run "${source}" is logged in ${dir}.`);
      return 1;
    }
    events = log.events;
    runId = source;
  }
  const out = values.out ?? `troupe-report-${runId.replace(/[^A-Za-z0-9._-]/g, '_')}.html`;
  const html = renderRunReport(events);
  await writeFileAtomic(out, html);
  io.out(`wrote ${out} (${Math.ceil(Buffer.byteLength(html) / 1024)} KB, ${events.length} events)`);
  return 0;
}


async function readPlan(file: string) {
  const checked = validatePlanJson(await readFile(file, 'utf8'));
  if (!checked.plan) throw new ConfigurationError(`${file} is not a valid plan: ${checked.errors.join('; ')}`, { code: 'invalid_graph', details: { errors: checked.errors } });
  return checked.plan;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

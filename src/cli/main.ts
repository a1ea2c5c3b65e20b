/**
 * The `troupe` command line: `validate`, `graph`, `run` and `agents
 * inspect` over a folder of agent files of any format (`graph` also draws
 * plan files), `report` for logged runs, `worker` to run distributed jobs,
 * and `squad show|init` for squad team folders.
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { compileAgents } from '../agents/compile.js';
import type { AgentDefinition } from '../agents/definition.js';
import { validateAgents } from '../agents/validate.js';
import { realClock } from '../core/clock.js';
import { ConfigurationError, ParseError, errorMessage, isTroupeError } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { writeFileAtomic } from '../core/fs.js';
import { formatOpTree } from '../core/ops.js';
import { run } from '../core/run.js';
import { fileStore } from '../persistence/file-store.js';
import { readRun } from '../persistence/run-log.js';
import { validatePlanJson } from '../scheduler/plan.js';
import { readableText } from '../text/lines.js';
import { ApprovalQueue, type ApprovalRequest } from '../scheduler/approvals.js';
import { renderRunReport } from '../views/report/render.js';
import { cliAdapterName, cliAdapters, createCliAdapter } from './adapters.js';
import { AGENTS_HELP, agentsCommand, loadFolder, readModelMap, where } from './agents.js';
import { formatAgentGraph, formatPlanGraph } from './graph.js';
import { liveProgress, plainProgress, type Progress } from './progress.js';
import type { CliIo } from './io.js';
import { squadCommand } from './squad.js';
import { forkCommand, runsCommand } from './runs.js';
import { replayCommand } from './replay.js';
import { STATS_HELP, statsCommand } from './stats.js';
import { TEMPLATE_HELP, isTemplateFile, templateCommand, templateRunCommand, templateValidateCommand } from './templates.js';
import { recordRunOutcomes } from '../scheduler/outcome-collector.js';
import { defined } from '../core/defined.js';
import { WORKER_HELP, workerCommand } from './worker.js';

export type { CliIo } from './io.js';

const HELP: Record<string, string> = {
  main: `troupe: run and check teams of agents defined in agent files

Usage:
  troupe validate <dir>                    check every agent file and the agent graph
  troupe graph <dir | plan.json> [--format mermaid|dot]
                                           print the agent graph, or a plan's dependency graph
  troupe run <dir> --agent <name> "<input>" [--adapter <name>] [--script <file.json>] [--approve] [--store <dir>] [--json] [--trace]
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
  troupe replay <run>... --agents <dir> [--what-if <change>]...
                                           replay logged runs with no model call, or with a change
  troupe worker --redis <url> [--agents <dir>] [--adapter <name>] [--concurrency <n>]
                                           take plan chunks and remote runs from a queue on Redis and run them
  troupe squad show <repo>                 print a repository's squad team as a table
  troupe squad init <repo> --preset <name> [--force]
                                           write a preset as a repository's squad folder

Run \`troupe <command> --help\` for details.`,
  validate: `Usage: troupe validate <dir> [--as <format>] [--models <map.json>]

Load every agent file under <dir> (troupe's own .md, ai-agent .ai, Claude
Code, GitHub Copilot .agent.md and OpenCode files, each read in its own
format) and validate the agent graph: unknown references (sub-agents,
hand-offs, advisors, router destinations, team members), duplicate names,
cycles, routers with tools, empty routers, team coordinators with a
handoff. Warnings (unknown keys, tools and models that resolve to nothing,
lines read leniently) are printed but do not fail. Exits 1 on any error.
Given a file, check it as a plan template instead (see troupe run --template).

  --as <format>       read every file as troupe, ai-agent, claude-code, copilot or opencode
  --models <file>     a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }`,
  graph: `Usage: troupe graph <dir | plan.json> [--format mermaid|dot] [--as <format>]

Print the agent graph of the agent files in <dir>, edges labelled by kind
(handoff, router, advisor, team, subagent; hand-off choices dashed); or, for a plan file (the JSON a planner
writes: { "planSummary", "chunks": [...] }), its dependency graph, one
node per chunk. Default format: mermaid.`,
  run: `Usage: troupe run <dir> --agent <name> "<input>" [--adapter <name>] [--script <file.json>] [--approve] [--store <dir>] [--json] [--quiet] [--trace]
       troupe run <dir> <agent> "<input>" [...]
       troupe run --template <name | file> [--set <key>=<value> ...] [...]   (see troupe run --template x --help)

Compile the agents in <dir> (any format), run the agent <name> with its team
(sub-agents as tools, hand-offs, advisors, routers) on <input>, and print
the answer, the terminal agent and the usage. Progress goes to standard
error: live on a terminal (the ops in flight, tokens and cost so far,
elapsed time, each plan's done/total chunks), one line per event otherwise.
Tools and models that resolve to nothing are left out (see troupe validate).

  --agent <name>     the agent to run
  --approve          approve every request of the approval queue (hand-offs that
                     ask first, tools an agent's permission mode asks for);
                     without it each is refused, and said so on standard error
  --as <format>      read every file as troupe, ai-agent, claude-code, copilot or opencode
  --models <file>    a JSON model map: { "sonnet": "claude-sonnet-4-5", ... }

  --adapter <name>   ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter: JSON { "replies": { "<agent>": [...] }, "fallback": ..., "latencyMs": ... }.
                     Without it, routers pick their first destination and agents echo the request.
  --store <dir>      log the run in this file store (default: $TROUPE_STORE); \`troupe report\` reads it
  --json             print every event as one JSON line on standard output, and nothing else
  --quiet            no progress
  --trace            also print the op tree with usage`,
  agents: AGENTS_HELP,
  stats: STATS_HELP,
  template: TEMPLATE_HELP.template,
  report: `Usage: troupe report <run-id | run-log file> [--store <dir>] [--out <file.html>]

Write one self-contained HTML page (no network; everything inline) showing
the run: a timeline of every op per pattern, chunk and agent, each plan's
dependency graph with its critical path, usage and cost per agent and
model, evaluator scores per iteration, and any op's details on click.

  <run-id>           a run logged in the file store --store <dir> (default: $TROUPE_STORE)
  <run-log file>     a run's events.jsonl, or a run exported as JSON
  --out <file>       where to write (default: troupe-report-<run-id>.html)`,
  worker: WORKER_HELP,
};

/** Run the CLI with `argv` (without `node` and the script); resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [first = ''] = argv;
  if (Object.hasOwn(OWN_OPTIONS, first)) return OWN_OPTIONS[first]!(argv.slice(1), io);
  const parsed = parseCommandLine(argv, io);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === undefined || command === 'help') {
    (values.help || command === 'help' ? io.out : io.err)(HELP.main!);
    return values.help || command === 'help' ? 0 : 2;
  }
  if (command === 'squad') return reportFailure(io, () => squadCommand(rest, values, io));
  if (command === 'agents') return reportFailure(io, () => agentsCommand(rest, values, io));
  if (command === 'stats') return reportFailure(io, () => statsCommand(rest, values, io));
  if (command === 'template') return reportFailure(io, () => templateCommand(rest, values, io));
  if (command === 'run' && values.template !== undefined) return reportFailure(io, () => templateRunCommand(rest, values, io));
  const help = HELP[command];
  if (help === undefined || command === 'main') {
    io.err(`Unknown command "${command}".\n\n${HELP.main}`);
    return 2;
  }
  if (values.help) {
    io.out(help);
    return 0;
  }
  if (command === 'worker') {
    if (rest.length > 0) {
      io.err(`Expected no arguments, got ${rest.length}.\n\n${help}`);
      return 2;
    }
    return reportFailure(io, () => workerCommand(values, io));
  }
  const expected = command === 'run' ? (values.agent === undefined ? 3 : 2) : 1;
  if (rest.length !== expected) {
    io.err(`Expected ${expected} argument${expected > 1 ? 's' : ''}, got ${rest.length}.\n\n${help}`);
    return 2;
  }
  if (command === 'graph' && !['mermaid', 'dot'].includes(values.format ?? 'mermaid')) {
    io.err(`Expected --format to be mermaid or dot, got "${values.format}".`);
    return 2;
  }
  return reportFailure(io, () => folderCommand(command, rest, values, io));
}

/** Commands that read their own options. */
const OWN_OPTIONS: Record<string, (args: readonly string[], io: CliIo) => Promise<number>> = { runs: runsCommand, fork: forkCommand, replay: replayCommand };

type CommandLine = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof OPTIONS }>>;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  format: { type: 'string' },
  adapter: { type: 'string' },
  script: { type: 'string' },
  trace: { type: 'boolean' },
  preset: { type: 'string' },
  force: { type: 'boolean' },
  store: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  out: { type: 'string' },
  agent: { type: 'string' },
  approve: { type: 'boolean' },
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
  template: { type: 'string' },
  set: { type: 'string', multiple: true },
  learn: { type: 'boolean' },
  record: { type: 'string' },
} as const;

/** The parsed command line, or the exit code of a command line that does not parse (after saying why). */
function parseCommandLine(argv: readonly string[], io: CliIo): CommandLine | number {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
  } catch (error) {
    io.err(`${errorMessage(error)}\n\n${HELP.main}`);
    return 2;
  }
}

/** Run a command; a failure is one line on standard error (with its code) and exit code 1. */
async function reportFailure(io: CliIo, command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error) {
    io.err(`${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`);
    return 1;
  }
}

/** `report`, `graph` (of a plan file or an agent folder), `validate` and `run`: the commands on a file or an agent folder. */
async function folderCommand(command: string, rest: readonly string[], values: CommandLine['values'], io: CliIo): Promise<number> {
  if (command === 'report') return reportCommand(rest[0]!, values, io);
  if (command === 'validate' && (await isTemplateFile(rest[0]!))) return templateValidateCommand(rest[0]!, io);
  if (command === 'graph' && (await isFile(rest[0]!))) {
    io.out(formatPlanGraph(await readPlan(rest[0]!), (values.format ?? 'mermaid') as 'mermaid' | 'dot'));
    return 0;
  }
  const loaded = await loadFolder(rest[0]!, values, io);
  const defs = loaded.agents;
  const modelMap = await readModelMap(values.models);
  const resolution = { unknownTools: 'warn' as const, ...defined({ modelMap }) };
  const { errors, warnings: found } = validateAgents(defs, resolution);
  const warnings = [...loaded.warnings, ...found];
  if (command === 'validate') {
    for (const w of warnings) io.out(`warning  ${where(w)}${w.message}`);
    for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
    io.out(`${defs.length} agent${defs.length === 1 ? '' : 's'}, ${errors.length} error${errors.length === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}`);
    return errors.length > 0 ? 1 : 0;
  }
  if (command === 'graph') {
    io.out(formatAgentGraph(defs, (values.format ?? 'mermaid') as 'mermaid' | 'dot'));
    return 0;
  }
  if (errors.length > 0) {
    for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
    return 1;
  }
  const [agentName, input] = values.agent === undefined ? [rest[1]!, rest[2]!] : [values.agent, rest[1]!];
  return runCommand(defs, agentName, input, { ...values, ...defined({ modelMap }) }, io);
}

/** The flags `troupe run` reads. */
interface RunFlags {
  adapter?: string | undefined;
  script?: string | undefined;
  trace?: boolean | undefined;
  store?: string | undefined;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
  approve?: boolean | undefined;
  modelMap?: Record<string, string>;
}

async function runCommand(defs: readonly AgentDefinition[], name: string, input: string, values: RunFlags, io: CliIo): Promise<number> {
  if (!defs.some((d) => d.name === name)) {
    io.err(`Unknown agent "${name}" (agents: ${defs.map((d) => d.name).join(', ')})`);
    return 1;
  }
  if (defs.find((d) => d.name === name)?.mode === 'subagent' && !values.json && !values.quiet) {
    io.err(`warning  "${name}" is a sub-agent: its file says only other agents call it; running it anyway`);
  }
  const approvals = new ApprovalQueue({
    handler: (request) => {
      io.err(`approval ${describeRequest(request)}: ${values.approve ? 'approved (--approve)' : 'refused (pass --approve to allow)'}`);
      return { approved: values.approve === true };
    },
  });
  const flows = compileAgents(defs, {
    unknownTools: 'warn',
    approvals,
    ...defined({ modelMap: values.modelMap }),
    // A model alias the map lacks is said before the run (tools that resolve to nothing: see `troupe validate`).
    onWarning: (issue) => {
      if (issue.code === 'unresolved_model' && !values.json && !values.quiet) io.err(`warning  ${where(issue)}${issue.message}`);
    },
  });
  const adapter = await createCliAdapter(cliAdapterName(values.adapter, io.env), {
    defs,
    env: io.env,
    ...defined({ script: values.script, clock: io.clock }),
  });
  const storeDir = values.store ?? (io.env.TROUPE_STORE || undefined);
  let progress: Progress | undefined;
  let onEvent: ((event: TroupeEvent) => void) | undefined;
  if (values.json) onEvent = (event) => io.out(jsonLine(event));
  else if (!values.quiet) {
    progress = io.progress?.isTTY ? await liveProgress(io.progress, io.clock ?? realClock) : plainProgress(io.err);
    onEvent = progress.onEvent;
  }
  const store = storeDir === undefined ? undefined : fileStore(storeDir);
  let result;
  try {
    result = await run(flows[name]!, input, {
      adapter,
      ...defined({ onEvent, signal: io.signal, clock: io.clock, store }),
    });
  } finally {
    progress?.close();
  }
  // The run's outcomes join the statistics `troupe stats` shows.
  if (store) await recordRunOutcomes(store, result.runId, defined({ signal: io.signal }));
  if (values.json) return 0;
  const u = result.usage;
  io.out(result.output);
  io.out('');
  io.out(`agent: ${result.agent}   status: ${result.status}`);
  io.out(`usage: in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}${u.costUsd > 0 ? ` cost=$${u.costUsd.toFixed(4)}` : ''}`);
  if (storeDir !== undefined) io.out(`run: ${result.runId} (logged in ${storeDir}; \`troupe report ${result.runId} --store ${storeDir}\` draws it)`);
  if (values.trace) io.out(`\n${formatOpTree(result.trace)}`);
  return 0;
}

/** A request of the approval queue, for a line of output. */
function describeRequest(request: ApprovalRequest): string {
  if (request.tool.startsWith('handoff:')) {
    const { label } = (request.arguments ?? {}) as { label?: string };
    return `${request.agent} hands off to ${request.tool.slice('handoff:'.length)}${label === undefined ? '' : ` ("${label}")`}`;
  }
  return `${request.agent} uses ${request.tool}`;
}

/** An event as one JSON line (an event that is not JSON becomes a warning line, never a crash). */
function jsonLine(event: TroupeEvent): string {
  try {
    return JSON.stringify(event);
  } catch (error) {
    return JSON.stringify({ type: 'warning', runId: event.runId, time: event.time, message: `Event "${event.type}" is not JSON-serialisable: ${errorMessage(error)}`, code: 'not_json' });
  }
}

async function reportCommand(source: string, values: { store?: string | undefined; out?: string | undefined }, io: CliIo): Promise<number> {
  let events: unknown[];
  let runId: string;
  if (await isFile(source)) {
    ({ events, runId } = parseRunLogFile(await readFile(source, 'utf8'), source));
  } else {
    const dir = values.store ?? (io.env.TROUPE_STORE || undefined);
    if (dir === undefined) {
      io.err(`"${source}" is not a file; to read run "${source}" from a store, give --store <dir> (or set TROUPE_STORE).`);
      return 2;
    }
    const log = await readRun(fileStore(dir), source, defined({ signal: io.signal }));
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

/** A run log file: an exported run (`{ events: [...] }`), or JSON lines (a torn or foreign line is skipped). */
export function parseRunLogFile(raw: string, file: string): { events: unknown[]; runId: string } {
  const text = readableText(raw, 'the run log file');
  let events: unknown[] | undefined;
  if (text.trimStart().startsWith('{')) {
    try {
      const doc = JSON.parse(text) as { events?: unknown };
      if (Array.isArray(doc.events)) events = doc.events;
    } catch {
      // not one document: JSON lines below
    }
  }
  if (events === undefined) {
    events = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        events.push(JSON.parse(line) as unknown);
      } catch {
        // a torn last line, or a line that is not JSON: the report counts what it skips
      }
    }
  }
  const first = events.find((e): e is { runId: string } => typeof e === 'object' && e !== null && typeof (e as { runId?: unknown }).runId === 'string');
  if (!first) throw new ParseError(`${file} holds no run events (expected an events.jsonl file or an exported run)`, { details: { file } });
  return { events, runId: first.runId };
}

async function readPlan(file: string) {
  const checked = validatePlanJson(await readFile(file, 'utf8'));
  if (!checked.plan) throw new ConfigurationError(`${file} is not a valid plan: ${checked.errors.join('; ')}`, { code: 'invalid_graph', details: { errors: checked.errors } });
  return checked.plan;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

/**
 * The `troupe` command line: `validate`, `graph` and `run` over a folder of
 * agent files, and `squad show|init` for squad team folders.
 * @module
 */
import { parseArgs } from 'node:util';
import { compileAgents } from '../agents/compile.js';
import type { AgentDefinition, AgentIssue } from '../agents/definition.js';
import { loadAgents } from '../agents/load.js';
import { validateAgents } from '../agents/validate.js';
import { errorMessage, isTroupeError } from '../core/errors.js';
import { formatOpTree } from '../core/ops.js';
import { run } from '../core/run.js';
import { cliAdapterName, cliAdapters, createCliAdapter } from './adapters.js';
import { formatAgentGraph } from './graph.js';
import { squadCommand } from './squad.js';

/** Where the CLI writes, and the environment it reads. */
export interface CliIo {
  /** Write a line to standard output. */
  out(text: string): void;
  /** Write a line to standard error. */
  err(text: string): void;
  /** The environment (`TROUPE_ADAPTER`, ...). */
  env: Readonly<Record<string, string | undefined>>;
  /** Cancels a running `troupe run` (the executable wires it to Ctrl-C). */
  signal?: AbortSignal;
}

const HELP: Record<string, string> = {
  main: `troupe: run and check teams of agents defined in agent files

Usage:
  troupe validate <dir>                    check every agent file and the agent graph
  troupe graph <dir> [--format mermaid|dot]
                                           print the agent graph
  troupe run <dir> <agent> "<input>" [--adapter <name>] [--script <file.json>] [--trace]
                                           run an agent and print its answer
  troupe squad show <repo>                 print a repository's squad team as a table
  troupe squad init <repo> --preset <name> [--force]
                                           write a preset as a repository's squad folder

Run \`troupe <command> --help\` for details.`,
  validate: `Usage: troupe validate <dir>

Load every .md and .ai agent file under <dir> and validate the agent graph:
unknown references, duplicate names, cycles, routers with tools, empty
routers, team coordinators with a handoff. Warnings (unknown keys) are
printed but do not fail. Exits 1 on any error.`,
  graph: `Usage: troupe graph <dir> [--format mermaid|dot]

Print the agent graph, edges labelled by kind (handoff, router, advisor,
team). Default format: mermaid.`,
  run: `Usage: troupe run <dir> <agent> "<input>" [--adapter <name>] [--script <file.json>] [--trace]

Compile the agents in <dir>, run <agent> on <input>, and print the answer,
the terminal agent and the usage.

  --adapter <name>   ${Object.keys(cliAdapters).join(', ')} (default: $TROUPE_ADAPTER, else scripted)
  --script <file>    for the scripted adapter: JSON { "replies": { "<agent>": [...] }, "fallback": ... }.
                     Without it, routers pick their first destination and agents echo the request.
  --trace            also print the op tree with usage`,
};

/** Run the CLI with `argv` (without `node` and the script); resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        format: { type: 'string' },
        adapter: { type: 'string' },
        script: { type: 'string' },
        trace: { type: 'boolean' },
        preset: { type: 'string' },
        force: { type: 'boolean' },
        store: { type: 'string' },
      },
    });
  } catch (error) {
    io.err(`${errorMessage(error)}\n\n${HELP.main}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === undefined || command === 'help') {
    (values.help || command === 'help' ? io.out : io.err)(HELP.main!);
    return values.help || command === 'help' ? 0 : 2;
  }
  if (command === 'squad') {
    try {
      return await squadCommand(rest, values, io);
    } catch (error) {
      io.err(`${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`);
      return 1;
    }
  }
  const help = HELP[command];
  if (help === undefined || command === 'main') {
    io.err(`Unknown command "${command}".\n\n${HELP.main}`);
    return 2;
  }
  if (values.help) {
    io.out(help);
    return 0;
  }
  const expected = command === 'run' ? 3 : 1;
  if (rest.length !== expected) {
    io.err(`Expected ${expected} argument${expected > 1 ? 's' : ''}, got ${rest.length}.\n\n${help}`);
    return 2;
  }
  try {
    const defs = await loadAgents(rest[0]!, io.signal === undefined ? {} : { signal: io.signal });
    const { errors, warnings } = validateAgents(defs);
    if (command === 'validate') {
      for (const w of warnings) io.out(`warning  ${where(w)}${w.message}`);
      for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
      io.out(`${defs.length} agent${defs.length === 1 ? '' : 's'}, ${errors.length} error${errors.length === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}`);
      return errors.length > 0 ? 1 : 0;
    }
    if (command === 'graph') {
      const format = values.format ?? 'mermaid';
      if (format !== 'mermaid' && format !== 'dot') {
        io.err(`Expected --format to be mermaid or dot, got "${format}".`);
        return 2;
      }
      io.out(formatAgentGraph(defs, format));
      return 0;
    }
    if (errors.length > 0) {
      for (const e of errors) io.err(`error    ${where(e)}${e.message}`);
      return 1;
    }
    return await runCommand(defs, rest[1]!, rest[2]!, values, io);
  } catch (error) {
    io.err(`${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`);
    return 1;
  }
}

async function runCommand(
  defs: readonly AgentDefinition[],
  name: string,
  input: string,
  values: { adapter?: string | undefined; script?: string | undefined; trace?: boolean | undefined },
  io: CliIo,
): Promise<number> {
  if (!defs.some((d) => d.name === name)) {
    io.err(`Unknown agent "${name}" (agents: ${defs.map((d) => d.name).join(', ')})`);
    return 1;
  }
  const flows = compileAgents(defs, { unknownTools: 'skip' });
  const adapter = await createCliAdapter(cliAdapterName(values.adapter, io.env), {
    defs,
    env: io.env,
    ...(values.script === undefined ? {} : { script: values.script }),
  });
  const result = await run(flows[name]!, input, { adapter, ...(io.signal === undefined ? {} : { signal: io.signal }) });
  const u = result.usage;
  io.out(result.output);
  io.out('');
  io.out(`agent: ${result.agent}   status: ${result.status}`);
  io.out(`usage: in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}${u.costUsd > 0 ? ` cost=$${u.costUsd.toFixed(4)}` : ''}`);
  if (values.trace) io.out(`\n${formatOpTree(result.trace)}`);
  return 0;
}

function where(issue: AgentIssue): string {
  return issue.file ? `${issue.file}: ` : issue.agent ? `${issue.agent}: ` : '';
}

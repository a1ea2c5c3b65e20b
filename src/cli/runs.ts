/**
 * `troupe runs` (the runs of a store, or one run's checkpoints) and
 * `troupe fork <run> --at <checkpoint>` (a new run from a checkpoint, with
 * its state edited, continued at once when given the agents).
 * @module
 */
import { parseArgs } from 'node:util';
import { ConfigurationError, errorMessage, isTroupeError } from '../core/errors.js';
import { resume } from '../core/resume.js';
import type { Usage } from '../core/usage.js';
import { fileStore } from '../persistence/file-store.js';
import { readRun } from '../persistence/run-log.js';
import { listRuns } from '../persistence/runs.js';
import { listCheckpoints } from '../travel/checkpoints.js';
import { forkRun, type ForkEdit } from '../travel/fork.js';
import type { CliIo } from './io.js';
import { loggedPlan, rebuildRun, storeDir } from './travel-common.js';
import { printPlanOutcome } from './templates.js';
import type { PlanOutcome } from '../plan/engine/execute.js';
import { defined } from '../core/defined.js';

export const RUNS_HELP = `Usage: troupe runs [<run>] [--store <dir>] [--json]

Without <run>: one line per run logged in the file store --store <dir>
(default: $TROUPE_STORE), the latest first: its id, status, duration,
tokens in/out, cost, and the run it was forked from.
With <run>: that run's checkpoints, numbered in log order (the numbers
\`troupe fork <run> --at <n>\` takes): the pattern, its path in the run, and
where it was (iteration, round, chunk).

  --json   one JSON object per line`;

export const FORK_HELP = `Usage: troupe fork <run> --at <checkpoint> [--set <pointer>=<value>]... [--fork-id <id>] [--store <dir>]
                   [--agents <dir> [--adapter <name>] [--script <file.json>]]

Make a new run from checkpoint <checkpoint> of <run> (see \`troupe runs <run>\`):
seeded with every checkpoint the run had saved up to then, the chosen one
edited. The original run is never changed. A plan run (troupe run
--template, a plan template in troupe dev, executePlan with a store) is
continued at once from its log, which holds the plan, and its answer
printed; so is a run of agent files given --agents. Otherwise the fork
waits to be continued (\`troupe fork\` prints its id).

  --at <n>              the checkpoint's number
  --set <ptr>=<value>   set a field of the checkpoint: a JSON pointer into { state, outcome }
                        of a saved checkpoint or { entry } of an appended one
                        (/entry/output, /state/feedback); the value is JSON, else text
  --fork-id <id>        the fork's run id (default: a random one)
  --agents <dir>        the agent files the run was made from: continue the fork now
                        (not needed for a plan run)
  --adapter, --script   as for troupe run`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  store: { type: 'string' },
  json: { type: 'boolean' },
  at: { type: 'string' },
  set: { type: 'string', multiple: true },
  'fork-id': { type: 'string' },
  agents: { type: 'string' },
  adapter: { type: 'string' },
  script: { type: 'string' },
  as: { type: 'string' },
} as const;

/** Parse `args` with this module's options; a command line that does not parse is a usage error (exit 2). */
function parse(args: readonly string[], help: string, io: CliIo) {
  try {
    return parseArgs({ args: [...args], allowPositionals: true, options: OPTIONS });
  } catch (error) {
    io.err(`${errorMessage(error)}\n\n${help}`);
    return undefined;
  }
}

/** Run a command; a failure is one line on standard error (with its code) and exit code 1. */
export async function failures(io: CliIo, command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error) {
    io.err(`${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`);
    return 1;
  }
}

/** `troupe runs [<run>]`; resolves with the exit code. */
export async function runsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parse(args, RUNS_HELP, io);
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(RUNS_HELP);
    return 0;
  }
  if (positionals.length > 1) {
    io.err(`Expected at most 1 argument, got ${positionals.length}.\n\n${RUNS_HELP}`);
    return 2;
  }
  const dir = storeDir(values.store, io);
  if (dir === undefined) {
    io.err(`troupe runs reads a file store: give --store <dir> (or set TROUPE_STORE).\n\n${RUNS_HELP}`);
    return 2;
  }
  const store = fileStore(dir);
  return failures(io, async () => {
    if (positionals[0] !== undefined) return checkpointsOf(positionals[0], store, values.json === true, io);
    const runs = await listRuns({ store, ...defined({ signal: io.signal }) });
    if (values.json) {
      for (const r of runs) io.out(JSON.stringify(r));
      return 0;
    }
    if (runs.length === 0) {
      io.out(`No runs are logged in ${dir}.`);
      return 0;
    }
    const rows = runs.map((r) => [r.runId, r.runnable, r.status ? `${r.status}${r.reason ? ` (${r.reason})` : ''}` : r.endedAt === undefined ? 'unfinished' : 'failed', r.endedAt === undefined ? '-' : duration(r.endedAt - r.startedAt), usage(r.usage), cost(r.usage), r.parent ? `${r.parent.runId}${r.parent.checkpoint === undefined ? '' : ` @${r.parent.checkpoint}`}` : '']);
    for (const line of table([['run', 'runnable', 'status', 'duration', 'tokens in/out', 'cost', 'forked from'], ...rows])) io.out(line);
    return 0;
  });
}

async function checkpointsOf(runId: string, store: ReturnType<typeof fileStore>, json: boolean, io: CliIo): Promise<number> {
  const log = await readRun(runId, { store, ...defined({ signal: io.signal }) });
  if (log.events.length === 0) throw new ConfigurationError(`No run "${runId}" is logged in the store`, { code: 'unknown_run', details: { runId } });
  const checkpoints = listCheckpoints(log);
  if (json) {
    for (const c of checkpoints) io.out(JSON.stringify(c));
    return 0;
  }
  if (checkpoints.length === 0) {
    io.out(`Run "${runId}" saved no checkpoints.`);
    return 0;
  }
  const rows = checkpoints.map((c) => [String(c.id), c.type === 'saved' ? (c.finished ? 'finished' : 'saved') : 'appended', c.kind, c.path, c.summary + (c.seeded ? ' (from the parent)' : '')]);
  for (const line of table([['#', 'type', 'kind', 'path', 'where'], ...rows])) io.out(line);
  return 0;
}

/** `troupe fork <run> --at <n>`; resolves with the exit code. */
export async function forkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parse(args, FORK_HELP, io);
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(FORK_HELP);
    return 0;
  }
  const at = Number(values.at);
  if (positionals.length !== 1 || values.at === undefined || !Number.isInteger(at) || at < 1) {
    io.err(`${positionals.length !== 1 ? `Expected 1 argument, got ${positionals.length}.` : 'Expected --at to be a checkpoint number (1, 2, ...; see troupe runs <run>).'}\n\n${FORK_HELP}`);
    return 2;
  }
  const dir = storeDir(values.store, io);
  if (dir === undefined) {
    io.err(`troupe fork reads a file store: give --store <dir> (or set TROUPE_STORE).\n\n${FORK_HELP}`);
    return 2;
  }
  return failures(io, async () => {
    const store = fileStore(dir);
    const set = (values.set ?? []).map(parseEdit);
    const call = defined({ signal: io.signal });
    // A plan run continues from its log; a run of agent files from --agents.
    const parent = await readRun(positionals[0]!, { store, ...call });
    const plan = parent.events.length > 0 && loggedPlan({ ...parent, runId: positionals[0]! }) !== undefined;
    const fork = await forkRun(positionals[0]!, { store, at, set, ...defined({ forkId: values['fork-id'], signal: io.signal, clock: io.clock }) });
    io.out(`fork: ${fork.forkId} of ${fork.parent.runId} at checkpoint ${fork.parent.checkpoint} (${fork.checkpoint.kind} ${fork.checkpoint.path}${fork.checkpoint.summary ? `, ${fork.checkpoint.summary}` : ''})`);
    for (const change of fork.changes) io.out(`  changed ${change}`);
    if (!plan && values.agents === undefined) {
      io.out(`continue it: troupe fork ... --agents <dir>, or resume(runnable, '${fork.forkId}', { store }) in code`);
      return 0;
    }
    const { runnable, adapter } = await rebuildRun({ ...parent, runId: positionals[0]! }, values.agents, values, io, true);
    const result = await resume(runnable, fork.forkId, { store, adapter: adapter!, ...defined({ signal: io.signal, clock: io.clock }) });
    if (plan) {
      printPlanOutcome(result as unknown as PlanOutcome, io);
      io.out(`usage: in=${result.usage.inputTokens} out=${result.usage.outputTokens} turns=${result.usage.turns}`);
      return (result as unknown as PlanOutcome).stats.failed > 0 ? 1 : 0;
    }
    io.out(result.output);
    io.out('');
    io.out(`agent: ${result.agent}   status: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
    io.out(`usage: in=${result.usage.inputTokens} out=${result.usage.outputTokens} turns=${result.usage.turns}`);
    return 0;
  });
}

/** `<pointer>=<value>`: the value as JSON, else as text. */
function parseEdit(text: string): ForkEdit {
  const at = text.indexOf('=');
  if (at < 1) throw new ConfigurationError(`Expected --set <pointer>=<value> (for example /entry/output="new text"), got "${text}"`, { code: 'invalid_edit' });
  const raw = text.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // not JSON: the text itself
  }
  return { pointer: text.slice(0, at), value };
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

function usage(u: Usage | undefined): string {
  return u ? `${u.inputTokens}/${u.outputTokens}` : '-';
}

function cost(u: Usage | undefined): string {
  return u ? `$${u.costUsd.toFixed(4)}` : '-';
}

/** Rows as columns padded to their widest cell. */
export function table(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
}

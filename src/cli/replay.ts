/**
 * `troupe replay <run>...`: replay logged runs with no model call, or,
 * with `--what-if`, with a prompt, a model or a tool result changed (only
 * the calls the change affects go to the model) and the two runs side by
 * side; exits 1 when a score dropped: a regression suite for prompts.
 * @module
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigurationError, errorMessage, isTroupeError } from '../core/errors.js';
import type { Store } from '../core/store.js';
import { fileStore } from '../persistence/file-store.js';
import { readRun } from '../persistence/run-log.js';
import { listRuns } from '../persistence/runs.js';
import type { RunEvents } from '../travel/checkpoints.js';
import { formatWhatIf } from '../travel/format.js';
import type { WhatIfChange } from '../travel/what-if-adapter.js';
import { replayRun, whatIf } from '../travel/what-if.js';
import { readableText } from '../text/lines.js';
import { loggedOutcome } from '../core/outcome.js';
import { parseRunLogFile } from './run-log-file.js';
import type { CliIo } from './io.js';
import { failures } from './runs.js';
import { PLAN_REPLAY_HINT, rebuildRun, storeDir, type AgentFlags } from './travel-common.js';
import { defined } from '../core/defined.js';

export const REPLAY_HELP = `Usage: troupe replay <run | run-log file | folder>... [--agents <dir>] [--store <dir>]
                     [--what-if <change>]... [--adapter <name>] [--script <file.json>] [--tolerance <n>]

Run each logged run again on its input, every model call answered from the
run's log: no model call is made. A plan run (troupe run --template, a plan
template in troupe dev, executePlan with a store) is rebuilt from its log,
which holds the plan; a run of agent files is rebuilt from the agent files
of --agents <dir>. A run that now asks something else fails (exit 1).

With --what-if, something is changed: calls whose input is unchanged are
still answered from the log, and only the calls the change affects go to
the model (--adapter, as for troupe run). Each run is printed side by side
with its what-if: status, evaluator scores, usage and cost, which calls
were new, and both outputs. Exits 1 when a score dropped by more than
--tolerance (default 0) or a what-if run failed.

  <run>                  a run id in the file store --store <dir> (default: $TROUPE_STORE)
  <run-log file>         a run's events.jsonl, or a run exported as JSON
  <folder>               a file store (every run in it), or a folder of run-log files
  --agents <dir>         the agent files the runs were made from (or their changed version);
                         not needed for plan runs
  --what-if <change>     prompt:<agent>=<text | @file>   another system prompt (a plan's worker: its role)
                         model:<agent>=<model>           another model
                         tool:<tool>=<text | @file>      another result of a tool`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  store: { type: 'string' },
  agents: { type: 'string' },
  'what-if': { type: 'string', multiple: true },
  adapter: { type: 'string' },
  script: { type: 'string' },
  as: { type: 'string' },
  tolerance: { type: 'string' },
} as const;

/** `troupe replay`; resolves with the exit code. */
export async function replayCommand(args: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: OPTIONS });
  } catch (error) {
    io.err(`${errorMessage(error)}\n\n${REPLAY_HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(REPLAY_HELP);
    return 0;
  }
  const tolerance = values.tolerance === undefined ? 0 : Number(values.tolerance);
  if (positionals.length === 0 || !(tolerance >= 0)) {
    io.err(`${positionals.length === 0 ? 'Expected at least one run.' : 'Expected --tolerance to be a non-negative number.'}\n\n${REPLAY_HELP}`);
    return 2;
  }
  const whatIfs = values['what-if'];
  return failures(io, async () => {
    const changes = await Promise.all((whatIfs ?? []).map(parseChange));
    const runs = await collectRuns(positionals, storeDir(values.store, io), io);
    let bad = 0;
    for (const recorded of runs) {
      if (whatIfs === undefined) {
        bad += await replayOne(recorded, values.agents, values, io);
        continue;
      }
      const { runnable, adapter, names } = await rebuildRun(recorded, values.agents, values, io, true);
      const report = await whatIf(runnable, recorded, { changes, tolerance, adapters: Object.fromEntries(names.map((n) => [n, adapter!])), ...defined({ adapter, signal: io.signal, clock: io.clock }) });
      io.out(formatWhatIf(report));
      io.out('');
      if (report.regressed) bad++;
    }
    const verb = values['what-if'] === undefined ? 'failed to replay' : 'regressed';
    io.out(`${runs.length} run${runs.length === 1 ? '' : 's'}, ${bad} ${verb}`);
    return bad > 0 ? 1 : 0;
  });
}

/** Replay one run with no model call: its runnable rebuilt (from its log, or from `agents`); a failure is one line on standard error. */
async function replayOne(recorded: RunEvents, agents: string | undefined, flags: AgentFlags, io: CliIo): Promise<number> {
  let plan = false;
  try {
    const rebuilt = await rebuildRun(recorded, agents, flags, io, false);
    plan = rebuilt.plan;
    const result = await replayRun(rebuilt.runnable, recorded, { adapterNames: rebuilt.names, ...defined({ control: rebuilt.control, signal: io.signal, clock: io.clock }) });
    const ended = endedAs(recorded);
    if (ended !== undefined && result.status === 'failed' && ended !== 'failed') {
      // A pattern that absorbs its parts' failures (a plan's chunks) ends failed rather than throwing: the first failure says why.
      const failed = (result as { results?: Array<{ sequenceIndex: number; error?: string }> }).results?.find((r) => r.error !== undefined && !r.error.startsWith('Skipped'));
      const why = failed ? `: chunk ${failed.sequenceIndex}: ${failed.error}` : '';
      const hint = plan && failed?.error?.startsWith('Replay diverged') === true ? ` (${PLAN_REPLAY_HINT})` : '';
      io.err(`${recorded.runId ?? 'run'}: the replay ended failed, where the run ended ${ended}${why}${hint}`);
      return 1;
    }
    io.out(`${recorded.runId ?? 'run'}: ${result.status}, ${result.served} turns from the log, 0 model calls`);
    io.out(result.output);
    return 0;
  } catch (error) {
    const hint = plan && isTroupeError(error, 'replay_divergence') ? ` (${PLAN_REPLAY_HINT})` : '';
    io.err(`${recorded.runId ?? 'run'}: ${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}${hint}`);
    return 1;
  }
}

/** How the recorded run ended: its last `run.completed` or `run.failed` (`undefined` when it did not end). */
function endedAs(recorded: RunEvents): string | undefined {
  let status: string | undefined;
  for (const record of recorded.events) {
    const e = record as { type?: unknown; status?: unknown } | null;
    if (e?.type === 'run.failed') status = 'failed';
    else if (e?.type === 'run.completed' && typeof e.status === 'string') status = loggedOutcome(e.status, undefined).status;
  }
  return status;
}

/** `prompt:<agent>=...`, `model:<agent>=...` or `tool:<tool>=...`; `@file` reads the text from a file. */
async function parseChange(text: string): Promise<WhatIfChange> {
  const colon = text.indexOf(':');
  const equals = text.indexOf('=', colon + 1);
  const kind = colon < 0 ? '' : text.slice(0, colon);
  const name = text.slice(colon + 1, equals);
  if (colon < 0 || equals < 0 || name === '' || !['prompt', 'model', 'tool'].includes(kind)) {
    throw new ConfigurationError(`Expected --what-if prompt:<agent>=<text>, model:<agent>=<model> or tool:<tool>=<text>, got "${text}"`, { code: 'invalid_edit' });
  }
  let value = text.slice(equals + 1);
  if (value.startsWith('@') && kind !== 'model') value = readableText(await readFile(value.slice(1), 'utf8'), value.slice(1)).trimEnd();
  if (kind === 'prompt') return { agent: name, prompt: value };
  if (kind === 'model') return { agent: name, model: value };
  return { tool: name, result: value };
}

/** The runs named on the command line: run ids in the store, run-log files, file stores and folders of run-log files. */
async function collectRuns(sources: readonly string[], dir: string | undefined, io: CliIo): Promise<Array<RunEvents & { runId: string }>> {
  const out: Array<RunEvents & { runId: string }> = [];
  const call = defined({ signal: io.signal });
  for (const source of sources) {
    const info = await stat(source).catch(() => undefined);
    if (info?.isFile()) out.push(await logFile(source, io));
    else if (info?.isDirectory() && (await stat(join(source, 'runs')).catch(() => undefined))?.isDirectory()) {
      const store = fileStore(source);
      for (const meta of (await listRuns({ store, ...call })).reverse()) out.push(await logged(store, meta.runId, call));
    } else if (info?.isDirectory()) {
      for (const name of (await readdir(source)).filter((n) => n.endsWith('.json') || n.endsWith('.jsonl')).sort()) out.push(await logFile(join(source, name), io));
    } else {
      if (dir === undefined) throw new ConfigurationError(`"${source}" is not a file or folder; to read run "${source}" from a store, give --store <dir> (or set TROUPE_STORE)`, { code: 'invalid_argument' });
      out.push(await logged(fileStore(dir), source, call));
    }
  }
  return out;
}

/** A run-log file; a torn last line is left out with a warning. */
async function logFile(path: string, io: CliIo): Promise<RunEvents & { runId: string }> {
  const { torn, ...log } = parseRunLogFile(await readFile(path, 'utf8'), path);
  if (torn) io.err(`warning: ${torn.reason}; it is left out`);
  return log;
}

async function logged(store: Store, runId: string, call: { signal?: AbortSignal }): Promise<RunEvents & { runId: string }> {
  const log = await readRun(runId, { store, ...call });
  if (log.events.length === 0) throw new ConfigurationError(`No run "${runId}" is logged in the store`, { code: 'unknown_run', details: { runId } });
  return log;
}


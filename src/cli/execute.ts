/**
 * Running a runnable from the command line, for `troupe run` and `troupe
 * squad run`: the adapter the flags name, progress on standard error (or
 * event lines with `--json`), an optional file store, and the answer, the
 * terminal agent and the usage on standard output.
 * @module
 */
import type { AgentDefinition } from '../agents/definition.js';
import { realClock } from '../core/clock.js';
import { defined } from '../core/defined.js';
import { ConfigurationError, errorMessage, isTroupeError } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { formatOpTree } from '../core/ops.js';
import { run } from '../core/run.js';
import type { Runnable } from '../core/runnable.js';
import { fileStore } from '../persistence/file-store.js';
import { readThread } from '../persistence/threads.js';
import { recordRunOutcomes } from '../plan/learning/outcome-collector.js';
import { adapterLine, cliAdapterName, createCliAdapter, type CliAdapterContext } from './adapters.js';
import type { CliIo } from './io.js';
import { liveProgress, plainProgress, type Progress } from './progress.js';

/** The flags a run from the command line reads. */
export interface RunFlags {
  adapter?: string | undefined;
  script?: string | undefined;
  trace?: boolean | undefined;
  store?: string | undefined;
  thread?: string | undefined;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
}

/**
 * Run `runnable` on `input` with the adapter the flags (or the environment)
 * name, showing progress, and print its answer; resolves with the exit code.
 * `defs` are the agent definitions the scripted adapter's default replies
 * follow (routers pick their first destination); `offline` replaces those
 * replies.
 */
export async function executeRun(
  runnable: Runnable,
  input: string,
  defs: readonly AgentDefinition[],
  flags: RunFlags,
  io: CliIo,
  offline?: CliAdapterContext['fallback'],
): Promise<number> {
  if (!flags.quiet) io.err(adapterLine('troupe', flags.adapter, io.env, flags.script));
  const adapter = await createCliAdapter(cliAdapterName(flags.adapter, io.env), {
    defs,
    env: io.env,
    ...defined({ script: flags.script, clock: io.clock, fallback: offline }),
  });
  const storeDir = flags.store ?? (io.env.TROUPE_STORE || undefined);
  if (flags.thread !== undefined && storeDir === undefined) {
    throw new ConfigurationError(`--thread ${flags.thread} needs a store to keep the thread in: give --store <dir> (or set TROUPE_STORE)`);
  }
  let progress: Progress | undefined;
  let onEvent: ((event: TroupeEvent) => void) | undefined;
  if (flags.json) onEvent = (event) => io.out(jsonLine(event));
  else if (!flags.quiet) {
    progress = io.progress?.isTTY ? await liveProgress(io.progress, io.clock ?? realClock) : plainProgress(io.err);
    onEvent = progress.onEvent;
  }
  const store = storeDir === undefined ? undefined : fileStore(storeDir);
  let result;
  try {
    result = await run(runnable, input, { adapter, ...defined({ onEvent, signal: io.signal, clock: io.clock, store, thread: flags.thread }) });
  } finally {
    progress?.close();
  }
  // The run's outcomes join the statistics `troupe stats` shows.
  if (store) await recordRunOutcomes(result.runId, { store, ...defined({ signal: io.signal }) });
  if (flags.json) return 0;
  const u = result.usage;
  io.out(result.output);
  io.out('');
  io.out(`agent: ${result.agent}   status: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
  io.out(`usage: in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}${u.costUsd > 0 ? ` cost=$${u.costUsd.toFixed(4)}` : ''}`);
  if (storeDir !== undefined) io.out(`run: ${result.runId} (logged in ${storeDir}; \`troupe report ${result.runId} --store ${storeDir}\` draws it)`);
  if (store && flags.thread !== undefined) {
    const thread = await readThread(flags.thread, { store, ...defined({ signal: io.signal }) });
    io.out(`thread: ${flags.thread} (${thread?.messages.length ?? 0} messages; \`--thread ${flags.thread}\` continues it)`);
  }
  if (flags.trace) io.out(`\n${formatOpTree(result.trace)}`);
  return 0;
}

/** An event as one JSON line (an event that is not JSON becomes a warning line, never a crash). */
function jsonLine(event: TroupeEvent): string {
  try {
    return JSON.stringify(event);
  } catch (error) {
    return JSON.stringify({ type: 'warning', runId: event.runId, time: event.time, message: `Event "${event.type}" is not JSON-serialisable: ${errorMessage(error)}`, code: 'not_json' });
  }
}

/** How many lines of a command's stderr an error message shows (the process adapter's). */
const STDERR_LINES_SHOWN = 5;

/**
 * Write a command's failure: one line with its code (a message may go on
 * over a few lines, as a failed process's stderr does). The stderr a failed
 * command left (`details.stderr` of the error or of a cause) is written
 * whole with `--verbose`; without, a line says it is there.
 */
export function writeFailure(io: CliIo, error: unknown, verbose: boolean): void {
  io.err(`${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`);
  const stderr = stderrOf(error);
  if (stderr === undefined) return;
  if (verbose) io.err(`\nstderr of the command (its last ${stderr.length} characters):\n${stderr.trimEnd()}`);
  else if (stderr.trimEnd().split('\n').length > STDERR_LINES_SHOWN) io.err('(--verbose shows more of the command\'s stderr)');
}

/** The `details.stderr` of an error or of one of its causes. */
function stderrOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (isTroupeError(e) && typeof e.details['stderr'] === 'string' && e.details['stderr'].trim() !== '') return e.details['stderr'];
    if (e === null || typeof e !== 'object') return undefined;
  }
  return undefined;
}

/**
 * One run of a CLI: spawned without a shell in its own process group,
 * output bounded, settled when the command itself exits.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import crossSpawn from 'cross-spawn';
import { abortError, realClock } from '../core/clock.js';
import { AdapterError, ConfigurationError, errorMessage } from '../core/errors.js';
import { killGroup, release, watch } from './process-group.js';

/** How to run a command. */
export interface CommandOptions {
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed; `undefined`: no stdin. */
  stdin: string | undefined;
  /** How much of stderr to keep. */
  tailChars: number;
  /** Most bytes of stdout, and of stderr. */
  maxOutputBytes: number;
}

/** What a command wrote. */
export interface CommandResult {
  stdout: string;
  stderr: string;
}

/** A command that runs. */
export interface RunningCommand {
  /** The spawned process. */
  readonly child: ChildProcess;
  /** Settles once the command has exited (after a short drain of its output); rejects on a non-zero exit, a spawn error, too much output, or {@link RunningCommand.fail}. */
  readonly done: Promise<CommandResult>;
  /** Kill the command's process group and reject `done` with `error` (nothing once settled). */
  fail(error: Error): void;
}

/**
 * How long to wait for stdout and stderr to close once the command has
 * exited. A helper it started may hold them open for good; the turn does not
 * wait for it (and its process group is killed).
 */
const DRAIN_MS = 200;

/**
 * Start `argv`: settled when the command itself exits (after a short drain
 * of its output), not when every process holding its output has. Output
 * past `maxOutputBytes` kills its process group and rejects at once. While
 * it runs, the host's exit kills its group too.
 */
export function startCommand(argv: readonly string[], options: CommandOptions): RunningCommand {
  const [file, ...args] = argv as [string, ...string[]];
  // cross-spawn: on Windows it finds npm's `.cmd` shims through PATHEXT and quotes for cmd.exe; elsewhere it is `spawn`.
  const child = crossSpawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    shell: false,
    windowsHide: true,
    detached: process.platform !== 'win32',
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  watch(child);
  let fail: (error: Error) => void = () => undefined;
  const done = new Promise<CommandResult>((resolve, reject) => {
    const stdout: string[] = [];
    const written = { stdout: 0, stderr: 0 };
    let stderr = '';
    let open = 2; // stdout and stderr
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let cancelDrain: (() => void) | undefined;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      cancelDrain?.();
      release(child);
      child.stdout!.destroy();
      child.stderr!.destroy();
      fn();
    };
    fail = (error: Error) => {
      if (settled) return;
      killGroup(child);
      finish(() => reject(error));
    };
    const count = (stream: 'stdout' | 'stderr', chunk: string): boolean => {
      written[stream] += Buffer.byteLength(chunk);
      if (written[stream] <= options.maxOutputBytes) return true;
      fail(
        new AdapterError(`Command "${file}" wrote more than ${options.maxOutputBytes} bytes to ${stream}`, {
          details: { command: file, stream, limit: options.maxOutputBytes },
        }),
      );
      return false;
    };
    const settle = () => {
      if (!exit) return;
      const { code, signal: killedBy } = exit;
      const tail = options.tailChars === 0 ? '' : stderr.slice(-options.tailChars);
      if (code === 0) {
        finish(() => resolve({ stdout: stdout.join(''), stderr: tail }));
        return;
      }
      const how = code === null ? `was killed by ${killedBy}` : `exited with code ${code}`;
      finish(() =>
        reject(
          new AdapterError(`Command "${file}" ${how}${stderrSummary(tail)}`, {
            details: { command: file, exitCode: code, signal: killedBy, stderr: tail },
          }),
        ),
      );
    };
    const closed = () => {
      open--;
      if (open === 0) settle();
    };
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (count('stdout', chunk)) stdout.push(chunk);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      if (count('stderr', chunk)) stderr = (stderr + chunk).slice(-Math.max(options.tailChars, 1) * 2);
    });
    child.stdout!.once('close', closed);
    child.stderr!.once('close', closed);
    if (options.stdin !== undefined) {
      child.stdin!.on('error', () => undefined); // the command may exit without reading its input
      child.stdin!.end(options.stdin);
    }
    child.on('error', (error: NodeJS.ErrnoException) => {
      fail(
        error.code === 'ENOENT'
          ? new ConfigurationError(`Command "${file}" was not found (is it installed and on PATH?)`, { code: 'missing_dependency', cause: error, details: { command: file } })
          : new AdapterError(`Could not run "${file}": ${errorMessage(error)}`, { cause: error, details: { command: file } }),
      );
    });
    child.on('exit', (code, killedBy) => {
      if (settled) return;
      exit = { code, signal: killedBy };
      if (open === 0) return settle();
      // A helper of the command may keep its output open: read what is left for a moment, then settle without it.
      cancelDrain = realClock.setTimer(() => {
        killGroup(child);
        settle();
      }, DRAIN_MS);
    });
  });
  return { child, done, fail: (error) => fail(error) };
}

/**
 * Run one command to its end (see {@link startCommand}). An abort kills its
 * process group and rejects at once with the abort error.
 */
export async function runCommand(
  argv: readonly string[],
  options: CommandOptions & { signal: AbortSignal | undefined; onSpawn: (child: ChildProcess) => void },
): Promise<CommandResult> {
  const { signal } = options;
  if (signal?.aborted) throw abortError(signal);
  const command = startCommand(argv, options);
  options.onSpawn(command.child);
  const onAbort = () => command.fail(abortError(signal));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await command.done;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** How many lines of stderr a failure's message shows; the whole kept tail is in `details.stderr`. */
const STDERR_LINES_IN_MESSAGE = 5;

/** The last lines of a failed command's stderr, for its error message (each line at most 300 characters). */
function stderrSummary(tail: string): string {
  const lines = tail.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '');
  if (lines.length === 0) return '';
  const shown = lines.slice(-STDERR_LINES_IN_MESSAGE).map((line) => (line.length > 300 ? `${line.slice(0, 299)}…` : line));
  if (shown.length === 1 && lines.length === 1) return `: ${shown[0]}`;
  const what = lines.length > shown.length ? `the last ${shown.length} lines of its stderr` : 'its stderr';
  return `; ${what}:\n${shown.map((line) => `  ${line}`).join('\n')}`;
}

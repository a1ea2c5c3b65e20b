/**
 * What the `troupe` command writes to and reads from: its streams and
 * environment, passed in so that tests run it in process.
 * @module
 */
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../core/clock.js';
import type { ProgressStream } from './progress.js';

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
  /** Where `troupe run` draws live progress when it is a terminal (the executable passes standard error); otherwise progress goes to `err` as lines. */
  progress?: ProgressStream;
  /** The clock of `troupe run` (tests pass a simulated one). Default: the real clock. */
  clock?: Clock;
  /** What `troupe mcp serve` reads MCP from. Default: the process's standard input. */
  stdin?: Readable;
  /** Where `troupe mcp serve` writes MCP. Default: the process's standard output. */
  stdout?: Writable;
}

/**
 * The tool calls of a CLI session: the session's tools are served to the
 * CLI over MCP (through `troupe/mcp`'s tool bridge), and each call the CLI
 * makes waits, as a tool call of the turn, until troupe sends its result.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { ToolCall, ToolResult, ToolSchema } from '../core/adapter.js';
import { abortError, realClock } from '../core/clock.js';
import { AdapterError } from '../core/errors.js';
import { startToolBridge, type ToolBridge } from '../integrations/mcp/bridge.js';
import type { McpToolAnswer } from '../integrations/mcp/server.js';
import type { CommandResult, RunningCommand } from './process-command.js';

/** Where the CLI finds troupe's MCP server, which serves the session's tools. */
export interface McpServerLaunch {
  /** The server's name: the CLI shows the tools under it (Claude Code: `mcp__<name>__<tool>`). */
  readonly name: string;
  /** The program of the stdio server the CLI starts (this process's Node.js). */
  readonly command: string;
  /** Its arguments (the bridge script). */
  readonly args: readonly string[];
  /** The names of the tools served. */
  readonly tools: readonly string[];
}

/**
 * How long to wait for more calls once a call has arrived, before the turn
 * is returned with every call that came: a CLI that runs several tools at
 * once sends their calls some tens of milliseconds apart (Codex 0.169:
 * about 40 ms), and troupe runs the calls of one turn in parallel. Each
 * arrival waits this long again, up to {@link MAX_TOOL_CALL_GATHER_MS} in
 * all. It bounds the latency of local IPC, not program time, so it is on
 * the real clock (as the output drain is).
 */
export const DEFAULT_TOOL_CALL_GATHER_MS = 150;
/** The longest a turn waits for more calls, however they keep coming. */
const MAX_TOOL_CALL_GATHER_MS = 2000;

interface Waiting {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  answer: (answer: McpToolAnswer) => void;
}

type Exit = { ok: true; result: CommandResult } | { ok: false; error: unknown };

/** A turn's next event: tool calls, or the end of the command. */
export type ToolTurnEvent = { calls: ToolCall[] } | { result: CommandResult };

/** The MCP side of one CLI session. */
export class CliToolCalls {
  readonly #bridge: ToolBridge;
  readonly #gatherMs: number;
  /** Where the CLI finds the server. */
  readonly server: McpServerLaunch;
  /** Calls that arrived and are not yet part of a turn. */
  #queue: Waiting[] = [];
  /** Calls handed to troupe, waiting for their results. */
  #pending = new Map<string, Waiting>();
  #command: RunningCommand | undefined;
  #exit: Exit | undefined;
  #wake: (() => void) | undefined;
  #nextId = 1;

  private constructor(bridge: ToolBridge, server: McpServerLaunch, gatherMs: number) {
    this.#bridge = bridge;
    this.server = server;
    this.#gatherMs = gatherMs;
  }

  /** Start the bridge for `tools`, as the MCP server `name`. */
  static async start(tools: readonly ToolSchema[], name: string, gatherMs: number | undefined, signal: AbortSignal | undefined): Promise<CliToolCalls> {
    let self: CliToolCalls | undefined;
    const bridge = await startToolBridge({
      tools,
      name,
      ...(signal ? { signal } : {}),
      call: (call) =>
        self ? self.#arrive(call.name, call.arguments, call.signal) : Promise.resolve({ content: 'Error: the session is starting', isError: true }),
    });
    const server: McpServerLaunch = { name, command: bridge.command, args: bridge.args, tools: tools.map((t) => t.name) };
    self = new CliToolCalls(bridge, server, gatherMs ?? DEFAULT_TOOL_CALL_GATHER_MS);
    return self;
  }

  /** True while a command of this session runs (or has ended and its end is not yet reported). */
  get running(): boolean {
    return this.#command !== undefined;
  }

  /** Follow `command`: its calls become turns until it ends. */
  attach(command: RunningCommand): void {
    this.#command = command;
    this.#exit = undefined;
    command.done.then(
      (result) => this.#ended(command, { ok: true, result }),
      (error: unknown) => this.#ended(command, { ok: false, error }),
    );
  }

  /** Stop the running command, if any, with `error`; calls still open are dropped. */
  async stop(error: Error): Promise<void> {
    const command = this.#command;
    if (!command) return;
    command.fail(error);
    await command.done.catch(() => undefined);
    this.#detach();
  }

  /** Answer the calls of the last turn; a call without a result gets an error result, so the CLI never waits for it. */
  answer(results: readonly ToolResult[]): void {
    for (const result of results) {
      const call = this.#pending.get(result.callId);
      if (!call) continue;
      this.#pending.delete(result.callId);
      call.answer({ content: result.content, ...(result.isError ? { isError: true } : {}) });
    }
    for (const call of this.#pending.values()) call.answer({ content: `Error: no result was given for "${call.name}"`, isError: true });
    this.#pending.clear();
  }

  /**
   * The command's next tool calls (gathered for `gatherMs` after each),
   * or its end. An abort of `signal` kills the command and rejects with the
   * abort error.
   */
  async next(signal: AbortSignal | undefined): Promise<ToolTurnEvent> {
    const command = this.#command;
    if (!command) throw new AdapterError('No command of this session is running');
    const onAbort = () => command.fail(abortError(signal));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // A call can be withdrawn while it is gathered (the CLI closed its
      // connection as it exited): then wait again, for other calls or for the
      // command's end, so a failure always carries the command's exit code.
      for (;;) {
        if (this.#queue.length === 0 && !this.#exit) {
          await this.#until(() => this.#queue.length > 0 || this.#exit !== undefined || this.#command !== command);
          if (this.#queue.length > 0 && !this.#exit && this.#command === command) await this.#gather();
        }
        if (this.#command !== command) throw signal?.aborted ? abortError(signal) : new AdapterError('The command was stopped');
        if (signal?.aborted) {
          this.#detach();
          throw abortError(signal);
        }
        if (this.#exit) break;
        if (this.#queue.length > 0) return { calls: this.#take() };
      }
      const exit = this.#exit;
      this.#detach();
      if (!exit.ok) throw exit.error;
      return { result: exit.result };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The bridge's private folder (mode 0700), removed by {@link CliToolCalls.close}. */
  get dir(): string {
    return this.#bridge.dir;
  }

  /** Stop the command and the bridge (its connections close, so nothing is left waiting). */
  async close(): Promise<void> {
    await this.stop(new AdapterError('The session was closed'));
    await this.#bridge.close();
  }

  #arrive(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpToolAnswer> {
    if (!this.#command || this.#exit) {
      return Promise.resolve({ content: `Error: no turn of this session is running, so "${name}" cannot run now`, isError: true });
    }
    return new Promise((resolve) => {
      const call: Waiting = { id: `mcp-${this.#nextId++}`, name, arguments: args, answer: resolve };
      this.#queue.push(call);
      signal.addEventListener(
        'abort',
        () => {
          // The CLI cancelled the call or went away: it no longer waits for an answer.
          this.#queue = this.#queue.filter((c) => c !== call);
          this.#pending.delete(call.id);
          resolve({ content: 'Error: cancelled', isError: true });
        },
        { once: true },
      );
      this.#wake?.();
    });
  }

  #take(): ToolCall[] {
    const calls = this.#queue;
    this.#queue = [];
    for (const call of calls) this.#pending.set(call.id, call);
    return calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  }

  #ended(command: RunningCommand, exit: Exit): void {
    if (this.#command !== command) return;
    this.#exit = exit;
    this.#wake?.();
  }

  #detach(): void {
    this.#command = undefined;
    this.#wake?.();
    this.#exit = undefined;
    const dropped = `Error: the command ended before the call was answered`;
    for (const call of [...this.#queue, ...this.#pending.values()]) call.answer({ content: dropped, isError: true });
    this.#queue = [];
    this.#pending.clear();
  }

  #until(ready: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!ready()) return;
        this.#wake = undefined;
        resolve();
      };
      this.#wake = check;
      check();
    });
  }

  /** Wait for further calls of the same batch: {@link CliToolCalls.#gatherMs} after each arrival (at most {@link MAX_TOOL_CALL_GATHER_MS}), or until the command ends. */
  #gather(): Promise<void> {
    return new Promise((resolve) => {
      const started = realClock.now();
      let count = this.#queue.length;
      let cancel: () => void = () => undefined;
      const done = () => {
        cancel();
        this.#wake = undefined;
        resolve();
      };
      const arm = () => {
        cancel();
        cancel = realClock.setTimer(done, Math.max(0, Math.min(this.#gatherMs, started + MAX_TOOL_CALL_GATHER_MS - realClock.now())));
      };
      this.#wake = () => {
        if (this.#exit !== undefined || this.#command === undefined) return done();
        if (this.#queue.length > count) {
          count = this.#queue.length;
          arm();
        }
      };
      arm();
    });
  }
}

/** The error a stopped command's turn rejects with when a new message replaces it. */
export function supersededError(): AdapterError {
  return new AdapterError('A new message was sent while the command was waiting for tool results; the command was stopped');
}

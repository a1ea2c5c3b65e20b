/**
 * The tool bridge: how a program that only speaks stdio MCP (every
 * coding-agent CLI does) reaches tools served in this process. The host
 * listens on a loopback port; the CLI spawns a small bridge script that
 * connects to it with a per-bridge secret and copies bytes between its
 * stdio and the socket.
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { throwIfAborted } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { clock, defineOptions, expectPositiveInteger, expectPositiveNumber, positiveInteger, positiveNumber } from '../../core/options.js';
import { createToolServer, toolServerOptions, type ToolServer, type ToolServerOptions } from './server.js';
import { loadMcpSdk } from './sdk.js';
import { SocketTransport } from './socket-transport.js';

/**
 * Options of {@link startToolBridge}: those of the server it serves
 * (`signal` aborts starting the bridge), and how long a connection may
 * wait before it sends the secret.
 */
export interface ToolBridgeOptions extends ToolServerOptions {
  /**
   * How long a connection has to send the secret, in ms, from when it is
   * accepted; one that has not by then is closed. The bridge script sends
   * it as soon as it connects. Default: {@link DEFAULT_BRIDGE_AUTH_TIMEOUT_MS}.
   */
  authTimeoutMs?: number;
  /**
   * How many connections may wait for their secret at once. A connection
   * accepted beyond this closes the oldest one still waiting, so a client
   * that connects and sends the secret at once always gets through,
   * however many idle connections others open. Default:
   * {@link DEFAULT_BRIDGE_MAX_PENDING}.
   */
  maxPendingConnections?: number;
  /** The clock `authTimeoutMs` is measured on. Default: the real clock. */
  clock?: Clock;
}

const toolBridgeOptions = defineOptions<ToolBridgeOptions>('startToolBridge', {
  ...toolServerOptions.shape,
  authTimeoutMs: positiveNumber,
  maxPendingConnections: positiveInteger,
  clock,
});

/** How long a bridge connection has to send the secret by default: 5 s. */
export const DEFAULT_BRIDGE_AUTH_TIMEOUT_MS = 5_000;

/** How many bridge connections may wait for their secret at once by default. */
export const DEFAULT_BRIDGE_MAX_PENDING = 32;

/** A running tool bridge. */
export interface ToolBridge {
  /** The program an MCP client starts to reach the tools: this process's Node.js (`process.execPath`). */
  readonly command: string;
  /** Its arguments: the path of the bridge script. */
  readonly args: readonly string[];
  /** A private folder (mode 0700) that holds the bridge; config files for the client may go here too. Removed by `close()`. */
  readonly dir: string;
  /** The loopback port the host listens on. */
  readonly port: number;
  /** How many clients are connected now (connections that sent the secret). */
  readonly connections: number;
  /** How many connections are waiting to send the secret now (at most `maxPendingConnections`). */
  readonly pending: number;
  /** Stop listening, close every connection (the calls still running see their signal abort), remove `dir`. Safe to call twice. */
  close(): Promise<void>;
}

/** The longest first line (the secret) a connection may send before it is dropped. */
const MAX_TOKEN_LINE = 256;

/**
 * The bridge script, run by the client with `node bridge.cjs`: it reads the
 * port and secret beside it, connects to 127.0.0.1, sends the secret, then
 * copies stdin to the socket and the socket to stdout. It ends when either
 * side does, so it never outlives the session's server or the client.
 */
const BRIDGE_SOURCE = `'use strict';
// troupe MCP bridge: stdio <-> the tool server of one troupe session (written by troupe, removed with the session).
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const fail = (message) => { process.stderr.write('troupe MCP bridge: ' + message + '\\n'); process.exit(1); };
let info;
try { info = JSON.parse(fs.readFileSync(path.join(__dirname, 'connect.json'), 'utf8')); } catch (error) { fail(error.message); }
const socket = net.connect({ host: '127.0.0.1', port: info.port });
socket.on('connect', () => {
  socket.write(info.token + '\\n');
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
});
socket.on('error', (error) => fail(error.message));
socket.on('close', () => process.stdout.write('', () => process.exit(0)));
process.stdin.on('end', () => socket.end());
`;

/**
 * Start a tool bridge for `options.tools`: a loopback listener, and a bridge
 * script in a private temporary folder that any stdio MCP client can run
 * (`{ command: bridge.command, args: bridge.args }` in its MCP config).
 * Each client that connects with the secret gets its own MCP server (see
 * {@link createToolServer}); a connection without it is dropped, and so is
 * one that has not sent it within `authTimeoutMs`, or the oldest waiting
 * one once more than `maxPendingConnections` wait. The secret lives only in
 * a file of that folder (mode 0600), never in a command line.
 *
 * @example
 * ```ts
 * const bridge = await startToolBridge({ tools, call: async (c) => ({ content: await run(c) }) });
 * const config = { mcpServers: { troupe: { command: bridge.command, args: bridge.args } } };
 * // ... hand `config` to the CLI, and when done:
 * await bridge.close();
 * ```
 */
export async function startToolBridge(options: ToolBridgeOptions): Promise<ToolBridge> {
  toolBridgeOptions.check(options);
  throwIfAborted(options.signal);
  const authTimeoutMs = expectPositiveNumber('authTimeoutMs', options.authTimeoutMs) ?? DEFAULT_BRIDGE_AUTH_TIMEOUT_MS;
  const maxPending = expectPositiveInteger('maxPendingConnections', options.maxPendingConnections) ?? DEFAULT_BRIDGE_MAX_PENDING;
  const clock = options.clock ?? realClock;
  const sdk = await loadMcpSdk('the MCP tool bridge');
  const token = randomBytes(32).toString('hex');
  const sockets = new Set<Socket>();
  const waiting = new WaitingRoom(clock, authTimeoutMs, maxPending);
  const servers = new Set<ToolServer>();
  let closed = false;
  const listener = createServer((socket) => accept(socket));
  const dir = await mkdtemp(join(tmpdir(), 'troupe-mcp-'));

  const accept = (socket: Socket) => {
    if (closed) return void socket.destroy();
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      waiting.leave(socket);
    });
    socket.on('error', () => socket.destroy());
    waiting.admit(socket);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(10);
      if (end < 0) {
        if (head.length > MAX_TOKEN_LINE) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      waiting.leave(socket);
      if (!sameSecret(head.subarray(0, end), token)) return void socket.destroy();
      void connect(socket, head.subarray(end + 1));
    };
    socket.on('data', onData);
  };

  const { signal: _starting, authTimeoutMs: _deadline, maxPendingConnections: _cap, clock: _clock, ...serverOptions } = options;
  const connect = async (socket: Socket, rest: Buffer) => {
    const server = await createToolServer(serverOptions);
    if (closed || socket.destroyed) return void (await server.close());
    servers.add(server);
    socket.once('close', () => {
      servers.delete(server);
      void server.close().catch(() => undefined);
    });
    await server.connect(new SocketTransport(socket, (value) => sdk.JSONRPCMessageSchema.parse(value), rest));
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    waiting.clear();
    await Promise.all([...servers].map((s) => s.close().catch(() => undefined)));
    await stopped;
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const port = await listen(listener);
    await writeFile(join(dir, 'connect.json'), JSON.stringify({ port, token }), { mode: 0o600 });
    await writeFile(join(dir, 'bridge.cjs'), BRIDGE_SOURCE, { mode: 0o600 });
    throwIfAborted(options.signal);
    return {
      command: process.execPath,
      args: [join(dir, 'bridge.cjs')],
      dir,
      port,
      get connections() {
        return servers.size;
      },
      get pending() {
        return waiting.size;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The connections that have not sent the secret yet, oldest first (a Map
 * keeps insertion order): each is closed at its deadline, and the oldest
 * once more than `max` wait.
 */
class WaitingRoom {
  readonly #deadlines = new Map<Socket, () => void>();
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #max: number;

  constructor(clock: Clock, timeoutMs: number, max: number) {
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
    this.#max = max;
  }

  /** How many wait. */
  get size(): number {
    return this.#deadlines.size;
  }

  /**
   * `socket` waits for its secret until its deadline. Beyond the cap the
   * oldest waiting connection is closed, never the new one: the bridge
   * script sends the secret the moment it connects.
   */
  admit(socket: Socket): void {
    while (this.#deadlines.size >= this.#max) {
      const oldest = this.#deadlines.keys().next().value as Socket;
      this.leave(oldest);
      oldest.destroy();
    }
    const cancel = this.#clock.setTimer(() => {
      this.#deadlines.delete(socket);
      socket.destroy();
    }, this.#timeoutMs);
    this.#deadlines.set(socket, cancel);
  }

  /** `socket` waits no more (it sent its first line, or closed): its deadline is cancelled. */
  leave(socket: Socket): void {
    const cancel = this.#deadlines.get(socket);
    if (!cancel) return;
    this.#deadlines.delete(socket);
    cancel();
  }

  /** Cancel every deadline (the bridge closes the sockets). */
  clear(): void {
    for (const cancel of this.#deadlines.values()) cancel();
    this.#deadlines.clear();
  }
}

function listen(server: NetServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function sameSecret(given: Buffer, token: string): boolean {
  const expected = Buffer.from(token);
  const trimmed = given.length > 0 && given[given.length - 1] === 13 ? given.subarray(0, -1) : given;
  return trimmed.length === expected.length && timingSafeEqual(trimmed, expected);
}

/**
 * An MCP transport over a socket, in the stdio transport's framing: one
 * JSON-RPC message per line.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { Socket } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The longest message accepted: 64 MiB, as the process adapter's bound on a CLI's output. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Newline-delimited JSON-RPC over `socket`. Lines are split in one pass
 * over each chunk (linear in the input); a line longer than
 * {@link MAX_MESSAGE_BYTES} closes the connection.
 */
export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #socket: Socket;
  readonly #parse: (value: unknown) => JSONRPCMessage;
  #head: Buffer | undefined;
  #partial: Buffer[] = [];
  #partialBytes = 0;
  #closed = false;

  /**
   * @param socket An open socket.
   * @param parse Checks one parsed line (the SDK's `JSONRPCMessageSchema.parse`).
   * @param head Bytes already read from the socket, to be read first.
   */
  constructor(socket: Socket, parse: (value: unknown) => JSONRPCMessage, head?: Buffer) {
    this.#socket = socket;
    this.#parse = parse;
    this.#head = head;
  }

  async start(): Promise<void> {
    const socket = this.#socket;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', (error: Error) => this.onerror?.(error));
    socket.on('close', () => this.#ended());
    const head = this.#head;
    this.#head = undefined;
    if (head && head.length > 0) this.#read(head);
    socket.resume();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed || this.#socket.destroyed) {
        reject(new Error('The MCP connection is closed'));
        return;
      }
      this.#socket.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.#socket.destroy();
    this.#ended();
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#partial = [];
    this.onclose?.();
  }

  #read(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(10); at >= 0 && !this.#closed; at = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, at);
      const line = this.#partial.length === 0 ? piece : Buffer.concat([...this.#partial, piece]);
      this.#partial = [];
      this.#partialBytes = 0;
      start = at + 1;
      this.#message(line);
    }
    if (this.#closed || start >= chunk.length) return;
    this.#partial.push(chunk.subarray(start));
    this.#partialBytes += chunk.length - start;
    if (this.#partialBytes > MAX_MESSAGE_BYTES) {
      this.onerror?.(new Error(`An MCP message was longer than ${MAX_MESSAGE_BYTES} bytes`));
      void this.close();
    }
  }

  #message(line: Buffer): void {
    const raw = line.toString('utf8');
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = this.#parse(JSON.parse(text));
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.onmessage?.(message);
  }
}

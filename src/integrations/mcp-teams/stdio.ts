/**
 * Teams as MCP tools over stdio: what an MCP client that starts the server
 * itself (Claude Code, an IDE) talks to.
 * @module
 */
import type { Readable, Writable } from 'node:stream';
import { loadMcpTransports } from './sdk.js';
import { serveTeams, serveTeamsShape, type ServeTeamsOptions } from './teams.js';
import { anything, defineOptions } from '../../core/options.js';

/** Options of {@link serveTeamsOverStdio}. */
export interface StdioTeamsOptions extends ServeTeamsOptions {
  /** Where requests come from. Default: `process.stdin`. */
  stdin?: Readable;
  /** Where answers go (nothing else may write there). Default: `process.stdout`. */
  stdout?: Writable;
}

/** A team server on stdio. */
export interface StdioTeamsServer {
  /** Settles when the client closes the connection (or `close()` is called). */
  readonly closed: Promise<void>;
  /** Close the connection; calls still running are cancelled. */
  close(): Promise<void>;
}

const stdioTeamsOptions = defineOptions<StdioTeamsOptions>('serveTeamsOverStdio', { ...serveTeamsShape, stdin: anything, stdout: anything });

/**
 * Serve `teams` as MCP tools on stdio (see `serveTeams`): the MCP client
 * writes requests to this process's standard input and reads answers from
 * its standard output, so nothing else may write to standard output.
 *
 * @example
 * ```ts
 * const server = await serveTeamsOverStdio({ teams, run: { adapter } });
 * await server.closed; // the client went away
 * ```
 */
export async function serveTeamsOverStdio(options: StdioTeamsOptions): Promise<StdioTeamsServer> {
  stdioTeamsOptions.check(options);
  const { stdin, stdout, ...teams } = options;
  const sdk = await loadMcpTransports('serveTeamsOverStdio');
  const server = await serveTeams(teams);
  const transport = new sdk.StdioServerTransport(stdin, stdout);
  let resolve!: () => void;
  const closed = new Promise<void>((r) => (resolve = r));
  const input = stdin ?? process.stdin;
  // The client closing our standard input ends the session (the SDK's transport does not watch for it).
  const ended = () => void server.close().catch(() => undefined);
  input.once('end', ended);
  input.once('close', ended);
  server.server.onclose = () => {
    input.off('end', ended);
    input.off('close', ended);
    resolve();
  };
  await server.connect(transport);
  return {
    closed,
    async close() {
      await server.close();
      await closed;
    },
  };
}

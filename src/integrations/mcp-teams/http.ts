/**
 * Teams as MCP tools over streamable HTTP, on web standards: one MCP
 * session per client (its id in the `mcp-session-id` header), each behind
 * the same `authorize` hook and tenants as `troupe/http` — a session
 * belongs to the tenant that opened it, whose namespaced store its runs
 * log to.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { realClock, type Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import { anything, clock as clockCheck, defineOptions, expectPositiveInteger, expectPositiveNumber } from '../../core/options.js';
import { errorResponse, jsonResponse, principalOf, type Authorize, type Principal } from '../http/handler.js';
import { namespacedStore } from '../http/namespace.js';
import type { ToolServer } from '../mcp/server.js';
import { loadMcpTransports, type McpTransports } from './sdk.js';
import { serveTeams, serveTeamsShape, type ServeTeamsOptions } from './teams.js';

/** Options of {@link mcpHttpHandler}. */
export interface McpHttpOptions extends ServeTeamsOptions {
  /** Decides who is calling (every request), as for `troupe/http`. */
  authorize: Authorize;
  /** Where the endpoint is. Default: `/mcp`. */
  basePath?: string;
  /** The most sessions open at once (a new one past it gets 503). Default: 100. */
  maxSessions?: number;
  /** A session that sees no request for this long is closed, in ms. Default: 900000 (15 minutes). */
  idleMs?: number;
  /** The largest request body, in bytes. Default: 4194304. */
  maxBodyBytes?: number;
  /** The clock of idle time-outs. Default: the real clock. */
  clock?: Clock;
}

/** A running MCP endpoint. */
export interface McpHttpServer {
  /** Answer one HTTP request (mount it with `toNodeListener`, Hono, Next.js ...). */
  handle(request: Request): Promise<Response>;
  /** Sessions open now. */
  readonly sessions: number;
  /** Close every session (calls still running are cancelled). Safe to call twice. */
  close(): Promise<void>;
}

interface Session {
  tenant: string;
  server: ToolServer;
  transport: InstanceType<McpTransports['WebStandardStreamableHTTPServerTransport']>;
  cancelIdle: () => void;
}

/** The values `anything` lets through are checked by `mcpHttpHandler` itself. */
const mcpHttpOptions = defineOptions<McpHttpOptions>('mcpHttpHandler', {
  ...serveTeamsShape,
  authorize: anything,
  basePath: anything,
  maxSessions: anything,
  idleMs: anything,
  maxBodyBytes: anything,
  clock: clockCheck,
});

/**
 * An MCP endpoint (streamable HTTP) whose tools are `teams` (see
 * `serveTeams`). Every request is authorized first; a session opened by a
 * tenant is found only by that tenant (another's session id is a 404), and
 * its runs log to `namespacedStore(store, tenant)`. Sessions end when the
 * client deletes them, after `idleMs` without a request, or on `close()`.
 *
 * @example
 * ```ts
 * const mcp = await mcpHttpHandler({ teams, run: { adapter }, authorize: bearer(process.env.TOKEN) });
 * http.createServer(toNodeListener((request) => mcp.handle(request))).listen(8931, '127.0.0.1');
 * ```
 */
export async function mcpHttpHandler(options: McpHttpOptions): Promise<McpHttpServer> {
  if (typeof options?.authorize !== 'function') throw new ConfigurationError(`Expected \`authorize\` to be a function, got ${describeValue(options?.authorize)}`);
  mcpHttpOptions.check(options);
  const base = options.basePath ?? '/mcp';
  if (typeof base !== 'string' || !base.startsWith('/')) throw new ConfigurationError(`Expected \`basePath\` to start with "/", got ${describeValue(options.basePath)}`);
  const maxSessions = expectPositiveInteger('maxSessions', options.maxSessions) ?? 100;
  const idleMs = expectPositiveNumber('idleMs', options.idleMs) ?? 900_000;
  const maxBodyBytes = expectPositiveInteger('maxBodyBytes', options.maxBodyBytes) ?? 4_194_304;
  const clock = options.clock ?? realClock;
  const sdk = await loadMcpTransports('mcpHttpHandler');
  const { authorize: _a, basePath: _b, maxSessions: _m, idleMs: _i, maxBodyBytes: _x, clock: _c, store, ...teams } = options;
  const sessions = new Map<string, Session>();
  let closed = false;

  const drop = (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    session.cancelIdle();
    void session.server.close().catch(() => undefined);
  };
  const touch = (id: string, session: Session) => {
    session.cancelIdle();
    session.cancelIdle = clock.setTimer(() => drop(id), idleMs);
  };

  const open = async (principal: Principal, request: Request): Promise<Response> => {
    if (sessions.size >= maxSessions) return rpcError(503, -32000, `Too many MCP sessions (${maxSessions}); close one first`);
    const server = await serveTeams({ ...teams, ...(store === undefined ? {} : { store: namespacedStore(store, principal.tenant) }) });
    let session: Session | undefined;
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: maxBodyBytes,
      onsessioninitialized: (id) => {
        session = { tenant: principal.tenant, server, transport, cancelIdle: () => undefined };
        sessions.set(id, session);
        touch(id, session);
      },
      onsessionclosed: (id) => drop(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (!session) await server.close().catch(() => undefined);
    return response;
  };

  return {
    get sessions() {
      return sessions.size;
    },
    async close() {
      closed = true;
      await Promise.all([...sessions.keys()].map(async (id) => drop(id)));
    },
    async handle(request) {
      const path = new URL(request.url).pathname;
      if (path !== base && path !== `${base}/`) return errorResponse(404, 'not_found', 'No such route');
      if (closed) return rpcError(503, -32000, 'The MCP server is closing');
      const principal = await principalOf(options.authorize, request);
      if (principal instanceof Response) return principal;
      const id = request.headers.get('mcp-session-id');
      if (id === null) {
        if (request.method !== 'POST') return rpcError(400, -32000, 'Bad Request: no session (initialize with a POST first)');
        return open(principal, request);
      }
      const session = sessions.get(id);
      // Another tenant's session is not found, as an unknown one.
      if (!session || session.tenant !== principal.tenant) return rpcError(404, -32001, 'Session not found');
      touch(id, session);
      try {
        return await session.transport.handleRequest(request);
      } catch (error) {
        return rpcError(500, -32603, errorMessage(error));
      }
    },
  };
}

function rpcError(status: number, code: number, message: string): Response {
  return jsonResponse(status, { jsonrpc: '2.0', id: null, error: { code, message } });
}


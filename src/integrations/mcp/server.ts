/**
 * An MCP server that lists troupe tools and hands each call to a function:
 * the one piece both the process adapter's bridge and `serveTools` build on.
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { throwIfAborted } from '../../core/abort.js';
import type { ToolSchema } from '../../core/adapter.js';
import { errorMessage } from '../../core/errors.js';
import { abortSignal, defineOptions, func, listOf, object, required, string } from '../../core/options.js';
import { loadMcpSdk } from './sdk.js';

/** A tool call that arrived over MCP. */
export interface McpToolCall {
  /** The tool's name (always one of the listed tools). */
  name: string;
  /** The arguments object the client sent (`{}` when it sent none). */
  arguments: Record<string, unknown>;
  /** Aborts when the client cancels the call or the connection closes. */
  signal: AbortSignal;
  /**
   * Tell the client how the call is going (an MCP progress notification:
   * `progress` grows with each one; `total` when it is known). Does
   * nothing when the client asked for no progress (no `progressToken`).
   */
  progress(update: McpProgress): void;
}

/** One progress notification of a call. */
export interface McpProgress {
  /** How far the call is; must grow from one notification to the next. */
  progress: number;
  /** The value `progress` reaches at the end, when it is known. */
  total?: number;
  /** What is happening, for people. */
  message?: string;
}

/** The answer to one MCP tool call. */
export interface McpToolAnswer {
  /** The result as text (JSON for structured results). */
  content: string;
  /** True when the tool failed; `content` then explains the failure. */
  isError?: boolean;
}

/** Options of {@link createToolServer}. */
export interface ToolServerOptions {
  /** The tools listed to clients, as adapters see them (name, description, JSON Schema). */
  tools: readonly ToolSchema[];
  /**
   * Answer one call. A rejection becomes an error result; once the call's
   * `signal` has aborted (the client cancelled it or went away) its answer
   * is dropped, as MCP asks.
   */
  call(call: McpToolCall): Promise<McpToolAnswer>;
  /** The server's name, reported to clients when they connect. Default: `troupe`. */
  name?: string;
  /** The server's version, reported with its name. Default: `1.0.0`. */
  version?: string;
  /** Aborts creating the server (loading the SDK). */
  signal?: AbortSignal;
}

/** {@link ToolServerOptions}, described once (spread into the options of what serves tools through it). */
export const toolServerOptions = defineOptions<ToolServerOptions>('createToolServer', {
  tools: required(listOf(object)),
  call: required(func),
  name: string,
  version: string,
  signal: abortSignal,
});

/** An MCP server of troupe tools; connect it to any transport of the SDK. */
export interface ToolServer {
  /** The SDK's server. */
  readonly server: Server;
  /** Serve over `transport` (stdio, streamable HTTP, a socket ...). */
  connect(transport: Transport): Promise<void>;
  /** Close the connection; calls still running see their `signal` abort. */
  close(): Promise<void>;
}

/**
 * Create an MCP server that lists `tools` and answers `tools/call` with
 * `call`. A call of a tool that is not listed gets an error result that
 * names the listed tools; it never reaches `call`. Loads
 * `@modelcontextprotocol/sdk` (an optional peer), so a missing SDK is a
 * `ConfigurationError` with code `missing_dependency`.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * const server = await createToolServer({
 *   tools: [{ name: 'echo', description: 'Echo the text', parameters: { type: 'object', properties: { text: { type: 'string' } } } }],
 *   call: async ({ arguments: args }) => ({ content: String(args['text']) }),
 * });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export async function createToolServer(options: ToolServerOptions): Promise<ToolServer> {
  toolServerOptions.check(options);
  throwIfAborted(options.signal);
  const sdk = await loadMcpSdk('troupe/mcp');
  throwIfAborted(options.signal);
  const tools = new Map(options.tools.map((t) => [t.name, t]));
  const server = new sdk.Server({ name: options.name ?? 'troupe', version: options.version ?? '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({
    tools: [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: inputSchema(t.parameters) })),
  }));
  server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    if (!tools.has(name)) {
      const known = [...tools.keys()];
      return errorResult(`Error: unknown tool "${name}". Available tools: ${known.length ? known.join(', ') : '(none)'}`);
    }
    const token = request.params._meta?.progressToken;
    // Notifications are sent before the answer (a client stops listening for a call's progress once it is answered).
    let sent: Promise<unknown> = Promise.resolve();
    const progress = (update: McpProgress) => {
      if (token === undefined || extra.signal.aborted) return;
      const params = { progressToken: token, progress: update.progress, ...(update.total === undefined ? {} : { total: update.total }), ...(update.message === undefined ? {} : { message: update.message }) };
      sent = sent.then(() => extra.sendNotification({ method: 'notifications/progress', params })).catch(() => undefined);
    };
    try {
      const answer = await options.call({ name, arguments: request.params.arguments ?? {}, signal: extra.signal, progress });
      await sent;
      return {
        content: [{ type: 'text' as const, text: answer.content }],
        ...(answer.isError ? { isError: true } : {}),
      };
    } catch (error) {
      return errorResult(`Error: ${errorMessage(error)}`);
    }
  });
  return {
    server,
    connect: (transport) => server.connect(transport),
    close: () => server.close(),
  };
}

function errorResult(text: string) {
  return { content: [{ type: 'text' as const, text }], isError: true };
}

/** MCP wants an object schema with `type: 'object'`; troupe's tools take objects, but a schema may leave `type` out. */
function inputSchema(parameters: ToolSchema['parameters']): { type: 'object'; [key: string]: unknown } {
  return { ...parameters, type: 'object' };
}

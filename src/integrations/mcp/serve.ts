/**
 * `serveTools`: troupe tools served to any MCP client, executed by troupe
 * (arguments checked against the zod schema, `tool.called` and
 * `tool.completed` events on the run context).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { combineSignals } from '../../core/abort.js';
import type { RunContext } from '../../core/context.js';
import { ConfigurationError } from '../../core/errors.js';
import { check, defineOptions, required, string } from '../../core/options.js';
import { executeToolCall } from '../../core/tool-loop.js';
import { toToolSchema, type ToolDefinition } from '../../core/tools.js';
import { createToolServer, type ToolServer } from './server.js';
import { defined } from '../../core/defined.js';

/** Options of {@link serveTools}. */
export interface ServeToolsOptions {
  /** The run context the tools execute in: their events go to it, and its signal aborts them. */
  ctx: RunContext;
  /** The name calls are recorded under in events. Default: `mcp-client`. */
  agent?: string;
  /** The server's name, reported to clients. Default: `troupe`. */
  name?: string;
  /** The server's version. Default: `1.0.0`. */
  version?: string;
}

const serveToolsOptions = defineOptions<ServeToolsOptions>('serveTools', {
  ctx: required(check('a RunContext', (v) => typeof v === 'object' && v !== null && typeof (v as { emit?: unknown }).emit === 'function')),
  agent: string,
  name: string,
  version: string,
});

/**
 * An MCP server of troupe tools: each call is executed as the tool loop
 * would (invalid arguments and failures come back as error results), with
 * a signal that aborts when the client cancels the call or `ctx` is
 * cancelled. Connect the result to any transport of the MCP SDK.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * const host = defineRunnable({ name: 'mcp-host', kind: 'custom', async run(_input, ctx) {
 *   const server = await serveTools([searchTool], { ctx });
 *   await server.connect(new StdioServerTransport());
 *   // ... serve until done, then:
 *   await server.close();
 *   return { output: 'served', agent: 'mcp-host', status: 'completed' };
 * } });
 * ```
 */
export async function serveTools(tools: readonly ToolDefinition[], options: ServeToolsOptions): Promise<ToolServer> {
  serveToolsOptions.check(options);
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new ConfigurationError(`serveTools: tool "${tool.name}" is given twice`);
    byName.set(tool.name, tool);
  }
  const { ctx } = options;
  const agent = options.agent ?? 'mcp-client';
  return createToolServer({
    tools: tools.map((t) => toToolSchema(t)),
    signal: ctx.signal,
    ...defined({ name: options.name, version: options.version }),
    async call(call) {
      const signal = combineSignals(ctx.signal, call.signal);
      const result = await executeToolCall({ id: `mcp-${randomUUID()}`, name: call.name, arguments: call.arguments }, byName, { ctx, agent, signal });
      return { content: result.content, ...(result.isError ? { isError: true } : {}) };
    },
  });
}

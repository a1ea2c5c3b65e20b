/**
 * The MCP SDK's server transports troupe serves teams over (stdio, and
 * streamable HTTP on web standards), loaded on first use.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { loadPeer } from '../../core/peer.js';

async function importTransports() {
  const [stdio, http] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]);
  return { StdioServerTransport: stdio.StdioServerTransport, WebStandardStreamableHTTPServerTransport: http.WebStandardStreamableHTTPServerTransport };
}

/** The transports. */
export type McpTransports = Awaited<ReturnType<typeof importTransports>>;

/** Load the transports, or fail with a `missing_dependency` error that names the SDK. */
export function loadMcpTransports(usedBy: string): Promise<McpTransports> {
  return loadPeer('@modelcontextprotocol/sdk', importTransports, usedBy);
}

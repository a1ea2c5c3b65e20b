/**
 * The parts of the MCP TypeScript SDK (`@modelcontextprotocol/sdk`, an
 * optional peer) that troupe uses, loaded on first use.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { loadPeer } from '../../core/peer.js';

/** The SDK's server class and the schemas troupe needs. */
export type McpSdk = Awaited<ReturnType<typeof importSdk>>;

async function importSdk() {
  const [server, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
  };
}

/** Load the SDK, or fail with a `missing_dependency` error that names it. */
export function loadMcpSdk(usedBy: string): Promise<McpSdk> {
  return loadPeer('@modelcontextprotocol/sdk', importSdk, usedBy);
}

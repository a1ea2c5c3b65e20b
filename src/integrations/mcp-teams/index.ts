/**
 * `troupe/mcp`: troupe over the Model Context Protocol, on the official
 * MCP TypeScript SDK (`@modelcontextprotocol/sdk`, an optional peer
 * dependency loaded on first use). Teams as tools any MCP client can call
 * ({@link serveTeams}, over stdio with {@link serveTeamsOverStdio} and
 * streamable HTTP with {@link mcpHttpHandler}, behind the same `authorize`
 * hook and tenants as `troupe/http`); troupe tools served to any MCP
 * client ({@link serveTools}); and the bridge through which the process
 * adapter serves a session's tools to coding-agent CLIs
 * ({@link startToolBridge}).
 * @module troupe/mcp
 * @category Integrations
 */
export * from '../mcp/index.js';
export { serveTeams, folderTeams, teamToolName, type McpTeam, type McpRunOptions, type ServeTeamsOptions } from './teams.js';
export { serveTeamsOverStdio, type StdioTeamsOptions, type StdioTeamsServer } from './stdio.js';
export { mcpHttpHandler, type McpHttpOptions, type McpHttpServer } from './http.js';

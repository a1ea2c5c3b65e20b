/**
 * troupe tools over the Model Context Protocol, on the official MCP
 * TypeScript SDK (`@modelcontextprotocol/sdk`, an optional peer dependency
 * loaded on first use). The process adapter serves a session's tools to
 * coding-agent CLIs through {@link startToolBridge}; applications can serve
 * their own tools to any MCP client with {@link serveTools}. Part of the
 * `troupe/mcp` subpath (its entry point, `src/integrations/mcp-teams/`,
 * adds teams as tools).
 * @module
 */
export { createToolServer, type McpProgress, type McpToolAnswer, type McpToolCall, type ToolServer, type ToolServerOptions } from './server.js';
export { serveTools, type ServeToolsOptions } from './serve.js';
export { DEFAULT_BRIDGE_AUTH_TIMEOUT_MS, DEFAULT_BRIDGE_MAX_PENDING, startToolBridge, type ToolBridge, type ToolBridgeOptions } from './bridge.js';

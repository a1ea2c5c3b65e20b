/**
 * `troupe/agents`: agent files — a markdown file whose front matter
 * configures an agent and whose body is its system prompt — read,
 * validated as a graph, and compiled to runnables.
 * @module troupe/agents
 * @category Definitions
 */
export {
  AGENT_FORMATS,
  AGENT_NAME_PATTERN,
  isAgentName,
  isPathReference,
  type AgentDefinition,
  type AgentFormat,
  type AgentIssue,
  type AgentParseResult,
  type ApprovalPolicy,
  type HandoffChoiceDefinition,
  type McpServerReference,
  type TeamDefinition,
  type ToolDecision,
} from './definition.js';
export type { CliToolList, McpServerConfig, McpServerSpec } from '../core/adapter.js';
export { defineAgent, type AgentDefinitionInput } from './define.js';
export { parseAgentFile, safeParseAgentFile, MAX_AGENT_FILE_BYTES, type ParseAgentFileOptions } from './parse.js';
export {
  MAX_FRONT_MATTER_CHARS,
  MAX_YAML_ALIASES,
  readFrontMatterData,
  readFrontMatterLeniently,
  reopenDoubledFence,
  splitFrontMatter,
  startsWithYamlKey,
  type FrontMatter,
  type LenientFrontMatter,
  type LenientLine,
  type SplitFrontMatterOptions,
} from './front-matter.js';
export { AGENT_FILE_EXTENSIONS, loadAgentFolder, loadAgents, type LoadAgentsOptions, type LoadedAgents } from './load.js';
export { agentGraph, entryAgents, reachableAgents, subAgentsOf, validateAgents, terminalsOf, type AgentEdge, type AgentEdgeKind, type AgentValidation } from './validate.js';
export { compileAgents, type CompileAgentsOptions } from './compile.js';

// Agent files of every format: one definition, a reader and a writer per format
export {
  AGENT_FILE_SUFFIXES,
  FORMAT_DETECTION,
  agentFormats,
  detectFormatByFields,
  detectFormatByPlace,
  nameFromFileName,
  type AgentFileInput,
  type AgentFileOutput,
  type AgentFormatModule,
  type FormatClues,
  type FormatEvidence,
  type FormatRule,
} from './formats/index.js';
export { CLAUDE_PERMISSION_MODES } from './formats/claude-code.js';
export { resolveReferences } from './references.js';
export {
  resolveAgentModel,
  resolveAgentTools,
  runsOnCli,
  subAgentToolName,
  toolDecision,
  type AgentResolutionOptions,
  type ResolvedModel,
  type ResolvedTool,
  type ResolvedTools,
} from './resolve.js';
export { writeAgentFile } from './write.js';
export { MCP_SERVER_NAME_PATTERN, resolveAgentMcpServers, type ResolvedMcpServers } from './mcp-servers.js';
export { inspectAgents, type AgentInspection } from './inspect.js';

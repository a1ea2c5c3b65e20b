/**
 * The agent-file formats, and the one table that recognises a file's
 * format from its place, its extension, its first line and its fields.
 * @module
 */
import type { AgentFormat } from '../definition.js';
import { AI_AGENT_SHEBANG, aiAgentFormat } from './ai-agent.js';
import { claudeCodeFormat } from './claude-code.js';
import { copilotFormat } from './copilot.js';
import { opencodeFormat } from './opencode.js';
import { troupeFormat } from './troupe.js';
import type { AgentFormatModule } from './types.js';

export type { AgentFileInput, AgentFileOutput, AgentFormatModule } from './types.js';

/** Every format module, by format. */
export const agentFormats: Readonly<Record<AgentFormat, AgentFormatModule>> = {
  troupe: troupeFormat,
  'ai-agent': aiAgentFormat,
  'claude-code': claudeCodeFormat,
  copilot: copilotFormat,
  opencode: opencodeFormat,
};

/** What a detection rule looks at. */
export type FormatEvidence = 'extension' | 'first line' | 'place' | 'fields';

/** One row of {@link FORMAT_DETECTION}. */
export interface FormatRule {
  format: AgentFormat;
  by: FormatEvidence;
  /** For `extension`, `first line` and `place`: the text the path ends with, the line starts with, or the path holds (`/` separated). */
  text?: string;
  /** For `fields`: a test of the front matter's data. */
  fields?: (data: Record<string, unknown>) => boolean;
  /** Why, for people (`troupe agents inspect` shows it). */
  note: string;
}

const has = (data: Record<string, unknown>, ...keys: string[]): boolean => keys.some((k) => Object.hasOwn(data, k));
const isBooleanMap = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).length > 0 && Object.values(value).every((v) => typeof v === 'boolean');
const toolNames = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/**
 * How a file's format is recognised, first match wins: its first line and
 * extension, then its place (a folder the tool reads), then its fields.
 * Without a match, troupe's own format. A loader or the command line may
 * force a format instead.
 */
export const FORMAT_DETECTION: readonly FormatRule[] = [
  { format: 'ai-agent', by: 'first line', text: AI_AGENT_SHEBANG, note: 'starts with #!/usr/bin/env ai-agent' },
  { format: 'ai-agent', by: 'extension', text: '.ai', note: 'a .ai file' },
  { format: 'copilot', by: 'extension', text: '.agent.md', note: 'a .agent.md file' },
  { format: 'copilot', by: 'extension', text: '.chatmode.md', note: 'a .chatmode.md file' },
  { format: 'copilot', by: 'place', text: '.github/agents/', note: 'in .github/agents' },
  { format: 'copilot', by: 'place', text: '.github/chatmodes/', note: 'in .github/chatmodes' },
  { format: 'claude-code', by: 'place', text: '.claude/agents/', note: 'in .claude/agents' },
  { format: 'opencode', by: 'place', text: '.opencode/agents/', note: 'in .opencode/agents' },
  { format: 'opencode', by: 'place', text: '.opencode/agent/', note: 'in .opencode/agent' },
  { format: 'troupe', by: 'fields', fields: (d) => has(d, 'router', 'team', 'advisors', 'handoff', 'limits', 'adapter', 'approval', 'mcpServers'), note: 'troupe keys (router, team, advisors, handoff, limits, adapter)' },
  { format: 'ai-agent', by: 'fields', fields: (d) => has(d, 'maxToolTurns', 'usage', 'topP', 'maxOutputTokens', 'llmTimeout', 'toolTimeout'), note: 'ai-agent keys (usage, maxToolTurns, topP, maxOutputTokens)' },
  { format: 'opencode', by: 'fields', fields: (d) => isBooleanMap(d.tools) || has(d, 'maxSteps', 'steps', 'permission', 'top_p') || ['primary', 'subagent', 'all'].includes(d.mode as string), note: 'OpenCode keys (tools as a map of booleans, mode, maxSteps, permission)' },
  { format: 'copilot', by: 'fields', fields: (d) => has(d, 'user-invocable', 'disable-model-invocation', 'argument-hint', 'target', 'mcp-servers', 'infer') || toolNames(d.tools).some((t) => t.includes('/')), note: 'Copilot keys (user-invocable, argument-hint, namespaced tools such as read/readFile)' },
  { format: 'claude-code', by: 'fields', fields: (d) => has(d, 'permissionMode', 'disallowedTools', 'color') || (typeof d.tools === 'string' && d.tools.includes(',')) || toolNames(d.tools).some((t) => t.startsWith('mcp__')), note: 'Claude Code keys (tools as a comma-separated string, permissionMode, mcp__ tools)' },
];

/** Where to look for a file's format. */
export interface FormatClues {
  /** The file's path (any separator); its extension and its folders count. */
  path?: string;
  /** The file's first line, when it is a `#!` line. */
  firstLine?: string;
}

/** The rule that recognises a file from its path or first line, if one does (no fields needed). */
export function detectFormatByPlace(clues: FormatClues): FormatRule | undefined {
  const path = clues.path === undefined ? undefined : `/${clues.path.replaceAll('\\', '/')}`;
  return FORMAT_DETECTION.find((rule) => {
    if (rule.by === 'first line') return clues.firstLine !== undefined && rule.text !== undefined && clues.firstLine.trim().startsWith(rule.text);
    if (path === undefined || rule.text === undefined) return false;
    if (rule.by === 'extension') return path.endsWith(rule.text);
    if (rule.by === 'place') return path.includes(`/${rule.text}`);
    return false;
  });
}

/** The rule that recognises a front matter by its fields, if one does. */
export function detectFormatByFields(data: Record<string, unknown>): FormatRule | undefined {
  return FORMAT_DETECTION.find((rule) => rule.by === 'fields' && rule.fields!(data));
}

/** The extensions agent files end with, longest first. */
export const AGENT_FILE_SUFFIXES: readonly string[] = ['.agent.md', '.chatmode.md', '.md', '.ai'];

/** An agent's name from its file's name: the name without its extensions (`devsquad.plan.agent.md` → `devsquad.plan`). */
export function nameFromFileName(fileName: string): string {
  const base = fileName.replaceAll('\\', '/').split('/').pop() ?? fileName;
  const suffix = AGENT_FILE_SUFFIXES.find((s) => base.endsWith(s));
  return suffix === undefined ? base : base.slice(0, -suffix.length);
}

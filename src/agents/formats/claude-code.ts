/**
 * Claude Code subagents (`.claude/agents/*.md`): `name`, `description`,
 * `tools` as one comma-separated string (or a list; `Task(a, b)` names the
 * sub-agents it may start; omitted, every tool), `disallowedTools`, `model`
 * (an alias such as `sonnet`, a model id, or `inherit`), `permissionMode`
 * (onto an approval policy), `mcpServers`, `maxTurns`. Claude Code reads a
 * `description:` holding an unquoted `: `, so this format is read leniently.
 * @module
 */
import type { AgentDefinition, ApprovalPolicy, ToolDecision } from '../definition.js';
import {
  FieldReader,
  assign,
  fieldsLeft,
  mcpServerList,
  notWritten,
  readMcpServers,
  splitCommaList,
  systemFrom,
  writeFrontMatter,
} from './common.js';
import type { AgentFileInput, AgentFormatModule } from './types.js';

const USED = ['name', 'description', 'tools', 'disallowedTools', 'model', 'permissionMode', 'mcpServers', 'maxTurns'];
const UNUSED = ['color', 'skills', 'hooks', 'memory', 'background', 'isolation'];

/** Claude Code's model aliases (any case, optionally with a `[1m]` context suffix). */
const ALIASES = new Set(['sonnet', 'opus', 'haiku', 'opusplan', 'default']);
const isAlias = (model: string): boolean => ALIASES.has(model.toLowerCase().replace(/\[1m\]$/, ''));

const READ_ONLY = ['Read', 'Grep', 'Glob', 'LS'];
const EDITS = ['Edit', 'MultiEdit', 'Write', 'NotebookEdit'];
const decide = (tools: readonly string[], decision: ToolDecision): Record<string, ToolDecision> => Object.fromEntries(tools.map((t) => [t, decision]));

/**
 * Claude Code's permission modes as approval policies: `default` asks
 * before any tool but the read-only ones, `acceptEdits` also lets edits
 * through, `plan` allows only reading, `dontAsk` refuses what is not
 * allowed, `bypassPermissions` allows everything.
 */
export const CLAUDE_PERMISSION_MODES: Readonly<Record<string, ApprovalPolicy>> = {
  default: { default: 'ask', tools: decide(READ_ONLY, 'allow') },
  acceptEdits: { default: 'ask', tools: { ...decide(READ_ONLY, 'allow'), ...decide(EDITS, 'allow') } },
  plan: { default: 'deny', tools: decide([...READ_ONLY, 'WebFetch', 'WebSearch', 'TodoWrite'], 'allow') },
  dontAsk: { default: 'deny' },
  bypassPermissions: { default: 'allow' },
};

const SUBAGENT_TOOLS = ['Task', 'Agent'];

/** A tool list item `Task(a, b)`: the sub-agents it names; otherwise `undefined`. */
function subAgentsOf(item: string): string[] | undefined {
  const open = item.indexOf('(');
  if (open < 0 || !item.endsWith(')') || !SUBAGENT_TOOLS.includes(item.slice(0, open).trim())) return undefined;
  return splitCommaList(item.slice(open + 1, -1));
}

function read(input: AgentFileInput) {
  const r = new FieldReader(input.data, [...USED, ...UNUSED], 'Claude Code');
  const name = r.name(input.name, 'name');
  const def: AgentDefinition | undefined = name === undefined ? undefined : { name, system: systemFrom(input.body) };
  const description = r.text('description');
  const toolList = (key: string): string[] | undefined => {
    const value = r.raw(key);
    if (typeof value === 'string') return splitCommaList(value);
    return r.listAt([key], value, 'a comma-separated string or a list of tool names');
  };
  const listed = toolList('tools');
  let tools: string[] | undefined;
  let subAgents: string[] | undefined;
  if (listed === undefined) tools = r.has('tools') ? [] : ['*'];
  else {
    tools = [];
    for (const item of listed) {
      const named = subAgentsOf(item);
      if (named === undefined) tools.push(item);
      else subAgents = [...(subAgents ?? []), ...named];
    }
  }
  const disallowedTools = toolList('disallowedTools');
  const model = r.text('model')?.trim();
  const mode = r.text('permissionMode');
  let approval: ApprovalPolicy | undefined;
  if (mode !== undefined) {
    approval = CLAUDE_PERMISSION_MODES[mode];
    if (approval === undefined) r.unused('permissionMode', `unknown permission mode "${mode}" (known: ${Object.keys(CLAUDE_PERMISSION_MODES).join(', ')})`);
  }
  const mcpServers = readMcpServers(r, 'mcpServers');
  const maxTurns = r.number('maxTurns', { integer: true, positive: true });
  for (const key of UNUSED) r.unused(key);
  if (def !== undefined) {
    assign(def, 'description', description);
    assign(def, 'tools', tools);
    assign(def, 'disallowedTools', disallowedTools);
    assign(def, 'subAgents', subAgents);
    if (model !== undefined && model !== '' && model !== 'inherit') {
      if (isAlias(model)) def.modelAliases = [model];
      else def.model = model;
    }
    assign(def, 'approval', approval === undefined ? undefined : structuredClone(approval));
    assign(def, 'mcpServers', mcpServers);
    assign(def, 'limits', maxTurns === undefined ? undefined : { maxTurns });
  }
  return r.finish(def, 'claude-code', input.file);
}

/** The permission mode whose policy is `policy`, if one is. */
function modeOf(policy: ApprovalPolicy): string | undefined {
  const key = JSON.stringify(policy);
  return Object.keys(CLAUDE_PERMISSION_MODES).find((mode) => JSON.stringify(CLAUDE_PERMISSION_MODES[mode]) === key);
}

const WRITTEN = ['description', 'tools', 'disallowedTools', 'subAgents', 'model', 'modelAliases', 'approval', 'mcpServers', 'limits'];

/** Claude Code subagents (`.claude/agents/<name>.md`). */
export const claudeCodeFormat: AgentFormatModule = {
  format: 'claude-code',
  label: 'Claude Code',
  lenient: true,
  read,
  write(def) {
    const warnings = fieldsLeft(def, WRITTEN, 'Claude Code');
    const tools = def.tools !== undefined && !(def.tools.length === 1 && def.tools[0] === '*') ? [...def.tools] : [];
    if (def.subAgents !== undefined) tools.push(`Task(${def.subAgents.join(', ')})`);
    const mode = def.approval === undefined ? undefined : modeOf(def.approval);
    if (def.approval !== undefined && mode === undefined) warnings.push(notWritten(def, 'approval', 'Claude Code (no permission mode has this policy)'));
    if (def.limits?.timeoutMs !== undefined) warnings.push(notWritten(def, 'limits.timeoutMs', 'Claude Code'));
    if ((def.modelAliases?.length ?? 0) > 1 || (def.models?.length ?? 0) > 1) warnings.push(notWritten(def, 'models (after the first)', 'Claude Code'));
    const text = writeFrontMatter(
      {
        name: def.name,
        description: def.description,
        tools: def.tools === undefined && def.subAgents === undefined ? undefined : tools.length === 0 && def.tools?.[0] === '*' ? undefined : tools.join(', '),
        disallowedTools: def.disallowedTools?.join(', '),
        model: def.modelAliases?.[0] ?? def.model,
        permissionMode: mode,
        mcpServers: mcpServerList(def.mcpServers),
        maxTurns: def.limits?.maxTurns,
        ...def.extra,
      },
      def.system,
    );
    return { text, fileName: `${def.name}.md`, warnings };
  },
};

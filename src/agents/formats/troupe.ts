/**
 * troupe's own agent-file format: every field of the definition has a key
 * of the same name (`agents` lists sub-agents, or a router's destinations
 * with `router: true`).
 * @module
 */
import type { AgentDefinition, ApprovalPolicy, ToolDecision } from '../definition.js';
import {
  FieldReader,
  assign,
  fieldsLeft,
  handoffList,
  mcpServerList,
  readAdvisorsAndHandoff,
  readHandoffChoices,
  readLimits,
  readMcpServers,
  readRouterAndSubAgents,
  readTeam,
  systemFrom,
  writeFrontMatter,
} from './common.js';
import type { AgentFileInput, AgentFormatModule } from './types.js';

/** The keys of troupe's format; any other key is kept in `extra` with a warning. */
export const TROUPE_KEYS = [
  'name', 'description', 'model', 'models', 'modelAliases', 'adapter', 'temperature', 'tools', 'disallowedTools', 'limits',
  'handoff', 'handoffs', 'router', 'agents', 'advisors', 'team', 'role', 'metadata', 'system', 'mode', 'approval', 'mcpServers',
] as const;

const DECISIONS: readonly ToolDecision[] = ['allow', 'ask', 'deny'];
const MODES = ['primary', 'subagent', 'all'] as const;

/** `approval: { default?, tools? }`. */
function readApproval(r: FieldReader): ApprovalPolicy | undefined {
  const value = r.record('approval');
  if (value === undefined) return undefined;
  const policy: ApprovalPolicy = {};
  for (const key of Object.keys(value)) {
    if (key !== 'default' && key !== 'tools') return r.wrong(['approval', key], 'only `default` and `tools`', value[key]);
  }
  if (value.default !== undefined && value.default !== null) {
    if (!DECISIONS.includes(value.default as ToolDecision)) return r.wrong(['approval', 'default'], 'allow, ask or deny', value.default);
    policy.default = value.default as ToolDecision;
  }
  if (value.tools !== undefined && value.tools !== null) {
    if (typeof value.tools !== 'object' || Array.isArray(value.tools)) return r.wrong(['approval', 'tools'], 'a mapping of tool names to allow, ask or deny', value.tools);
    const tools: Record<string, ToolDecision> = {};
    for (const [tool, decision] of Object.entries(value.tools as Record<string, unknown>)) {
      if (!DECISIONS.includes(decision as ToolDecision)) return r.wrong(['approval', 'tools', tool], 'allow, ask or deny', decision);
      tools[tool] = decision as ToolDecision;
    }
    policy.tools = tools;
  }
  return policy;
}

/** Map troupe front matter onto a definition (the reader behind `parseAgentFile` and `defineAgent`). */
function read(input: AgentFileInput) {
  const r = new FieldReader(input.data, TROUPE_KEYS, 'troupe');
  const name = r.name(input.name, 'name');
  const def: AgentDefinition | undefined = name === undefined ? undefined : { name, system: '' };
  const description = r.text('description');
  const model = r.text('model');
  const models = r.list('models', 'a model or a list of models');
  const modelAliases = r.list('modelAliases', 'a model or a list of models');
  const adapter = r.text('adapter');
  const temperature = r.number('temperature', { min: 0 });
  const tools = r.list('tools', 'a tool name or a list of tool names');
  const disallowedTools = r.list('disallowedTools', 'a tool name or a list of tool names');
  const limits = readLimits(r);
  const { router, subAgents } = readRouterAndSubAgents(r);
  const { advisors, handoff } = readAdvisorsAndHandoff(r);
  const handoffs = readHandoffChoices(r);
  const team = readTeam(r);
  const role = r.text('role');
  const metadata = r.record('metadata');
  const system = r.text('system');
  const mode = r.text('mode');
  if (mode !== undefined && !(MODES as readonly string[]).includes(mode)) r.wrong(['mode'], 'primary, subagent or all', mode);
  const approval = readApproval(r);
  const mcpServers = readMcpServers(r, 'mcpServers');
  if (def !== undefined) {
    def.system = systemFrom(input.body) || (system ?? '');
    assign(def, 'description', description);
    assign(def, 'model', model ?? models?.[0]);
    assign(def, 'models', models);
    assign(def, 'modelAliases', modelAliases);
    assign(def, 'adapter', adapter);
    assign(def, 'temperature', temperature);
    assign(def, 'tools', tools);
    assign(def, 'disallowedTools', disallowedTools);
    assign(def, 'limits', limits);
    assign(def, 'handoff', handoff);
    assign(def, 'router', router);
    assign(def, 'advisors', advisors);
    assign(def, 'subAgents', subAgents);
    assign(def, 'handoffs', handoffs);
    assign(def, 'team', team);
    assign(def, 'role', role);
    assign(def, 'metadata', metadata);
    assign(def, 'mode', mode as AgentDefinition['mode']);
    assign(def, 'approval', approval);
    assign(def, 'mcpServers', mcpServers);
  }
  return r.finish(def, 'troupe', input.file);
}

const KEYS_WRITTEN = [
  'description', 'model', 'models', 'modelAliases', 'adapter', 'temperature', 'tools', 'disallowedTools', 'limits', 'handoff', 'handoffs',
  'router', 'subAgents', 'advisors', 'team', 'role', 'metadata', 'mode', 'approval', 'mcpServers',
];

/** troupe's own format (`*.md`). */
export const troupeFormat: AgentFormatModule = {
  format: 'troupe',
  label: 'troupe',
  lenient: false,
  read,
  write(def) {
    const text = writeFrontMatter(
      {
        name: def.name,
        description: def.description,
        model: def.model !== undefined && def.models?.[0] !== def.model ? def.model : undefined,
        models: def.models,
        modelAliases: def.modelAliases,
        adapter: def.adapter,
        temperature: def.temperature,
        tools: def.tools,
        disallowedTools: def.disallowedTools,
        limits: def.limits,
        handoff: def.handoff,
        handoffs: handoffList(def.handoffs),
        router: def.router,
        agents: def.subAgents,
        advisors: def.advisors,
        team: def.team,
        role: def.role,
        metadata: def.metadata,
        mode: def.mode,
        approval: def.approval,
        mcpServers: mcpServerList(def.mcpServers),
        ...def.extra,
      },
      def.system,
    );
    return { text, fileName: `${def.name}.md`, warnings: fieldsLeft(def, KEYS_WRITTEN, 'troupe') };
  },
};

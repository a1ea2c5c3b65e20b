/**
 * GitHub Copilot custom agents (`.github/agents/*.agent.md`, formerly
 * `*.chatmode.md`): `name` (default: the file name), `description`, `tools`
 * (namespaced names such as `read/readFile`; `agent` is the tool that calls
 * sub-agents), `agents` (the sub-agents it may call), `handoffs` (label,
 * agent, prompt, send), `model` (display names such as `Claude Sonnet 4.6
 * (copilot)`, one or a list), `user-invocable: false` (only a sub-agent),
 * `disable-model-invocation: true` (never a sub-agent), `mcp-servers`.
 * @module
 */
import type { AgentDefinition } from '../definition.js';
import {
  FieldReader,
  assign,
  fieldsLeft,
  handoffList,
  readHandoffChoices,
  readMcpServers,
  systemFrom,
  writeFrontMatter,
} from './common.js';
import type { AgentFileInput, AgentFormatModule } from './types.js';

const USED = ['name', 'description', 'tools', 'agents', 'handoffs', 'model', 'user-invocable', 'disable-model-invocation', 'infer', 'mcp-servers'];
const UNUSED = ['argument-hint', 'target', 'hooks', 'metadata'];

/** The Copilot tool that calls sub-agents; with `agents:` it is implied by the sub-agents. */
const AGENT_TOOL = 'agent';

function read(input: AgentFileInput) {
  const r = new FieldReader(input.data, [...USED, ...UNUSED], 'GitHub Copilot');
  const name = r.name(input.name, 'name');
  const description = r.text('description');
  const listed = r.list('tools', 'a list of tool names');
  const agents = r.list('agents', 'a list of agent names');
  const subAgents = agents ?? (r.has('agents') ? [] : undefined);
  const tools = listed === undefined ? (r.has('tools') ? [] : ['*']) : agents !== undefined ? listed.filter((t) => t !== AGENT_TOOL) : listed;
  const handoffs = readHandoffChoices(r);
  const modelAliases = r.list('model', 'a model name or a list of model names');
  const userInvocable = r.boolean('user-invocable');
  const noModelInvocation = r.boolean('disable-model-invocation');
  const infer = r.boolean('infer');
  const subagentOnly = userInvocable === false;
  const primaryOnly = noModelInvocation === true || infer === false;
  if (subagentOnly && primaryOnly) r.warn('unusable_agent', '`user-invocable: false` with `disable-model-invocation: true`: neither a person nor another agent can use it', ['user-invocable']);
  const mcpServers = readMcpServers(r, 'mcp-servers');
  for (const key of UNUSED) r.unused(key);
  let def: AgentDefinition | undefined;
  if (name !== undefined) {
    def = { name, system: systemFrom(input.body) };
    assign(def, 'description', description);
    assign(def, 'tools', tools);
    assign(def, 'subAgents', subAgents);
    assign(def, 'handoffs', handoffs);
    assign(def, 'modelAliases', modelAliases);
    if (subagentOnly !== primaryOnly) def.mode = subagentOnly ? 'subagent' : 'primary';
    assign(def, 'mcpServers', mcpServers);
  }
  return r.finish(def, 'copilot', input.file);
}

const WRITTEN = ['description', 'tools', 'subAgents', 'handoffs', 'model', 'modelAliases', 'mode', 'mcpServers'];

/** GitHub Copilot custom agents (`.github/agents/<name>.agent.md`). */
export const copilotFormat: AgentFormatModule = {
  format: 'copilot',
  label: 'GitHub Copilot',
  // Copilot's own editor reads a `description:` holding an unquoted `: `, as Claude Code and OpenCode do.
  lenient: true,
  read,
  write(def) {
    const warnings = fieldsLeft(def, WRITTEN, 'GitHub Copilot');
    const allTools = def.tools?.length === 1 && def.tools[0] === '*';
    let tools = def.tools === undefined ? [] : allTools ? undefined : [...def.tools];
    if (def.subAgents !== undefined && def.subAgents.length > 0 && tools !== undefined && !tools.includes(AGENT_TOOL)) tools = [...tools, AGENT_TOOL];
    const models = def.modelAliases ?? (def.model === undefined ? undefined : [def.model]);
    const text = writeFrontMatter(
      {
        name: def.name,
        description: def.description,
        tools,
        agents: def.subAgents,
        model: models === undefined ? undefined : models.length === 1 ? models[0] : models,
        'user-invocable': def.mode === 'subagent' ? false : undefined,
        'disable-model-invocation': def.mode === 'primary' ? true : undefined,
        handoffs: handoffList(def.handoffs),
        'mcp-servers': def.mcpServers === undefined ? undefined : Object.fromEntries(def.mcpServers.map((s) => [s.name, s.config ?? null])),
        ...def.extra,
      },
      def.system,
    );
    return { text, fileName: `${def.name}.agent.md`, warnings };
  },
};

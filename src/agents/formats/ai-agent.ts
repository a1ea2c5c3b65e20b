/**
 * netdata ai-agent's `.ai` files: a `#!/usr/bin/env ai-agent` line, a YAML
 * front matter, the system prompt. `models` (a model or a list), `tools`
 * (MCP servers and tools by name), `agents` (sub-agents the model may call
 * as tools, by path relative to the file), the orchestration keys
 * `advisors`, `router` and `handoff`, `maxTurns` and `temperature` are
 * used; ai-agent's other settings are kept in `extra` with a warning.
 * @module
 */
import type { AgentDefinition } from '../definition.js';
import {
  FieldReader,
  assign,
  fieldsLeft,
  readAdvisorsAndHandoff,
  readLimits,
  readRouterAndSubAgents,
  readTeam,
  systemFrom,
  writeFrontMatter,
} from './common.js';
import type { AgentFileInput, AgentFormatModule } from './types.js';

/** The first line ai-agent files start with. */
export const AI_AGENT_SHEBANG = '#!/usr/bin/env ai-agent';

const USED = ['name', 'description', 'model', 'models', 'tools', 'agents', 'advisors', 'router', 'handoff', 'team', 'maxTurns', 'temperature', 'limits', 'adapter'];

/** ai-agent settings troupe keeps without using. */
const UNUSED = [
  'usage', 'maxToolTurns', 'maxRetries', 'maxOutputTokens', 'topP', 'topK', 'repeatPenalty', 'reasoning', 'reasoningTokens', 'caching', 'cache',
  'llmTimeout', 'toolTimeout', 'toolResponseMaxBytes', 'contextWindow', 'input', 'output', 'stream', 'maxConcurrentTools', 'parallelToolCalls',
];

function read(input: AgentFileInput) {
  const r = new FieldReader(input.data, [...USED, ...UNUSED], 'ai-agent');
  const name = r.name(input.name, 'name');
  const def: AgentDefinition | undefined = name === undefined ? undefined : { name, system: '' };
  const description = r.text('description');
  const model = r.text('model');
  const models = r.list('models', 'a model or a list of models');
  const tools = r.list('tools', 'a tool name or a list of tool names');
  const { router, subAgents } = readRouterAndSubAgents(r);
  const { advisors, handoff } = readAdvisorsAndHandoff(r);
  const team = readTeam(r);
  const maxTurns = r.number('maxTurns', { integer: true, positive: true });
  const limits = readLimits(r);
  const temperature = r.number('temperature', { min: 0 });
  const adapter = r.text('adapter');
  for (const key of UNUSED) r.unused(key);
  if (def !== undefined) {
    def.system = systemFrom(input.body);
    assign(def, 'description', description);
    assign(def, 'model', model ?? models?.[0]);
    assign(def, 'models', models);
    assign(def, 'adapter', adapter);
    assign(def, 'temperature', temperature);
    assign(def, 'tools', tools);
    assign(def, 'limits', maxTurns === undefined ? limits : { ...limits, maxTurns });
    assign(def, 'router', router);
    assign(def, 'subAgents', subAgents);
    assign(def, 'advisors', advisors);
    assign(def, 'handoff', handoff);
    assign(def, 'team', team);
  }
  return r.finish(def, 'ai-agent', input.file);
}

const WRITTEN = ['description', 'model', 'models', 'adapter', 'temperature', 'tools', 'limits', 'router', 'subAgents', 'advisors', 'handoff', 'team'];

/** netdata ai-agent `.ai` files. */
export const aiAgentFormat: AgentFormatModule = {
  format: 'ai-agent',
  label: 'ai-agent',
  lenient: false,
  read,
  write(def) {
    const { timeoutMs, maxTurns } = def.limits ?? {};
    const text = writeFrontMatter(
      {
        description: def.description,
        model: def.model !== undefined && def.models?.[0] !== def.model ? def.model : undefined,
        models: def.models,
        adapter: def.adapter,
        tools: def.tools,
        agents: def.subAgents,
        advisors: def.advisors,
        router: def.router,
        handoff: def.handoff,
        team: def.team,
        maxTurns,
        limits: timeoutMs === undefined ? undefined : { timeoutMs },
        temperature: def.temperature,
        ...def.extra,
      },
      def.system,
      AI_AGENT_SHEBANG,
    );
    return { text, fileName: `${def.name}.ai`, warnings: fieldsLeft(def, WRITTEN, 'ai-agent') };
  },
};

/**
 * OpenCode agents (`.opencode/agents/*.md`, also `.opencode/agent/`): the
 * file name is the name; `description`, `mode` (`primary`, `subagent`,
 * `all`), `model` (`provider/model`), `temperature`, `tools` as a map of
 * booleans (every tool is on unless turned off), `permission` (onto an
 * approval policy), `maxSteps` (or `steps`). OpenCode reads a value holding
 * an unquoted `: ` as Claude Code does, so this format is read leniently.
 * @module
 */
import type { AgentDefinition, ApprovalPolicy, ToolDecision } from '../definition.js';
import { FieldReader, assign, fieldsLeft, notWritten, systemFrom, writeFrontMatter } from './common.js';
import type { AgentFileInput, AgentFormatModule } from './types.js';
import { defined } from '../../core/defined.js';

const USED = ['description', 'mode', 'model', 'temperature', 'tools', 'permission', 'maxSteps', 'steps'];
const UNUSED = ['top_p', 'prompt', 'disable', 'hidden', 'color', 'options'];
const MODES = ['primary', 'subagent', 'all'];
const DECISIONS: readonly string[] = ['allow', 'ask', 'deny'];

/** `tools: { read: true, bash: false, '*': true }`: every tool is on unless turned off, so `*` always leads the list. */
function readTools(r: FieldReader): { tools: string[]; disallowed?: string[] } | undefined {
  const value = r.record('tools');
  if (value === undefined) return r.has('tools') ? undefined : { tools: ['*'] };
  const tools = ['*'];
  const disallowed: string[] = [];
  for (const [name, on] of Object.entries(value)) {
    if (typeof on !== 'boolean') return r.wrong(['tools', name], 'true or false', on);
    if (name === '*') {
      if (!on) tools.shift();
    } else (on ? tools : disallowed).push(name);
  }
  return disallowed.length > 0 ? { tools, disallowed } : { tools };
}

/** `permission: { edit: ask, bash: { '*': allow, 'git push': ask }, '*': deny }`. */
function readPermission(r: FieldReader): ApprovalPolicy | undefined {
  const value = r.record('permission');
  if (value === undefined) return undefined;
  const policy: ApprovalPolicy = {};
  const tools: Record<string, ToolDecision> = {};
  for (const [name, setting] of Object.entries(value)) {
    let decision: unknown = setting;
    if (setting !== null && typeof setting === 'object' && !Array.isArray(setting)) {
      const patterns = setting as Record<string, unknown>;
      decision = patterns['*'] ?? 'ask';
      const others = Object.keys(patterns).filter((p) => p !== '*');
      if (others.length > 0) {
        r.warn('unused_key', `\`permission.${name}\`: the patterns ${others.map((p) => `"${p}"`).join(', ')} are not used (the "*" entry decides)`, ['permission', name]);
      }
    }
    if (typeof decision !== 'string' || !DECISIONS.includes(decision)) return r.wrong(['permission', name], 'allow, ask or deny', setting);
    if (name === '*') policy.default = decision as ToolDecision;
    else tools[name] = decision as ToolDecision;
  }
  if (Object.keys(tools).length > 0) policy.tools = tools;
  return policy;
}

function read(input: AgentFileInput) {
  const r = new FieldReader(input.data, [...USED, ...UNUSED], 'OpenCode');
  const name = r.name(input.name, undefined);
  const description = r.text('description');
  const mode = r.text('mode');
  if (mode !== undefined && !MODES.includes(mode)) r.wrong(['mode'], 'primary, subagent or all', mode);
  const model = r.text('model')?.trim();
  const temperature = r.number('temperature', { min: 0 });
  const tools = readTools(r);
  const approval = readPermission(r);
  const maxSteps = r.number('maxSteps', { integer: true, positive: true });
  const steps = r.number('steps', { integer: true, positive: true });
  if (r.has('prompt')) r.unused('prompt', 'the system prompt is the body (a `{file:...}` reference is not read)');
  for (const key of UNUSED) r.unused(key);
  let def: AgentDefinition | undefined;
  if (name !== undefined) {
    def = { name, system: systemFrom(input.body) };
    assign(def, 'description', description);
    assign(def, 'mode', mode as AgentDefinition['mode']);
    assign(def, 'model', model === '' ? undefined : model);
    assign(def, 'temperature', temperature);
    assign(def, 'tools', tools?.tools);
    assign(def, 'disallowedTools', tools?.disallowed);
    assign(def, 'approval', approval);
    const turns = maxSteps ?? steps;
    assign(def, 'limits', turns === undefined ? undefined : { maxTurns: turns });
  }
  return r.finish(def, 'opencode', input.file);
}

const WRITTEN = ['description', 'mode', 'model', 'modelAliases', 'temperature', 'tools', 'disallowedTools', 'approval', 'limits'];

/** OpenCode agents (`.opencode/agents/<name>.md`; the file name is the name). */
export const opencodeFormat: AgentFormatModule = {
  format: 'opencode',
  label: 'OpenCode',
  lenient: true,
  read,
  write(def) {
    const warnings = fieldsLeft(def, WRITTEN, 'OpenCode');
    if (def.limits?.timeoutMs !== undefined) warnings.push(notWritten(def, 'limits.timeoutMs', 'OpenCode'));
    const model = def.model ?? def.modelAliases?.[0];
    if ((def.modelAliases?.length ?? 0) > 1 || (def.models?.length ?? 0) > 1) warnings.push(notWritten(def, 'models (after the first)', 'OpenCode'));
    const all = def.tools?.includes('*') ?? false;
    const entries: Array<[string, boolean]> = [
      ...(def.tools === undefined ? [['*', false] as [string, boolean]] : all ? [] : [['*', false] as [string, boolean]]),
      ...(def.tools ?? []).filter((t) => t !== '*').map((t): [string, boolean] => [t, true]),
      ...(def.disallowedTools ?? []).map((t): [string, boolean] => [t, false]),
    ];
    const tools = entries.length === 0 ? undefined : Object.fromEntries(entries);
    const permission =
      def.approval === undefined
        ? undefined
        : { ...defined({ '*': def.approval.default }), ...def.approval.tools };
    const text = writeFrontMatter(
      {
        description: def.description,
        mode: def.mode,
        model,
        temperature: def.temperature,
        tools,
        permission,
        maxSteps: def.limits?.maxTurns,
        ...def.extra,
      },
      def.system,
    );
    return { text, fileName: `${def.name}.md`, warnings };
  },
};

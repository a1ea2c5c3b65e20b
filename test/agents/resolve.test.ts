import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileAgents } from '../../src/agents/compile.js';
import { defineAgent } from '../../src/agents/define.js';
import type { AgentDefinition } from '../../src/agents/definition.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { resolveAgentModel, resolveAgentTools, subAgentToolName } from '../../src/agents/resolve.js';
import { validateAgents } from '../../src/agents/validate.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { defineTool } from '../../src/core/tools.js';

const tool = (name: string) => defineTool({ name, description: name, parameters: z.object({}), execute: () => name });
const readFile = tool('read_file');
const grep = tool('grep');
const claude = (front: string): AgentDefinition => parseAgentFile(`---\nname: a\n${front}\n---\nA`, { format: 'claude-code' });

describe('resolveAgentTools', () => {
  it('resolves a registered tool by name, then through the alias map; the rest resolve to nothing', () => {
    const def = claude('tools: read_file, Read, Grep, WebFetch');
    const out = resolveAgentTools(def, { tools: { read_file: readFile, grep }, toolAliases: { Read: 'read_file', Grep: 'grep' } });
    expect(out.tools.map((t) => [t.listed, t.tool.name, t.decision])).toEqual([
      ['read_file', 'read_file', 'allow'],
      ['Grep', 'grep', 'allow'],
    ]);
    expect(out.unresolved).toEqual(['WebFetch']);
    expect(out.onCli).toBe(false);
    expect(out.cli).toBeUndefined();
  });

  it('passes vendor tools to the CLI when the agent runs on its vendor CLI (and only then)', () => {
    const cli = scriptedAdapter({ id: 'claude' });
    const def = claude('tools: Read, Grep, Bash\ndisallowedTools: Write');
    expect(resolveAgentTools(def, { tools: { grep }, cli: { 'claude-code': cli } })).toEqual({
      tools: [],
      unresolved: [],
      onCli: true,
      cli: { allowed: ['Read', 'Grep', 'Bash'], disallowed: ['Write'] },
    });
    expect(resolveAgentTools(def, { tools: { grep }, toolAliases: { Grep: 'grep' }, cli: { 'claude-code': 'claude' } }).cli).toEqual({ allowed: ['Read', 'Bash'], disallowed: ['Write'] });
    // Another format's CLI, or an agent that names another adapter, is not its vendor's CLI.
    expect(resolveAgentTools(def, { cli: { copilot: cli } }).unresolved).toEqual(['Read', 'Grep', 'Bash']);
    expect(resolveAgentTools({ ...def, adapter: 'openai' }, { cli: { 'claude-code': cli } }).onCli).toBe(false);
    // Every tool (no `tools:` line): no allow-list of the CLI's tools, so the profile decides (none, by default).
    expect(resolveAgentTools(claude(''), { cli: { 'claude-code': cli } }).cli).toEqual({ disallowed: [] });
  });

  it('`*` is every registered tool; disallowed tools and tools the policy denies are left out; `ask` is kept', () => {
    const def = defineAgent({ name: 'a', tools: ['*'], disallowedTools: ['grep'], approval: { default: 'ask', tools: { lookup: 'deny' } } });
    const out = resolveAgentTools(def, { tools: { read_file: readFile, grep, lookup: tool('lookup') } });
    expect(out.tools.map((t) => [t.tool.name, t.decision])).toEqual([['read_file', 'ask']]);
  });

  it('applies a Claude Code permission mode by the vendor names', () => {
    const def = claude('tools: Read, Bash\npermissionMode: plan');
    const out = resolveAgentTools(def, { tools: { read_file: readFile, bash: tool('bash') }, toolAliases: { Read: 'read_file', Bash: 'bash' } });
    expect(out.tools.map((t) => [t.listed, t.decision])).toEqual([['Read', 'allow']]);
    const onCli = resolveAgentTools(def, { cli: { 'claude-code': 'claude' } });
    expect(onCli.cli).toEqual({ allowed: ['Read'], disallowed: ['Bash'] });
  });
});

describe('toolAliases: the names of a folder mapped to the app\'s tools', () => {
  const copilot = parseAgentFile('---\ntools: [read/readFile, vscode/askQuestions, search/codebase, web/fetch]\n---\nA', { name: 'c', format: 'copilot' });

  it('maps vendor names to registered tools; a name mapped to null is left out without being reported', () => {
    const options = { tools: { read_file: readFile }, toolAliases: { 'read/readFile': 'read_file', 'vscode/askQuestions': null, 'search/codebase': null } };
    const out = resolveAgentTools(copilot, options);
    expect(out.tools.map((t) => [t.listed, t.tool.name])).toEqual([['read/readFile', 'read_file']]);
    expect(out.unresolved).toEqual(['web/fetch']);
    expect(out.ignored).toEqual(['vscode/askQuestions', 'search/codebase']);
    const { warnings } = validateAgents([copilot], { ...options, unknownTools: 'warn' });
    expect(warnings.map((w) => w.message)).toEqual(['Agent "c": 1 tool resolves to nothing: web/fetch']);
    // On the vendor's CLI, a name with no tool of the app's is the CLI's own, mapped to null or not.
    expect(resolveAgentTools(copilot, { ...options, cli: { copilot: 'copilot' } }).cli).toEqual({ allowed: ['vscode/askQuestions', 'search/codebase', 'web/fetch'], disallowed: [] });
  });

  it('a map that names a tool the app does not have is a clear error, wherever names resolve', () => {
    const options = { tools: { read_file: readFile }, toolAliases: { 'read/readFile': 'read_file', 'web/fetch': 'fetch_url' } };
    const message = '`toolAliases` maps "web/fetch" to "fetch_url", which is not in `tools` (read_file); map it to null to leave it out without a warning';
    expect(() => resolveAgentTools(copilot, options)).toThrow(message);
    expect(() => validateAgents([copilot], options)).toThrow(message);
    expect(() => compileAgents([copilot], options)).toThrow(message);
    expect(() => resolveAgentTools(copilot, { toolAliases: { Read: 'read_file' } })).toThrow('`toolAliases` maps "Read" to "read_file", which is not in `tools` (none)');
    expect(() => resolveAgentTools(copilot, { tools: { read_file: readFile }, toolAliases: { Read: 3 as unknown as string } })).toThrow(/toolAliases/);
  });
});

describe('resolveAgentModel', () => {
  it('maps aliases and display names through the model map, passes them to the vendor CLI, and reports the rest', () => {
    const sonnet = claude('model: sonnet');
    expect(resolveAgentModel(sonnet, { modelMap: { sonnet: 'claude-sonnet-4-5' } })).toEqual({ models: ['claude-sonnet-4-5'], unresolved: [] });
    expect(resolveAgentModel(sonnet, { cli: { 'claude-code': 'claude' } })).toEqual({ models: ['sonnet'], unresolved: [] });
    expect(resolveAgentModel(sonnet)).toEqual({ models: [], unresolved: ['sonnet'] });
    const copilot = parseAgentFile('---\nmodel: [Claude Sonnet 4.6 (copilot), GPT-5 (copilot)]\n---\n', { name: 'c', format: 'copilot' });
    expect(resolveAgentModel(copilot, { modelMap: { 'GPT-5 (copilot)': 'gpt-5' } })).toEqual({ models: ['gpt-5'], unresolved: ['Claude Sonnet 4.6 (copilot)'] });
    // A model id is used as it is, or through the map.
    const id = defineAgent({ name: 'x', model: 'anthropic/claude-sonnet-4-5' });
    expect(resolveAgentModel(id)).toEqual({ models: ['anthropic/claude-sonnet-4-5'], unresolved: [] });
    expect(resolveAgentModel(id, { modelMap: { 'anthropic/claude-sonnet-4-5': 'claude-sonnet-4-5' } }).models).toEqual(['claude-sonnet-4-5']);
  });

  it('validateAgents reports what does not resolve: tools by policy, models as warnings', () => {
    const defs = [claude('tools: Read, Grep\nmodel: opus')];
    const strict = validateAgents(defs, {});
    expect(strict.errors.map((e) => e.code)).toEqual(['unresolved_tool']);
    expect(strict.errors[0]!.message).toBe('Agent "a": 2 tools resolve to nothing: Read, Grep');
    expect(strict.warnings.map((w) => [w.code, w.message])).toContainEqual(['unresolved_model', 'Agent "a": model "opus" is not in the model map; the adapter\'s default model is used']);
    const lenient = validateAgents(defs, { unknownTools: 'warn', modelMap: { opus: 'claude-opus-4-1' } });
    expect(lenient.errors).toEqual([]);
    expect(lenient.warnings.map((w) => w.code)).toEqual(['unresolved_tool']);
    // Without options, names are not checked (the app has not said how they resolve).
    expect(validateAgents(defs).errors).toEqual([]);
  });

  it('compileAgents tells what it compiles with a loss', () => {
    const issues: string[] = [];
    compileAgents([claude('tools: Read, Grep\nmodel: opus')], { unknownTools: 'warn', onWarning: (i) => issues.push(`${i.code}: ${i.message}`) });
    expect(issues).toEqual([
      'unresolved_tool: Agent "a": left out tools that resolve to nothing: Read, Grep',
      'unresolved_model: Agent "a": model "opus" is not in the model map; the adapter\'s default model is used',
    ]);
  });

  it('names a sub-agent tool after the agent, with other characters written `_`', () => {
    expect(subAgentToolName('devsquad.plan.context')).toBe('devsquad_plan_context');
    expect(subAgentToolName('Helper Bee')).toBe('Helper_Bee');
  });
});

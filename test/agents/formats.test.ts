import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentDefinition, AgentFormat } from '../../src/agents/definition.js';
import { defineAgent } from '../../src/agents/define.js';
import { FORMAT_DETECTION, detectFormatByFields, detectFormatByPlace, nameFromFileName } from '../../src/agents/formats/index.js';
import { loadAgents } from '../../src/agents/load.js';
import { parseAgentFile, safeParseAgentFile } from '../../src/agents/parse.js';
import { writeAgentFile } from '../../src/agents/write.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'agents');
const text = (folder: string, file: string) => readFileSync(join(fixtures, folder, file), 'utf8');
/** A fixture read as the loader reads it: the file's name gives the default name, its path the format. */
const read = (folder: string, file: string) => parseAgentFile(text(folder, file), { name: nameFromFileName(file), file: `${folder}/${file}` });
const codes = (def: AgentDefinition) => (def.warnings ?? []).map((w) => w.code);

describe('Claude Code files', () => {
  it('architect.md: a description with an unquoted ": " read leniently, tools split on commas, every tool when none is listed', () => {
    const def = read('claude-code', 'architect.md');
    expect(def).toMatchObject({ name: 'architect', format: 'claude-code' });
    expect(def.description).toBe(
      '**TECHNICAL DESIGN SPECIALIST**: Transforms business requirements into technical architecture. Works FROM existing PRDs and requirements to design scalable systems, APIs, microservices, and database schemas. Invoked AFTER requirements are defined, typically following prd-writer and project-manager coordination.',
    );
    expect(def.tools).toEqual(['Task', 'Grep', 'Glob', 'LS', 'Read', 'Write', 'MultiEdit', 'TodoWrite', 'WebSearch', 'WebFetch']);
    expect(def.subAgents).toBeUndefined();
    expect(def.model).toBeUndefined();
    expect(def.system).toMatch(/^You are a software architect who transforms business requirements/);
    expect(def.warnings).toEqual([
      expect.objectContaining({ code: 'lenient_yaml', path: ['description'], agent: 'architect', message: expect.stringMatching(/^Line 3: the value of `description` holds an unquoted ": "; read as one string, as Claude Code reads it/) }),
    ]);
  });

  it('prd-writer.md: the same lenient description, five tools', () => {
    const def = read('claude-code', 'prd-writer.md');
    expect(def.description).toMatch(/^\*\*PRIMARY AGENT for project planning\*\*: Essential first step .* Use BEFORE architects or developers begin work\.$/);
    expect(def.tools).toEqual(['Read', 'Write', 'TodoWrite', 'WebSearch', 'WebFetch']);
    expect(codes(def)).toEqual(['lenient_yaml']);
  });

  it('graphql-expert.md: MCP tools named mcp__server__tool kept as written', () => {
    const def = read('claude-code', 'graphql-expert.md');
    expect(def.tools).toEqual(['Read', 'Write', 'MultiEdit', 'Bash', 'Grep', 'TodoWrite', 'WebSearch', 'mcp__context7__resolve-library-id', 'mcp__context7__get-library-docs']);
    expect(def.description).toMatch(/^GraphQL API expert specializing in schema design/);
    expect(def.warnings).toEqual([]);
  });

  it('code-documenter.md and ruby-expert.md: strict YAML, comma-separated tools', () => {
    expect(read('claude-code', 'code-documenter.md')).toMatchObject({
      name: 'code-documenter',
      tools: ['Read', 'Write', 'Edit', 'MultiEdit', 'Bash', 'Grep', 'Glob', 'WebSearch', 'WebFetch'],
      warnings: [],
    });
    expect(read('claude-code', 'ruby-expert.md')).toMatchObject({
      name: 'ruby-expert',
      tools: ['Read', 'Write', 'MultiEdit', 'Bash', 'Grep', 'TodoWrite', 'WebSearch', 'WebFetch'],
      warnings: [],
    });
  });

  it('maps model aliases, inherit, sub-agents, permission modes, disallowed tools, maxTurns and MCP servers', () => {
    const def = parseAgentFile(
      [
        '---',
        'name: lead',
        'description: Leads the work',
        'tools: Read, Task(researcher, writer), Bash',
        'disallowedTools: Write, Edit',
        'model: sonnet',
        'permissionMode: acceptEdits',
        'maxTurns: 12',
        'mcpServers:',
        '  - github',
        '  - docs: { command: docs-server }',
        'color: blue',
        '---',
        'You lead.',
      ].join('\n'),
      { format: 'claude-code' },
    );
    expect(def).toMatchObject({
      tools: ['Read', 'Bash'],
      subAgents: ['researcher', 'writer'],
      disallowedTools: ['Write', 'Edit'],
      modelAliases: ['sonnet'],
      limits: { maxTurns: 12 },
      approval: { default: 'ask', tools: { Read: 'allow', Edit: 'allow', Write: 'allow' } },
      mcpServers: [{ name: 'github' }, { name: 'docs', config: { command: 'docs-server' } }],
      extra: { color: 'blue' },
    });
    expect(def.model).toBeUndefined();
    // MCP servers are used (by the CLI the agent runs on): no warning when the file is read.
    expect(codes(def)).toEqual(['unused_key']);
    expect(parseAgentFile('---\nname: a\nmodel: inherit\n---\n', { format: 'claude-code' })).not.toHaveProperty('model');
    expect(parseAgentFile('---\nname: a\nmodel: claude-sonnet-4-5-20250929\n---\n', { format: 'claude-code' }).model).toBe('claude-sonnet-4-5-20250929');
    expect(parseAgentFile('---\nname: a\n---\n', { format: 'claude-code' }).tools).toEqual(['*']);
  });
});

// Expected from each file's front matter: name, tool count (without `agent` when `agents:` lists sub-agents), sub-agents, hand-offs, mode.
const copilot: Array<[string, { name: string; tools: number; subAgents: string[]; handoffs: string[]; mode: 'subagent' | undefined }]> = [
  ['devsquad.agent.md', { name: 'devsquad', tools: 39, subAgents: ['devsquad.init', 'devsquad.envision', 'devsquad.kickoff', 'devsquad.specify', 'devsquad.plan', 'devsquad.decompose', 'devsquad.implement', 'devsquad.security', 'devsquad.review', 'devsquad.refine', 'devsquad.sprint', 'devsquad.extend'], handoffs: [], mode: undefined }],
  ['devsquad.decompose.agent.md', { name: 'devsquad.decompose', tools: 27, subAgents: [], handoffs: ['Implement -> devsquad.implement'], mode: undefined }],
  ['devsquad.envision.agent.md', { name: 'devsquad.envision', tools: 10, subAgents: [], handoffs: ['Structure Project -> devsquad.kickoff'], mode: undefined }],
  ['devsquad.extend.agent.md', { name: 'devsquad.extend', tools: 10, subAgents: [], handoffs: [], mode: undefined }],
  ['devsquad.implement.agent.md', { name: 'devsquad.implement', tools: 37, subAgents: ['devsquad.review', 'devsquad.refine', 'devsquad.implement.validate', 'devsquad.implement.execute', 'devsquad.implement.verify', 'devsquad.implement.finalize'], handoffs: ['Review Implementation -> devsquad.review (send)', 'Amend Spec (drift detected) -> devsquad.refine (send)'], mode: undefined }],
  ['devsquad.implement.execute.agent.md', { name: 'devsquad.implement.execute', tools: 20, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.implement.finalize.agent.md', { name: 'devsquad.implement.finalize', tools: 15, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.implement.validate.agent.md', { name: 'devsquad.implement.validate', tools: 5, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.implement.verify.agent.md', { name: 'devsquad.implement.verify', tools: 9, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.init.agent.md', { name: 'devsquad.init', tools: 7, subAgents: [], handoffs: [], mode: undefined }],
  ['devsquad.kickoff.agent.md', { name: 'devsquad.kickoff', tools: 20, subAgents: [], handoffs: ['Specify Feature -> devsquad.specify (send)', 'Create Technical Plan -> devsquad.plan (send)'], mode: undefined }],
  ['devsquad.plan.agent.md', { name: 'devsquad.plan', tools: 21, subAgents: ['devsquad.security', 'devsquad.plan.context', 'devsquad.plan.architecture', 'devsquad.plan.design'], handoffs: ['Create Tasks -> devsquad.decompose (send)'], mode: undefined }],
  ['devsquad.plan.architecture.agent.md', { name: 'devsquad.plan.architecture', tools: 9, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.plan.context.agent.md', { name: 'devsquad.plan.context', tools: 4, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.plan.design.agent.md', { name: 'devsquad.plan.design', tools: 12, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.refine.agent.md', { name: 'devsquad.refine', tools: 18, subAgents: ['devsquad.refine.artifacts', 'devsquad.refine.health'], handoffs: ['Update Spec -> devsquad.specify (send)', 'Create Technical Plan -> devsquad.plan (send)', 'Generate Tasks -> devsquad.decompose (send)', 'Structure Project -> devsquad.kickoff (send)'], mode: undefined }],
  ['devsquad.refine.artifacts.agent.md', { name: 'devsquad.refine.artifacts', tools: 9, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.refine.health.agent.md', { name: 'devsquad.refine.health', tools: 7, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.review.adr.agent.md', { name: 'devsquad.review.adr', tools: 7, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.review.agent.md', { name: 'devsquad.review', tools: 22, subAgents: ['devsquad.review.spec', 'devsquad.review.adr', 'devsquad.review.code', 'devsquad.review.security', 'devsquad.review.tests'], handoffs: ['Fix Issues -> devsquad.implement (send)', 'Revise Spec -> devsquad.specify (send)', 'Revise Plan -> devsquad.plan (send)'], mode: undefined }],
  ['devsquad.review.code.agent.md', { name: 'devsquad.review.code', tools: 7, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.review.security.agent.md', { name: 'devsquad.review.security', tools: 6, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.review.spec.agent.md', { name: 'devsquad.review.spec', tools: 9, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.review.tests.agent.md', { name: 'devsquad.review.tests', tools: 6, subAgents: [], handoffs: [], mode: 'subagent' }],
  ['devsquad.security.agent.md', { name: 'devsquad.security', tools: 23, subAgents: [], handoffs: ['Fix Issues -> devsquad.implement (send)'], mode: undefined }],
  ['devsquad.specify.agent.md', { name: 'devsquad.specify', tools: 14, subAgents: [], handoffs: ['Create Technical Plan -> devsquad.plan'], mode: undefined }],
  ['devsquad.sprint.agent.md', { name: 'devsquad.sprint', tools: 22, subAgents: [], handoffs: ['Create Technical Plan -> devsquad.plan (send)', 'Generate Tasks -> devsquad.decompose (send)', 'Specify Feature -> devsquad.specify (send)'], mode: undefined }],
  ['devsquad.triage.agent.md', { name: 'devsquad.triage', tools: 19, subAgents: [], handoffs: [], mode: undefined }],
];

describe('GitHub Copilot files', () => {
  it('has an expectation for each of the 28 files', () => {
    expect(readdirSync(join(fixtures, 'copilot')).sort()).toEqual(copilot.map(([f]) => f).sort());
  });

  it.each(copilot)('%s', (file, want) => {
    const def = read('copilot', file);
    expect(def.format).toBe('copilot');
    expect(def.name).toBe(want.name);
    expect(def.tools).toHaveLength(want.tools);
    expect(def.tools).not.toContain(want.subAgents.length > 0 ? 'agent' : '-');
    expect(def.tools!.every((t) => t.includes('/'))).toBe(true);
    expect(def.subAgents ?? []).toEqual(want.subAgents);
    expect((def.handoffs ?? []).map((h) => `${h.label} -> ${h.agent}${h.send ? ' (send)' : ''}`)).toEqual(want.handoffs);
    expect(def.mode).toBe(want.mode);
    expect(def.description!.length).toBeGreaterThan(20);
    expect(def.system.length).toBeGreaterThan(100);
    expect(def.warnings).toEqual([]);
  });

  it('a description with an unquoted ": " is read leniently, with a warning, as Copilot reads it', () => {
    const def = parseAgentFile('---\ndescription: Reviewer: finds bugs before merge\ntools: [read/readFile]\n---\nYou review pull requests for bugs and say what to fix.\n', {
      name: 'reviewer',
      file: '.github/agents/reviewer.agent.md',
      format: 'copilot',
    });
    expect(def.description).toBe('Reviewer: finds bugs before merge');
    expect(def.warnings).toEqual([expect.objectContaining({ code: 'lenient_yaml', message: expect.stringMatching(/as GitHub Copilot reads it/) })]);
  });

  it('the conductor keeps its namespaced tools and the hand-off prompts', () => {
    const conductor = read('copilot', 'devsquad.agent.md');
    expect(conductor.tools!.slice(0, 3)).toEqual(['vscode/askQuestions', 'read/readFile', 'search/listDirectory']);
    expect(conductor.description).toMatch(/^\[Preview\] Spec-Driven Development flow conductor\./);
    expect(read('copilot', 'devsquad.plan.agent.md').handoffs).toEqual([{ label: 'Create Tasks', agent: 'devsquad.decompose', prompt: 'Break down the plan into tasks', send: true }]);
    expect(read('copilot', 'devsquad.decompose.agent.md').handoffs).toEqual([{ label: 'Implement', agent: 'devsquad.implement', prompt: 'Execute implementation' }]);
  });

  it('maps display-name models, disable-model-invocation and mcp-servers', () => {
    const def = parseAgentFile(
      '---\nname: Beast Mode\nmodel: [Claude Sonnet 4.6 (copilot), GPT-5 (copilot)]\ndisable-model-invocation: true\nmcp-servers:\n  github: { type: local, command: gh-mcp }\ntarget: vscode\n---\nGo.',
      { file: 'beast.agent.md' },
    );
    expect(def).toMatchObject({
      name: 'Beast Mode',
      format: 'copilot',
      modelAliases: ['Claude Sonnet 4.6 (copilot)', 'GPT-5 (copilot)'],
      mode: 'primary',
      tools: ['*'],
      mcpServers: [{ name: 'github', config: { type: 'local', command: 'gh-mcp' } }],
      extra: { target: 'vscode' },
    });
    expect(codes(def)).toEqual(['unused_key']);
  });
});

const opencode: Array<[string, Partial<AgentDefinition>]> = [
  ['explorer.md', { mode: 'subagent', model: 'anthropic/claude-sonnet-4-5', temperature: 0.2, tools: ['*', 'read', 'grep', 'glob'], disallowedTools: ['bash', 'write', 'edit'], limits: { maxTurns: 30 } }],
  ['fixer.md', { mode: 'primary', model: 'anthropic/claude-sonnet-4-5', temperature: 0.1, tools: ['*', 'read', 'grep', 'glob', 'bash', 'write', 'edit'], limits: { maxTurns: 30 } }],
  ['planner.md', { mode: 'subagent', model: 'anthropic/claude-sonnet-4-5', temperature: 0.3, tools: ['*', 'read', 'grep', 'glob', 'bash'], disallowedTools: ['write', 'edit'], limits: { maxTurns: 20 } }],
  ['reviewer.md', { mode: 'subagent', model: 'anthropic/claude-sonnet-4-5', temperature: 0.2, tools: ['*', 'read', 'grep', 'glob', 'bash'], disallowedTools: ['write', 'edit'], limits: { maxTurns: 40 } }],
];

describe('OpenCode files', () => {
  it.each(opencode)('%s: the name from the file, tools as a map of booleans, mode, model, temperature, maxSteps', (file, want) => {
    const def = read('opencode', file);
    expect(def).toMatchObject({ ...want, name: file.slice(0, -3), format: 'opencode' });
    if (want.disallowedTools === undefined) expect(def.disallowedTools).toBeUndefined();
    expect(def.description!.length).toBeGreaterThan(20);
    expect(def.warnings).toEqual([]);
  });

  it('yolo.md: every tool, and permission onto an approval policy (command patterns read by their "*")', () => {
    const def = read('opencode', 'yolo.md');
    expect(def).toMatchObject({
      name: 'yolo',
      mode: 'primary',
      tools: ['*'],
      approval: { default: 'allow', tools: { bash: 'allow', edit: 'allow', external_directory: 'allow', doom_loop: 'allow' } },
    });
    expect(def.model).toBeUndefined();
    expect(def.description).toBe('Full auto-approve agent that bypasses all permission checks. Use with caution.');
  });

  it('warns about command patterns it does not use, and reads a description with ": " as OpenCode does', () => {
    const def = parseAgentFile('---\ndescription: Reviews: carefully\npermission:\n  bash:\n    "*": ask\n    "git push": deny\n---\nx', { file: '.opencode/agents/careful.md' });
    expect(def).toMatchObject({ name: 'careful', description: 'Reviews: carefully', approval: { tools: { bash: 'ask' } } });
    expect(codes(def)).toEqual(['lenient_yaml', 'unused_key']);
    expect(def.warnings![1]!.message).toContain('"git push"');
  });
});

describe('ai-agent files', () => {
  it('code-review.ai: models, tools, sub-agents by path, unused settings kept', () => {
    const def = read('code-review', 'code-review.ai');
    expect(def).toMatchObject({ name: 'code-review', format: 'ai-agent', model: 'anthropic/claude-sonnet-4-5', models: ['anthropic/claude-sonnet-4-5'], tools: ['batch'], temperature: 0.3 });
    expect(def.subAgents).toEqual([
      'code-review-discovery.ai', 'code-review-tests.ai', 'code-review-architecture.ai', 'code-review-quality.ai',
      'code-review-complexity.ai', 'code-review-security.ai', 'code-review-production.ai',
    ]);
    expect(def.extra).toEqual({ usage: 'what to review', maxToolTurns: 10, topP: 0.95, maxOutputTokens: 32768 });
    expect(codes(def)).toEqual(['unused_key', 'unused_key', 'unused_key', 'unused_key']);
  });

  it('code-review-discovery.ai: maxTurns onto the turn limit', () => {
    expect(read('code-review', 'code-review-discovery.ai')).toMatchObject({
      name: 'code-review-discovery',
      model: 'anthropic/claude-haiku-4-5',
      tools: ['filesystem-cwd', 'github'],
      limits: { maxTurns: 100 },
      description: 'Code discovery agent - maps files, flow, and change scope for review',
    });
    expect(read('code-review', 'code-review-security.ai')).toMatchObject({ name: 'code-review-security', model: 'anthropic/claude-sonnet-4-5', extra: { maxToolTurns: 20 } });
  });
});

describe('round trip: write back, read again', () => {
  const files = readdirSync(fixtures, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(md|ai)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name).slice(fixtures.length + 1).replaceAll('\\', '/'));

  /** A definition without what depends on the file it came from. */
  const fields = ({ file: _file, warnings: _warnings, ...rest }: AgentDefinition) => rest;

  it('covers every fixture', () => {
    expect(files.length).toBeGreaterThanOrEqual(3 + 5 + 28 + 5);
  });

  it.each(files)('%s gives back the same definition', (path) => {
    const [folder, ...rest] = path.split('/');
    const def = read(folder!, rest.join('/'));
    const { text: written, fileName, warnings } = writeAgentFile(def);
    expect(warnings).toEqual([]);
    const again = parseAgentFile(written, { name: nameFromFileName(fileName), format: def.format! });
    expect(fields(again)).toEqual(fields(def));
  });

  it('a definition made in troupe can be written in every format and read back with the fields each holds', () => {
    const def = defineAgent({
      name: 'reviewer',
      description: 'Reviews changes: correctness first',
      system: 'You review code.',
      tools: ['read_file', 'grep'],
      subAgents: ['tester'],
      handoffs: [{ agent: 'fixer', label: 'Fix it', prompt: 'Fix the findings', send: false }],
      temperature: 0.2,
      limits: { maxTurns: 7 },
      mode: 'primary',
    });
    const holds: Record<AgentFormat, Array<keyof AgentDefinition>> = {
      troupe: ['description', 'tools', 'subAgents', 'handoffs', 'temperature', 'limits', 'mode'],
      'ai-agent': ['description', 'tools', 'subAgents', 'temperature', 'limits'],
      'claude-code': ['description', 'tools', 'subAgents', 'limits'],
      copilot: ['description', 'tools', 'subAgents', 'handoffs', 'mode'],
      opencode: ['description', 'temperature', 'limits', 'mode'],
    };
    for (const format of Object.keys(holds) as AgentFormat[]) {
      const out = writeAgentFile(def, format);
      const back = parseAgentFile(out.text, { name: nameFromFileName(out.fileName), format });
      expect(back.name, format).toBe('reviewer');
      expect(back.system, format).toBe('You review code.');
      for (const key of holds[format]) expect(back[key], `${format} ${key}`).toEqual(def[key]);
      const lost = out.warnings.map((w) => w.path?.[0]);
      for (const key of ['subAgents', 'handoffs', 'mode', 'temperature'] as const) {
        if (!holds[format].includes(key)) expect(lost, `${format} ${key}`).toContain(key);
      }
    }
    expect(writeAgentFile(def, 'opencode').text).toContain('read_file: true');
    expect(() => writeAgentFile(def, 'cursor' as AgentFormat)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => writeAgentFile(null as never)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('format detection', () => {
  it('is one table: first line, extension, place, then fields', () => {
    expect(FORMAT_DETECTION.map((r) => r.by)).toEqual(['first line', 'extension', 'extension', 'extension', 'place', 'place', 'place', 'place', 'place', 'fields', 'fields', 'fields', 'fields', 'fields']);
    expect(detectFormatByPlace({ path: 'repo/.claude/agents/x.md' })?.format).toBe('claude-code');
    expect(detectFormatByPlace({ path: 'C:\\repo\\.github\\agents\\x.md' })?.format).toBe('copilot');
    expect(detectFormatByPlace({ path: 'x.chatmode.md' })?.format).toBe('copilot');
    expect(detectFormatByPlace({ path: 'a/.opencode/agent/x.md' })?.format).toBe('opencode');
    expect(detectFormatByPlace({ path: 'a/x.ai' })?.format).toBe('ai-agent');
    expect(detectFormatByPlace({ path: 'x.md', firstLine: '#!/usr/bin/env ai-agent' })?.format).toBe('ai-agent');
    expect(detectFormatByPlace({ path: 'agents/x.md' })).toBeUndefined();
    expect(detectFormatByFields({ tools: { read: true } })?.format).toBe('opencode');
    expect(detectFormatByFields({ tools: 'Read, Grep' })?.format).toBe('claude-code');
    expect(detectFormatByFields({ tools: ['read/readFile'] })?.format).toBe('copilot');
    expect(detectFormatByFields({ router: true, tools: { read: true } })?.format).toBe('troupe');
    expect(detectFormatByFields({ topP: 1 })?.format).toBe('ai-agent');
    expect(detectFormatByFields({ description: 'x' })).toBeUndefined();
  });

  it('names from file names without their extensions', () => {
    expect(nameFromFileName('a/devsquad.plan.agent.md')).toBe('devsquad.plan');
    expect(nameFromFileName('old.chatmode.md')).toBe('old');
    expect(nameFromFileName('x.ai')).toBe('x');
    expect(nameFromFileName('C:\\a\\b.md')).toBe('b');
  });

  it('a forced format wins over the place', () => {
    const def = parseAgentFile('---\ntools: Read, Grep\n---\n', { name: 'x', file: '.github/agents/x.md', format: 'claude-code' });
    expect(def).toMatchObject({ format: 'claude-code', tools: ['Read', 'Grep'] });
  });

  it('loads a folder of mixed formats, each in its own', async () => {
    const defs = await loadAgents(fixtures).catch(() => undefined);
    // The code-review folder names sub-agents that were not copied: loading works, validation reports them (see validate.test.ts).
    expect(defs?.map((d) => d.format).filter((f, i, all) => all.indexOf(f) === i).sort()).toEqual(['ai-agent', 'claude-code', 'copilot', 'opencode']);
  });
});

describe('lenient reading stays narrow', () => {
  it('is refused in a strict format, with the YAML error', () => {
    const result = safeParseAgentFile('---\ndescription: a: b\n---\n', { name: 'x', format: 'troupe' });
    expect(result).toMatchObject({ success: false, issues: [{ code: 'invalid_yaml' }] });
    expect(safeParseAgentFile('---\ndescription: a: b\n---\n', { name: 'x', file: 'x.ai' })).toMatchObject({ success: false });
  });

  it('a format recognised by its fields alone reads leniently only when that format is lenient', () => {
    expect(parseAgentFile('---\ndescription: Role: reviewer\ntools: Read, Grep\n---\n', { name: 'x' })).toMatchObject({ format: 'claude-code', description: 'Role: reviewer' });
    expect(safeParseAgentFile('---\ndescription: Role: reviewer\nrouter: true\nagents: [a]\n---\n', { name: 'x' })).toMatchObject({ success: false, issues: [{ code: 'invalid_yaml' }] });
  });

  it('leaves quoted, block, flow and multi-line values to YAML', () => {
    for (const matter of ['description: "a: b', 'description: [a: b', 'description: a: b\n  continued', 'tools: {a: b: c}']) {
      expect(safeParseAgentFile(`---\n${matter}\n---\n`, { name: 'x', format: 'claude-code' }).success, matter).toBe(false);
    }
  });

  it('counts lines from the top of the file, a shebang included', () => {
    const def = parseAgentFile('---\nname: a\ndescription: x: y\n---\n', { format: 'claude-code' });
    expect(def.warnings![0]!.message).toMatch(/^Line 3:/);
  });
});

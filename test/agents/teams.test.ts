import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileAgents } from '../../src/agents/compile.js';
import { loadAgents } from '../../src/agents/load.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { agentEdges, terminalsOf, validateAgents } from '../../src/agents/validate.js';
import { processAdapter } from '../../src/adapters/process.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { formatAgentGraph } from '../../src/cli/graph.js';
import { CLI_TOOLS_KEY } from '../../src/core/adapter.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { usageByAgent, walk, type OpNode } from '../../src/core/ops.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { ApprovalQueue, type ApprovalRequest } from '../../src/guardrails/approvals.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'agents');

/** The op tree as `kind:name` lines, indented by depth. */
const shape = (root: OpNode): string[] => {
  const lines: string[] = [];
  walk(root, (n, depth) => lines.push(`${'  '.repeat(depth)}${n.kind}:${n.name}`));
  return lines;
};

/** The scripted replies of one planning run: two sub-agents, one hand-off, one hand-off that asks first. */
const planReplies = () => ({
  'devsquad.plan': [
    {
      toolCalls: [
        { name: 'devsquad_plan_context', arguments: { task: 'Summarise spec 042' } },
        { name: 'devsquad_plan_architecture', arguments: { task: 'Check 042 against the ADRs' } },
      ],
    },
    'Plan for 042: a search endpoint.\nHANDOFF: Create Tasks',
  ],
  'devsquad.plan.context': ['Spec 042: search by name and tag.'],
  'devsquad.plan.architecture': ['No ADR conflict.'],
  'devsquad.decompose': ['Tasks: T1 endpoint, T2 index.\nHANDOFF: Implement'],
  'devsquad.implement': ['Implemented T1 and T2.'],
});

describe('the 28-agent GitHub Copilot team', () => {
  it('validates: every sub-agent and hand-off target exists; tools that resolve to nothing are warnings', async () => {
    const defs = await loadAgents(join(fixtures, 'copilot'));
    expect(defs).toHaveLength(28);
    const { errors, warnings } = validateAgents(defs, { unknownTools: 'warn' });
    expect(errors).toEqual([]);
    expect(warnings.map((w) => w.code)).toEqual(Array(28).fill('unresolved_tool'));
    const edges = agentEdges(defs);
    expect(edges.filter((e) => e.kind === 'subagent')).toHaveLength(12 + 6 + 4 + 2 + 5);
    expect(edges.filter((e) => e.kind === 'handoff-choice')).toHaveLength(19);
    // Hand-offs loop (review -> implement -> review): a choice, not a cycle; the agents offering them can own the answer.
    expect(terminalsOf(defs, 'devsquad.implement')).toEqual(expect.arrayContaining(['devsquad.implement', 'devsquad.review', 'devsquad.plan']));
  });

  it('draws: sub-agent edges, and hand-off choices dashed', async () => {
    const defs = await loadAgents(join(fixtures, 'copilot'));
    const mermaid = formatAgentGraph(defs, 'mermaid');
    const id = (name: string) => `n${defs.findIndex((d) => d.name === name)}`;
    expect(mermaid).toContain(`${id('devsquad.plan')} -->|subagent| ${id('devsquad.plan.context')}`);
    expect(mermaid).toContain(`${id('devsquad.plan')} -.->|handoff-choice| ${id('devsquad.decompose')}`);
    expect(formatAgentGraph(defs, 'dot')).toContain('"devsquad.decompose" -> "devsquad.implement" [label="handoff-choice", style=dashed];');
  });

  it('runs: the planner delegates to two sub-agents, hands off once, and the hand-off that asks first is refused through the approval queue', async () => {
    const defs = await loadAgents(join(fixtures, 'copilot'));
    const requests: ApprovalRequest[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (requests.push(r), { approved: false }) });
    const flows = compileAgents(defs, { unknownTools: 'warn', approvals });
    const adapter = scriptedAdapter({ replies: planReplies() });
    const events: TroupeEvent[] = [];
    const result = await run(flows['devsquad.plan']!, 'Plan feature 042: product search', { adapter, onEvent: (e) => events.push(e) });

    expect(result).toMatchObject({ output: 'Tasks: T1 endpoint, T2 index.', agent: 'devsquad.decompose', status: 'completed' });
    expect(result).toMatchObject({ handoffs: [{ from: 'devsquad.plan', to: 'devsquad.decompose', label: 'Create Tasks' }] });
    // The sub-agents ran on their tasks, nested in the planner's op.
    expect(adapter.inputsOf('devsquad.plan.context')).toEqual(['Summarise spec 042']);
    expect(adapter.inputsOf('devsquad.plan.architecture')).toEqual(['Check 042 against the ADRs']);
    expect(shape(result.trace)).toEqual([
      'run:devsquad.plan (hand-offs)',
      '  handoff-choices:devsquad.plan (hand-offs)',
      '    agent:devsquad.plan',
      '      subagent:devsquad_plan_context',
      '        agent:devsquad.plan.context',
      '      subagent:devsquad_plan_architecture',
      '        agent:devsquad.plan.architecture',
      '    agent:devsquad.decompose',
    ]);
    // Usage rolls up through the sub-agents: 2 planner turns, 1 per sub-agent, 1 decomposer turn.
    expect(result.usage.turns).toBe(5);
    expect(Object.keys(usageByAgent(result.trace)).sort()).toEqual(['devsquad.decompose', 'devsquad.plan', 'devsquad.plan.architecture', 'devsquad.plan.context']);
    // The hand-off with send: true went ahead; the next agent got the work so far and the prompt.
    expect(adapter.inputsOf('devsquad.decompose')[0]).toBe(
      '## ORIGINAL USER REQUEST\nPlan feature 042: product search\n\n## HANDOFF FROM devsquad.plan\nPlan for 042: a search endpoint.\n\n## NEXT STEP\nBreak down the plan into tasks',
    );
    // The one without send asked, and was refused.
    expect(requests).toEqual([
      { tool: 'handoff:devsquad.implement', agent: 'devsquad.decompose', sessionId: expect.any(String), runId: expect.any(String), arguments: { to: 'devsquad.implement', label: 'Implement', prompt: 'Execute implementation' } },
    ]);
    expect(events.filter((e) => e.type.startsWith('handoff.')).map((e) => e.type)).toEqual(['handoff.started', 'handoff.completed', 'handoff.declined']);
    expect(adapter.inputsOf('devsquad.implement')).toEqual([]);
    // The planner saw its sub-agents and its hand-off as tools.
    const planner = adapter.sessions.find((s) => s.agent === 'devsquad.plan')!;
    expect(planner.tools!.map((t) => t.name)).toEqual(['devsquad_security', 'devsquad_plan_context', 'devsquad_plan_architecture', 'devsquad_plan_design', 'hand_off']);
    expect(planner.system).toContain('## HAND-OFFS\nWhen your part is done, you may hand the work on to:\n- Create Tasks → devsquad.decompose: Break down the plan into tasks');
  });

  it('runs on: an approved hand-off goes to the next agent', async () => {
    const defs = await loadAgents(join(fixtures, 'copilot'));
    const flows = compileAgents(defs, { unknownTools: 'warn', approvals: new ApprovalQueue({ handler: () => ({ approved: true }) }) });
    const result = await run(flows['devsquad.plan']!, 'Plan feature 042', { adapter: scriptedAdapter({ replies: planReplies() }) });
    expect(result).toMatchObject({ output: 'Implemented T1 and T2.', agent: 'devsquad.implement' });
    expect(result).toMatchObject({ handoffs: [{ to: 'devsquad.decompose' }, { to: 'devsquad.implement' }] });
  });

  it('the conductor delegates to two phase agents as tools, each nested in its op', async () => {
    const defs = await loadAgents(join(fixtures, 'copilot'));
    const flows = compileAgents(defs, { unknownTools: 'warn' });
    const adapter = scriptedAdapter({
      replies: {
        devsquad: [
          { toolCalls: [{ name: 'devsquad_envision', arguments: { task: 'Capture the vision of the shop' } }] },
          { toolCalls: [{ name: 'devsquad_specify', arguments: { task: 'Specify product search' } }] },
          'Vision captured and search specified. Next: plan it.',
        ],
        'devsquad.envision': ['Vision: a shop people find things in.'],
        'devsquad.specify': ['Spec 042 written.'],
      },
    });
    const result = await run(flows.devsquad!, 'Start the project', { adapter });
    expect(result).toMatchObject({ output: 'Vision captured and search specified. Next: plan it.', agent: 'devsquad' });
    expect(adapter.calls.filter((c) => c.agent === 'devsquad').at(-1)!.text).toContain('Spec 042 written.');
    expect(shape(result.trace).filter((l) => l.includes('subagent'))).toEqual(['    subagent:devsquad_envision', '    subagent:devsquad_specify']);
    expect(result.usage.turns).toBe(5);
    // Sub-agents run without their own hand-offs (a sub-agent answers its caller).
    expect(adapter.sessions.find((s) => s.agent === 'devsquad.specify')!.tools).toBeUndefined();
  });
});

describe('a folder of ai-agent files runs as its author meant', () => {
  it('advisors first, sub-agents as tools, then the hand-off to a router by path', async () => {
    const flows = compileAgents(await loadAgents(join(fixtures, 'ai-agent-team')), { unknownTools: 'warn' });
    const adapter = scriptedAdapter({
      replies: {
        lead: [
          { toolCalls: [{ name: 'researcher', arguments: { task: 'Facts on tides' } }, { name: 'writer', arguments: { task: 'Draft on tides' } }] },
          'Tides: an article.',
        ],
        publish: ['ROUTE: newsletter'],
      },
      rules: [
        { agent: 'style', reply: 'Short, no jargon.' },
        { agent: 'researcher', reply: 'The moon pulls the sea.' },
        { agent: 'writer', reply: 'Draft: the moon pulls the sea.' },
        { agent: 'newsletter', reply: 'Newsletter: tides explained.' },
      ],
    });
    const result = await run(flows.lead!, 'Write about tides', { adapter });
    expect(result).toMatchObject({ output: 'Newsletter: tides explained.', agent: 'newsletter' });
    expect(adapter.inputsOf('lead')[0]).toContain('### From style\nShort, no jargon.');
    expect(adapter.inputsOf('researcher')).toEqual(['Facts on tides']);
    expect(adapter.sessions.find((s) => s.agent === 'lead')).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', temperature: 0.2 });
  });
});

describe('Claude Code agents on the Claude Code CLI', () => {
  it('get their vendor tools as the CLI allow-list and their model alias as it is', async () => {
    const defs = [
      parseAgentFile('---\nname: reviewer\ntools: Read, Grep, lookup\ndisallowedTools: Bash\nmodel: sonnet\n---\nReview.', { format: 'claude-code' }),
      parseAgentFile('---\nname: writer\ntools: Write\nmodel: haiku\n---\nWrite.', { format: 'claude-code' }),
    ];
    const lookup = defineTool({ name: 'lookup', description: 'Look up', parameters: z.object({}), execute: () => 'x' });
    const claude = scriptedAdapter({ id: 'claude', fallback: 'done' });
    const other = scriptedAdapter({ id: 'other', fallback: 'done' });
    const flows = compileAgents([{ ...defs[0]! }, { ...defs[1]!, adapter: 'other' }], {
      cli: { 'claude-code': 'claude' },
      adapters: { claude, other },
      tools: { lookup },
      modelMap: { haiku: 'claude-haiku-4-5' },
      unknownTools: 'warn',
    });
    await run(flows.reviewer!, 'x');
    await run(flows.writer!, 'x');
    expect(claude.sessions[0]).toMatchObject({ model: 'sonnet', metadata: { [CLI_TOOLS_KEY]: { allowed: ['Read', 'Grep'], disallowed: ['Bash'] } } });
    expect(claude.sessions[0]!.tools!.map((t) => t.name)).toEqual(['lookup']);
    // An agent that names another adapter is not on its CLI: its alias goes through the model map, and `Write` resolves to nothing.
    expect(other.sessions[0]).toMatchObject({ model: 'claude-haiku-4-5' });
    expect(other.sessions[0]!.metadata).toBeUndefined();
    expect(() => compileAgents([{ ...defs[1]!, adapter: 'other' }], { adapters: { other } })).toThrow(/lists tool "Write", which is not in `tools`/);
  });

  it('reach the real process adapter: the CLI is started with the agent\'s tools as its allow-list', async () => {
    const fake = join(import.meta.dirname, '..', 'fixtures', 'cli', 'fake-agent.mjs');
    const claude = processAdapter({
      id: 'claude',
      command: [process.execPath, fake, '-p', '--model={model}', '{tools}', '--', '{prompt}'],
      output: 'jsonl',
      extractText: (o) => JSON.stringify((o.events.at(-1) as { seen: { argv: string[] } }).seen.argv),
      toolArgs: ({ allowed, disallowed }) => [...(allowed ? ['--allowedTools', allowed.join(',')] : []), ...(disallowed.length ? ['--disallowedTools', disallowed.join(',')] : [])],
    });
    const def = parseAgentFile('---\nname: reviewer\ntools: Read, Grep\ndisallowedTools: Bash\nmodel: sonnet\n---\nReview.', { format: 'claude-code' });
    const flows = compileAgents([def], { cli: { 'claude-code': claude } });
    const result = await run(flows.reviewer!, 'review the diff');
    expect(JSON.parse(result.output)).toEqual(['-p', '--model=sonnet', '--allowedTools', 'Read,Grep', '--disallowedTools', 'Bash', '--', 'Review.\n\nreview the diff']);
  });

  it('a permission mode puts the tools it asks for behind the approval queue', async () => {
    const def = parseAgentFile('---\nname: fixer\ntools: Read, Bash\npermissionMode: default\n---\nFix.', { format: 'claude-code' });
    const ran: string[] = [];
    const tool = (name: string) => defineTool({ name, description: name, parameters: z.object({}), execute: () => (ran.push(name), `${name} ok`) });
    const options = { tools: { read_file: tool('read_file'), bash: tool('bash') }, toolAliases: { Read: 'read_file', Bash: 'bash' } };
    expect(() => compileAgents([def], options)).toThrow(/needs the person's approval before using "Bash", but no approval queue was given/);
    const asked: string[] = [];
    const flows = compileAgents([def], { ...options, approvals: new ApprovalQueue({ handler: (r) => (asked.push(r.tool), { approved: false }) }) });
    const adapter = scriptedAdapter({ replies: { fixer: [{ toolCalls: [{ name: 'read_file' }, { name: 'bash' }] }, 'Could not run bash.'] } });
    await run(flows.fixer!, 'fix it', { adapter });
    expect(asked).toEqual(['bash']);
    expect(ran).toEqual(['read_file']);
    expect(adapter.calls[1]!.text).toContain('Not approved: the use of `bash` was denied.');
  });
});

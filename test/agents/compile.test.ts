import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileAgents } from '../../src/agents/compile.js';
import { defineAgent, type AgentDefinitionInput } from '../../src/agents/define.js';
import { parseAgentFile } from '../../src/agents/parse.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { usageByAgent } from '../../src/core/ops.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';

const defs = (...list: AgentDefinitionInput[]) => list.map(defineAgent);

describe('compileAgents', () => {
  it('composes advisors, then router, then handoff, recursively', async () => {
    const flows = compileAgents(
      defs(
        { name: 'desk', system: 'Front desk', router: { destinations: ['billing', 'legal'] }, advisors: ['risk'] },
        { name: 'billing', handoff: 'approval' },
        { name: 'approval', advisors: 'policy' },
        { name: 'legal' },
        { name: 'risk' },
        { name: 'policy' },
      ),
    );
    const adapter = scriptedAdapter({
      replies: { desk: [{ toolCalls: [{ name: 'route_to', arguments: { agent: 'billing', reason: 'a charge' } }] }] },
      rules: [
        { agent: 'risk', reply: 'Low risk' },
        { agent: 'billing', reply: 'Refund 12.50' },
        { agent: 'policy', reply: 'Within policy' },
        { agent: 'approval', reply: 'Approved: refund 12.50' },
      ],
    });
    const events: TroupeEvent[] = [];
    const result = await run(flows.desk!, 'Charged twice', { adapter, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ output: 'Approved: refund 12.50', agent: 'approval' });
    // the router decided on the enriched message; the destination got the original request
    expect(adapter.inputsOf('desk')[0]).toMatch(/^## ORIGINAL USER REQUEST\nCharged twice\n\n## ANALYSIS GATHERED\n\n### From risk\nLow risk/);
    expect(adapter.inputsOf('billing')).toEqual(['Charged twice']);
    expect(adapter.inputsOf('approval')[0]).toContain('### From policy\nWithin policy');
    expect(adapter.sessions.find((s) => s.agent === 'desk')!.system).toBe('Front desk');
    const kinds = events.map((e) => e.type).filter((t) => /^(handoff|router|advisor)\./.test(t));
    expect(kinds).toEqual(['advisor.completed', 'router.selected', 'handoff.started', 'advisor.completed', 'handoff.completed']);
    expect(Object.keys(usageByAgent(result.trace)).sort()).toEqual(['approval', 'billing', 'desk', 'policy', 'risk']);
    expect(result.usage.turns).toBe(5);
  });

  it('refuses an invalid graph with every error', () => {
    expect(() => compileAgents(defs({ name: 'a', handoff: 'b' }, { name: 'b', handoff: 'a' }))).toThrow(
      expect.objectContaining({ code: 'invalid_graph', message: expect.stringContaining('Cycle: a -> b -> a') }),
    );
  });

  it('maps model, limits, tools and named adapters onto agents', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look up', parameters: z.object({}), execute: () => 'found' });
    const other = scriptedAdapter({ id: 'other', fallback: 'from other' });
    const def = parseAgentFile('---\nmodel: m1\nadapter: other\ntools: [lookup]\nlimits: { maxTurns: 3 }\ntemperature: 0.1\n---\nBe brief.', { name: 'x' });
    const flows = compileAgents([def], { adapters: { other }, tools: { lookup } });
    const result = await run(flows.x!, 'hi');
    expect(result.output).toBe('from other');
    expect(other.sessions[0]).toMatchObject({ model: 'm1', temperature: 0.1, system: 'Be brief.' });
    expect(other.sessions[0]!.tools?.map((t) => t.name)).toEqual(['lookup']);
    expect(() => compileAgents([def], { adapters: { other } })).toThrow('Agent "x" lists tool "lookup", which is not in `tools`');
    expect(() => compileAgents([def], { unknownTools: 'skip' })).not.toThrow();
  });

  it('uses `defaultAdapter` for definitions that name no adapter, by object or by registered name', async () => {
    const local = scriptedAdapter({ id: 'local', fallback: 'from local' });
    const named = scriptedAdapter({ id: 'named', fallback: 'from named' });
    const runDefault = scriptedAdapter({ fallback: 'from the run' });
    const def = defineAgent({ name: 'x' });
    expect((await run(compileAgents([def], { defaultAdapter: local }).x!, 'hi', { adapter: runDefault })).output).toBe('from local');
    expect((await run(compileAgents([def], { defaultAdapter: 'named' }).x!, 'hi', { adapter: runDefault, adapters: { named } })).output).toBe('from named');
    expect((await run(compileAgents([def]).x!, 'hi', { adapter: runDefault })).output).toBe('from the run');
  });

  it('falls back along `models` when a model fails before its first answer', async () => {
    const adapter = scriptedAdapter({
      fallback: (req) => (req.spec.model === 'large' ? { fault: 'throw', error: 'large is down' } : `answered by ${req.spec.model}`),
    });
    const def = parseAgentFile('---\nmodels: [large, small]\n---\nBe brief.', { name: 'x' });
    const result = await run(compileAgents([def]).x!, 'hi', { adapter });
    expect(result.output).toBe('answered by small');
    expect(adapter.calls.map((c) => c.spec.model)).toEqual(['large', 'small']);
  });

  it('compiles a `team:` key into the team pattern, the declaring agent leading by default', async () => {
    const flows = compileAgents(
      defs(
        { name: 'panel', system: 'Lead the panel', team: { members: ['analyst', 'dev'], terminationMode: 'max-rounds', maxRounds: 2 } },
        { name: 'analyst' },
        { name: 'dev' },
      ),
    );
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'analyst', reply: 'The login form lacks rate limiting.' },
        { agent: 'dev', reply: 'I can add a limiter.' },
        { agent: 'panel', reply: 'Decision: add a rate limiter to the login form.' },
      ],
    });
    const result = await run(flows.panel!, 'Review the login form', { adapter });
    expect(result).toMatchObject({ output: 'Decision: add a rate limiter to the login form.', agent: 'panel', status: 'completed', reason: 'max-rounds' });
    expect(adapter.inputsOf('analyst')).toHaveLength(2);
    expect(adapter.inputsOf('dev')[1]).toContain('The login form lacks rate limiting.');
  });

  it('accepts a named lead', async () => {
    const flows = compileAgents(
      defs(
        { name: 'panel', team: { members: ['a'], lead: 'lead', terminationMode: 'max-rounds', maxRounds: 1 } },
        { name: 'a' },
        { name: 'lead' },
      ),
    );
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'note' }, { agent: 'lead', reply: 'final' }] });
    await expect(run(flows.panel!, 'x', { adapter })).resolves.toMatchObject({ output: 'final', agent: 'lead' });
  });

  it('reads the team pattern\'s termination modes and lead from agent files, and the words of older files', () => {
    const def = parseAgentFile('---\nteam: { members: [a], lead: b, terminationMode: max-rounds }\n---\nLead.', { name: 'panel' });
    expect(def.team).toMatchObject({ lead: 'b', terminationMode: 'max-rounds' });
    const other = parseAgentFile('---\nteam: { members: [a], coordinator: b, terminationMode: coordinator }\n---\n', { name: 'panel' });
    expect(other.team).toMatchObject({ lead: 'b', terminationMode: 'lead-decides' });
    const camel = parseAgentFile('---\nteam: { members: [a], terminationMode: coordinatorDecides }\n---\n', { name: 'panel' });
    expect(camel.team?.terminationMode).toBe('lead-decides');
    expect(parseAgentFile('---\nteam: { members: [a], terminationMode: maxRounds }\n---\n', { name: 'panel' }).team?.terminationMode).toBe('max-rounds');
  });
});

import { describe, expect, it } from 'vitest';
import { defineAgent, type AgentDefinitionInput } from '../../src/agents/define.js';
import { subAgentsOf, terminalsOf, validateAgents } from '../../src/agents/validate.js';

const defs = (...list: AgentDefinitionInput[]) => list.map(defineAgent);

describe('validateAgents', () => {
  it('accepts a valid graph', () => {
    const result = validateAgents(defs({ name: 'desk', router: { destinations: ['billing'] }, advisors: ['risk'] }, { name: 'billing', handoff: 'approval' }, { name: 'approval' }, { name: 'risk' }));
    expect(result).toEqual({ errors: [], warnings: [] });
  });

  it('detects a handoff cycle with its path', () => {
    const { errors } = validateAgents(defs({ name: 'a', handoff: 'b' }, { name: 'b', handoff: 'a' }));
    expect(errors).toEqual([{ code: 'cycle', message: 'Cycle: a -> b -> a', agent: 'a', path: ['a', 'b', 'a'] }]);
  });

  it('detects cycles through routers, advisors, team membership and self references', () => {
    const viaRouter = validateAgents(defs({ name: 'desk', router: { destinations: ['x'] } }, { name: 'x', advisors: 'desk' }));
    expect(viaRouter.errors[0]).toMatchObject({ code: 'cycle', path: ['desk', 'x', 'desk'] });
    const viaTeam = validateAgents(defs({ name: 'squad', team: { members: ['m'], lead: 'lead' } }, { name: 'm' }, { name: 'lead', advisors: ['squad'] }));
    expect(viaTeam.errors[0]).toMatchObject({ code: 'cycle', message: 'Cycle: lead -> squad -> lead' });
    const self = validateAgents(defs({ name: 'solo', handoff: 'solo' }));
    expect(self.errors[0]).toMatchObject({ code: 'cycle', path: ['solo', 'solo'] });
  });

  it('reports unknown references, duplicate names, routers with tools, empty routers and leads with a handoff', () => {
    const { errors } = validateAgents(
      defs(
        { name: 'desk', router: { destinations: [] }, tools: ['search'] },
        { name: 'Desk' },
        { name: 'a', handoff: 'ghost', advisors: ['Desk2'] },
        { name: 'team1', team: { members: ['lead'], lead: 'lead' } },
        { name: 'lead', handoff: 'a' },
      ),
    );
    expect(errors.map((e) => e.code).sort()).toEqual(['duplicate_name', 'empty_router', 'lead_handoff', 'router_with_tools', 'unknown_reference', 'unknown_reference']);
    expect(errors.find((e) => e.code === 'unknown_reference' && e.path?.[1] === 'ghost')?.message).toBe('Agent "a" names unknown agent "ghost" (handoff)');
    expect(errors.find((e) => e.code === 'duplicate_name')?.message).toMatch(/"Desk" is used twice/);
  });
});

describe('sub-agents and hand-off choices', () => {
  it('refuses a cycle of sub-agents, and a sub-agent beside a router; hand-off choices may loop', () => {
    const cycle = validateAgents(defs({ name: 'a', subAgents: ['b'] }, { name: 'b', subAgents: ['a'] }));
    expect(cycle.errors).toEqual([{ code: 'cycle', message: 'Cycle: a -> b -> a', agent: 'a', path: ['a', 'b', 'a'] }]);
    const loop = validateAgents(defs({ name: 'review', handoffs: [{ agent: 'implement' }] }, { name: 'implement', handoffs: [{ agent: 'review', send: true }] }));
    expect(loop.errors).toEqual([]);
    const mixed = validateAgents(defs({ name: 'desk', router: { destinations: ['a'] }, subAgents: ['a'] }, { name: 'a', handoffs: [{ agent: 'desk' }], advisors: ['b'] }, { name: 'b' }));
    expect(mixed.errors.map((e) => e.code)).toEqual(['incompatible_handoffs', 'router_with_tools']);
    expect(mixed.errors[0]!.message).toBe('Agent "a" offers hand-offs beside `advisors`; an agent that offers hand-offs answers itself');
  });

  it('reports unknown sub-agents and hand-off targets, and a sub-agent no model may call', () => {
    const { errors, warnings } = validateAgents(defs({ name: 'lead', subAgents: ['ghost', 'solo'], handoffs: [{ agent: 'nobody', label: 'Go' }] }, { name: 'solo', mode: 'primary' }));
    expect(errors.map((e) => [e.message, e.path])).toEqual([
      ['Agent "lead" names unknown agent "ghost" (subagent)', ['agents', 'ghost']],
      ['Agent "lead" names unknown agent "nobody" (handoff-choice)', ['handoffs', 'nobody']],
    ]);
    expect(warnings.map((w) => w.code)).toEqual(['subagent_primary']);
  });

  it('`*` as sub-agents is every other agent a model may call', () => {
    const graph = defs({ name: 'lead', subAgents: ['*'] }, { name: 'a' }, { name: 'b', mode: 'primary' }, { name: 'c', mode: 'subagent' });
    expect(subAgentsOf(graph[0]!, graph)).toEqual(['a', 'c']);
    expect(validateAgents(graph).errors).toEqual([]);
  });
});

describe('terminalsOf', () => {
  const graph = defs(
    { name: 'desk', router: { destinations: ['billing', 'legal'] } },
    { name: 'billing', handoff: 'approval' },
    { name: 'approval' },
    { name: 'legal' },
    { name: 'squad', team: { members: ['legal'], lead: 'approval' } },
  );
  it('follows handoffs, router destinations and team leads', () => {
    expect(terminalsOf(graph, 'desk')).toEqual(['approval', 'legal']);
    expect(terminalsOf(graph, 'billing')).toEqual(['approval']);
    expect(terminalsOf(graph, 'squad')).toEqual(['approval']);
    expect(terminalsOf(graph, 'legal')).toEqual(['legal']);
  });
});

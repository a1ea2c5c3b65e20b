/**
 * Compile validated agent definitions into runnables, composed as their
 * frontmatter says: advisors before the agent's own session, then router,
 * then handoff, recursively.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { ConfigurationError } from '../core/errors.js';
import type { Runnable } from '../core/runnable.js';
import type { ToolDefinition } from '../core/tools.js';
import { advisors, consultAdvisors, formatAdvice, type AdvisorsOptions } from '../patterns/advisors.js';
import { agent, type Agent } from '../patterns/agent.js';
import { handoff } from '../patterns/handoff.js';
import { router } from '../patterns/router.js';
import { team } from '../patterns/team.js';
import type { AgentDefinition } from './definition.js';
import { validateAgents } from './validate.js';

/** Options of {@link compileAgents}. */
export interface CompileAgentsOptions {
  /** Adapters by name, for definitions that name one (`adapter: openai`). Unresolved names are looked up in the run's `adapters`. */
  adapters?: Record<string, ModelAdapter>;
  /** The adapter of definitions that name none. Default: the run's `adapter`. */
  defaultAdapter?: ModelAdapter | string;
  /** Tools by name, for the names listed in `tools:`. */
  tools?: Record<string, ToolDefinition>;
  /** What to do with a tool name that `tools` lacks: `error` (default) or `skip`. */
  unknownTools?: 'error' | 'skip';
  /** Options of every advisors step (failure policy, parallelism, time-out). */
  advisors?: AdvisorsOptions;
}

/**
 * Validate `defs` as a graph and compile each into a runnable, by name. The
 * runnable of an agent with advisors, a router or a handoff is the composed
 * flow; its outcome's `agent` is the terminal agent.
 *
 * @example
 * ```ts
 * const flows = compileAgents(await loadAgents('./agents'));
 * const result = await run(flows['support-desk']!, 'I was charged twice', { adapter });
 * ```
 */
export function compileAgents(defs: readonly AgentDefinition[], options: CompileAgentsOptions = {}): Record<string, Runnable> {
  const { errors } = validateAgents(defs);
  if (errors.length > 0) {
    throw new ConfigurationError(`Invalid agent graph:\n${errors.map((e) => `  ${e.message}`).join('\n')}`, {
      code: 'invalid_graph',
      details: { errors },
    });
  }
  const byName = new Map(defs.map((d) => [d.name, d]));
  const agents = new Map<string, Agent>();
  const compiled = new Map<string, Runnable>();

  const baseAgent = (def: AgentDefinition): Agent => {
    let found = agents.get(def.name);
    if (!found) {
      found = agent(agentOptions(def, options));
      agents.set(def.name, found);
    }
    return found;
  };

  const build = (name: string): Runnable => {
    const cached = compiled.get(name);
    if (cached) return cached;
    const def = byName.get(name)!;
    const self = baseAgent(def);
    const advisorList = (def.advisors ?? []).map(build);
    let flow: Runnable = def.team ? compileTeam(def, self, build) : self;
    if (def.router) {
      const destinations = Object.fromEntries(def.router.destinations.map((d) => [d, build(d)]));
      const prepare = advisorList.length
        ? async (input: string, ctx: Parameters<Runnable['run']>[1]) =>
            formatAdvice(input, await consultAdvisors(def.name, advisorList, input, ctx, options.advisors))
        : undefined;
      const descriptions = Object.fromEntries(
        def.router.destinations.flatMap((d) => (byName.get(d)!.description === undefined ? [] : [[d, byName.get(d)!.description!]])),
      );
      flow = router(self, destinations, {
        descriptions,
        ...(def.router.fallback === undefined ? {} : { fallback: def.router.fallback }),
        ...(prepare ? { prepare } : {}),
      });
    } else if (advisorList.length) {
      flow = advisors(flow, advisorList, { ...options.advisors, name: `${def.name} + advisors` });
    }
    if (def.handoff !== undefined) flow = handoff(flow, build(def.handoff), { name: `${def.name} -> ${def.handoff}` });
    compiled.set(name, flow);
    return flow;
  };

  return Object.fromEntries(defs.map((d) => [d.name, build(d.name)]));
}

/**
 * Compile an agent's `team:` key into the team pattern: the named members,
 * and the declaring agent as coordinator unless another one is named.
 */
function compileTeam(def: AgentDefinition, self: Agent, build: (name: string) => Runnable): Runnable {
  const spec = def.team!;
  const coordinator = spec.coordinator === undefined || spec.coordinator === def.name ? self : build(spec.coordinator);
  return team({
    name: `${def.name} (team)`,
    members: spec.members.map(build),
    coordinator,
    ...(spec.terminationMode === undefined ? {} : { terminationMode: spec.terminationMode }),
    ...(spec.maxRounds === undefined ? {} : { maxRounds: spec.maxRounds }),
    ...(spec.turnBased === undefined ? {} : { turnBased: spec.turnBased }),
  });
}

function agentOptions(def: AgentDefinition, options: CompileAgentsOptions): Parameters<typeof agent>[0] {
  const tools: ToolDefinition[] = [];
  for (const toolName of def.tools ?? []) {
    const tool = options.tools?.[toolName];
    if (tool) tools.push(tool);
    else if (options.unknownTools !== 'skip') {
      throw new ConfigurationError(`Agent "${def.name}" lists tool "${toolName}", which is not in \`tools\``, {
        code: 'invalid_agent',
        details: { agent: def.name, tool: toolName },
      });
    }
  }
  const adapter = def.adapter === undefined ? options.defaultAdapter : (options.adapters?.[def.adapter] ?? def.adapter);
  return {
    name: def.name,
    system: def.system,
    ...(def.description === undefined ? {} : { description: def.description }),
    ...(def.model === undefined ? {} : { model: def.model }),
    ...(adapter === undefined ? {} : { adapter }),
    ...(tools.length ? { tools } : {}),
    ...(def.temperature === undefined ? {} : { temperature: def.temperature }),
    ...(def.limits?.maxTurns === undefined ? {} : { maxTurns: def.limits.maxTurns }),
    ...(def.limits?.timeoutMs === undefined ? {} : { timeoutMs: def.limits.timeoutMs }),
    ...(def.metadata === undefined ? {} : { metadata: def.metadata }),
  };
}

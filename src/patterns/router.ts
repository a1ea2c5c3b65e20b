/**
 * router: one turn of a router agent picks a destination (a `route_to` tool
 * call, or a `ROUTE: <name>` line for adapters without tools); the
 * destination gets the original request and owns the answer.
 * @module
 */
import { z } from 'zod';
import type { ModelTurn, ToolResult } from '../core/adapter.js';
import type { RunContext } from '../core/context.js';
import { withTimeout } from '../core/abort.js';
import { ConfigurationError, RoutingError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { addUsage } from '../core/usage.js';
import { estimateTokens, inputTokensOf } from '../core/context-window.js';
import { delegate, enabledTargets } from '../core/delegate.js';
import type { DelegationHooks, DelegationMessage } from '../core/delegation.js';
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import type { Agent, Conversation } from './agent.js';
import { defined } from '../core/defined.js';
import { check, defineOptions, func, nonEmptyString } from '../core/options.js';
import { delegationOption } from './checks.js';

/** Options of {@link router}. */
export interface RouterOptions {
  /** The destination used when the router agent fails to choose (after its retry). Default: none, a `RoutingError`. */
  fallback?: string;
  /** The op name. Default: the router agent's name. */
  name?: string;
  /**
   * Turn the request into what the router agent decides on (advisors use
   * this to enrich it). Destinations still get the original request.
   */
  prepare?: (input: string, ctx: RunContext) => Promise<string>;
  /** One line per destination for the router agent. Default: the `description` of destinations that are agents. */
  descriptions?: Record<string, string>;
  /**
   * Hooks on the route (with those of guarded runnables around it):
   * `enabled` decides at run time which destinations the router agent is
   * offered; `inputFilter` and `beforeDelegation` shape or refuse what the
   * chosen destination gets. A refusal goes back to the router agent as an
   * error result of its `route_to` call (or a correction, in text form),
   * and counts as its one retry.
   */
  delegation?: DelegationHooks;
}

/** What a router produces: the destination's outcome and the choice. */
export interface RouterOutcome extends Outcome {
  /** The destination chosen. */
  destination: string;
  /** Why the router agent chose it, when it said. */
  rationale?: string;
}

/** One routing decision. */
interface Choice {
  destination: string;
  reason?: string;
}

/**
 * The destination named by the first `ROUTE: <name>` line (any case, the
 * name optionally in backticks, nothing else on the line) outside fenced
 * code blocks, and the text without that line (the reason). Linear.
 */
export function parseRouteLine(text: string): { raw: string; rest: string } | undefined {
  const source = readableText(text, 'the text of parseRouteLine');
  let found: { raw: string; start: number; end: number } | undefined;
  scanSpans(source, (start, end, kind) => {
    if (found || kind !== 'text') return;
    let at = start;
    while (at < end && isWhiteSpace(source.charCodeAt(at))) at++;
    if (source.slice(at, at + 6).toUpperCase() !== 'ROUTE:') return;
    const trimmed = source.slice(at, end).trim();
    let name = trimmed.slice(6).trim();
    if (name.startsWith('`')) name = name.slice(1);
    if (name.endsWith('`')) name = name.slice(0, -1);
    if (name === '' || /[\s`]/.test(name)) return;
    found = { raw: name, start, end };
  });
  if (!found) return undefined;
  return { raw: found.raw, rest: (source.slice(0, found.start) + source.slice(found.end)).trim() };
}

/** The description {@link router} checks its options against. */
const routerOptions = defineOptions<RouterOptions>('router', {
  fallback: nonEmptyString,
  name: nonEmptyString,
  prepare: func,
  descriptions: check('an object of descriptions by destination name', (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((d) => typeof d === 'string')),
  delegation: delegationOption,
});

/**
 * Route each request to one destination, chosen by `routerAgent` in a single
 * turn. An invalid or missing choice gets one corrective retry listing the
 * valid names, then the `fallback` destination or a {@link RoutingError}.
 *
 * @example
 * ```ts
 * const desk = router(frontDesk, [billing, legal], { fallback: 'billing' });
 * const { agent } = await run(desk, 'I was charged twice', { adapter });
 * ```
 */
export function router(
  routerAgent: Agent,
  destinations: Runnable[] | Record<string, Runnable>,
  options: RouterOptions = {},
): Runnable<RouterOutcome> {
  routerOptions.check(options);
  if (!routerAgent || typeof routerAgent.converse !== 'function') {
    throw new ConfigurationError(`Expected the router agent to be an agent (from \`agent()\`), got ${describeValue(routerAgent)}`);
  }
  const table = destinationTable(routerAgent.name, destinations);
  const names = [...table.keys()];
  if (options.fallback !== undefined && !table.has(options.fallback)) {
    throw new ConfigurationError(
      `Expected \`fallback\` of router "${routerAgent.name}" to be one of ${names.join(', ')}, got ${describeValue(options.fallback)}`,
    );
  }
  const name = options.name ?? routerAgent.name;
  const describe = (n: string) => {
    const line = options.descriptions?.[n] ?? (table.get(n) as Partial<Agent>).options?.description;
    return line ? `- ${n}: ${line}` : `- ${n}`;
  };
  // The `route_to` tool of the last set of offered destinations (the same on every run unless delegation rules change it).
  let routeTool: { key: string; tool: ToolDefinition } | undefined;
  const routeToFor = (offered: string[]): ToolDefinition => {
    const key = offered.join('\n');
    if (routeTool?.key !== key) routeTool = { key, tool: routeToTool(offered) };
    return routeTool.tool;
  };
  return defineRunnable<RouterOutcome>({
    name,
    kind: 'router',
    agent: routerAgent.name,
    async run(input, ctx) {
      const offered = await enabledTargets(ctx, 'route', routerAgent.name, names, options.delegation);
      if (offered.length === 0) {
        throw new RoutingError(`Router "${routerAgent.name}" has no enabled destination (destinations: ${names.join(', ')})`, { details: { router: routerAgent.name, valid: [] } });
      }
      const question = options.prepare ? await options.prepare(input, ctx) : input;
      let routed = input;
      const vet = async (choice: Choice): Promise<string | undefined> => {
        const history: DelegationMessage[] = [{ role: 'user', content: input }, ...(choice.reason ? [{ role: 'assistant' as const, name: routerAgent.name, content: choice.reason }] : [])];
        const decided = await delegate(ctx, { kind: 'route', from: routerAgent.name, to: choice.destination, input, history }, options.delegation);
        if ('refused' in decided) return decided.refused;
        routed = decided.input;
        return undefined;
      };
      const fallback = options.fallback !== undefined && offered.includes(options.fallback) ? options.fallback : undefined;
      const asked = `${question}\n\nDestinations:\n${offered.map(describe).join('\n')}`;
      const choice = await decide(routerAgent, offered, routeToFor(offered), asked, fallback, ctx, vet);
      const outcome = await table.get(choice.destination)!.run(routed, ctx);
      return {
        output: outcome.output,
        agent: outcome.agent,
        status: outcome.status,
        ...defined({ reason: outcome.reason }),
        destination: choice.destination,
        ...defined({ rationale: choice.reason }),
      };
    },
  });
}

function destinationTable(routerName: string, destinations: Runnable[] | Record<string, Runnable>): Map<string, Runnable> {
  const entries = Array.isArray(destinations) ? destinations.map((d) => [d?.name, d] as const) : Object.entries(destinations);
  const table = new Map<string, Runnable>();
  for (const [key, runnable] of entries) {
    if (!runnable || typeof runnable.run !== 'function' || typeof key !== 'string') {
      throw new ConfigurationError(`Router "${routerName}" has a destination that is not a runnable: ${describeValue(runnable)}`);
    }
    if (table.has(key)) throw new ConfigurationError(`Router "${routerName}" lists destination "${key}" twice`);
    table.set(key, runnable);
  }
  if (table.size === 0) throw new ConfigurationError(`Router "${routerName}" needs at least one destination`);
  return table;
}

/** The router's `route_to` tool for these destinations. */
function routeToTool(names: string[]): ToolDefinition {
  return defineTool({
    name: 'route_to',
    description: `Send the request to the agent that should handle it (one of: ${names.join(', ')}).`,
    parameters: z.object({ agent: z.enum(names as [string, ...string[]]), reason: z.string().optional() }),
    // Never executed: the router reads the call itself and ends after one turn.
    execute: () => '',
  });
}

/** The instructions appended to the request the router agent sees. */
function instructions(names: string[], useTools: boolean): string {
  const list = names.join(', ');
  return useTools
    ? `Choose who should handle this request: call the \`route_to\` tool once, with \`agent\` one of: ${list}.`
    : `Choose who should handle this request. Reply with one line \`ROUTE: <name>\`, where <name> is one of: ${list}.`;
}

/** One decision turn (plus one corrective retry) in the router agent's own op. */
async function decide(
  routerAgent: Agent,
  names: string[],
  routeTo: ToolDefinition,
  question: string,
  fallback: string | undefined,
  parent: RunContext,
  vet: (choice: Choice) => Promise<string | undefined>,
): Promise<Choice> {
  return parent.enter<Outcome & { choice: Choice }>({ kind: 'agent', name: routerAgent.name, agent: routerAgent.name }, async (ctx) => {
    const useTools = routerAgent.resolveAdapter(ctx).capabilities.tools;
    ctx.emit('agent.started', { agent: routerAgent.name, input: question });
    const timeoutMs = routerAgent.options.timeoutMs;
    let conversation: Conversation | undefined;
    const choose = async (signal: AbortSignal): Promise<Choice> => {
      conversation = await routerAgent.converse(ctx, useTools ? { extraTools: [routeTo] } : {});
      let turn = await sendOne(conversation, ctx, `${question}\n\n${instructions(names, useTools)}`, 1, signal);
      let read = readChoice(turn, names, routeTo);
      for (let attempt = 1; ; attempt++) {
        let refusal: string | undefined;
        if (read.choice) {
          refusal = await vet(read.choice);
          if (refusal === undefined) {
            const form = read.form;
            ctx.emit('router.selected', { router: routerAgent.name, destination: read.choice.destination, attempt, form, ...defined({ reason: read.choice.reason }) });
            return read.choice;
          }
        }
        if (attempt === 2) break;
        const raw = read.choice?.destination ?? read.raw;
        ctx.emit('router.retry', { router: routerAgent.name, valid: names, ...defined({ choice: raw }) });
        const problem =
          refusal !== undefined
            ? `Routing to "${raw}" was refused: ${refusal}.`
            : read.raw === undefined
              ? 'You did not choose a destination.'
              : `"${read.raw}" is not a valid destination.`;
        const correction = `${problem} Valid names: ${names.join(', ')}. ${instructions(names, useTools)}`;
        const retryInput: string | ToolResult[] =
          turn.toolCalls.length > 0
            ? turn.toolCalls.map((c) => ({ callId: c.id, name: c.name, content: `Error: ${correction}`, isError: true }))
            : correction;
        turn = await sendOne(conversation, ctx, retryInput, 2, signal);
        read = readChoice(turn, names, routeTo);
      }
      if (fallback !== undefined && (await vet({ destination: fallback })) === undefined) {
        ctx.emit('router.selected', { router: routerAgent.name, destination: fallback, attempt: 2, form: 'fallback' });
        return { destination: fallback };
      }
      throw new RoutingError(
        `Router "${routerAgent.name}" did not choose a valid destination after a retry` +
          `${read.raw === undefined ? '' : ` (last choice: "${read.raw}")`}; valid names: ${names.join(', ')}`,
        { details: { router: routerAgent.name, valid: names, ...defined({ choice: read.raw }) } },
      );
    };
    try {
      const choice = await withTimeout(choose, {
        signal: ctx.signal,
        clock: ctx.clock,
        ...defined({ timeoutMs }),
        message: `Agent "${routerAgent.name}" timed out after ${timeoutMs} ms`,
      });
      ctx.emit('agent.completed', { agent: routerAgent.name, output: choice.destination, turns: ctx.op.usage.turns, usage: ctx.op.usage });
      return { output: choice.destination, agent: routerAgent.name, status: 'completed', choice };
    } catch (error) {
      ctx.emit('agent.failed', { agent: routerAgent.name, error: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) });
      throw error;
    } finally {
      await (conversation as Conversation | undefined)?.close().catch(() => undefined);
    }
  }).then((o) => o.choice);
}

/** Send exactly one turn (no tool loop), recording usage and the turn event. */
async function sendOne(conversation: Conversation, ctx: RunContext, input: string | ToolResult[], turnNo: number, signal: AbortSignal): Promise<ModelTurn> {
  const release = ctx.reserveBudgets(estimateTokens(inputTokensOf(input)));
  let turn: ModelTurn;
  try {
    turn = await conversation.handle.send(input, { signal });
  } finally {
    release();
  }
  const usage = addUsage({ turns: 1 }, turn.usage);
  ctx.recordUsage(usage);
  ctx.emit('agent.turn', { agent: conversation.agent, turn: turnNo, text: turn.text, toolCalls: turn.toolCalls.length, usage });
  return turn;
}

/** Read the choice from a turn: a `route_to` call first, then a `ROUTE:` line. */
function readChoice(turn: ModelTurn, names: string[], routeTo: ToolDefinition): { choice?: Choice; raw?: string; form: 'tool' | 'text' } {
  const call = turn.toolCalls.find((c) => c.name === 'route_to');
  if (call) {
    const parsed = routeTo.parameters.safeParse(call.arguments ?? {});
    if (parsed.success) {
      const { agent, reason } = parsed.data as { agent: string; reason?: string };
      return { choice: { destination: agent, ...defined({ reason }) }, form: 'tool' };
    }
    const raw = (call.arguments as { agent?: unknown } | undefined)?.agent;
    return { raw: typeof raw === 'string' ? raw : call.rawArguments ?? JSON.stringify(call.arguments ?? null), form: 'tool' };
  }
  const line = parseRouteLine(typeof turn.text === 'string' ? turn.text : '');
  if (!line) return { form: 'text' };
  const { raw, rest } = line;
  const found = names.find((n) => n === raw) ?? names.find((n) => n.toLowerCase() === raw.toLowerCase());
  if (!found) return { raw, form: 'text' };
  return { choice: { destination: found, ...(rest ? { reason: rest } : {}) }, form: 'text' };
}

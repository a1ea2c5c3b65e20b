/**
 * Hand-off choices: an agent answers, then may hand the work on to one of
 * the agents it offers (GitHub Copilot's `handoffs:`), chosen by the model
 * with a `hand_off` tool call or a `HANDOFF: <label>` line. A choice whose
 * `send` is not true is confirmed by the person first, through an approval
 * queue. The next agent gets the request, the work so far and the
 * choice's prompt, and may hand off in turn, up to a limit.
 * @module
 */
import { z } from 'zod';
import type { RunContext } from '../core/context.js';
import { ConfigurationError, errorMessage, isTroupeError } from '../core/errors.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { defineTool } from '../core/tools.js';
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import { PROMPT_HEADINGS, section } from '../text/headings.js';
import type { Agent, Conversation } from './agent.js';
import { formatHandoff } from './handoff.js';
import { defined } from '../core/defined.js';
import { check, defineOptions, nonEmptyString, nonNegativeInteger, object, required } from '../core/options.js';

/** The description {@link handoffChoices} checks its options against. */
const handoffChoicesOptions = defineOptions<HandoffChoicesOptions>('handoffChoices', {
  agents: required(check('an object of runnables by name', (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((r) => typeof (r as { run?: unknown } | null)?.run === 'function'))),
  choices: required(check('an object of hand-off choice lists by agent name', (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every(Array.isArray))),
  approvals: object,
  maxHandoffs: nonNegativeInteger,
  name: nonEmptyString,
});

/** One hand-off an agent offers. */
export interface HandoffChoice {
  /** The agent that takes over (a key of `agents`). */
  to: string;
  /** What the choice is called (the model may choose by it). */
  label?: string;
  /** What the next agent is asked to do, with the work so far. */
  prompt?: string;
  /** True: taken without asking. Default: false, the person confirms it through `approvals`. */
  send?: boolean;
}

/** Decides whether a hand-off goes ahead (an `ApprovalQueue` is one). */
export interface HandoffApprover {
  request(
    request: { tool: string; agent: string; sessionId?: string; runId?: string; arguments?: unknown },
    options?: { signal?: AbortSignal; ctx?: RunContext },
  ): Promise<boolean>;
}

/** Options of {@link handoffChoices}. */
export interface HandoffChoicesOptions {
  /** Every agent that may take part, by name. One that offers choices must be an `agent()`. */
  agents: Record<string, Runnable>;
  /** The hand-offs each agent offers, by agent name. */
  choices: Record<string, readonly HandoffChoice[]>;
  /** Confirms choices whose `send` is not true. Without it, such a choice is not taken (a `handoff.declined` event says so). */
  approvals?: HandoffApprover;
  /** Most hand-offs in one run; past it the last answer stands. Default: 8. */
  maxHandoffs?: number;
  /** The op name. Default: `<start> (hand-offs)`. */
  name?: string;
}

/** One hand-off that was taken. */
export interface TakenHandoff {
  from: string;
  to: string;
  label?: string;
}

/** What {@link handoffChoices} produces: the last agent's outcome and the hand-offs taken. */
export interface HandoffChoicesOutcome extends Outcome {
  handoffs: TakenHandoff[];
}

/** The name of the tool that takes a hand-off. */
export const HANDOFF_TOOL = 'hand_off';

/**
 * The value of the last `HANDOFF: <choice>` line (any case, the value
 * optionally in backticks or quotes) outside fenced code blocks, and the
 * text without that line. Linear.
 */
export function parseHandoffLine(text: string): { choice: string; rest: string } | undefined {
  const source = readableText(text, 'the text of parseHandoffLine');
  let found: { choice: string; start: number; end: number } | undefined;
  scanSpans(source, (start, end, kind) => {
    if (kind !== 'text') return;
    let at = start;
    while (at < end && isWhiteSpace(source.charCodeAt(at))) at++;
    if (source.slice(at, at + 8).toUpperCase() !== 'HANDOFF:') return;
    let choice = source.slice(at + 8, end).trim();
    while (choice.length > 0 && '`"\''.includes(choice[0]!)) choice = choice.slice(1);
    while (choice.length > 0 && '`"\'.'.includes(choice.at(-1)!)) choice = choice.slice(0, -1);
    if (choice !== '') found = { choice: choice.trim(), start, end };
  });
  if (!found) return undefined;
  return { choice: found.choice, rest: (source.slice(0, found.start) + source.slice(found.end)).trim() };
}

/** The choice named `value`: by label, then by agent name, in any case. */
function pick(choices: readonly HandoffChoice[], value: string): HandoffChoice | undefined {
  const v = value.trim().toLowerCase();
  return choices.find((c) => c.label?.toLowerCase() === v) ?? choices.find((c) => c.to.toLowerCase() === v);
}

/** What the agent is told about its hand-offs. */
function instructions(choices: readonly HandoffChoice[], useTools: boolean): string {
  const lines = choices.map((c) => `- ${c.label ?? c.to} → ${c.to}${c.prompt ? `: ${c.prompt}` : ''}`);
  const how = useTools
    ? `To hand off, call the \`${HANDOFF_TOOL}\` tool with the label, then finish your answer.`
    : 'To hand off, end your answer with a line `HANDOFF: <label>`.';
  return section(PROMPT_HEADINGS.handoffs, `When your part is done, you may hand the work on to:\n${lines.join('\n')}\n${how} Hand off only when the next step is clearly due; otherwise just answer.`);
}

/** The message the next agent gets: the request, the work so far, and the choice's prompt. */
export function formatHandoffChoice(request: string, from: string, output: string, prompt: string | undefined): string {
  return `${formatHandoff(request, from, output)}${prompt ? `\n\n${section(PROMPT_HEADINGS.nextStep, prompt)}` : ''}`;
}

/**
 * Run `start`, then follow the hand-offs the agents choose. The outcome is
 * the last agent's, with the hand-offs taken. A choice that is not `send`
 * waits for `approvals` (`{ tool: 'handoff:<to>', agent, sessionId, runId,
 * arguments: { to, label, prompt } }`, with the run context); a refusal, a missing queue or the `maxHandoffs`
 * limit ends the run with the answer so far (`handoff.declined`).
 *
 * @example
 * ```ts
 * const flow = handoffChoices('planner', {
 *   agents: { planner, builder },
 *   choices: { planner: [{ to: 'builder', label: 'Build it', prompt: 'Build the plan', send: false }] },
 *   approvals: new ApprovalQueue({ handler: () => ({ approved: true }) }),
 * });
 * ```
 */
export function handoffChoices(start: string, options: HandoffChoicesOptions): Runnable<HandoffChoicesOutcome> {
  handoffChoicesOptions.check(options);
  const { agents, choices } = options;
  const maxHandoffs = options.maxHandoffs ?? 8;
  for (const [from, list] of Object.entries(choices)) {
    if (list.length > 0 && typeof (agents[from] as Partial<Agent> | undefined)?.converse !== 'function') {
      throw new ConfigurationError(`"${from}" offers hand-offs, so it must be an agent (from \`agent()\`) in \`agents\``);
    }
    for (const choice of list) if (!agents[choice.to]) throw new ConfigurationError(`"${from}" offers a hand-off to "${choice.to}", which is not in \`agents\``);
  }
  if (!agents[start]) throw new ConfigurationError(`The first agent "${start}" is not in \`agents\``);
  const name = options.name ?? `${start} (hand-offs)`;
  return defineRunnable<HandoffChoicesOutcome>({
    name,
    kind: 'handoff-choices',
    async run(input, ctx) {
      const taken: TakenHandoff[] = [];
      let current = start;
      let message = input;
      for (;;) {
        const offers = choices[current] ?? [];
        const turn =
          offers.length > 0
            ? await answerWithChoice(agents[current] as Agent, message, offers, ctx)
            : { outcome: await agents[current]!.run(message, ctx), choice: undefined };
        const { outcome, choice } = turn;
        if (taken.length > 0) ctx.emit('handoff.completed', { from: taken.at(-1)!.from, to: current, agent: outcome.agent });
        const done = { output: outcome.output, agent: outcome.agent, status: outcome.status, handoffs: taken };
        if (choice === undefined) return done;
        const declined = (reason: 'denied' | 'no-approvals' | 'limit') => {
          ctx.emit('handoff.declined', { from: current, to: choice.to, reason, ...defined({ label: choice.label }) });
          return done;
        };
        if (taken.length >= maxHandoffs) return declined('limit');
        if (choice.send !== true) {
          if (!options.approvals) return declined('no-approvals');
          const request = {
            tool: `handoff:${choice.to}`,
            agent: current,
            sessionId: ctx.op.id,
            runId: ctx.runId,
            arguments: { to: choice.to, ...defined({ label: choice.label, prompt: choice.prompt }) },
          };
          if (!(await options.approvals.request(request, { signal: ctx.signal, ctx }))) return declined('denied');
        }
        ctx.emit('handoff.started', { from: current, to: choice.to });
        taken.push({ from: current, to: choice.to, ...defined({ label: choice.label }) });
        message = formatHandoffChoice(input, current, outcome.output, choice.prompt);
        current = choice.to;
      }
    },
  });
}

/** One run of an agent that offers hand-offs: its answer, and the choice it made (if any). */
async function answerWithChoice(
  self: Agent,
  input: string,
  offers: readonly HandoffChoice[],
  parent: RunContext,
): Promise<{ outcome: Outcome; choice: HandoffChoice | undefined }> {
  let choice: HandoffChoice | undefined;
  const outcome = await parent.enter<Outcome>({ kind: 'agent', name: self.name, agent: self.name }, async (ctx) => {
    ctx.emit('agent.started', { agent: self.name, input });
    const useTools = self.resolveAdapter(ctx).capabilities.tools;
    const values = [...new Set(offers.flatMap((c) => [c.label ?? c.to, c.to]))] as [string, ...string[]];
    const tool = defineTool<{ to: string }>({
      name: HANDOFF_TOOL,
      description: `Hand the work on to the next agent once you have answered (one of: ${values.join(', ')}).`,
      parameters: z.object({ to: z.enum(values).describe('The label of the hand-off (or the agent)') }),
      execute: ({ to }) => {
        choice = pick(offers, to);
        return `Handing off to ${choice?.to ?? to} once you have answered. Finish your answer now.`;
      },
    });
    const system = [self.options.system, instructions(offers, useTools)].filter((s) => s !== undefined && s !== '').join('\n\n');
    let conversation: Conversation | undefined;
    try {
      conversation = await self.converse(ctx, { system, ...(useTools ? { extraTools: [tool] } : {}) });
      const reply = await conversation.send(input);
      let output = reply.text;
      const line = parseHandoffLine(output);
      if (line !== undefined) {
        output = line.rest;
        choice ??= pick(offers, line.choice);
      }
      ctx.emit('agent.completed', { agent: self.name, output, turns: reply.turns, usage: reply.usage });
      return { output, agent: self.name, status: 'completed' };
    } catch (error) {
      ctx.emit('agent.failed', { agent: self.name, error: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) });
      throw error;
    } finally {
      await conversation?.close().catch(() => undefined);
    }
  });
  return { outcome, choice };
}

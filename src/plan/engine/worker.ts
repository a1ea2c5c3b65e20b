/**
 * The default chunk runner: the chunk's role as an agent session, with the
 * tools the role may use (the plan's guardrails, approvals among them,
 * guard them from the attempt's scope). It records the attempt's usage and
 * tool calls (refused ones too), and hands
 * instructions the user adds while it runs to the worker at its next turn:
 * with the next tool results, or after its answer.
 * @module
 */
import { defined } from '../../core/defined.js';
import type { TroupeEvent } from '../../core/events.js';
import type { ModelAdapter } from '../../core/adapter.js';
import { errorMessage, isTroupeError } from '../../core/errors.js';
import { totalUsage } from '../../core/ops.js';
import type { Outcome } from '../../core/runnable.js';
import { defineTool, type ToolDefinition } from '../../core/tools.js';
import { agent, type Conversation } from '../../patterns/agent.js';
import { Attempt } from './attempt.js';
import type { ChunkToolCall } from './executor.js';
import type { ChunkRunner, ChunkRunInput } from './types.js';
import { messageNote, postMessageTool, type PlanMessage } from '../live/messages.js';

/** How the instructions that reach a running worker read. */
export function instructionNote(instructions: readonly string[]): string {
  return `## New instructions from the user\n\nThe user added these instructions while you were working; follow them from now on:\n${instructions.map((x) => `- ${x}`).join('\n')}`;
}

/** What reaches a running worker at its next turn: the user's new instructions and the messages other workers posted to it. */
function takeNotes(input: ChunkRunInput): string | undefined {
  const fresh = input.takeInstructions();
  const messages: PlanMessage[] = input.takeMessages?.() ?? [];
  if (fresh.length === 0 && messages.length === 0) return undefined;
  const parts: string[] = [];
  if (fresh.length > 0) parts.push(instructionNote(fresh));
  if (messages.length > 0) parts.push(messageNote(messages));
  return parts.join('\n\n');
}

/**
 * Run a chunk as an agent session built from its role, with the plan's
 * `tools` that the role may use, and the `post_message` tool when
 * `messages` is set.
 */
export function roleRunner(fallback: ModelAdapter | undefined, tools: readonly ToolDefinition[], messages = false): ChunkRunner {
  return async (input) => {
    const { role, chunk } = input;
    const adapter = role.adapter ?? fallback;
    const calls: ChunkToolCall[] = [];
    const allowed = role.tools === undefined ? [...tools] : tools.filter((t) => role.tools!.includes(t.name));
    const post = input.post;
    if (messages && post) allowed.push(postMessageTool((to, text) => post.call(input, to, text)) as ToolDefinition);
    const worker = agent({
      name: chunk.role,
      system: role.system,
      workspace: input.workspace.path,
      metadata: { planId: input.planId, chunk: chunk.sequenceIndex, attempt: input.attempt, preferredTools: role.preferredTools },
      ...defined({ model: role.model, temperature: role.temperature, adapter }),
    });
    // The attempt's record of what it spent (also when guardrails hand the runner a copy of the input).
    const spent = input instanceof Attempt ? input.spent : (input as { spent?: Attempt['spent'] }).spent;
    const before = input.ctx.op.children.length;
    const running = runWorker(worker.name, input, (ctx) => worker.converse(ctx, allowed.length === 0 ? {} : { extraTools: allowed.map((t) => withNotes(t, input)) }));
    // `enter` adds the worker's op node synchronously: it is the one at `before`.
    const node = input.ctx.op.children[before];
    const stop = node && allowed.length > 0 ? recordCalls(input.ctx, node.id, new Set(allowed.map((t) => t.name)), calls) : undefined;
    try {
      const out = await running;
      return { output: out.output, usage: out.usage, ...(calls.length === 0 ? {} : { toolCalls: calls }) };
    } catch (error) {
      if (spent) {
        if (node) spent.usage = totalUsage(node);
        spent.toolCalls.push(...calls);
      }
      throw error;
    } finally {
      stop?.();
    }
  };
}

/**
 * Record in `calls` every call the worker (op `opId`) makes to one of its
 * `tools`, from the tool loop's events: so a call a guardrail refused (an
 * approval denied) counts, as an error, like one that failed. Returns the
 * function that stops recording.
 */
function recordCalls(ctx: ChunkRunInput['ctx'], opId: string, tools: ReadonlySet<string>, calls: ChunkToolCall[]): () => void {
  const byId = new Map<string, ChunkToolCall>();
  const emitter = ctx.emitter;
  const called = (e: TroupeEvent<'tool.called'>): void => {
    if (e.opId !== opId || !tools.has(e.call.name)) return;
    const call: ChunkToolCall = { name: e.call.name, arguments: e.call.arguments };
    calls.push(call);
    byId.set(e.call.id, call);
  };
  const completed = (e: TroupeEvent<'tool.completed'>): void => {
    if (e.opId !== opId) return;
    const call = byId.get(e.callId);
    byId.delete(e.callId);
    if (call && (e.isError || e.content.startsWith('Not approved:'))) call.isError = true;
  };
  emitter.on('tool.called', called);
  emitter.on('tool.completed', completed);
  return () => {
    emitter.off('tool.called', called);
    emitter.off('tool.completed', completed);
  };
}

/** The worker's op (kind `agent`, as `agent.run` opens it): the prompt, then the instructions that arrived after its last turn, until none is left. */
function runWorker(name: string, input: ChunkRunInput, open: (ctx: ChunkRunInput['ctx']) => Promise<Conversation>): Promise<Outcome> {
  return input.ctx.enter<Outcome>({ kind: 'agent', name, agent: name }, async (ctx) => {
    ctx.emit('agent.started', { agent: name, input: input.prompt });
    let conversation: Conversation | undefined;
    try {
      conversation = await open(ctx);
      let reply = await conversation.send(input.prompt);
      let turns = reply.turns;
      for (let note = takeNotes(input); note !== undefined; note = takeNotes(input)) {
        reply = await conversation.send(`${note}\n\nIf they change your work, do what they ask and give your full answer again; otherwise repeat your answer.`);
        turns += reply.turns;
      }
      ctx.emit('agent.completed', { agent: name, output: reply.text, turns, usage: reply.usage });
      return { output: reply.text, agent: name, status: 'completed' };
    } catch (error) {
      ctx.emit('agent.failed', { agent: name, error: errorMessage(error), ...(isTroupeError(error) ? { code: error.code } : {}) });
      throw error;
    } finally {
      await conversation?.close().catch(() => undefined);
    }
  });
}

/** The tool, adding the instructions and messages that arrived since the worker's last turn to its result. */
function withNotes<Args>(tool: ToolDefinition<Args>, input: ChunkRunInput): ToolDefinition<Args> {
  return defineTool<Args>({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    execute: async (args, context) => {
      const result = await tool.execute(args, context);
      const note = takeNotes(input);
      if (note === undefined) return result;
      const text = typeof result === 'string' ? result : JSON.stringify(result) ?? '';
      return `${text}\n\n${note}`;
    },
  });
}

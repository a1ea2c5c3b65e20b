/**
 * The tool loop: execute a turn's tool calls, send the results back, repeat
 * until the model answers without calling a tool or `maxTurns` is reached.
 * @module
 */
import type { ModelTurn, ToolCall, ToolResult } from './adapter.js';
import { budgetExhaustion } from './budget.js';
import { RunContext } from './context.js';
import { throwIfAborted } from './abort.js';
import { estimateTokens, inputTokensOf } from './context-window.js';
import { MaxTurnsExceededError, errorMessage, isTroupeError } from './errors.js';
import { guardToolCall } from './guard-scope.js';
import { abortSignal, check, defineOptions, func, listOf, positiveInteger, required, string } from './options.js';
import type { SessionHandle } from './session.js';
import type { ToolDefinition } from './tools.js';
import { addUsage, emptyUsage, type Usage } from './usage.js';

/** Options of {@link runToolLoop}. */
export interface ToolLoopOptions {
  /** The context to record usage and events in. */
  ctx: RunContext;
  /** The agent the session speaks for. */
  agent: string;
  /** The tools that calls are executed against. */
  tools: readonly ToolDefinition[];
  /** The most model turns before a {@link MaxTurnsExceededError}. */
  maxTurns: number;
  /** Aborts the loop and the tools. Defaults to the context's signal. */
  signal?: AbortSignal;
  /**
   * The prompt tokens the next call will send, for the budget check before
   * it (a conversation counts its whole context). Default: the input's
   * own tokens, estimated.
   */
  promptTokens?: (input: string | ToolResult[]) => number;
}

const toolLoopOptions = defineOptions<ToolLoopOptions>('runToolLoop', {
  ctx: required(check('a RunContext', (v) => v instanceof RunContext)),
  agent: required(string),
  tools: required(listOf(check('a tool definition (a `name` and `execute`)', (v) => typeof (v as ToolDefinition | null)?.name === 'string' && typeof (v as ToolDefinition).execute === 'function'))),
  maxTurns: required(positiveInteger),
  signal: abortSignal,
  promptTokens: func,
});

/** What {@link runToolLoop} returns. */
export interface ToolLoopResult {
  /** The final turn's text. */
  text: string;
  /** The number of model turns made. */
  turns: number;
  /** Usage of those turns. */
  usage: Usage;
  /** Every tool call made, in order. */
  toolCalls: ToolCall[];
  /** The final turn. */
  lastTurn: ModelTurn;
}

/**
 * Send `input` and run tool calls until the model gives a final answer.
 * Tool failures (a throw, an unknown name, arguments that fail the schema)
 * go back to the model as error results; they never crash the run.
 */
export async function runToolLoop(
  handle: SessionHandle,
  input: string,
  options: ToolLoopOptions,
): Promise<ToolLoopResult> {
  toolLoopOptions.check(options);
  let last: string | undefined;
  try {
    return await toolLoop(handle, input, options, (text) => (last = text));
  } catch (error) {
    haltOnDivergence(options.ctx, error);
    // A budget stopped the loop: the error carries the last answer it had, as the partial result.
    const exhausted = budgetExhaustion(error, options.signal ?? options.ctx.signal);
    if (exhausted) throw exhausted.withPartial(last);
    throw error;
  }
}

/**
 * A replay that diverged ends the whole run with that error: a pattern
 * above must not make a note or a failed result of it (an advisor's
 * divergence would then surface as the next agent's, whose input holds
 * the note), so the run names the agent that really diverged.
 * @internal
 */
export function haltOnDivergence(ctx: RunContext, error: unknown): void {
  if (isTroupeError(error, 'replay_divergence')) ctx.halt(error);
}

async function toolLoop(handle: SessionHandle, input: string, options: ToolLoopOptions, answered: (text: string) => void): Promise<ToolLoopResult> {
  const { ctx, agent, maxTurns } = options;
  const promptTokens = options.promptTokens ?? ((next: string | ToolResult[]) => estimateTokens(inputTokensOf(next)));
  const signal = options.signal ?? ctx.signal;
  const tools = new Map<string, ToolDefinition>();
  for (const t of options.tools) tools.set(t.name, t);
  let next: string | ToolResult[] = input;
  let usage = emptyUsage();
  const calls: ToolCall[] = [];
  for (let turnNo = 1; ; turnNo++) {
    // Reserved before the call and settled after it, so calls in flight at once count together.
    const release = ctx.reserveBudgets(promptTokens(next));
    let turn: ModelTurn;
    try {
      turn = await handle.send(next, { signal });
    } finally {
      release();
    }
    if (turn.text) answered(turn.text);
    const turnUsage = addUsage({ turns: 1 }, turn.usage);
    usage = addUsage(usage, turnUsage);
    ctx.recordUsage(turnUsage);
    ctx.emit('agent.turn', { agent, turn: turnNo, text: turn.text, toolCalls: turn.toolCalls.length, usage: turnUsage });
    if (turn.toolCalls.length === 0) {
      return { text: turn.text, turns: turnNo, usage, toolCalls: calls, lastTurn: turn };
    }
    if (turnNo >= maxTurns) throw new MaxTurnsExceededError(maxTurns, agent);
    calls.push(...turn.toolCalls);
    next = await Promise.all(turn.toolCalls.map((call) => executeToolCall(call, tools, { ctx, agent, signal })));
  }
}

/**
 * Execute one tool call; every failure becomes an error result.
 * @internal
 */
export async function executeToolCall(
  call: ToolCall,
  tools: ReadonlyMap<string, ToolDefinition>,
  env: { ctx: RunContext; agent: string; signal: AbortSignal },
): Promise<ToolResult> {
  const { ctx, agent, signal } = env;
  ctx.emit('tool.called', { agent, call });
  const result = await (async (): Promise<ToolResult> => {
    const fail = (content: string): ToolResult => ({ callId: call.id, name: call.name, content, isError: true });
    const tool = tools.get(call.name);
    if (!tool) {
      const names = [...tools.keys()];
      return fail(`Error: unknown tool "${call.name}". Available tools: ${names.length ? names.join(', ') : '(none)'}`);
    }
    if (call.arguments === undefined && call.rawArguments !== undefined) {
      return fail(`Error: the arguments of "${call.name}" are not valid JSON: ${call.rawArguments.slice(0, 200)}`);
    }
    const parsed = tool.parameters.safeParse(call.arguments ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      return fail(`Error: invalid arguments for "${call.name}": ${issues}`);
    }
    return guardToolCall(env, call, async () => {
      try {
        // Nothing reaches a tool once the run was cancelled or halted.
        throwIfAborted(signal);
        const value: unknown = await tool.execute(parsed.data, { ctx, agent, callId: call.id, signal });
        return { callId: call.id, name: call.name, content: stringifyResult(value) };
      } catch (error) {
        if (signal.aborted) throw error;
        return fail(`Error: ${errorMessage(error)}`);
      }
    });
  })();
  ctx.emit('tool.completed', {
    agent,
    callId: call.id,
    name: call.name,
    isError: result.isError === true,
    content: result.content,
  });
  return result;
}

function stringifyResult(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

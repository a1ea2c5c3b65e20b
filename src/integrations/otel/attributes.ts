/**
 * Attribute names: the OpenTelemetry GenAI semantic conventions where one
 * applies, `troupe.*` for the rest, and the message formats of the opt-in
 * content attributes.
 * @module
 */
import type { ToolCall, ToolResult } from '../../core/adapter.js';
import type { Usage } from '../../core/usage.js';

/** GenAI semantic-convention attribute names that troupe sets. */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  workflowName: 'gen_ai.workflow.name',
  requestModel: 'gen_ai.request.model',
  requestTemperature: 'gen_ai.request.temperature',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  errorType: 'error.type',
} as const;

/** troupe's own attribute names. */
export const TROUPE = {
  runId: 'troupe.run.id',
  resumed: 'troupe.run.resumed',
  opId: 'troupe.op.id',
  opKind: 'troupe.op.kind',
  status: 'troupe.outcome.status',
  reason: 'troupe.outcome.reason',
  planId: 'troupe.plan.id',
  planChunks: 'troupe.plan.chunks',
  chunkId: 'troupe.chunk.id',
  chunkAttempt: 'troupe.chunk.attempt',
  iteration: 'troupe.iteration',
  round: 'troupe.team.round',
  session: 'troupe.session',
  turn: 'troupe.turn',
  inputTokens: 'troupe.usage.input_tokens',
  outputTokens: 'troupe.usage.output_tokens',
  cachedTokens: 'troupe.usage.cached_tokens',
  costUsd: 'troupe.usage.cost_usd',
  turns: 'troupe.usage.turns',
} as const;

/** The `gen_ai.operation.name` values troupe uses. */
export type GenAiOperation = 'invoke_workflow' | 'invoke_agent' | 'chat' | 'execute_tool';

/** A rolled-up usage as `troupe.usage.*` attributes (never `gen_ai.usage.*`, which only model calls carry, so backends that add them up count each token once). */
export function rollupAttributes(usage: Usage): Record<string, number> {
  return {
    [TROUPE.inputTokens]: usage.inputTokens,
    [TROUPE.outputTokens]: usage.outputTokens,
    [TROUPE.cachedTokens]: usage.cachedTokens,
    [TROUPE.costUsd]: usage.costUsd,
    [TROUPE.turns]: usage.turns,
  };
}

/** One part of a GenAI message. */
type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

/** A GenAI message, as `gen_ai.input.messages` and `gen_ai.output.messages` hold them (JSON). */
interface Message {
  role: 'user' | 'assistant' | 'tool';
  parts: MessagePart[];
  finish_reason?: string;
}

/** What was sent to a model (a prompt, or tool results) as `gen_ai.input.messages`. */
export function inputMessages(input: string | readonly ToolResult[]): string {
  const messages: Message[] =
    typeof input === 'string'
      ? [{ role: 'user', parts: [{ type: 'text', content: input }] }]
      : input.map((r) => ({ role: 'tool', parts: [{ type: 'tool_call_response', id: r.callId, response: r.content }] }));
  return JSON.stringify(messages);
}

/** A reply (text and tool calls) as `gen_ai.output.messages`. */
export function outputMessages(text: string, toolCalls: readonly ToolCall[] = []): string {
  const parts: MessagePart[] = [];
  if (text !== '' || toolCalls.length === 0) parts.push({ type: 'text', content: text });
  for (const call of toolCalls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments ?? call.rawArguments ?? null });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason(toolCalls) } satisfies Message]);
}

/** A system prompt as `gen_ai.system_instructions`. */
export function systemInstructions(system: string): string {
  return JSON.stringify([{ type: 'text', content: system }]);
}

/** Why a turn ended: `tool_call` when it asked for tools, else `stop`. */
export function finishReason(toolCalls: readonly ToolCall[]): string {
  return toolCalls.length > 0 ? 'tool_call' : 'stop';
}

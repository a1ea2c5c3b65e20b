/**
 * Tools: declared once with a zod schema for their arguments; adapters get
 * JSON Schema made by zod's own converter.
 * @module
 */
import { z } from 'zod';
import type { JsonSchema, ToolSchema } from './adapter.js';
import { ConfigurationError } from './errors.js';
import type { RunContext } from './context.js';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** The run context of the agent that called the tool. */
  ctx: RunContext;
  /** The agent that called the tool. */
  agent: string;
  /** The id of this call. */
  callId: string;
  /** Aborts when the run or the agent is cancelled. */
  signal: AbortSignal;
}

/**
 * A tool an agent may call: a name, a description, a zod schema for its
 * arguments and the function that executes it.
 */
export interface ToolDefinition<Args = unknown> {
  /** Unique within an agent; `[a-zA-Z0-9_-]{1,64}`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The arguments' schema; the model's arguments are validated against it. */
  readonly parameters: z.ZodType<Args>;
  /** Execute the call. The return value is sent to the model (strings as is, anything else as JSON). */
  execute(args: Args, context: ToolContext): unknown;
  /**
   * Whether the tool is offered, evaluated each time a session that has it
   * opens (an agent tool's per-target flag, a feature switch). Default:
   * always.
   */
  enabled?(context: { ctx: RunContext; agent: string }): boolean | Promise<boolean>;
}

/**
 * The tools of `tools` that are enabled for `agent` in `ctx` (see {@link ToolDefinition.enabled}), in order.
 * @internal
 */
export async function enabledTools(tools: readonly ToolDefinition[], ctx: RunContext, agent: string): Promise<ToolDefinition[]> {
  if (!tools.some((t) => t.enabled)) return [...tools];
  const out: ToolDefinition[] = [];
  for (const t of tools) if (!t.enabled || (await t.enabled({ ctx, agent }))) out.push(t);
  return out;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Declare a tool.
 *
 * @example
 * ```ts
 * const add = defineTool({
 *   name: 'add', description: 'Add two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => a + b,
 * });
 * ```
 */
export function defineTool<Args>(tool: ToolDefinition<Args>): ToolDefinition<Args> {
  if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
    throw new ConfigurationError(
      `Expected tool \`name\` to match ${String(TOOL_NAME)}, got ${JSON.stringify(tool.name)}`,
    );
  }
  if (typeof tool.execute !== 'function') {
    throw new ConfigurationError(`Tool "${tool.name}" needs an \`execute\` function`);
  }
  return tool;
}

/** The JSON Schema of a zod schema, as adapters receive it. */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchema;
  const { $schema: _ignored, ...rest } = json;
  return rest;
}

/**
 * The adapter-facing {@link ToolSchema} of a tool.
 * @internal
 */
export function toToolSchema(tool: ToolDefinition): ToolSchema {
  // A tool's JSON Schema is converted once per parameters schema, not at every session that offers it.
  let parameters = jsonSchemas.get(tool.parameters);
  if (parameters === undefined) {
    parameters = toJsonSchema(tool.parameters);
    jsonSchemas.set(tool.parameters, parameters);
  }
  return { name: tool.name, description: tool.description, parameters: structuredClone(parameters) };
}
const jsonSchemas = new WeakMap<z.ZodType, JsonSchema>();

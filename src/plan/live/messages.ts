/**
 * Messages between the workers of a plan: a worker (or the application)
 * posts a finding to a chunk, to every chunk of a role, or to everyone in
 * the plan. Messages go over the coordination layer's {@link MessageBus}
 * (the bus a lead and its workers use), are bounded in size and number,
 * and reach each recipient once: in its prompt when it has not started,
 * at its next turn when it runs.
 * @module
 */
import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { defineTool, type ToolDefinition } from '../../core/tools.js';
import { MessageBus } from '../../core/message-bus.js';
import { chunkRoles, type ChunkRole, type PlanChunk } from '../model/plan.js';

/** Who a message is for: one chunk, every chunk of a role, or every chunk of the plan. */
export type MessageRecipient = { chunk: number } | { role: ChunkRole } | 'all';

/** What a worker or the application posts. */
export interface PlanMessageInput {
  /** The sender: a chunk's `sequenceIndex`, or a name (`api` when the application posts). Default: `api`. */
  from?: number | string;
  to: MessageRecipient;
  text: string;
}

/** A message posted in a plan, as events, checkpoints and prompts carry it. */
export interface PlanMessage {
  /** Unique in the plan (`m1`, `m2`, ...). */
  id: string;
  from: number | string;
  to: MessageRecipient;
  text: string;
  /** Clock time it was posted. */
  time: number;
}

/** The zod schema of {@link PlanMessage}. */
export const planMessageSchema = z.object({
  id: z.string(),
  from: z.union([z.number().int(), z.string()]),
  to: z.union([z.object({ chunk: z.number().int() }), z.object({ role: z.enum(chunkRoles) }), z.literal('all')]),
  text: z.string(),
  time: z.number(),
});

/** Limits of a plan's messages. */
export interface MessageLimits {
  /** Longest message, in characters. Default: 4000. */
  maxChars?: number;
  /** Messages per plan. Default: 100. */
  maxMessages?: number;
}

/** What makes a message refused. */
export type PlanMessageProblem = 'malformed' | 'too_long' | 'cap_reached' | 'unknown_recipient';

/** A message was refused (code `message_rejected`); `problem` names why. Nothing was posted. */
export class PlanMessageError extends ConfigurationError {
  readonly problem: PlanMessageProblem;
  constructor(problem: PlanMessageProblem, message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'message_rejected', details: { problem, ...details } });
    this.name = 'PlanMessageError';
    this.problem = problem;
  }
}

/** Whether `message` is for `chunk` (a sender never receives its own message). */
export function addressedTo(message: PlanMessage, chunk: PlanChunk): boolean {
  if (message.from === chunk.sequenceIndex) return false;
  const to = message.to;
  return to === 'all' || ('chunk' in to ? to.chunk === chunk.sequenceIndex : to.role === chunk.role);
}

/** A recipient as text: `chunk 3`, `role Backend`, `everyone`. */
export function recipientName(to: MessageRecipient): string {
  return to === 'all' ? 'everyone' : 'chunk' in to ? `chunk ${to.chunk}` : `role ${to.role}`;
}

/** How messages read in a prompt or at a worker's next turn. */
export function messageNote(messages: readonly PlanMessage[]): string {
  const lines = messages.map((m) => `- From ${typeof m.from === 'number' ? `chunk ${m.from}` : m.from}${m.to === 'all' ? '' : ` (to ${recipientName(m.to)})`}: ${m.text}`);
  return `## Messages from other workers\n\n${lines.join('\n')}`;
}

/** Options of {@link PlanMessages}. */
export interface PlanMessagesOptions extends MessageLimits {
  clock: Clock;
  /** Whether a recipient exists in the plan now. */
  exists(to: MessageRecipient): boolean;
  /** Called for every message posted (the plan logs and emits it). */
  onMessage(message: PlanMessage): void;
  /** Messages restored from a checkpoint, posted before. */
  restored?: readonly PlanMessage[];
}

/** The messages of one plan: posted over a {@link MessageBus}, kept in order, bounded. */
export class PlanMessages {
  readonly #o: PlanMessagesOptions;
  readonly #bus: MessageBus;
  readonly #all: PlanMessage[];
  readonly #maxChars: number;
  readonly #max: number;

  constructor(options: PlanMessagesOptions) {
    this.#o = options;
    this.#all = [...(options.restored ?? [])];
    this.#maxChars = positive('messages.maxChars', options.maxChars) ?? 4000;
    this.#max = positive('messages.maxMessages', options.maxMessages) ?? 100;
    this.#bus = new MessageBus({ clock: options.clock });
  }

  /** Every message so far, oldest first (do not change it). */
  get list(): readonly PlanMessage[] {
    return this.#all;
  }

  /** Post a message, or throw a {@link PlanMessageError}. */
  post(input: PlanMessageInput): PlanMessage {
    const parsed = inputSchema.safeParse(input);
    if (!parsed.success) throw new PlanMessageError('malformed', `Expected a message { from?, to: { chunk } | { role } | 'all', text }, got ${describeValue(input)}`);
    const { text, to } = parsed.data as PlanMessageInput;
    const from = parsed.data.from ?? 'api';
    if (text.length > this.#maxChars) throw new PlanMessageError('too_long', `The message has ${text.length} characters; the limit is ${this.#maxChars}`, { chars: text.length, maxChars: this.#maxChars });
    if (this.#all.length >= this.#max) throw new PlanMessageError('cap_reached', `The plan already has ${this.#max} messages, its limit`, { maxMessages: this.#max });
    if (!this.#o.exists(to)) throw new PlanMessageError('unknown_recipient', `No chunk of the plan is ${recipientName(to)}`, { to });
    // One bus for every kind of message: the coordination's, with its ids and clock stamps.
    const sent = this.#bus.send({ kind: 'text', sender: String(from), recipient: to === 'all' ? '*' : recipientName(to), text });
    this.#bus.poll(sent.recipient);
    const message: PlanMessage = { id: `m${this.#all.length + 1}`, from, to, text, time: sent.time };
    this.#all.push(message);
    this.#o.onMessage(message);
    return message;
  }
}

const inputSchema = z.object({
  from: z.union([z.number().int(), z.string().min(1)]).optional(),
  to: planMessageSchema.shape.to,
  text: z.string().min(1),
});

function positive(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new ConfigurationError(`Expected \`${name}\` to be a positive integer, got ${describeValue(value)}`);
  return value;
}

/** Parse a recipient as a model writes it: `all`, `chunk:3` (or `3`), `role:Backend` (or `Backend`). */
export function parseRecipient(text: string): MessageRecipient | undefined {
  const t = text.trim();
  if (t === 'all' || t === 'everyone' || t === '*') return 'all';
  const value = t.includes(':') ? t.slice(t.indexOf(':') + 1).trim() : t;
  if (/^\d+$/.test(value) && !t.startsWith('role')) return { chunk: Number(value) };
  const role = chunkRoles.find((r) => r.toLowerCase() === value.toLowerCase());
  return role === undefined ? undefined : { role };
}

/** The name of the workers' {@link postMessageTool}. */
export const POST_MESSAGE = 'post_message';

/**
 * The worker's `post_message` tool: post a finding to a chunk, a role or
 * everyone in the plan. A refused message is the tool's answer, not an
 * error, so the worker can shorten it or go on.
 */
export function postMessageTool(post: (to: MessageRecipient, text: string) => PlanMessage): ToolDefinition<{ to: string; text: string }> {
  return defineTool({
    name: POST_MESSAGE,
    description: 'Tell other workers of the plan something they should know (a finding, a changed interface): to "all", "chunk:<index>" or "role:<role>". Chunks that have not started get it in their prompt; running ones at their next turn.',
    parameters: z.object({ to: z.string(), text: z.string() }),
    execute: ({ to, text }) => {
      const recipient = parseRecipient(to);
      if (!recipient) return `Not posted: "${to}" is not a recipient; use "all", "chunk:<index>" or "role:<role>".`;
      try {
        const m = post(recipient, text);
        return `Posted ${m.id} to ${recipientName(m.to)}.`;
      } catch (error) {
        if (error instanceof PlanMessageError) return `Not posted: ${error.message}.`;
        throw error;
      }
    },
  });
}

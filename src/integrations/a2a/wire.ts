/**
 * Between troupe and the A2A SDK's message objects: task states, parts,
 * messages and artifacts. The SDK is loaded lazily, so its enums are
 * mirrored here as numbers (the protocol's own values).
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { Artifact, Message, Part, Role, TaskState } from '@a2a-js/sdk';
import type { A2ATaskState } from './events.js';

/** The protocol's task states (`TaskState`), by troupe's names. */
export const STATE = {
  submitted: 1 as TaskState,
  working: 2 as TaskState,
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  'input-required': 6 as TaskState,
  rejected: 7 as TaskState,
  'auth-required': 8 as TaskState,
} as const;

/** The protocol's roles. */
export const ROLE = { user: 1 as Role, agent: 2 as Role } as const;

const NAMES = new Map<number, A2ATaskState>(Object.entries(STATE).map(([name, value]) => [value as number, name as A2ATaskState]));

/** troupe's name of a protocol task state. */
export function stateName(state: TaskState | undefined): A2ATaskState {
  return (state !== undefined && NAMES.get(state)) || 'unknown';
}

/** States a task does not leave. */
export function isTerminalState(state: A2ATaskState): boolean {
  return state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected';
}

/** States where a task waits for the client. */
export function isInterruptedState(state: A2ATaskState): boolean {
  return state === 'input-required' || state === 'auth-required';
}

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A structured data part (JSON). */
export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/** A message of `role` with `parts`. */
export function message(role: 'user' | 'agent', messageId: string, parts: Part[], ids: { taskId?: string; contextId?: string } = {}, metadata?: Record<string, unknown>): Message {
  return { messageId, contextId: ids.contextId ?? '', taskId: ids.taskId ?? '', role: ROLE[role], parts, metadata, extensions: [], referenceTaskIds: [] };
}

/** An artifact of text. */
export function textArtifact(artifactId: string, name: string, text: string, metadata?: Record<string, unknown>): Artifact {
  return { artifactId, name, description: '', parts: [textPart(text)], metadata, extensions: [] };
}

/**
 * The text of parts: text parts as they are, data parts as JSON, files by
 * their URL or name; joined with a blank line.
 */
export function partsText(parts: readonly Part[]): string {
  const texts: string[] = [];
  for (const part of parts) {
    const content = part.content;
    if (!content) continue;
    if (content.$case === 'text') texts.push(content.value);
    else if (content.$case === 'data') texts.push(JSON.stringify(content.value ?? null));
    else if (content.$case === 'url') texts.push(`[file ${part.filename || content.value}: ${content.value}]`);
    else texts.push(`[file ${part.filename || 'unnamed'}: ${content.value.byteLength} bytes${part.mediaType ? ` of ${part.mediaType}` : ''}]`);
  }
  return texts.join('\n\n');
}

/** The text of an artifact: its parts are chunks of one answer, so they are joined as they are. */
export function artifactText(parts: readonly Part[]): string {
  return parts.map((part) => partsText([part])).join('');
}

/** The first data part's value, if a message has one. */
export function firstData(parts: readonly Part[]): unknown {
  for (const part of parts) if (part.content?.$case === 'data') return part.content.value;
  return undefined;
}

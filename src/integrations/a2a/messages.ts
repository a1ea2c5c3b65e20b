/**
 * What troupe's A2A server takes from a client's message: the run's input
 * (text and data parts, each bounded), and the answer to the request a
 * task waits on. Anything else is refused with the protocol's errors
 * before anything starts.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { Message, SendMessageRequest } from '@a2a-js/sdk';
import { isSafeId } from '../http/ids.js';
import type { InputKind } from '../http/events.js';
import type { A2AServerSdk } from './sdk.js';
import { firstData, partsText, ROLE } from './wire.js';

/** The bounds of a message. */
export interface MessageLimits {
  /** The largest part, in bytes of its text (or its data as JSON). */
  maxPartBytes: number;
  /** The most parts a message may have. */
  maxParts: number;
}

/** The longest message or context id taken (as run and request ids). */
const MAX_CLIENT_ID = 128;

/** Media types that mean the client reads text. */
const TEXT_MODES = new Set(['text/plain', 'text', 'text/*', '*/*', 'text/markdown']);

/**
 * Check a send request's message: a user message with an id, 1 to
 * `maxParts` parts of text or data (no files), each at most `maxPartBytes`,
 * ids that are safe, and output modes that include text. Throws the SDK's
 * `RequestMalformedError` (-32602) or `ContentTypeNotSupportedError`
 * (-32005); returns the message and its text.
 */
export function checkMessage(sdk: A2AServerSdk, params: SendMessageRequest, limits: MessageLimits): { message: Message; text: string } {
  const { RequestMalformedError, ContentTypeNotSupportedError } = sdk.errors;
  const message = params.message;
  if (!message) throw new RequestMalformedError('The request has no `message`');
  if (message.messageId === '' || message.messageId.length > MAX_CLIENT_ID) throw new RequestMalformedError(`Expected \`message.messageId\` to be 1-${MAX_CLIENT_ID} characters`);
  if (message.role !== ROLE.user) throw new RequestMalformedError('Expected `message.role` to be ROLE_USER');
  if (message.taskId !== '' && !isSafeId(message.taskId)) throw new RequestMalformedError('`message.taskId` is not a task id of this agent');
  if (message.contextId !== '' && !isSafeId(message.contextId)) throw new RequestMalformedError(`Expected \`message.contextId\` to be 1-${MAX_CLIENT_ID} characters of A-Z a-z 0-9 - _ .`);
  if (message.parts.length === 0) throw new RequestMalformedError('The message has no parts');
  if (message.parts.length > limits.maxParts) throw new RequestMalformedError(`The message has ${message.parts.length} parts; at most ${limits.maxParts} are taken`);
  message.parts.forEach((part, index) => {
    const content = part.content;
    if (!content) throw new RequestMalformedError(`Part ${index} has no content (text, data, url or raw)`);
    if (content.$case === 'url' || content.$case === 'raw') throw new ContentTypeNotSupportedError(`Part ${index} is a file; this agent takes text and data parts`);
    const bytes = Buffer.byteLength(content.$case === 'text' ? content.value : (JSON.stringify(content.value ?? null) ?? ''));
    if (bytes > limits.maxPartBytes) throw new RequestMalformedError(`Part ${index} is ${bytes} bytes; parts of at most ${limits.maxPartBytes} bytes are taken`);
  });
  const modes = params.configuration?.acceptedOutputModes ?? [];
  if (modes.length > 0 && !modes.some((m) => TEXT_MODES.has(m.toLowerCase()))) {
    throw new ContentTypeNotSupportedError(`This agent answers in text/plain; the client accepts only ${modes.join(', ')}`);
  }
  const text = partsText(message.parts);
  if (text.trim() === '') throw new RequestMalformedError('The message says nothing (its text is empty)');
  return { message, text };
}

const YES = new Set(['yes', 'y', 'approve', 'approved', 'ok', 'okay', 'allow', 'allowed', 'accept', 'go', 'go ahead', 'sure']);
const NO = new Set(['no', 'n', 'deny', 'denied', 'reject', 'rejected', 'refuse', 'refused', 'decline', 'stop', 'cancel']);

/** A short answer (64 characters at most), lower-cased, without the punctuation around it; '' for a longer text. */
function word(text: string): string {
  if (text.length > 64) return '';
  return text.trim().toLowerCase().replace(/^[\s"'`.!]+|[\s"'`.!]+$/g, '');
}

/**
 * The answer a message gives to a request of `kind`: a data part is taken
 * as the answer as it is (checked by the request); otherwise the text —
 * a question's answer, yes or no to an approval, approve, reject or
 * feedback (request changes) to a plan.
 */
export function answerOf(kind: InputKind, message: Message): unknown {
  const data = firstData(message.parts);
  if (data !== undefined && data !== null && typeof data === 'object' && !Array.isArray(data)) return data;
  const text = partsText(message.parts);
  if (kind === 'question') return { text };
  const w = word(text);
  if (kind === 'approval') return YES.has(w) ? { approved: true } : NO.has(w) ? { approved: false } : { approved: text };
  if (w === 'approve' || w === 'approved' || w === 'yes') return { decision: 'approve' };
  if (NO.has(w)) return { decision: 'reject' };
  return { decision: 'request-changes', feedback: text };
}

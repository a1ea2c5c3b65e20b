/**
 * A task's updates as the protocol streams them, read from the run log as
 * it grows: status updates while it works (each carrying the troupe event
 * in `metadata['troupe.event']`, so a troupe client can rebuild the op
 * tree), `input-required` when the run asks a person, the output as an
 * artifact, and the final status.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { StreamResponse } from '@a2a-js/sdk';
import type { Clock } from '../../core/clock.js';
import { defined } from '../../core/defined.js';
import type { TroupeEvent } from '../../core/events.js';
import type { Store } from '../../core/store.js';
import { followRunLog } from '../http/follow.js';
import { readRequest } from '../http/requests.js';
import { artifactEvent, requestMessage, statusEvent, type TaskDocument } from './tasks.js';
import { message, textArtifact, textPart } from './wire.js';

/** The troupe events a task's stream carries as status updates (the others stay in the run log). */
const FORWARDED = new Set([
  'op.started',
  'op.completed',
  'agent.started',
  'agent.turn',
  'agent.completed',
  'agent.failed',
  'tool.called',
  'tool.completed',
  'guardrail.tripped',
  'budget.exhausted',
  'warning',
]);

/** The key of a status update's metadata that carries the troupe event. */
export const TROUPE_EVENT_KEY = 'troupe.event';

/** Options of {@link taskUpdates}. */
export interface TaskUpdatesOptions {
  /** The first position of the run log to read. */
  from: number;
  signal: AbortSignal;
  clock?: Clock;
  pollMs?: number;
}

/**
 * The updates of task `doc` from position `from` of its run log on, until
 * the task ends or waits for input (the stream's last update says which).
 */
export async function* taskUpdates(store: Store, doc: TaskDocument, options: TaskUpdatesOptions): AsyncGenerator<StreamResponse> {
  const follow = followRunLog(doc.taskId, { store, from: options.from, signal: options.signal, ...defined({ clock: options.clock, pollMs: options.pollMs }) });
  for await (const { event } of follow) {
    const updates = await updatesOf(store, doc, event, options.signal);
    for (const update of updates) yield update;
    if (updates.at(-1)?.payload?.$case === 'statusUpdate' && isFinal(updates.at(-1)!)) return;
  }
}

function isFinal(update: StreamResponse): boolean {
  const state = update.payload?.$case === 'statusUpdate' ? update.payload.value.status?.state : undefined;
  return state !== undefined && state !== 2 && state !== 1;
}

async function updatesOf(store: Store, doc: TaskDocument, event: TroupeEvent, signal: AbortSignal): Promise<StreamResponse[]> {
  const { taskId, contextId } = doc;
  switch (event.type) {
    case 'run.started':
      return [statusEvent(doc, 'working', event.time)];
    case 'input.requested': {
      const request = await readRequest(taskId, event.requestId, { store, signal });
      if (request?.status !== 'pending') return [];
      return [statusEvent(doc, 'input-required', event.time, { message: requestMessage(taskId, contextId, request) })];
    }
    case 'run.completed': {
      const cancelled = event.status === 'cancelled';
      const metadata = { 'troupe.status': event.status, 'troupe.usage': event.usage, 'troupe.runnable': event.runnable };
      return [
        artifactEvent(doc, textArtifact('output', 'output', event.output, { 'troupe.status': event.status })),
        statusEvent(doc, cancelled ? 'canceled' : 'completed', event.time, { metadata, ...(cancelled ? { message: message('agent', `${taskId}-output`, [textPart(event.output)], { taskId, contextId }) } : {}) }),
      ];
    }
    case 'run.failed': {
      const text = message('agent', `${taskId}-error`, [textPart(event.error)], { taskId, contextId });
      return [statusEvent(doc, event.code === 'cancelled' ? 'canceled' : 'failed', event.time, { message: text, metadata: event.code === undefined ? {} : { 'troupe.code': event.code } })];
    }
    default:
      return FORWARDED.has(event.type) ? [statusEvent(doc, 'working', event.time, { metadata: { [TROUPE_EVENT_KEY]: event } })] : [];
  }
}

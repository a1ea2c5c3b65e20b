/**
 * A2A tasks as troupe runs: a task is the run with the same id, in the
 * tenant's store. Its status, artifacts and history are read from the run
 * log (and the requests it waits on); the task document keeps only what the
 * log cannot: the context id and the client's own messages.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import type { Artifact, Message, StreamResponse, Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import type { TroupeEvent } from '../../core/events.js';
import { readRunEvents } from '../../core/run-log-reader.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { supportsCompareAndSet } from '../../core/store.js';
import { StoreError } from '../../core/errors.js';
import { answerJsonSchema, type InputRequestDocument } from '../http/requests.js';
import { dataPart, message, STATE, textArtifact, textPart } from './wire.js';
import type { A2ATaskState } from './events.js';

/** The document of a task: `a2a/tasks/<taskId>` in the tenant's store. */
export interface TaskDocument {
  schemaVersion: 1;
  taskId: string;
  contextId: string;
  /** Clock time the task was made. */
  createdAt: number;
  /** The client's messages, in order; those that answered a request name it. */
  messages: Array<{ requestId?: string; message: Message }>;
}

/** The key of a task's document. */
export function taskKey(taskId: string): string {
  return `a2a/tasks/${taskId}`;
}

/** Read a task's document. */
export async function readTaskDocument(store: Store, taskId: string, options: StoreCallOptions = {}): Promise<TaskDocument | undefined> {
  const doc = (await store.get(taskKey(taskId), options)) as TaskDocument | undefined;
  return doc?.schemaVersion === 1 && doc.taskId === taskId ? doc : undefined;
}

/** Add a client message to a task's document (compare-and-set when the store has it, so concurrent answers all land). */
export async function appendTaskMessage(store: Store, taskId: string, entry: TaskDocument['messages'][number], options: StoreCallOptions = {}): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    if (!supportsCompareAndSet(store)) {
      const doc = await readTaskDocument(store, taskId, options);
      if (!doc) throw new StoreError(`Task ${taskId} has no document`);
      await store.set(taskKey(taskId), { ...doc, messages: [...doc.messages, entry] }, options);
      return;
    }
    const current = await store.getVersioned(taskKey(taskId), options);
    const doc = current?.value as TaskDocument | undefined;
    if (!current || doc?.schemaVersion !== 1) throw new StoreError(`Task ${taskId} has no document`);
    const written = await store.setIf(taskKey(taskId), { ...doc, messages: [...doc.messages, entry] }, { ...options, ifVersion: current.version });
    if (written.ok) return;
  }
  throw new StoreError(`Task ${taskId}: its document kept changing while a message was added`);
}

/** The events of a run's log, in order. */
export async function readEvents(store: Store, runId: string, options: StoreCallOptions = {}): Promise<TroupeEvent[]> {
  const { events } = await readRunEvents(runId, { store, ...(options.signal ? { signal: options.signal } : {}) });
  return events;
}

const iso = (time: number): string => new Date(time).toISOString();

/** The agent's message that asks for input: the prompt (and questions) as text, the request as data with the answer's JSON Schema. */
export function requestMessage(taskId: string, contextId: string, request: Pick<InputRequestDocument, 'requestId' | 'request'>): Message {
  const { kind, prompt, questions, tool, arguments: args, plan } = request.request;
  const text = [prompt, ...(questions ?? []).map((q, i) => `${i + 1}. ${q}`), howToAnswer(kind)].filter((t) => t !== '').join('\n');
  const data = { troupe: { requestId: request.requestId, kind, ...(tool === undefined ? {} : { tool }), ...(args === undefined ? {} : { arguments: args }), ...(questions ? { questions } : {}), ...(plan === undefined ? {} : { plan }), answerSchema: answerJsonSchema(kind) } };
  return message('agent', `${taskId}-request-${request.requestId}`, [textPart(text), dataPart(data)], { taskId, contextId });
}

function howToAnswer(kind: InputRequestDocument['request']['kind']): string {
  if (kind === 'approval') return '(Answer yes or no, or send a data part {"approved": true}.)';
  if (kind === 'plan-approval') return '(Answer approve or reject, any other text asks for changes, or send a data part {"decision": "approve"}.)';
  return '';
}

/** What a run log says about its task: the status, the artifacts and the agent's messages. */
interface TaskView {
  state: A2ATaskState;
  time: number;
  statusMessage?: Message;
  artifacts: Artifact[];
  /** The history, oldest first. */
  history: Message[];
  metadata?: Record<string, unknown>;
}

/**
 * The task of `doc`, from its run log and its pending request (`pending`,
 * the oldest request still waiting, if any): submitted until the run logs,
 * working while it runs, input-required while it waits for an answer,
 * then completed, canceled or failed, with the output as an artifact.
 */
export function viewTask(doc: TaskDocument, events: readonly TroupeEvent[], pending: InputRequestDocument | undefined): TaskView {
  const { taskId, contextId } = doc;
  const users = new Map(doc.messages.map((m) => [m.requestId ?? '', m.message]));
  const history: Message[] = [];
  const first = users.get('');
  if (first) history.push(first);
  const view: TaskView = { state: 'submitted', time: doc.createdAt, artifacts: [], history };
  for (const event of events) {
    if (event.type === 'run.started') Object.assign(view, { state: 'working', time: event.time });
    else if (event.type === 'input.requested') history.push(requestMessage(taskId, contextId, { requestId: event.requestId, request: event }));
    else if (event.type === 'input.answered') {
      history.push(users.get(event.requestId) ?? message('user', `${taskId}-answer-${event.requestId}`, [dataPart(event.answer)], { taskId, contextId }));
      Object.assign(view, { state: 'working', time: event.time });
    } else if (event.type === 'run.completed') {
      const cancelled = event.status === 'cancelled';
      const answer = message('agent', `${taskId}-output`, [textPart(event.output)], { taskId, contextId });
      view.artifacts = [textArtifact('output', 'output', event.output, { 'troupe.agent': agentOf(events) ?? event.runnable, 'troupe.status': event.status })];
      history.push(answer);
      Object.assign(view, { state: cancelled ? 'canceled' : 'completed', time: event.time, metadata: { 'troupe.status': event.status, 'troupe.usage': event.usage, 'troupe.runnable': event.runnable } });
      if (cancelled) view.statusMessage = answer;
    } else if (event.type === 'run.failed') {
      const cancelled = event.code === 'cancelled';
      view.statusMessage = message('agent', `${taskId}-error`, [textPart(event.error)], { taskId, contextId }, event.code === undefined ? undefined : { 'troupe.code': event.code });
      history.push(view.statusMessage);
      Object.assign(view, { state: cancelled ? 'canceled' : 'failed', time: event.time, metadata: event.code === undefined ? {} : { 'troupe.code': event.code } });
    }
  }
  if (pending && (view.state === 'working' || view.state === 'submitted')) {
    Object.assign(view, { state: 'input-required', time: pending.createdAt });
    view.statusMessage = requestMessage(taskId, contextId, pending);
  }
  return view;
}

/** The agent whose answer ended the run (the last `agent.completed`). */
function agentOf(events: readonly TroupeEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'agent.completed') return e.agent;
  }
  return undefined;
}

/** The protocol's task of a view; `historyLength` keeps the last messages (0: none; undefined: all). */
export function toTask(doc: TaskDocument, view: TaskView, options: { historyLength?: number | undefined; artifacts?: boolean } = {}): Task {
  const { historyLength } = options;
  const history = historyLength === undefined ? view.history : historyLength <= 0 ? [] : view.history.slice(-historyLength);
  return {
    id: doc.taskId,
    contextId: doc.contextId,
    status: status(view.state, view.time, view.statusMessage),
    artifacts: options.artifacts === false ? [] : view.artifacts,
    history,
    metadata: view.metadata,
  };
}

/** A task status. */
export function status(state: A2ATaskState, time: number, statusMessage?: Message): TaskStatus {
  return { state: STATE[state as keyof typeof STATE] ?? (0 as TaskState), message: statusMessage, timestamp: iso(time) };
}

/** A stream response carrying a status update. */
export function statusEvent(doc: TaskDocument, state: A2ATaskState, time: number, extra: { message?: Message; metadata?: Record<string, unknown> } = {}): StreamResponse {
  return { payload: { $case: 'statusUpdate', value: { taskId: doc.taskId, contextId: doc.contextId, status: status(state, time, extra.message), metadata: extra.metadata } } };
}

/** A stream response carrying an artifact. */
export function artifactEvent(doc: TaskDocument, artifact: Artifact): StreamResponse {
  return { payload: { $case: 'artifactUpdate', value: { taskId: doc.taskId, contextId: doc.contextId, artifact, append: false, lastChunk: true, metadata: undefined } } };
}


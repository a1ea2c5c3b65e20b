/**
 * troupe's side of the protocol: an `A2ARequestHandler` (the interface the
 * SDK's JSON-RPC transport calls) that is a reader and writer of runs, like
 * `troupe/http`: a task is a run in the caller's tenant namespace; sending
 * a message starts it (or answers the request it waits on); its state,
 * artifacts and history are read from the run log; cancelling writes the
 * cancel request through the store, so whichever process runs it stops it.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type {
  AgentCard,
  CancelTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
  ListTaskPushNotificationConfigsResponse,
} from '@a2a-js/sdk';
import { realClock, sleep, type Clock } from '../../core/clock.js';
import { defined } from '../../core/defined.js';
import type { Store } from '../../core/store.js';
import { readRunEvents } from '../../core/run-log-reader.js';
import { requestCancel } from '../http/cancel.js';
import type { Principal } from '../http/handler.js';
import { isSafeId } from '../http/ids.js';
import { answerRequest, pendingRequests } from '../http/requests.js';
import { positionAfterRequests, runState, waitForRun } from '../http/streams.js';
import { answerOf, checkMessage, type MessageLimits } from './messages.js';
import type { A2AServerSdk } from './sdk.js';
import { taskUpdates } from './stream.js';
import { appendTaskMessage, readEvents, readTaskDocument, taskKey, toTask, viewTask, type TaskDocument } from './tasks.js';
import { isTerminalState, stateName } from './wire.js';

/** What a request carries into the handler (in the call context's state). */
export interface RequestScope {
  principal: Principal;
  /** The tenant's namespaced store. */
  store: Store;
  request: Request;
}

/** The key of the scope in `ServerCallContext.state`. */
export const SCOPE_KEY = 'troupe.scope';

/** What the handler needs from the server. */
export interface HandlerSettings extends MessageLimits {
  sdk: A2AServerSdk;
  card: () => AgentCard;
  /** Start run `runId` on `input` in `scope.store` (returns once it is started). */
  start(scope: RequestScope, runId: string, input: string, message: Message): Promise<void>;
  clock?: Clock;
  pollMs?: number;
  startTimeoutMs?: number;
  cancelWaitMs: number;
}

/** The protocol's requests, answered from the caller's runs. */
export class TroupeRequestHandler implements A2ARequestHandler {
  readonly #s: HandlerSettings;
  constructor(settings: HandlerSettings) {
    this.#s = settings;
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.#s.card();
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new this.#s.sdk.errors.ExtendedAgentCardNotConfiguredError();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const scope = scopeOf(context);
    const { doc, from } = await this.#accept(params, scope);
    if (!params.configuration?.returnImmediately) {
      for await (const _ of taskUpdates(scope.store, doc, this.#follow(from, scope))) {
        // wait until the task ends or waits for input
      }
    }
    return this.#task(scope.store, doc, params.configuration?.historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const scope = scopeOf(context);
    const { doc, from } = await this.#accept(params, scope);
    const task = await this.#task(scope.store, doc, params.configuration?.historyLength);
    yield { payload: { $case: 'task', value: task } };
    if (!isTerminalState(stateName(task.status?.state))) yield* taskUpdates(scope.store, doc, this.#follow(from, scope));
  }

  async getTask(params: { id: string; historyLength?: number | undefined }, context: ServerCallContext): Promise<Task> {
    const scope = scopeOf(context);
    return this.#task(scope.store, await this.#doc(scope, params.id), params.historyLength);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const scope = scopeOf(context);
    const doc = await this.#doc(scope, params.id);
    const task = await this.#task(scope.store, doc);
    if (isTerminalState(stateName(task.status?.state))) throw new this.#s.sdk.errors.TaskNotCancelableError(`Task ${doc.taskId} has ended (${stateName(task.status?.state)})`);
    await requestCancel(doc.taskId, { store: scope.store, signal: scope.request.signal, reason: 'Cancelled by the A2A client', ...defined({ clock: this.#s.clock }) });
    const clock = this.#s.clock ?? realClock;
    const deadline = clock.now() + this.#s.cancelWaitMs;
    while (clock.now() < deadline && !(await runState(doc.taskId, { store: scope.store, signal: scope.request.signal })).ended) {
      await sleep(clock, Math.min(this.#s.pollMs ?? 50, 50), scope.request.signal);
    }
    return this.#task(scope.store, doc);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const scope = scopeOf(context);
    const doc = await this.#doc(scope, params.id);
    const { next } = await readRunEvents(doc.taskId, { store: scope.store, signal: scope.request.signal });
    const task = await this.#task(scope.store, doc);
    const state = stateName(task.status?.state);
    if (isTerminalState(state)) throw new this.#s.sdk.errors.UnsupportedOperationError(`Task ${doc.taskId} has ended (${state}); read it with GetTask`);
    yield { payload: { $case: 'task', value: task } };
    if (state !== 'input-required') yield* taskUpdates(scope.store, doc, this.#follow(next, scope));
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = scopeOf(context);
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = params.pageToken === '' ? 0 : Number(params.pageToken);
    if (!Number.isInteger(offset) || offset < 0) throw new this.#s.sdk.errors.RequestMalformedError('`pageToken` is not a page token of this agent');
    const docs: TaskDocument[] = [];
    for (const key of await scope.store.list('a2a/tasks/', { signal: scope.request.signal })) {
      const doc = await readTaskDocument(scope.store, key.slice('a2a/tasks/'.length), { signal: scope.request.signal });
      if (doc && (params.contextId === '' || doc.contextId === params.contextId)) docs.push(doc);
    }
    docs.sort((a, b) => b.createdAt - a.createdAt || b.taskId.localeCompare(a.taskId));
    const tasks: Task[] = [];
    for (const doc of docs) {
      const task = await this.#task(scope.store, doc, params.historyLength ?? 0, params.includeArtifacts === true);
      if (params.status === 0 || params.status === undefined || task.status?.state === params.status) tasks.push(task);
    }
    const page = tasks.slice(offset, offset + pageSize);
    return { tasks: page, nextPageToken: offset + pageSize < tasks.length ? String(offset + pageSize) : '', pageSize, totalSize: tasks.length };
  }

  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new this.#s.sdk.errors.PushNotificationNotSupportedError();
  }
  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new this.#s.sdk.errors.PushNotificationNotSupportedError();
  }
  async listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    throw new this.#s.sdk.errors.PushNotificationNotSupportedError();
  }
  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw new this.#s.sdk.errors.PushNotificationNotSupportedError();
  }

  #follow(from: number, scope: RequestScope) {
    return { from, signal: scope.request.signal, ...defined({ clock: this.#s.clock, pollMs: this.#s.pollMs }) };
  }

  /** The task document of `taskId` in the caller's tenant, or TaskNotFound (an id of another tenant is not found either). */
  async #doc(scope: RequestScope, taskId: string): Promise<TaskDocument> {
    if (taskId.trim() === '') throw new this.#s.sdk.errors.RequestMalformedError('The request names no task (`id` is empty)');
    const doc = isSafeId(taskId) ? await readTaskDocument(scope.store, taskId, { signal: scope.request.signal }) : undefined;
    if (!doc) throw new this.#s.sdk.errors.TaskNotFoundError(`No task ${taskId.slice(0, 128)}`);
    return doc;
  }

  /** The task as it is now (its document read again: an answer may have added a message). */
  async #task(store: Store, doc: TaskDocument, historyLength?: number, artifacts = true): Promise<Task> {
    const [fresh, events, pending] = await Promise.all([readTaskDocument(store, doc.taskId), readEvents(store, doc.taskId), pendingRequests(doc.taskId, { store })]);
    const current = fresh ?? doc;
    return toTask(current, viewTask(current, events, pending[0]), { historyLength, artifacts });
  }

  /** Take a send: start a new task, or answer the request the named task waits on. Returns the task and where its updates start. */
  async #accept(params: SendMessageRequest, scope: RequestScope): Promise<{ doc: TaskDocument; from: number }> {
    const { errors } = this.#s.sdk;
    if (params.configuration?.taskPushNotificationConfig) throw new errors.PushNotificationNotSupportedError();
    const { message, text } = checkMessage(this.#s.sdk, params, this.#s);
    if (message.taskId !== '') return this.#answer(scope, message);
    const taskId = randomUUID();
    const contextId = message.contextId || randomUUID();
    const stored: Message = { ...message, taskId, contextId };
    const doc: TaskDocument = { schemaVersion: 1, taskId, contextId, createdAt: (this.#s.clock ?? realClock).now(), messages: [{ message: stored }] };
    await scope.store.set(taskKey(taskId), doc, { signal: scope.request.signal });
    try {
      await this.#s.start(scope, taskId, text, stored);
    } catch (error) {
      await scope.store.delete(taskKey(taskId)).catch(() => undefined);
      throw error;
    }
    const started = await waitForRun(taskId, { store: scope.store, signal: scope.request.signal, ...defined({ clock: this.#s.clock, timeoutMs: this.#s.startTimeoutMs }) });
    if (!started) throw new Error(`Task ${taskId} was started but its run logged nothing in time`);
    return { doc, from: 0 };
  }

  async #answer(scope: RequestScope, message: Message): Promise<{ doc: TaskDocument; from: number }> {
    const { errors } = this.#s.sdk;
    const doc = await this.#doc(scope, message.taskId);
    if (message.contextId !== '' && message.contextId !== doc.contextId) throw new errors.RequestMalformedError(`Task ${doc.taskId} belongs to another context`);
    const pending = await pendingRequests(doc.taskId, { store: scope.store, signal: scope.request.signal });
    const wanted = message.metadata?.['requestId'];
    const target = typeof wanted === 'string' ? pending.find((p) => p.requestId === wanted) : pending[0];
    if (!target) {
      const state = stateName((await this.#task(scope.store, doc)).status?.state);
      if (typeof wanted === 'string') throw new errors.RequestMalformedError(`Task ${doc.taskId} waits on no request ${wanted.slice(0, 128)}`);
      throw new errors.UnsupportedOperationError(isTerminalState(state) ? `Task ${doc.taskId} has ended (${state}); send a message without a task id to start another` : `Task ${doc.taskId} is ${state} and waits for no input`);
    }
    const result = await answerRequest(doc.taskId, target.requestId, answerOf(target.request.kind, message), { store: scope.store, signal: scope.request.signal, ...defined({ clock: this.#s.clock }) });
    if (!result.ok && result.reason === 'invalid') throw new errors.RequestMalformedError(`The message does not answer the ${target.request.kind} request: ${result.issues.join('; ')}`);
    if (!result.ok) throw new errors.UnsupportedOperationError(`The request was ${result.reason === 'not-found' ? 'not found' : result.reason} already`);
    await appendTaskMessage(scope.store, doc.taskId, { requestId: target.requestId, message: { ...message, contextId: doc.contextId } }, { signal: scope.request.signal });
    return { doc, from: await positionAfterRequests(doc.taskId, [target.requestId], { store: scope.store, signal: scope.request.signal }) };
  }
}

function scopeOf(context: ServerCallContext): RequestScope {
  const scope = context.state.get(SCOPE_KEY) as RequestScope | undefined;
  if (!scope) throw new Error('The A2A request has no troupe scope');
  return scope;
}

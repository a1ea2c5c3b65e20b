/**
 * An AG-UI event stream into a {@link ChatModel}: text messages (streamed),
 * tool calls, shared state (troupe's `{ troupe: { phase, chunks } }`, and
 * JSON Patch deltas), steps (as workers, from servers that publish no
 * troupe state), interrupts (requests to a person) and the run's end.
 * troupe's own events that AG-UI has no word for arrive as `CUSTOM`
 * `troupe.<type>` and go to the troupe reader. Events are untrusted JSON.
 * @module
 */
import type { ChatModel } from './model.js';
import { TroupeEventReader, WORKER_STATUSES, currentStatus, jsonText, requestFrom } from './troupe-events.js';
import type { RequestKind } from './types.js';

type Json = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const obj = (value: unknown): Json | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined);
const KINDS = new Set<RequestKind>(['approval', 'question', 'plan-approval']);

/** Reads one AG-UI thread into a model. */
export class AguiEventReader {
  readonly troupe: TroupeEventReader;
  /** The shared state, as snapshots and deltas leave it. */
  state: unknown = {};
  readonly #messages = new Map<string, string>();
  /** Messages started with no text yet: drawn once text arrives (a turn that only calls tools has none). */
  readonly #starts = new Map<string, Json>();
  readonly #tools = new Map<string, string>();
  #troupeState = false;
  #lastText: string | undefined;

  constructor(readonly model: ChatModel) {
    this.troupe = new TroupeEventReader(model);
  }

  /** Apply one AG-UI event. */
  apply(event: unknown): void {
    const e = obj(event);
    const type = str(e?.['type']);
    if (!e || !type) return;
    const time = typeof e['timestamp'] === 'number' ? e['timestamp'] : Date.now();
    const model = this.model;
    switch (type) {
      case 'RUN_STARTED': {
        model.status = 'running';
        model.runId = str(e['threadId']) ?? model.runId;
        // The person's message, when the page that asked is not the one that shows it.
        const messages = obj(e['input'])?.['messages'];
        const last = Array.isArray(messages) ? obj(messages.at(-1)) : undefined;
        const text = last?.['role'] === 'user' ? str(last['content']) : undefined;
        if (text && !model.messages.some((m) => m.source === 'user' && m.text === text)) model.add({ source: 'user', author: 'You', time, kind: 'text', text });
        model.touch();
        return;
      }
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CHUNK':
      case 'TEXT_MESSAGE_CONTENT':
        return this.#text(e, time);
      case 'TEXT_MESSAGE_END': {
        this.#starts.delete(str(e['messageId']) ?? '');
        const id = this.#messages.get(str(e['messageId']) ?? '');
        if (id) model.update(id, { streaming: false });
        return;
      }
      case 'TOOL_CALL_START':
      case 'TOOL_CALL_ARGS':
      case 'TOOL_CALL_CHUNK':
      case 'TOOL_CALL_END':
      case 'TOOL_CALL_RESULT':
        return this.#tool(type, e, time);
      case 'STATE_SNAPSHOT':
        this.state = e['snapshot'] ?? {};
        return this.#stateChanged(time);
      case 'STATE_DELTA':
        this.state = applyPatch(this.state, e['delta']);
        return this.#stateChanged(time);
      case 'STEP_STARTED':
      case 'STEP_FINISHED':
        return this.#step(type, e, time);
      case 'RUN_FINISHED':
        return this.#finished(e, time);
      case 'RUN_ERROR':
        model.status = 'failed';
        model.error = str(e['message']) ?? 'unknown error';
        model.add({ source: 'system', author: 'troupe', time, kind: 'error', text: `The run failed: ${model.error}` });
        return;
      case 'CUSTOM': {
        const name = str(e['name']);
        // Chunks come in the state snapshots; the rest of troupe's events go to its reader.
        if (name?.startsWith('troupe.') && name !== 'troupe.chunk.status') this.troupe.apply(undefined, e['value']);
        return;
      }
      case 'MESSAGES_SNAPSHOT':
        for (const m of Array.isArray(e['messages']) ? (e['messages'] as unknown[]) : []) this.#snapshotMessage(obj(m), time);
        return;
      default:
        return;
    }
  }

  #text(e: Json, time: number): void {
    const messageId = str(e['messageId']);
    if (!messageId) return;
    const delta = str(e['delta']) ?? '';
    const id = this.#messages.get(messageId);
    const message = id ? this.model.message(id) : undefined;
    if (message) {
      if (delta) this.model.update(message.id, { text: message.text + delta, streaming: e['type'] !== 'TEXT_MESSAGE_CHUNK' || message.streaming === true });
      this.#lastText = this.model.message(message.id)?.text;
      return;
    }
    if (e['type'] === 'TEXT_MESSAGE_START' && !delta) {
      this.#starts.set(messageId, e);
      return;
    }
    const start = this.#starts.get(messageId);
    this.#starts.delete(messageId);
    const role = str(e['role']) ?? str(start?.['role']) ?? 'assistant';
    const name = str(e['name']) ?? str(start?.['name']);
    const who = role === 'user' ? { source: 'user' as const, author: 'You' } : this.troupe.speaker(undefined, name);
    const workerKey = who.source === 'worker' ? this.#workerOfRole(name) : undefined;
    const added = this.model.add({ id: `agui-${messageId}`, ...who, ...(workerKey ? { workerKey } : {}), time, text: delta, kind: 'text', streaming: e['type'] !== 'TEXT_MESSAGE_CHUNK' });
    this.#messages.set(messageId, added.id);
    this.#lastText = delta;
    const worker = workerKey ? this.model.workers.get(workerKey) : undefined;
    if (worker) {
      worker.lastMessageId = added.id;
      worker.turns++;
    }
  }

  /** The running chunk whose role is `name`, when exactly one is. */
  #workerOfRole(name: string | undefined): string | undefined {
    const found = this.model.working().filter((w) => w.role === name);
    return found.length === 1 ? found[0]!.key : undefined;
  }

  #tool(type: string, e: Json, time: number): void {
    const callId = str(e['toolCallId']);
    if (!callId) return;
    const id = this.#tools.get(callId);
    const message = id ? this.model.message(id) : undefined;
    if (type === 'TOOL_CALL_START' || (type === 'TOOL_CALL_CHUNK' && !message)) {
      const added = this.model.add({ id: `agui-tool-${callId}`, source: 'worker', author: str(e['toolCallName']) ?? 'tool', time, text: '', kind: 'tool', tool: { callId, name: str(e['toolCallName']) ?? '?', args: str(e['delta']) ?? '' } });
      this.#tools.set(callId, added.id);
      return;
    }
    if (!message?.tool) return;
    if (type === 'TOOL_CALL_ARGS' || type === 'TOOL_CALL_CHUNK') this.model.update(message.id, { tool: { ...message.tool, args: message.tool.args + (str(e['delta']) ?? '') } });
    if (type === 'TOOL_CALL_RESULT') this.model.update(message.id, { tool: { ...message.tool, result: str(e['content']) ?? jsonText(e['content']) } });
  }

  #stateChanged(time: number): void {
    const troupe = obj(obj(this.state)?.['troupe']);
    if (!troupe) return;
    this.#troupeState = true;
    const phase = str(troupe['phase']);
    if (phase) this.model.phase = phase;
    for (const c of Array.isArray(troupe['chunks']) ? (troupe['chunks'] as unknown[]) : []) {
      const chunk = obj(c);
      const id = str(chunk?.['id']);
      const status = currentStatus(str(chunk?.['status']));
      if (!chunk || id === undefined || !status || !WORKER_STATUSES.has(status)) continue;
      const worker = this.model.worker(`plan/${id}`, { title: str(chunk['title']) ?? `chunk ${id}`, role: str(chunk['role']) ?? '' });
      if (worker.status !== status) this.model.setWorkerStatus(worker, status, time);
    }
    this.model.touch();
  }

  #step(type: string, e: Json, time: number): void {
    const name = str(e['stepName']);
    if (!name || this.#troupeState || name.includes('(op-')) return;
    const worker = this.model.worker(`step:${name}`, { title: name });
    this.model.setWorkerStatus(worker, type === 'STEP_STARTED' ? 'running' : 'completed', time);
  }

  #finished(e: Json, time: number): void {
    const model = this.model;
    const outcome = obj(e['outcome']);
    if (outcome?.['type'] === 'interrupt') {
      model.status = 'waiting';
      for (const raw of Array.isArray(outcome['interrupts']) ? (outcome['interrupts'] as unknown[]) : []) {
        const interrupt = obj(raw);
        const id = str(interrupt?.['id']);
        const reason = str(interrupt?.['reason']) as RequestKind | undefined;
        if (!interrupt || !id || model.requests.get(id)?.status === 'answered') continue;
        const kind = reason && KINDS.has(reason) ? reason : 'question';
        const request = model.request(requestFrom(id, kind, { ...obj(interrupt['metadata']), message: interrupt['message'] }, 'agui'));
        const who = kind === 'approval' ? this.troupe.speaker(undefined, request.agent) : { source: 'lead' as const, author: 'lead' };
        model.add({ id: `request-${id}`, ...who, time, kind: 'request', requestId: id, text: kind === 'question' && request.questions?.length ? request.questions.map((q) => `- ${q}`).join('\n') : request.prompt });
      }
      return;
    }
    model.status = outcome?.['type'] === 'cancelled' ? 'cancelled' : 'completed';
    const result = typeof e['result'] === 'string' ? e['result'] : undefined;
    model.output = result;
    if (result && result !== this.#lastText) model.add({ source: 'lead', author: 'lead', time, kind: 'text', text: result });
    for (const worker of model.workers.values()) if (worker.status === 'running') model.setWorkerStatus(worker, model.status === 'cancelled' ? 'cancelled' : 'completed', time);
  }

  #snapshotMessage(m: Json | undefined, time: number): void {
    const id = str(m?.['id']);
    if (!m || !id || this.#messages.has(id)) return;
    const content = str(m['content']);
    if (!content) return;
    this.#text({ type: 'TEXT_MESSAGE_CHUNK', messageId: id, role: m['role'], delta: content }, time);
  }
}

/**
 * Apply a JSON Patch (RFC 6902: `add`, `replace`, `remove`) to a copy of
 * `state`; an operation that does not fit is passed over.
 */
export function applyPatch(state: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) return state;
  let root: unknown = structuredClone(state ?? {});
  for (const raw of patch) {
    const op = obj(raw);
    const path = str(op?.['path']);
    if (!op || path === undefined) continue;
    const keys = path === '' ? [] : path.slice(1).split('/').map((k) => k.split('~1').join('/').split('~0').join('~'));
    if (keys.some((k) => k === '__proto__' || k === 'constructor' || k === 'prototype')) continue;
    if (keys.length === 0) {
      if (op['op'] === 'add' || op['op'] === 'replace') root = structuredClone(op['value']);
      continue;
    }
    let parent: unknown = root;
    for (const key of keys.slice(0, -1)) parent = parent !== null && typeof parent === 'object' ? (parent as Json)[key] : undefined;
    if (parent === null || typeof parent !== 'object') continue;
    const last = keys[keys.length - 1]!;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) continue;
      if (op['op'] === 'add') parent.splice(index, 0, structuredClone(op['value']));
      else if (op['op'] === 'replace') parent[index] = structuredClone(op['value']);
      else if (op['op'] === 'remove') parent.splice(index, 1);
    } else if (op['op'] === 'add' || op['op'] === 'replace') (parent as Json)[last] = structuredClone(op['value']);
    else if (op['op'] === 'remove') delete (parent as Json)[last];
  }
  return root;
}

/**
 * troupe's event stream into a {@link ChatModel}: who speaks (the lead,
 * each worker, the person, troupe itself), the workers' pills, requests to
 * a person, injected instructions, streamed text and tool calls, and each
 * worker's turns. Events are untrusted JSON: every field is checked before
 * it is read, and an event that does not fit is passed over.
 * @module
 */
import type { ChatModel } from './model.js';
import type { MessageSource, PendingRequest, PlanView, RequestKind, WorkerStatus } from './types.js';

type Json = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const obj = (value: unknown): Json | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined);

/** Agents whose words are the lead's: the planner, the synthesis, an orchestrator or coordinator. */
const LEAD_NAMES = new Set(['lead', 'planner', 'synthesis', 'orchestrator', 'coordinator']);
/** The chunk statuses a worker shows. */
export const WORKER_STATUSES: ReadonlySet<WorkerStatus> = new Set<WorkerStatus>(['pending', 'queued', 'running', 'retrying', 'completed', 'failed', 'skipped', 'cancelled', 'waiting-for-dependencies']);
/** A chunk status as this version names it (logs written before 0.1.0 say `succeeded` and `aborted`). */
export const currentStatus = (status: string | undefined): WorkerStatus | undefined =>
  (status === 'succeeded' ? 'completed' : status === 'aborted' ? 'cancelled' : status) as WorkerStatus | undefined;
const KINDS = new Set<RequestKind>(['approval', 'question', 'plan-approval']);

/** JSON text of a value, for the chat (never throws). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value ?? {}) ?? '';
  } catch {
    return String(value);
  }
}

/** Reads one run's troupe events into a model (one reader per run: it remembers the op tree). */
export class TroupeEventReader {
  /** The worker of each op (a chunk's ops, and agents of a team). */
  readonly #opWorker = new Map<string, string>();
  /** The agent of each agent op. */
  readonly #opAgent = new Map<string, string>();
  /** The message a streaming op writes into. */
  readonly #streaming = new Map<string, string>();
  /** The message of each tool call. */
  readonly #tools = new Map<string, string>();
  /** Estimated durations of the plan's chunks, from the plan approved. */
  readonly #estimates = new Map<number, number>();
  #lead: string | undefined;
  #lastLeadText: string | undefined;
  /** Instructions this page sent and already shows, so their `plan.instruction` does not show them again. */
  readonly #sent: string[] = [];

  constructor(readonly model: ChatModel) {}

  /**
   * Apply the event at position `seq` of the run log (`undefined` when the
   * stream has no positions). An event at or before the last position
   * applied is a repeat and is passed over: false.
   */
  apply(seq: number | undefined, event: unknown): boolean {
    const model = this.model;
    if (seq !== undefined) {
      if (seq <= model.lastSeq) return false;
      model.lastSeq = seq;
    }
    const e = obj(event);
    const type = str(e?.['type']);
    if (!e || !type) return false;
    const time = num(e['time']) ?? Date.now();
    if (model.runId === undefined && str(e['runId'])) model.runId = str(e['runId']);
    const handle = HANDLERS[type];
    if (handle) handle(this, e, time);
    return true;
  }

  /** @internal */ opStarted(e: Json, time: number): void {
    const opId = str(e['opId']);
    if (!opId) return;
    const key = chunkKeyOf(str(e['path']));
    const parent = str(e['parentId']);
    const inherited = parent ? this.#opWorker.get(parent) : undefined;
    if (key) this.#opWorker.set(opId, key);
    else if (inherited) this.#opWorker.set(opId, inherited);
    if (e['kind'] !== 'agent') return;
    const agent = str(e['agent']) ?? str(e['name']) ?? 'agent';
    this.#opAgent.set(opId, agent);
    if (this.#lead === undefined && !key && !inherited) this.#lead = agent;
    if (key || inherited || this.#isLead(agent)) return;
    // An agent of a team (not the lead, not in a chunk) is a worker of its own.
    const worker = this.model.worker(`agent:${agent}`, { title: agent, role: agent });
    this.#opWorker.set(opId, worker.key);
    this.model.setWorkerStatus(worker, 'running', time);
  }

  /** @internal */ opCompleted(e: Json, time: number): void {
    const opId = str(e['opId']);
    const key = opId ? this.#opWorker.get(opId) : undefined;
    if (!opId || !key?.startsWith('agent:') || !this.#opAgent.has(opId)) return;
    const worker = this.model.workers.get(key);
    if (worker) this.model.setWorkerStatus(worker, e['status'] === 'completed' ? 'completed' : e['status'] === 'cancelled' ? 'cancelled' : 'failed', time);
  }

  #isLead(agent: string): boolean {
    return agent === this.#lead || LEAD_NAMES.has(agent.toLowerCase());
  }

  /** Who an event of op `opId` by `agent` speaks as. */
  speaker(opId: string | undefined, agent: string | undefined): { source: MessageSource; author: string; workerKey?: string } {
    const key = opId ? this.#opWorker.get(opId) : undefined;
    const worker = key ? this.model.workers.get(key) : undefined;
    if (worker) return { source: 'worker', author: worker.title === worker.role || !worker.role ? worker.title : `${worker.role} · ${worker.title}`, workerKey: worker.key };
    if (agent === undefined || this.#isLead(agent)) return { source: 'lead', author: agent ?? 'lead' };
    return { source: 'worker', author: agent };
  }

  /** @internal */ text(e: Json, time: number): void {
    const text = str(e['text']);
    const opId = str(e['opId']);
    const agent = str(e['agent']);
    const streamKey = opId ?? str(e['sessionId']);
    const streaming = streamKey ? this.#streaming.get(streamKey) : undefined;
    if (streamKey) this.#streaming.delete(streamKey);
    if (text === undefined || text === '') {
      if (streaming && this.model.message(streaming)?.text === '') this.model.update(streaming, { streaming: false, text: '…' });
      return;
    }
    const who = this.speaker(opId, agent);
    const id = streaming ?? `turn-${opId ?? agent}-${num(e['turn']) ?? time}-${this.model.messages.length}`;
    if (streaming && this.model.message(streaming)) this.model.update(streaming, { text, streaming: false });
    else this.model.add({ id, ...who, time, text, kind: 'text' });
    if (who.source === 'lead') this.#lastLeadText = text;
    this.#noteWorker(who.workerKey, id, true);
  }

  /** @internal */ delta(e: Json, time: number): void {
    const inner = obj(e['event']);
    const delta = str(inner?.['text']);
    if (inner?.['type'] !== 'text-delta' || delta === undefined) return;
    const opId = str(e['opId']);
    const streamKey = opId ?? str(e['sessionId']);
    if (!streamKey) return;
    const id = this.#streaming.get(streamKey);
    const message = id ? this.model.message(id) : undefined;
    if (message) {
      this.model.update(message.id, { text: message.text + delta });
      return;
    }
    const who = this.speaker(opId, str(e['agent']));
    const added = this.model.add({ id: `stream-${streamKey}-${this.model.messages.length}-${time}`, ...who, time, text: delta, kind: 'text', streaming: true });
    this.#streaming.set(streamKey, added.id);
    this.#noteWorker(who.workerKey, added.id, false);
  }

  #noteWorker(key: string | undefined, messageId: string, turn: boolean): void {
    const worker = key ? this.model.workers.get(key) : undefined;
    if (!worker) return;
    worker.lastMessageId = messageId;
    if (turn) worker.turns++;
  }

  /** @internal */ toolCalled(e: Json, time: number): void {
    const call = obj(e['call']);
    const callId = str(call?.['id']);
    const name = str(call?.['name']);
    if (!call || !callId || !name) return;
    const who = this.speaker(str(e['opId']), str(e['agent']));
    const message = this.model.add({ id: `tool-${callId}-${time}`, ...who, time, text: '', kind: 'tool', tool: { callId, name, args: jsonText(call['arguments']) } });
    this.#tools.set(callId, message.id);
    this.#noteWorker(who.workerKey, message.id, false);
  }

  /** @internal */ toolCompleted(e: Json): void {
    const callId = str(e['callId']);
    const id = callId ? this.#tools.get(callId) : undefined;
    const message = id ? this.model.message(id) : undefined;
    if (!message?.tool) return;
    this.model.update(message.id, { tool: { ...message.tool, result: str(e['content']) ?? '', isError: e['isError'] === true } });
  }

  /** @internal */ chunkStatus(e: Json, time: number): void {
    const chunkId = str(e['chunkId']);
    const status = currentStatus(str(e['status']));
    if (chunkId === undefined || !status || !WORKER_STATUSES.has(status)) return;
    const key = `${str(e['planId']) ?? 'plan'}/${chunkId}`;
    const index = num(e['sequenceIndex']);
    const worker = this.model.worker(key, { title: str(e['title']) ?? `chunk ${chunkId}`, role: str(e['role']) ?? '', ...(index !== undefined && this.#estimates.has(index) ? { estimatedMs: this.#estimates.get(index)! } : {}) });
    worker.attempt = num(e['attempt']) ?? worker.attempt;
    this.model.setWorkerStatus(worker, status, time);
    if ((status === 'failed' || status === 'skipped') && str(e['error'])) {
      this.model.add({ source: 'system', author: 'troupe', workerKey: key, time, kind: 'status', text: `Chunk ${chunkId} (${worker.title}) ${status}: ${str(e['error'])}` });
    }
  }

  /** @internal */ requested(e: Json, time: number): void {
    const id = str(e['requestId']);
    const kind = str(e['kind']) as RequestKind | undefined;
    if (!id || !kind || !KINDS.has(kind)) return;
    const request = this.model.request(requestFrom(id, kind, e, 'troupe'));
    if (kind === 'plan-approval' && request.plan) for (const c of request.plan.chunks) if (c.estimatedMs !== undefined) this.#estimates.set(c.sequenceIndex, c.estimatedMs);
    const who = kind === 'approval' ? this.speaker(str(e['opId']), request.agent) : { source: 'lead' as const, author: this.#lead ?? 'lead' };
    const text = kind === 'question' && request.questions?.length ? request.questions.map((q) => `- ${q}`).join('\n') : request.prompt;
    this.model.add({ id: `request-${id}`, ...who, time, text, kind: 'request', requestId: id });
    if (who.workerKey) this.#noteWorker(who.workerKey, `request-${id}`, false);
  }

  /** @internal */ answered(e: Json, time: number): void {
    const id = str(e['requestId']);
    const request = id ? this.model.requests.get(id) : undefined;
    const answer = obj(e['answer']) ?? {};
    if (!id || !request) return;
    request.status = 'answered';
    request.answer = answer;
    request.error = undefined;
    this.model.update(`request-${id}`, {});
    const said = answerText(request.kind, answer);
    if (said) this.model.add({ id: `answer-${id}`, source: 'user', author: 'You', time, kind: 'text', text: said });
  }

  /** @internal */ withdrawn(e: Json): void {
    const id = str(e['requestId']);
    const request = id ? this.model.requests.get(id) : undefined;
    if (!id || !request) return;
    request.status = 'withdrawn';
    this.model.update(`request-${id}`, {});
  }

  /** @internal */ runEnded(e: Json, time: number): void {
    const model = this.model;
    for (const request of model.pending()) request.status = 'withdrawn';
    if (e['type'] === 'run.completed') {
      model.status = e['status'] === 'cancelled' ? 'cancelled' : 'completed';
      const output = str(e['output']);
      model.output = output;
      if (output && output !== this.#lastLeadText) model.add({ source: 'lead', author: this.#lead ?? 'lead', time, kind: 'text', text: output });
    } else {
      const cancelled = e['code'] === 'cancelled';
      model.status = cancelled ? 'cancelled' : 'failed';
      model.error = str(e['error']);
      model.add({ source: 'system', author: 'troupe', time, kind: cancelled ? 'status' : 'error', text: cancelled ? 'The run was cancelled.' : `The run failed: ${model.error ?? 'unknown error'}` });
    }
    for (const worker of model.workers.values()) if (worker.status === 'running' || worker.status === 'queued' || worker.status === 'retrying') model.setWorkerStatus(worker, 'cancelled', time);
  }

  /** @internal */ turn(e: Json, time: number): void {
    const agent = str(e['agent']) ?? 'agent';
    const reply = obj(e['reply']);
    const calls = Array.isArray(reply?.['toolCalls']) ? (reply['toolCalls'] as unknown[]) : [];
    const opId = str(e['opId']);
    this.model.addTurn({
      agent,
      ...(opId && this.#opWorker.has(opId) ? { workerKey: this.#opWorker.get(opId)! } : {}),
      turn: num(e['turn']) ?? 0,
      time,
      input: inputText(e['input']),
      reply: str(reply?.['text']) ?? '',
      toolCalls: calls.map(obj).filter((c): c is Json => c !== undefined).map((c) => ({ name: str(c['name']) ?? '?', args: jsonText(c['arguments']) })),
      ...(str(e['error']) ? { error: str(e['error'])! } : {}),
    });
  }

  /**
   * Show an instruction this page is sending, before it is sent: its
   * `plan.instruction`, which may come before the request's answer, then
   * adds only the lead's acknowledgement. Returns the message's id, for
   * {@link TroupeEventReader.dropInstruction} should the sending fail.
   */
  noteInstruction(text: string, time: number): string {
    this.#sent.push(text);
    return this.model.add({ source: 'injection', author: 'You → the team', time, kind: 'text', text }).id;
  }

  /** An instruction noted with {@link TroupeEventReader.noteInstruction} was not sent: it goes from the chat. */
  dropInstruction(id: string, text: string): void {
    const sent = this.#sent.indexOf(text);
    if (sent >= 0) this.#sent.splice(sent, 1);
    this.model.remove(id);
  }

  /** @internal */ instruction(e: Json, time: number): void {
    const instruction = str(e['instruction']);
    const sent = instruction === undefined ? -1 : this.#sent.indexOf(instruction);
    if (sent >= 0) this.#sent.splice(sent, 1);
    else if (instruction) this.model.add({ source: 'injection', author: 'You → the team', time, kind: 'text', text: instruction });
    const ack = str(e['acknowledgement']);
    if (ack) this.say('lead', time, ack, 'text');
  }

  /** @internal */ say(source: MessageSource, time: number, text: string, kind: 'text' | 'status' = 'status'): void {
    this.model.add({ source, author: source === 'user' || source === 'injection' ? 'You' : source === 'lead' ? (this.#lead ?? 'lead') : 'troupe', time, kind, text });
  }
}

/** What each event does to the model. */
const HANDLERS: Record<string, (reader: TroupeEventReader, e: Json, time: number) => void> = {
  'run.started': (r, e, time) => {
    r.model.status = 'running';
    const input = str(e['input']);
    if (input && !r.model.messages.some((m) => m.source === 'user')) r.say('user', time, input, 'text');
  },
  'run.forked': (r, e, time) => r.say('system', time, `Forked from run ${str(obj(e['parent'])?.['runId']) ?? '?'}${e['mode'] === 'what-if' ? ' (what-if replay)' : ''}.`),
  'op.started': (r, e, time) => r.opStarted(e, time),
  'op.completed': (r, e, time) => r.opCompleted(e, time),
  'agent.turn': (r, e, time) => r.text(e, time),
  'session.event': (r, e, time) => r.delta(e, time),
  'tool.called': (r, e, time) => r.toolCalled(e, time),
  'tool.completed': (r, e) => r.toolCompleted(e),
  'model.turn': (r, e, time) => r.turn(e, time),
  'chunk.status': (r, e, time) => r.chunkStatus(e, time),
  'input.requested': (r, e, time) => {
    r.requested(e, time);
    r.model.status = 'waiting';
  },
  'input.answered': (r, e, time) => {
    r.answered(e, time);
    if (r.model.pending().length === 0 && r.model.status === 'waiting') r.model.status = 'running';
  },
  'input.withdrawn': (r, e) => r.withdrawn(e),
  'phase.changed': (r, e, time) => {
    const to = str(e['to']);
    r.model.phase = to;
    r.model.touch();
    const said: Record<string, string> = { planning: 'The lead is planning.', executing: 'The team is at work.', aggregating: 'The lead is putting the results together.' };
    if (to && said[to]) r.say('system', time, said[to]);
  },
  'plan.instruction': (r, e, time) => r.instruction(e, time),
  'chunk.instruction': (r, e, time) => {
    const who = r.model.workers.get(`${str(e['planId']) ?? 'plan'}/${str(e['chunkId']) ?? ''}`);
    r.say('system', time, `The instruction reached ${who ? `${who.role ?? ''} · ${who.title}` : `chunk ${str(e['chunkId']) ?? '?'}`} at its next turn.`);
  },
  'chunk.conflict': (r, e, time) => r.say('system', time, `Chunk ${str(e['chunkId']) ?? '?'} conflicted in ${Array.isArray(e['paths']) ? (e['paths'] as unknown[]).map(String).join(', ') : 'its files'}: ${str(e['outcome']) ?? ''}.`),
  'plan.completed': (r, e, time) => r.say('system', time, `Plan ${str(e['status']) ?? 'ended'}: ${num(e['completed'] ?? e['succeeded']) ?? 0} completed, ${num(e['failed']) ?? 0} failed, ${num(e['skipped']) ?? 0} skipped.`),
  warning: (r, e, time) => r.say('system', time, str(e['message']) ?? 'warning'),
  'run.completed': (r, e, time) => r.runEnded(e, time),
  'run.failed': (r, e, time) => r.runEnded(e, time),
};

/** The worker key of an op's path: `<plan id>/<chunk id>` when it runs in a plan's chunk. One pass over the path. */
export function chunkKeyOf(path: string | undefined): string | undefined {
  if (!path) return undefined;
  let plan = 'plan';
  let key: string | undefined;
  for (const segment of path.split('/')) {
    if (segment.startsWith('plan:')) {
      const hash = segment.lastIndexOf('#');
      plan = segment.slice(5, hash > 5 ? hash : undefined);
    } else if (segment.startsWith('chunk-')) key = `${plan}/${segment.slice(6)}`;
  }
  return key;
}

/** A request from an event's fields (troupe's `input.requested`, or an AG-UI interrupt's metadata). */
export function requestFrom(id: string, kind: RequestKind, fields: Json, via: 'troupe' | 'agui'): PendingRequest {
  const questions = Array.isArray(fields['questions']) ? (fields['questions'] as unknown[]).filter((q): q is string => typeof q === 'string') : undefined;
  const roles = Array.isArray(fields['roles']) ? (fields['roles'] as unknown[]).filter((q): q is string => typeof q === 'string') : undefined;
  const plan = planOf(fields['plan']);
  return {
    id,
    kind,
    prompt: str(fields['prompt']) ?? str(fields['message']) ?? '',
    status: 'pending',
    via,
    ...(str(fields['agent']) ? { agent: str(fields['agent'])! } : {}),
    ...(str(fields['tool']) ? { tool: str(fields['tool'])! } : {}),
    ...(str(fields['risk']) ? { risk: str(fields['risk'])! } : {}),
    ...('arguments' in fields ? { arguments: fields['arguments'] } : {}),
    ...(questions ? { questions } : {}),
    ...(plan ? { plan } : {}),
    ...(roles ? { roles } : {}),
  };
}

/** A plan from untrusted JSON, or undefined when it is not one. */
export function planOf(value: unknown): PlanView | undefined {
  const plan = obj(value);
  if (!plan || !Array.isArray(plan['chunks'])) return undefined;
  const chunks = (plan['chunks'] as unknown[]).map(obj).filter((c): c is Json => c !== undefined);
  return {
    ...plan,
    planSummary: str(plan['planSummary']) ?? '',
    chunks: chunks.map((c, i) => ({
      ...c,
      sequenceIndex: num(c['sequenceIndex']) ?? i,
      title: str(c['title']) ?? '',
      prompt: str(c['prompt']) ?? '',
      dependsOnIndexes: Array.isArray(c['dependsOnIndexes']) ? (c['dependsOnIndexes'] as unknown[]).filter((d): d is number => typeof d === 'number') : [],
      complexity: str(c['complexity']) ?? 'Medium',
      role: str(c['role']) ?? 'Generic',
      ...(num(c['estimatedMs']) !== undefined ? { estimatedMs: num(c['estimatedMs'])! } : {}),
    })),
  };
}

/** What a person's answer said, as a chat line. */
export function answerText(kind: RequestKind, answer: Json): string | undefined {
  if (kind === 'question') return str(answer['text']);
  if (kind === 'approval') return answer['approved'] === true ? `Approved${answer['scope'] === 'session' ? ' for this session' : answer['scope'] === 'global' ? ' from now on' : ' once'}.` : 'Denied.';
  const decision = str(answer['decision']);
  const feedback = str(answer['feedback']);
  if (decision === 'approve') return answer['plan'] ? 'Approved the plan, as edited.' : 'Approved the plan.';
  if (decision === 'reject') return 'Rejected the plan.';
  return `Asked for changes${feedback ? `: ${feedback}` : '.'}`;
}

/** A turn's input as text: a prompt, or tool results one per line. */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  return input
    .map(obj)
    .filter((r): r is Json => r !== undefined)
    .map((r) => `[${r['isError'] ? 'tool error' : 'tool result'} ${str(r['name']) ?? '?'}] ${str(r['content']) ?? ''}`)
    .join('\n');
}

/**
 * The state of one team chat: its messages (capped), the workers, the
 * requests waiting for a person, the workers' turns, the phase and the
 * run's status. Events of troupe's stream (`./troupe-events.ts`) or of an
 * AG-UI stream (`./agui-events.ts`) change it; the elements render it.
 * Plain data and no DOM, so it is tested without a browser.
 * @module
 */
import { anything, defineOptions } from '../core/options.js';
import type { ChatMessage, PendingRequest, RunStatus, RunSummary, TurnView, WorkerState, WorkerStatus } from './types.js';

/** Options of {@link ChatModel}. */
export interface ChatModelOptions {
  /** The most messages kept; the oldest go first. Default: 5000. */
  maxMessages?: number;
  /** The most worker turns kept. Default: 2000. */
  maxTurns?: number;
}

/** Any value of a cap is taken: one that is not a positive integer (an element's missing attribute) is the default. */
const chatModelOptions = defineOptions<ChatModelOptions>('ChatModel', { maxMessages: anything, maxTurns: anything });

/** The statuses in which a worker works. */
export const WORKING: ReadonlySet<WorkerStatus> = new Set(['running', 'retrying', 'queued']);

/** Colours of workers, in order of appearance (the elements' `--troupe-worker-<n>`). */
export const WORKER_COLOURS = 8;

/** The state of one team chat. */
export class ChatModel {
  /** The messages, oldest first. */
  readonly messages: ChatMessage[] = [];
  /** The workers by key, in order of appearance. */
  readonly workers = new Map<string, WorkerState>();
  /** Requests to a person by id, in order of arrival. */
  readonly requests = new Map<string, PendingRequest>();
  /** Every model turn seen (the workers' own turns), oldest first. */
  readonly turns: TurnView[] = [];
  /** The planning session's phase, when there is one. */
  phase: string | undefined;
  status: RunStatus = 'idle';
  /** The run's answer, once it has one. */
  output: string | undefined;
  /** Why the run failed. */
  error: string | undefined;
  /** The run (troupe) or thread (AG-UI). */
  runId: string | undefined;
  /** The position of the last troupe event applied (the stream's `Last-Event-ID`). */
  lastSeq = -1;
  /** Grows with every change; views redraw when it moved. */
  version = 0;
  /** Messages dropped by the cap so far. */
  dropped = 0;
  readonly maxMessages: number;
  readonly maxTurns: number;
  readonly #byId = new Map<string, ChatMessage>();
  #nextId = 0;

  constructor(options: ChatModelOptions = {}) {
    chatModelOptions.check(options);
    this.maxMessages = positive(options.maxMessages, 5000);
    this.maxTurns = positive(options.maxTurns, 2000);
  }

  /** The message with this id, if it is still kept. */
  message(id: string): ChatMessage | undefined {
    return this.#byId.get(id);
  }

  /** Add a message (its id generated when absent); the oldest go when there are more than `maxMessages`. */
  add(message: Omit<ChatMessage, 'id' | 'rev'> & { id?: string }): ChatMessage {
    const id = message.id ?? `m${this.#nextId++}`;
    const existing = this.#byId.get(id);
    if (existing) return existing;
    const added: ChatMessage = { ...message, id, rev: 0 };
    this.messages.push(added);
    this.#byId.set(id, added);
    // Dropped in batches, so a long chat does not shift the whole list for every message.
    const over = this.messages.length - this.maxMessages;
    if (over > 0 && (over >= Math.max(1, this.maxMessages >> 4) || this.maxMessages < 64)) {
      for (const old of this.messages.splice(0, over)) this.#byId.delete(old.id);
      this.dropped += over;
    }
    this.touch();
    return added;
  }

  /** Change a message in place (its `rev` grows). */
  update(id: string, patch: Partial<Omit<ChatMessage, 'id' | 'rev'>>): ChatMessage | undefined {
    const message = this.#byId.get(id);
    if (!message) return undefined;
    Object.assign(message, patch);
    message.rev++;
    this.touch();
    return message;
  }

  /** Take a message out (one shown before it was confirmed, when it was not). False when it is not kept. */
  remove(id: string): boolean {
    const message = this.#byId.get(id);
    if (!message) return false;
    this.messages.splice(this.messages.indexOf(message), 1);
    this.#byId.delete(id);
    this.touch();
    return true;
  }

  /** The worker `key`, made when new (with the next colour). */
  worker(key: string, init: Partial<WorkerState> & { title: string }): WorkerState {
    let worker = this.workers.get(key);
    if (!worker) {
      worker = { key, status: 'pending', colour: this.workers.size % WORKER_COLOURS, attempt: 0, turns: 0, ...init };
      this.workers.set(key, worker);
    }
    this.touch();
    return worker;
  }

  /** Set a worker's status, noting when it started and ended work. */
  setWorkerStatus(worker: WorkerState, status: WorkerStatus, time: number): void {
    if (status === 'running' && worker.status !== 'running') {
      worker.startedAt = time;
      worker.turns = 0;
      worker.endedAt = undefined;
    }
    if (!WORKING.has(status) && WORKING.has(worker.status)) worker.endedAt = time;
    worker.status = status;
    this.touch();
  }

  /** Workers that work now. */
  working(): WorkerState[] {
    return [...this.workers.values()].filter((w) => WORKING.has(w.status) && w.status !== 'queued');
  }

  /** Add or change a request. */
  request(request: PendingRequest): PendingRequest {
    const existing = this.requests.get(request.id);
    if (existing) Object.assign(existing, request);
    else this.requests.set(request.id, request);
    this.touch();
    return existing ?? request;
  }

  /** Requests still waiting for an answer. */
  pending(): PendingRequest[] {
    return [...this.requests.values()].filter((r) => r.status === 'pending' || r.status === 'sending');
  }

  /** Record a model turn (the oldest go past `maxTurns`). */
  addTurn(turn: TurnView): void {
    this.turns.push(turn);
    if (this.turns.length > this.maxTurns) this.turns.splice(0, this.turns.length - this.maxTurns);
    this.touch();
  }

  /** Something changed. */
  touch(): void {
    this.version++;
  }
}

/**
 * A run's status as the run history shows it: `running` until it ended,
 * then its status with its reason when the run says one (`completed
 * (goal-met)`), or `ended` when it says neither. The run's meta document
 * is untrusted JSON: a field that is not a non-empty string is left out.
 */
export function runStatusText(run: Pick<RunSummary, 'endedAt' | 'status' | 'reason'>): string {
  if (run.endedAt === undefined) return 'running';
  const status = typeof run.status === 'string' && run.status !== '' ? run.status : 'ended';
  return typeof run.reason === 'string' && run.reason !== '' ? `${status} (${run.reason})` : status;
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

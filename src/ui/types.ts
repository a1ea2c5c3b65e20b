/**
 * What the team interface shows, as plain data: messages, workers,
 * requests waiting for a person, a worker's turns, runs, and the folder's
 * catalogue. The elements of `troupe/ui` render these; an application can
 * read them from an element's `model` too.
 * @module
 */

/** Who a message is from; each has its colour. */
export type MessageSource = 'user' | 'lead' | 'worker' | 'system' | 'injection';

/** What a message shows. */
export type MessageKind = 'text' | 'tool' | 'request' | 'status' | 'error';

/** A tool call as the chat shows it: the call, then its result. */
export interface ToolActivity {
  callId: string;
  name: string;
  /** The arguments as JSON text. */
  args: string;
  result?: string;
  isError?: boolean;
}

/** One card of the team chat. */
export interface ChatMessage {
  /** Stable across updates (the list is keyed by it). */
  readonly id: string;
  source: MessageSource;
  /** The label: `You`, `lead`, a worker's role and chunk, `troupe`. */
  author: string;
  /** The worker this message belongs to (its pill's key). */
  workerKey?: string;
  /** Clock time, ms. */
  time: number;
  /** Markdown (model output: untrusted). */
  text: string;
  kind: MessageKind;
  /** True while the text still streams in. */
  streaming?: boolean;
  tool?: ToolActivity;
  /** For `kind: 'request'`: the request it shows (see `ChatState.requests`). */
  requestId?: string;
  /** Grows with every change of the message (renderers cache by it). */
  rev: number;
}

/** A plan's chunk, as a plan review shows and edits it. */
export interface PlanChunkView {
  sequenceIndex: number;
  title: string;
  prompt: string;
  dependsOnIndexes: number[];
  complexity: string;
  role: string;
  estimatedMs?: number;
  workingScope?: string[];
  [field: string]: unknown;
}

/** A plan, as a plan review shows and edits it. */
export interface PlanView {
  planSummary: string;
  chunks: PlanChunkView[];
  [field: string]: unknown;
}

/** What a run asks a person: a tool approval, a question, a verdict on a plan. */
export type RequestKind = 'approval' | 'question' | 'plan-approval';

/** A request that waits (or waited) for a person. */
export interface PendingRequest {
  /** The request id (troupe) or the interrupt id (AG-UI). */
  readonly id: string;
  kind: RequestKind;
  prompt: string;
  agent?: string;
  tool?: string;
  /** The tool's risk: `read-only`, `writes` or `dangerous`. */
  risk?: string;
  arguments?: unknown;
  questions?: string[];
  plan?: PlanView;
  /** The roles an edited plan may use. */
  roles?: string[];
  status: 'pending' | 'sending' | 'answered' | 'withdrawn';
  /** The answer, once given. */
  answer?: Record<string, unknown>;
  /** Why the last answer was refused, shown where it was given. */
  error?: string;
  /** How it is answered: troupe's answer route, or an AG-UI resume. */
  via: 'troupe' | 'agui';
}

/** The status of a worker, as its pill shows it. */
export type WorkerStatus = 'pending' | 'queued' | 'running' | 'retrying' | 'completed' | 'failed' | 'skipped' | 'cancelled' | 'waiting-for-dependencies';

/** A working chunk or worker: one pill of the worker bar. */
export interface WorkerState {
  /** `<plan>/<chunk id>` for a chunk, `agent:<name>` for an agent of a team. */
  readonly key: string;
  title: string;
  role?: string;
  status: WorkerStatus;
  /** Index of its colour (0-7), in order of appearance. */
  colour: number;
  /** Attempts so far (chunks). */
  attempt: number;
  /** Turns taken in the current attempt. */
  turns: number;
  startedAt?: number;
  endedAt?: number;
  /** The expected duration, when the plan says (for a progress estimate). */
  estimatedMs?: number;
  /** The last message it wrote (the pill scrolls there). */
  lastMessageId?: string;
}

/** One model turn of a worker: what it was sent, what it answered and the tools it called. */
export interface TurnView {
  agent: string;
  workerKey?: string;
  turn: number;
  time: number;
  /** The prompt or the tool results, as text. */
  input: string;
  /** The answer's text. */
  reply: string;
  toolCalls: Array<{ name: string; args: string }>;
  error?: string;
}

/** Where a run stands, for the chat's header and input bar. */
export type RunStatus = 'idle' | 'connecting' | 'running' | 'waiting' | 'reconnecting' | 'completed' | 'failed' | 'cancelled';

/** A run of the store (its meta document, `GET /runs`). */
export interface RunSummary {
  runId: string;
  runnable?: string;
  input?: string;
  startedAt: number;
  endedAt?: number;
  status?: string;
  /** Why it ended so, when its status says less (`completed` with `goal-met`, `max-rounds`, ...). */
  reason?: string;
  parent?: { runId: string; checkpoint?: number };
  [field: string]: unknown;
}

/** A checkpoint of a run a fork can start from (`GET /runs/:id/checkpoints` of `troupe dev`). */
export interface CheckpointSummary {
  index: number;
  kind: string;
  name: string;
  path: string;
  time?: number;
  finished?: boolean;
}

/** What a team picker offers, and what starting one of them runs. */
export interface CatalogEntry {
  kind: 'agent' | 'team' | 'squad' | 'template' | 'planning';
  name: string;
  description?: string;
  /** For squads: where the preset comes from. */
  source?: 'repo' | 'builtin' | 'user';
  /** For templates: the parameters a start must give. */
  parameters?: Record<string, { type: string; description?: string; default?: unknown; enum?: unknown[] }>;
  /** Members, workers or chunks, for the card. */
  members?: string[];
}

/** The catalogue of a folder (`GET /catalog` of `troupe dev`). */
export interface Catalog {
  folder?: string;
  adapter?: string;
  entries: CatalogEntry[];
  /** What the server can do besides the run routes of `troupe/http`. */
  features?: { replay?: boolean; fork?: boolean; report?: boolean; instructions?: boolean };
}

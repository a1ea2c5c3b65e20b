/**
 * Requests to a person, kept in the run's store: the waiting side writes a
 * request document and an `input.requested` event, then waits for the
 * answer; whoever answers (an HTTP handler in any process) writes it with a
 * compare-and-set, so a request is answered exactly once and the process
 * that holds the waiting call sees it.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { combineSignals } from '../../core/abort.js';
import { abortError, realClock, sleep, type Clock } from '../../core/clock.js';
import type { RunContext } from '../../core/context.js';
import { ConfigurationError, StoreError, describeValue, errorMessage } from '../../core/errors.js';
import type { TroupeEventPayloads } from '../../core/events.js';
import type { InputKind } from './events.js';
import { abortSignal, clock as clockCheck, defineOptions, positiveNumber, required, store as storeCheck } from '../../core/options.js';
import { supportsCompareAndSet, type CompareAndSetStore, type Store, type StoreCallOptions } from '../../core/store.js';
import { checkId } from './ids.js';
import { checkPlanEdit } from '../../plan/model/plan.js';

/** How often a waiting request looks for its answer by default (ms). */
export const DEFAULT_ANSWER_POLL_MS = 250;

/** The answer to a tool approval. `scope` says how long the decision holds (default `once`). */
export const approvalAnswerSchema = z.strictObject({ approved: z.boolean(), scope: z.enum(['once', 'session', 'global']).optional() });
/** The answer to a question. */
export const questionAnswerSchema = z.strictObject({ text: z.string().min(1).max(100_000) });
/**
 * The verdict on a plan; with `approve`, `plan` may replace the plan by the
 * person's edit (checked as `PlanningSession.editPlan` checks it).
 */
export const planAnswerSchema = z
  .strictObject({
    decision: z.enum(['approve', 'request-changes', 'reject']),
    feedback: z.string().max(100_000).optional(),
    plan: z.looseObject({}).optional(),
  })
  .refine((answer) => answer.plan === undefined || answer.decision === 'approve', { message: 'an edited plan goes with the decision "approve"', path: ['plan'] });

/** The answer to a tool approval. */
export type ApprovalAnswer = z.infer<typeof approvalAnswerSchema>;
/** The answer to a question. */
export type QuestionAnswer = z.infer<typeof questionAnswerSchema>;
/** The verdict on a plan. */
export type PlanAnswer = z.infer<typeof planAnswerSchema>;

/** The answer each kind of request takes. */
export interface InputAnswers {
  approval: ApprovalAnswer;
  question: QuestionAnswer;
  'plan-approval': PlanAnswer;
}

const answerSchemas: { [K in InputKind]: z.ZodType<InputAnswers[K]> } = {
  approval: approvalAnswerSchema,
  question: questionAnswerSchema,
  'plan-approval': planAnswerSchema,
};

/** JSON Schema of the answer each kind takes (AG-UI interrupts carry it as `responseSchema`). */
export function answerJsonSchema(kind: InputKind): Record<string, unknown> {
  return z.toJSONSchema(answerSchemas[kind]) as Record<string, unknown>;
}

/** What a run asks a person for (the `input.requested` event without its id). */
export type InputRequest<K extends InputKind = InputKind> = Omit<TroupeEventPayloads['input.requested'], 'requestId' | 'kind'> & { kind: K };

/** The request document, `runs/<runId>/requests/<requestId>`. */
export interface InputRequestDocument {
  schemaVersion: 1;
  requestId: string;
  runId: string;
  request: InputRequest;
  status: 'pending' | 'answered' | 'withdrawn';
  /** Clock time of the request. */
  createdAt: number;
  answer?: Record<string, unknown>;
  /** Clock time of the answer (or of the withdrawal). */
  closedAt?: number;
  /** Why the request was withdrawn. */
  reason?: string;
}

/** The document key of a request. */
export function requestKey(runId: string, requestId: string): string {
  return `runs/${runId}/requests/${requestId}`;
}

/** Options of {@link askPerson}. */
export interface AskPersonOptions {
  /** Where the request goes. Default: the run's store (`ctx.store`). It needs compare-and-set. */
  store?: Store;
  /** How often to look for the answer, in ms on the run's clock. Default: 250. */
  pollMs?: number;
  /** Stop waiting (the request is withdrawn). The run's signal always applies. */
  signal?: AbortSignal;
}

/** The description of {@link AskPersonOptions} (`remoteApprovals` and `askPersonTool` take them too). */
export const askPersonOptions = defineOptions<AskPersonOptions>('askPerson', { store: storeCheck, pollMs: positiveNumber, signal: abortSignal });

function casStore(store: Store | undefined, who: string): CompareAndSetStore {
  if (!store) throw new ConfigurationError(`${who} needs the run's store: start the run with \`run(flow, input, { store })\` or pass \`store\``);
  if (!supportsCompareAndSet(store)) {
    throw new ConfigurationError(`${who} needs a store with compare-and-set (getVersioned and setIf), got one without`);
  }
  return store;
}

/**
 * Ask a person and wait for the answer: writes the request document, emits
 * `input.requested` (so it reaches the run log and every event stream), and
 * resolves with the answer once one is written (by {@link answerRequest}, in
 * this process or another), emitting `input.answered`. When the run or
 * `signal` aborts first, the request is withdrawn (`input.withdrawn`; a
 * later answer is refused) and the call rejects with the abort error.
 *
 * @example
 * ```ts
 * const { text } = await askPerson(ctx, { kind: 'question', prompt: 'Which branch?' });
 * ```
 */
export async function askPerson<K extends InputKind>(ctx: RunContext, request: InputRequest<K>, options: AskPersonOptions = {}): Promise<InputAnswers[K]> {
  askPersonOptions.check(options);
  const store = casStore(options.store ?? ctx.store, 'askPerson');
  const pollMs = options.pollMs ?? DEFAULT_ANSWER_POLL_MS;
  if (!(request.kind in answerSchemas)) throw new ConfigurationError(`Expected \`kind\` to be approval, question or plan-approval, got ${describeValue(request.kind)}`);
  if (typeof request.prompt !== 'string') throw new ConfigurationError(`Expected \`prompt\` to be a string, got ${describeValue(request.prompt)}`);
  const signal = combineSignals(ctx.signal, options.signal);
  const clock = ctx.clock;
  const requestId = randomUUID();
  const key = requestKey(ctx.runId, requestId);
  const doc: InputRequestDocument = { schemaVersion: 1, requestId, runId: ctx.runId, request, status: 'pending', createdAt: clock.now() };
  const call: StoreCallOptions = { signal };
  const created = await store.setIf(key, doc, { ifVersion: null, signal });
  if (!created.ok) throw new StoreError(`Request ${requestId} of run ${ctx.runId} exists already`);
  ctx.emit('input.requested', { ...request, requestId });
  try {
    for (;;) {
      const current = (await store.get(key, call)) as InputRequestDocument | undefined;
      if (current?.status === 'answered' && current.answer) {
        const answer = answerSchemas[request.kind].parse(current.answer) as InputAnswers[K];
        ctx.emit('input.answered', { requestId, kind: request.kind, answer: current.answer });
        return answer;
      }
      if (current?.status === 'withdrawn' || current === undefined) {
        throw new StoreError(`Request ${requestId} of run ${ctx.runId} was ${current ? 'withdrawn' : 'deleted'} while waiting`);
      }
      await sleep(clock, pollMs, signal);
    }
  } catch (error) {
    if (signal.aborted) {
      await withdraw(store, key, clock, errorMessage(abortError(signal))).catch(() => undefined);
      ctx.emit('input.withdrawn', { requestId, kind: request.kind, reason: errorMessage(abortError(signal)) });
      throw abortError(signal);
    }
    throw error;
  }
}

async function withdraw(store: CompareAndSetStore, key: string, clock: Clock, reason: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await store.getVersioned(key);
    const doc = current?.value as InputRequestDocument | undefined;
    if (!current || doc?.status !== 'pending') return;
    const written = await store.setIf(key, { ...doc, status: 'withdrawn', reason, closedAt: clock.now() }, { ifVersion: current.version });
    if (written.ok) return;
  }
}

/** What {@link answerRequest} did. */
export type AnswerResult =
  | { ok: true; request: InputRequestDocument }
  | { ok: false; reason: 'not-found' | 'answered' | 'withdrawn' }
  | { ok: false; reason: 'invalid'; issues: string[] };

/** Options of the functions about a run's requests: {@link pendingRequests}, {@link readRequest}. */
export interface RequestStoreOptions {
  /** The run's store (for a tenant: its namespaced store). */
  store: Store;
  /** Cancels the reads and writes. */
  signal?: AbortSignal;
}

/** The description of {@link RequestStoreOptions} (checked under the name of the function that takes them). */
const requestStoreOptions = defineOptions<RequestStoreOptions>('readRequest', { store: required(storeCheck), signal: abortSignal });

/** Options of {@link answerRequest}. */
export interface AnswerRequestOptions extends RequestStoreOptions {
  /** The clock of the answer's time (`closedAt`). Default: the real clock. */
  clock?: Clock;
}

const answerRequestOptions = defineOptions<AnswerRequestOptions>('answerRequest', { ...requestStoreOptions.shape, clock: clockCheck });

/**
 * Answer a pending request of run `runId` (in `options.store`, which needs
 * compare-and-set): the answer is validated against
 * the request's kind and written with a compare-and-set, so of two answers
 * to one request exactly one wins (`{ ok: true }`); the other gets
 * `{ ok: false, reason: 'answered' }`. The waiting call, in whichever
 * process holds it, resolves with the answer.
 *
 * @example
 * ```ts
 * const result = await answerRequest(runId, requestId, { approved: true }, { store });
 * if (!result.ok) console.log(result.reason);
 * ```
 */
export async function answerRequest(runId: string, requestId: string, answer: unknown, options: AnswerRequestOptions): Promise<AnswerResult> {
  answerRequestOptions.check(options ?? ({} as AnswerRequestOptions));
  checkId('runId', runId);
  checkId('requestId', requestId);
  const cas = casStore(options.store, 'answerRequest');
  const clock = options.clock ?? realClock;
  const key = requestKey(runId, requestId);
  const call: StoreCallOptions = options.signal ? { signal: options.signal } : {};
  for (;;) {
    const current = await cas.getVersioned(key, call);
    const doc = current?.value as InputRequestDocument | undefined;
    if (!current || !doc || doc.schemaVersion !== 1) return { ok: false, reason: 'not-found' };
    if (doc.status !== 'pending') return { ok: false, reason: doc.status };
    const parsed = answerSchemas[doc.request.kind].safeParse(answer);
    if (!parsed.success) return { ok: false, reason: 'invalid', issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(answer)'}: ${i.message}`) };
    const edited = doc.request.kind === 'plan-approval' ? (parsed.data as PlanAnswer).plan : undefined;
    if (edited !== undefined) {
      // Checked here as the session checks it, so an edit it would refuse is refused now, with its errors.
      const checked = checkPlanEdit(edited, doc.request.roles);
      if (!checked.valid) return { ok: false, reason: 'invalid', issues: checked.errors.map((e) => `plan: ${e}`) };
    }
    const next: InputRequestDocument = { ...doc, status: 'answered', answer: parsed.data as Record<string, unknown>, closedAt: clock.now() };
    const written = await cas.setIf(key, next, { ...call, ifVersion: current.version });
    if (written.ok) return { ok: true, request: next };
  }
}

/** The requests of run `runId` (in `options.store`) that wait for an answer, oldest first. */
export async function pendingRequests(runId: string, options: RequestStoreOptions): Promise<InputRequestDocument[]> {
  requestStoreOptions.check(options ?? ({} as RequestStoreOptions), '', 'pendingRequests');
  checkId('runId', runId);
  const { store } = options;
  const call: StoreCallOptions = options.signal ? { signal: options.signal } : {};
  const docs: InputRequestDocument[] = [];
  for (const key of await store.list(`runs/${runId}/requests/`, call)) {
    const doc = (await store.get(key, call)) as InputRequestDocument | undefined;
    if (doc?.schemaVersion === 1 && doc.status === 'pending') docs.push(doc);
  }
  return docs.sort((a, b) => a.createdAt - b.createdAt);
}

/** One request document of run `runId` (in `options.store`), or undefined. */
export async function readRequest(runId: string, requestId: string, options: RequestStoreOptions): Promise<InputRequestDocument | undefined> {
  requestStoreOptions.check(options ?? ({} as RequestStoreOptions));
  checkId('runId', runId);
  checkId('requestId', requestId);
  const doc = (await options.store.get(requestKey(runId, requestId), options.signal ? { signal: options.signal } : {})) as InputRequestDocument | undefined;
  return doc?.schemaVersion === 1 ? doc : undefined;
}

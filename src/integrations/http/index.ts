/**
 * `troupe/http`: serving runs to people and to many tenants on web
 * standards (`Request`, `Response`, `ReadableStream`), with no web framework
 * as a dependency. A reader of the run log, not a second runtime: event
 * streams are the run log followed live, answers and cancellations are
 * written through the store, and tenants are a namespace in every key.
 * @module troupe/http
 * @category Integrations
 */
export type { InputEvents, InputKind } from './events.js';
export { runHandler, jsonResponse, errorResponse, principalOf, type Authorize, type Handler, type Principal, type Refusal, type RunHandlerOptions, type StartRunRequest } from './handler.js';
export { toNodeListener, createNodeServer, type NodeListener, type NodeListenerOptions, type NodeListenerStats, type NodeServerOptions } from './node.js';
export {
  runEventStream,
  aguiEventStream,
  parseAguiEventId,
  positionAfter,
  positionAfterRequests,
  runState,
  waitForRun,
  type RunEventStreamOptions,
  type AguiEventStreamOptions,
  type AguiEventId,
  type RunLogOptions,
  type RunState,
  type WaitForRunOptions,
} from './streams.js';
export { resumingFetch, type ResumingFetchOptions } from './resume.js';
export { sseStream, sseFrame, SSE_HEADERS, type SseFrameOptions, type SseOptions, type SseSink } from './sse.js';
export { followRunLog, isTerminal, DEFAULT_POLL_MS, type FollowRunLogOptions, type LoggedEvent } from './follow.js';
export { AguiMapper, AGUI_EVENT_TYPES, AGUI_PROTOCOL_VERSION, aguiInputSchema, lastUserText, type AguiEvent, type AguiInput, type AguiRunState } from './agui.js';
export {
  askPerson,
  answerRequest,
  pendingRequests,
  readRequest,
  requestKey,
  answerJsonSchema,
  approvalAnswerSchema,
  questionAnswerSchema,
  planAnswerSchema,
  DEFAULT_ANSWER_POLL_MS,
  type AnswerRequestOptions,
  type AnswerResult,
  type ApprovalAnswer,
  type AskPersonOptions,
  type InputAnswers,
  type InputRequest,
  type InputRequestDocument,
  type PlanAnswer,
  type QuestionAnswer,
  type RequestStoreOptions,
} from './requests.js';
export { remoteApprovals, askPersonTool, runPlanningSession, type AskPersonToolOptions, type RunPlanningSessionOptions } from './remote.js';
export {
  sendInstruction,
  followInstructions,
  remoteInstructions,
  instructionsStream,
  MAX_INSTRUCTION_LENGTH,
  type FollowInstructionsOptions,
  type InstructionRecord,
  type RemoteInstructions,
  type SendInstructionOptions,
} from './instructions.js';
export { cancellationSignal, requestCancel, cancelKey, type CancelRequest, type CancellationSignalOptions, type CancellationWatch, type RequestCancelOptions } from './cancel.js';
export { namespacedStore, namespacedName, tenantPrefix } from './namespace.js';
export { isSafeId, checkId, MAX_ID_LENGTH } from './ids.js';

/**
 * The events of requests to a person (`input.*`), added to the run's event
 * map (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */

/** What a run asks a person for: a tool approval, an answer to a question, a verdict on a plan. */
export type InputKind = 'approval' | 'question' | 'plan-approval';

/** The events of requests to a person, by name. */
export interface InputEvents {
  /**
   * The run waits for a person (`askPerson`; `troupe/http` serves these):
   * `requestId` names the request document `runs/<runId>/requests/<requestId>`
   * of the run's store, where the answer is written. It carries what the
   * person is asked: the prompt, and the tool call to approve, the
   * questions, or the plan (which the answer may replace by an edit).
   */
  'input.requested': {
    requestId: string;
    kind: InputKind;
    prompt: string;
    agent?: string;
    tool?: string;
    /** For a tool approval: the tool's risk level (`read-only`, `writes`, `dangerous`). */
    risk?: string;
    toolCallId?: string;
    arguments?: unknown;
    questions?: string[];
    plan?: unknown;
    /** For a plan: the roles an edited plan may use (the planning session's `planRoles`). */
    roles?: string[];
  };
  /** The request was answered (from any process, through the store), with the answer. */
  'input.answered': { requestId: string; kind: InputKind; answer: Record<string, unknown> };
  /** The run stopped waiting without an answer (cancelled or timed out), and why. */
  'input.withdrawn': { requestId: string; kind: InputKind; reason: string };
}

declare global {
  interface TroupeLayerEvents extends InputEvents {}
}

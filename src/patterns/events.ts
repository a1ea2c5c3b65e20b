/**
 * The events of the patterns (handoff, router, advisors, broadcast,
 * sequential, the reflect and orchestrate loops, teams, working memory), added to the run's
 * event map (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */
import type { Usage } from '../core/usage.js';
import type { LoopReason, LoopStatus } from './loop.js';
import type { LoopEvaluation } from './orchestrate-state.js';
import type { TeamMessage, TeamReason, TeamStatus } from './team-state.js';

/** The events of the patterns, by name. */
export interface PatternEvents {
  /** A handoff's first stage finished and its second (`to`) starts with the request and the first stage's answer. */
  'handoff.started': { from: string; to: string };
  /** A handoff's second stage answered; `agent` is the terminal agent that owns the answer. */
  'handoff.completed': { from: string; to: string; agent: string };
  /** A stage of a handoff failed (not for cancellations and time-outs, which pass through): `stage` is the failed runnable's name. */
  'handoff.failed': { from: string; to: string; stage: string; error: string; code?: string };
  /**
   * An agent of `handoffChoices` chose to hand off to `to` (through the
   * choice `label`) and it was not taken: a person `denied` it, there was
   * no approval queue to ask (`no-approvals`), or the hand-off `limit` was
   * reached (the run ends with the answer so far). A `handoff` whose
   * delegation hooks refused it (`refused`) or whose receiver is not enabled
   * (`disabled`) is declined the same way: the sender's answer stands.
   */
  'handoff.declined': { from: string; to: string; label?: string; reason: 'denied' | 'no-approvals' | 'limit' | 'refused' | 'disabled' };
  /**
   * A router chose its destination: `form` says how (`tool`: a `route_to`
   * call, `text`: a `ROUTE:` line, `fallback`: the fallback after two
   * unusable answers); `attempt` is 1 or 2.
   */
  'router.selected': { router: string; destination: string; reason?: string; attempt: number; form: 'tool' | 'text' | 'fallback' };
  /** A router's first answer named no valid destination (`choice` is what it named, if anything); it is asked once more with the `valid` names. */
  'router.retry': { router: string; choice?: string; valid: string[] };
  /** An advisor of `main` answered; its answer goes into the main agent's message. */
  'advisor.completed': { main: string; advisor: string; output: string; usage: Usage };
  /** An advisor of `main` failed; by default its failure becomes a note in the main agent's message. */
  'advisor.failed': { main: string; advisor: string; error: string; code?: string };
  /** Every runnable of a broadcast answered (`answered` lists their names, in order). */
  'broadcast.completed': { name: string; answered: string[] };
  /** Step `step` (1-based) of a sequence answered, owned by `agent`. */
  'sequential.step': { name: string; step: number; agent: string };
  /** Iteration `iteration` of a reflect or orchestrate loop (`loop` is its name) starts. */
  'reflect.iteration.started': { loop: string; iteration: number; maxIterations: number };
  /** An iteration threw; it is retried after the back-off unless `consecutive` failures reached the error budget. */
  'reflect.iteration.failed': { loop: string; iteration: number; error: string; code?: string; consecutive: number };
  /** An orchestrate loop sent tasks to its workers (one entry per worker and task). */
  'reflect.dispatched': { loop: string; iteration: number; assignments: Array<{ worker: string; task: string }> };
  /** A worker of an orchestrate loop finished its task (or failed it, with `error`), after `durationMs` on the run's clock. */
  'reflect.worker.completed': { loop: string; iteration: number; worker: string; success: boolean; durationMs: number; error?: string };
  /** An iteration was scored (by the evaluator, or by the loop's own sentinels), with the trend of the scores so far and whether the goal is met. */
  'reflect.evaluated': { loop: string } & LoopEvaluation;
  /** The score fell below the previous one by more than the quality step: a hint to change model or agent. */
  'reflect.quality.degrading': { loop: string; iteration: number; score: number; previous: number; suggestion: string };
  /**
   * An adjustment the last evaluation calls for (a failed worker, a short
   * answer, a score drop), also put into the next planning prompt: its
   * `kind`, a `message` for the lead, and what it is about (the
   * `worker` and its `error`, the answer's `chars`, the `score` and the
   * `previous` one).
   */
  'reflect.adjustment': {
    loop: string;
    iteration: number;
    kind: 'worker-failed' | 'short-answer' | 'score-drop';
    message: string;
    worker?: string;
    error?: string;
    chars?: number;
    score?: number;
    previous?: number;
  };
  /** The answer is close to the previous ones (`similarity`, 0 to 1); the loop stalls if it goes on. */
  'reflect.stall.warning': { loop: string; iteration: number; similarity: number; consecutive: number };
  /** The loop stalls: `consecutive` answers in a row were too similar. It ends `completed` with reason `stalled`. */
  'reflect.stalled': { loop: string; iteration: number; consecutive: number };
  /** A loop ended, with its status (and why: `reason`), whether the goal was met, the iterations completed, a human summary and its duration on the run's clock. */
  'reflect.completed': { loop: string; status: LoopStatus; reason?: LoopReason; goalMet: boolean; iterations: number; summary: string; durationMs: number };
  /** Round `round` of a team starts, with the members still active. */
  'team.round.started': { team: string; round: number; members: string[] };
  /** A message was posted to a team's channel (a member's turn, an injected message, a note that a member left). */
  'team.message': { team: string; message: TeamMessage };
  /** A member voted to conclude (`vote: true`) or withdrew its vote. */
  'team.vote': { team: string; member: string; round: number; vote: boolean; reason?: string };
  /** A team ended (by consensus, its lead, max rounds, or `shouldContinue`) and the lead wrote the answer: the status and why, the rounds held, the answer and the whole transcript. */
  'team.concluded': { team: string; status: TeamStatus; reason?: TeamReason; rounds: number; output: string; transcript: TeamMessage[] };
  /**
   * An agent's conversation opened with its working memory `memory` (of
   * the `thread` or `resource` `id`): the value it was given in its system
   * prompt and its revision (0: never written). A replay gives the agent
   * this value again.
   */
  'memory.loaded': { memory: string; scope: 'thread' | 'resource'; id: string; agent: string; revision: number; value: unknown };
  /**
   * An agent changed its working memory `memory` (a JSON `patch` or a whole
   * new value, `replace`): the value written and its revision, after the
   * writes of other runs it was applied over.
   */
  'memory.updated': { memory: string; scope: 'thread' | 'resource'; id: string; agent: string; revision: number; value: unknown; op: 'patch' | 'replace' };
}

declare global {
  interface TroupeLayerEvents extends PatternEvents {}
}

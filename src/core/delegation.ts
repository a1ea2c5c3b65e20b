/**
 * Delegation hooks: what runs when one agent passes work to another — a
 * handoff, a router's route, an orchestrator's delegation, a call of an
 * agent offered as a tool. An input filter shapes what the receiver sees, a
 * hook before the delegation may change it or refuse it, and a per-target
 * flag says, at run time, whether a target is offered at all. Patterns ask
 * the kernel at each delegation point (`delegate.ts`); the hooks come from
 * the pattern's own `delegation` option and from every guarded runnable
 * around it (`withGuardrails(..., { delegation })`).
 * @module
 */
import type { RunContext } from './context.js';

/** The kind of delegation: a handoff, a route, an orchestrator's delegation, an agent called as a tool. */
export type DelegationKind = 'handoff' | 'route' | 'delegate' | 'agent-tool';

/** One message of what came before a delegation. */
export interface DelegationMessage {
  /** `user`: the request; `assistant`: an agent's answer or task; `tool`: a tool's result the sender saw. */
  role: 'user' | 'assistant' | 'tool';
  /** Who said it: the agent, or the tool. */
  name?: string;
  /** What was said. */
  content: string;
}

/** A delegation about to happen. */
export interface Delegation {
  /** Which kind. */
  readonly kind: DelegationKind;
  /** The delegating side: the agent (or runnable) that hands off, routes, delegates or calls. */
  readonly from: string;
  /** The receiving side (a worker, a destination, the tool's runnable). */
  readonly to: string;
  /** What the receiver will get, as the pattern built it (or as an earlier hook changed it). */
  readonly input: string;
  /**
   * What came before, as messages: the request, earlier answers (a chain's
   * stages, the sender's), the task, and the results of tools the sender
   * called (handoffs). A filter can build the receiver's input from it.
   */
  readonly history: readonly DelegationMessage[];
}

/** Where a delegation would go, for {@link DelegationHooks.enabled}. */
export interface DelegationTarget {
  readonly kind: DelegationKind;
  readonly from: string;
  readonly to: string;
}

/** What a hook before a delegation decides: go ahead (with another input), or refuse with a reason. */
export type DelegationDecision = { input: string } | { refuse: string };

/**
 * Hooks on delegations. Each is optional; the order at a delegation is:
 * `enabled`, then `inputFilter`, then `beforeDelegation`.
 */
export interface DelegationHooks {
  /**
   * Whether `target` is offered at all, evaluated at run time: a disabled
   * destination, worker or agent tool is left out of what the model is
   * offered, and a delegation to it is refused. Default: every target.
   */
  enabled?(target: DelegationTarget, ctx: RunContext): boolean | Promise<boolean>;
  /** Shape what the receiver sees: return its input (see `lastMessages` in `troupe/guardrails`). */
  inputFilter?(delegation: Delegation, ctx: RunContext): string | Promise<string>;
  /**
   * Before the delegation: return nothing to let it go ahead, `{ input }` to
   * change what the receiver gets, or `{ refuse: reason }` to refuse it. A
   * refusal goes back to the delegating model as a tool error when it
   * delegated through a tool (route, delegate, agent tool); a refused
   * handoff leaves the sender's answer as the answer.
   */
  beforeDelegation?(delegation: Delegation, ctx: RunContext): DelegationDecision | undefined | void | Promise<DelegationDecision | undefined | void>;
}

/**
 * The one abstraction: a runnable takes an input and produces an
 * {@link Outcome}. Agents, handoff chains, routers, teams, reflect loops and
 * plans are all runnables, so patterns nest without limit.
 * @module
 */
import type { Budget } from './budget.js';
import type { RunContext } from './context.js';
import type { Outcome } from './outcome.js';
import type { Usage } from './usage.js';
import { defined } from './defined.js';

export { outcomeStatuses, type Outcome, type OutcomeStatus } from './outcome.js';

/** Anything that takes an input and produces an {@link Outcome}. */
export interface Runnable<O extends Outcome = Outcome> {
  /** A name for logs, events and the op tree. */
  readonly name: string;
  /** The kind of op it opens (`agent`, `handoff`, `router`, ...). */
  readonly kind: string;
  /** Run with an explicit context. Use {@link defineRunnable} to build one. */
  run(input: string, ctx: RunContext): Promise<O>;
}

/** What {@link defineRunnable} needs. */
export interface RunnableSpec<O extends Outcome> {
  /** The runnable's name. */
  name: string;
  /** The op kind it opens. */
  kind: string;
  /** The agent this runnable speaks for, when it is one. */
  agent?: string;
  /** A budget for each run of it (see `Budget`): its op spends from it, on top of every enclosing budget. */
  budget?: Budget;
  /** The body; `ctx` is already the runnable's own child context. */
  run(input: string, ctx: RunContext): Promise<Omit<O, 'usage'> & { usage?: Usage }>;
}

/**
 * Build a runnable whose every run opens an op node: the depth guard is
 * checked, `op.started` / `op.completed` are emitted, and the outcome's
 * `usage` is the rolled-up usage of the node's subtree.
 *
 * @example
 * ```ts
 * const upper = defineRunnable({
 *   name: 'upper', kind: 'custom',
 *   async run(input) { return { output: input.toUpperCase(), agent: 'upper', status: 'completed' } },
 * });
 * ```
 */
export function defineRunnable<O extends Outcome = Outcome>(spec: RunnableSpec<O>): Runnable<O> {
  const { name, kind, agent, budget } = spec;
  return {
    name,
    kind,
    run(input: string, ctx: RunContext): Promise<O> {
      return ctx.enter({ kind, name, ...defined({ agent, budget }) }, (child) => spec.run(input, child));
    },
  };
}

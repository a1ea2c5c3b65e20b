/**
 * One attempt of one chunk: the job an executor runs and the input a chunk
 * runner receives. Its prompt, workspace, signal and context are built on
 * first use, so an attempt pays only for what it touches; once the attempt
 * settles the scheduler drops it, and its prompt with it.
 * @module
 */
import type { Budget, BudgetLimits } from '../../core/budget.js';
import type { BudgetEntry, RunContext } from '../../core/context.js';
import type { Usage } from '../../core/usage.js';
import type { Workspace } from '../../workspaces/types.js';
import type { ChunkAttemptResult, ChunkJob, ChunkJobData, ChunkToolCall } from './executor.js';
import type { PlanChunk } from '../model/plan.js';
import type { RoleConfig } from '../model/roles.js';
import type { ChunkRunInput, MergeConflict } from './types.js';
import { addressedTo, type MessageRecipient, type PlanMessage } from '../live/messages.js';

/** What every attempt of a plan shares: the plan's context, and how to build a prompt and run an attempt. */
export interface AttemptHost {
  readonly planId: string;
  /** The plan's op context. */
  readonly ctx: RunContext;
  readonly baseDir: string;
  /** The attempt's full prompt. */
  prompt(attempt: Attempt): string;
  /** The instructions added so far. */
  instructions(): readonly string[];
  /** New instructions (or messages) reached the running attempt. */
  delivered(attempt: Attempt, instructions: readonly string[], messages?: readonly PlanMessage[]): void;
  /** Every message posted in the plan so far. */
  messages(): readonly PlanMessage[];
  /** Post a message from the attempt's chunk. */
  post(attempt: Attempt, to: MessageRecipient, text: string): PlanMessage;
  /** Run the attempt here (in its workspace, when there is a strategy). */
  run(attempt: Attempt): Promise<string | ChunkAttemptResult>;
  /** The position of `chunk` in the plan. */
  position(chunk: PlanChunk): number;
  /** The budgets of the chunk at `position` (its own, its subtrees'), besides the plan's. */
  budgets(position: number): readonly Budget[];
}

/** One attempt of one chunk: the job an executor runs and the runner's input. */
export class Attempt implements ChunkJob, ChunkRunInput {
  readonly #host: AttemptHost;
  #prompt: string | undefined;
  #workspace: Workspace | undefined;
  #controller: AbortController | undefined;
  #reason: Error | undefined;
  #ctx: RunContext | undefined;
  #budgets: BudgetEntry[] = [];
  /** Instructions the attempt has seen (in its prompt, or taken since). */
  #seen = 0;
  /** Messages of the plan the attempt has looked through (in its prompt, or taken since). */
  #seenMessages = 0;
  /**
   * What the attempt spent, recorded as it goes by the default runner, so
   * that a failed attempt's usage and tool calls count too.
   */
  readonly spent: { usage?: Usage; toolCalls: ChunkToolCall[] } = { toolCalls: [] };

  constructor(
    host: AttemptHost,
    readonly chunk: PlanChunk,
    readonly role: RoleConfig,
    readonly attempt: number,
    /** The error of the attempt before, if any. */
    readonly previousError: string | undefined,
    /** The merge conflict the attempt before ran into, if that is why it failed. */
    readonly previousConflict?: MergeConflict,
  ) {
    this.#host = host;
  }

  get planId(): string {
    return this.#host.planId;
  }
  get runId(): string {
    return this.#host.ctx.runId;
  }
  get prompt(): string {
    if (this.#prompt === undefined) {
      this.#seen = this.#host.instructions().length;
      this.#seenMessages = this.#host.messages().length;
      this.#prompt = this.#host.prompt(this);
    }
    return this.#prompt;
  }
  takeInstructions(): string[] {
    void this.prompt;
    const all = this.#host.instructions();
    if (all.length <= this.#seen) return [];
    const fresh = all.slice(this.#seen);
    this.#seen = all.length;
    this.#host.delivered(this, fresh);
    return fresh;
  }
  takeMessages(): PlanMessage[] {
    void this.prompt;
    const all = this.#host.messages();
    if (all.length <= this.#seenMessages) return [];
    const fresh: PlanMessage[] = [];
    for (let i = this.#seenMessages; i < all.length; i++) if (addressedTo(all[i]!, this.chunk)) fresh.push(all[i]!);
    this.#seenMessages = all.length;
    if (fresh.length > 0) this.#host.delivered(this, [], fresh);
    return fresh;
  }
  post(to: MessageRecipient, text: string): PlanMessage {
    return this.#host.post(this, to, text);
  }
  get workspace(): Workspace {
    const baseDir = this.#host.baseDir;
    return (this.#workspace ??= { kind: 'none', path: baseDir, chunkId: String(this.chunk.sequenceIndex), baseDir });
  }
  set workspace(workspace: Workspace) {
    this.#workspace = workspace;
  }
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }
  get ctx(): RunContext {
    // Keyed by chunk, so a resumed plan finds the checkpoints of patterns a chunk runs.
    if (this.#ctx) return this.#ctx;
    let ctx = this.#host.ctx.withSignal(this.signal).withCheckpointScope(`chunk-${this.chunk.sequenceIndex}`);
    for (const budget of this.#host.budgets(this.#host.position(this.chunk))) {
      const entry = ctx.enterBudget(budget, `chunk-${this.chunk.sequenceIndex}`);
      this.#budgets.push(entry);
      ctx = entry.ctx;
    }
    return (this.#ctx = ctx);
  }

  /** The attempt settled: it spends from its budgets no more. */
  settle(): void {
    for (const entry of this.#budgets.splice(0)) entry.leave();
  }

  execute(): Promise<string | ChunkAttemptResult> {
    return this.#host.run(this);
  }

  recordUsage(usage: Partial<Usage>): void {
    this.ctx.recordUsage(usage);
  }

  /** Abort the attempt's signal (once). */
  abort(reason: Error): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  toJSON(): ChunkJobData {
    const { adapter, ...role } = this.role;
    return {
      runId: this.runId,
      planId: this.planId,
      chunk: this.chunk,
      prompt: this.prompt,
      role: typeof adapter === 'string' ? { ...role, adapter } : role,
      attempt: this.attempt,
      checkpointPath: this.#host.ctx.checkpointPath,
      ...this.#remaining(),
    };
  }

  /** What is left of every budget the attempt spends from, for a worker elsewhere to enforce. */
  #remaining(): { budget?: BudgetLimits } {
    const budget = this.ctx.budgets.remaining();
    return budget ? { budget } : {};
  }
}

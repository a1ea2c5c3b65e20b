/**
 * One attempt of one chunk: the job an executor runs and the input a chunk
 * runner receives. Its prompt, workspace, signal and context are built on
 * first use, so an attempt pays only for what it touches.
 * @module
 */
import type { RunContext } from '../core/context.js';
import type { Workspace } from '../workspaces/types.js';
import type { ChunkRunInput } from './execute.js';
import type { ChunkAttemptResult, ChunkJob } from './executor.js';
import type { PlanChunk } from './plan.js';
import type { RoleConfig } from './roles.js';

/** One attempt of one chunk: the job an executor runs and the runner's input. Its prompt, workspace and signal are built on first use. */
export class Attempt implements ChunkJob, ChunkRunInput {
  #prompt: string | undefined;
  #workspace: Workspace | undefined;
  #controller: AbortController | undefined;
  #reason: Error | undefined;
  #ctx: RunContext | undefined;
  constructor(
    readonly planId: string,
    readonly chunk: PlanChunk,
    readonly role: RoleConfig,
    readonly attempt: number,
    readonly parent: RunContext,
    readonly baseDir: string,
    readonly previousError: string | undefined,
    readonly build: (attempt: Attempt) => string,
    readonly run: (attempt: Attempt) => Promise<string | ChunkAttemptResult>,
  ) {}
  get prompt(): string {
    return (this.#prompt ??= this.build(this));
  }
  get workspace(): Workspace {
    return (this.#workspace ??= { kind: 'none', path: this.baseDir, chunkId: String(this.chunk.sequenceIndex), baseDir: this.baseDir });
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
    return (this.#ctx ??= this.parent.withSignal(this.signal));
  }
  execute(): Promise<string | ChunkAttemptResult> {
    return this.run(this);
  }
  abort(reason: Error): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}


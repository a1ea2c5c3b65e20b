/**
 * `CoordinationControl`: what an application changes in a coordination
 * while it runs — add a worker, shut one down, switch delegate mode — the
 * way an `AbortController` cancels: create it, pass it as `control`, call
 * it from anywhere.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { Agent } from '../patterns/agent.js';

/** What a running coordination does for its {@link CoordinationControl}. */
export interface ControlTarget {
  addWorker(worker: Agent): string;
  shutdownWorker(name: string, reason?: string): string;
  setDelegateMode(on: boolean): string;
}

/**
 * Changes a running coordination. Each method acts at once and returns
 * what happened (as the lead's tools do); it throws a `ConfigurationError`
 * (`wrong_phase`) when no coordination with this control is running.
 *
 * @example
 * ```ts
 * const control = new CoordinationControl();
 * const handle = startRun(coordinate({ lead, workers, stuck, control }), 'Ship it', { adapter });
 * control.addWorker(agent({ name: 'dana' }));   // one more worker, now
 * control.shutdownWorker('ben');               // ben stops after his current task
 * control.setDelegateMode(false);              // the lead may use its own tools from its next turn
 * ```
 */
export class CoordinationControl {
  #target: ControlTarget | undefined;

  /** True while a coordination with this control runs. */
  get running(): boolean {
    return this.#target !== undefined;
  }

  /** Start a new worker (its name must be new); it claims ready tasks like the others. */
  addWorker(worker: Agent): string {
    if (!worker || worker.kind !== 'agent') throw new ConfigurationError(`Expected \`worker\` to be an agent, got ${describeValue(worker)}`);
    return this.#running('addWorker').addWorker(worker);
  }

  /** Shut a worker down: it finishes its current task, then stops. */
  shutdownWorker(name: string, reason?: string): string {
    if (typeof name !== 'string' || name === '') throw new ConfigurationError(`Expected \`name\` to be a worker's name, got ${describeValue(name)}`);
    return this.#running('shutdownWorker').shutdownWorker(name, reason);
  }

  /** Switch delegate mode: on, the lead has only its coordination tools; off, its own tools too. Takes effect at the lead's next turn. */
  setDelegateMode(on: boolean): string {
    if (typeof on !== 'boolean') throw new ConfigurationError(`Expected \`on\` to be a boolean, got ${describeValue(on)}`);
    return this.#running('setDelegateMode').setDelegateMode(on);
  }

  /** @internal The coordination attaches itself while it runs. */
  attach(target: ControlTarget): () => void {
    if (this.#target) throw new ConfigurationError('This CoordinationControl already controls a running coordination; create one per run');
    this.#target = target;
    return () => {
      if (this.#target === target) this.#target = undefined;
    };
  }

  #running(method: string): ControlTarget {
    if (!this.#target) throw new ConfigurationError(`Cannot call ${method}(): no coordination with this control is running`, { code: 'wrong_phase', details: { method } });
    return this.#target;
  }
}

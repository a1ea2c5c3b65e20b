/**
 * `CoordinationControl`: the per-run control of a coordination — what an
 * application changes in it while it runs (add a worker, remove one,
 * switch delegate mode) and how it cancels it, the way an `AbortController`
 * cancels: create it, pass it to the run as `control`, call it from
 * anywhere. It is a `RunControl` (`cancel()`, `running`, `NotRunningError`).
 * @module
 */
import { NotRunningError, RunControl } from '../core/control.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import type { Agent } from '../patterns/agent.js';

/** What a running coordination does for its {@link CoordinationControl}. */
export interface ControlTarget {
  addWorker(worker: Agent): string;
  removeWorker(name: string, reason?: string): string;
  setDelegateMode(on: boolean): string;
}

/**
 * The control of a running coordination. Pass it to the run
 * (`run(coordinate({ ... }), task, { control })`): each method acts at once
 * and returns what happened (as the lead's tools do); a call while no
 * coordination with this control runs throws a `NotRunningError` (code
 * `not_running`). `cancel()` ends the run (status `cancelled`). One
 * control per run; in a run with several coordinations, the first that
 * starts while the control is free takes it.
 *
 * @example
 * ```ts
 * const control = new CoordinationControl();
 * const handle = startRun(coordinate({ lead, workers, stuck }), 'Ship it', { adapter, control });
 * control.addWorker(agent({ name: 'dana' }));   // one more worker, now
 * control.removeWorker('ben');                 // ben stops after his current task
 * control.setDelegateMode(false);              // the lead may use its own tools from its next turn
 * ```
 */
export class CoordinationControl extends RunControl {
  #target: ControlTarget | undefined;

  /** True while a coordination with this control runs (its run may be running before the coordination starts, and after it ends). */
  get controlsCoordination(): boolean {
    return this.#target !== undefined;
  }

  /** Start a new worker (its name must be new); it claims ready tasks like the others. */
  addWorker(worker: Agent): string {
    if (!worker || worker.kind !== 'agent') throw new ConfigurationError(`Expected \`worker\` to be an agent, got ${describeValue(worker)}`);
    return this.#coordination('addWorker').addWorker(worker);
  }

  /** Remove a worker: it finishes its current task, then stops. */
  removeWorker(name: string, reason?: string): string {
    if (typeof name !== 'string' || name === '') throw new ConfigurationError(`Expected \`name\` to be a worker's name, got ${describeValue(name)}`);
    return this.#coordination('removeWorker').removeWorker(name, reason);
  }

  /** Switch delegate mode: on, the lead has only its coordination tools; off, its own tools too. Takes effect at the lead's next turn. */
  setDelegateMode(on: boolean): string {
    if (typeof on !== 'boolean') throw new ConfigurationError(`Expected \`on\` to be a boolean, got ${describeValue(on)}`);
    return this.#coordination('setDelegateMode').setDelegateMode(on);
  }

  /** @internal The coordination attaches itself while it runs. */
  attach(target: ControlTarget): () => void {
    if (this.#target) throw new ConfigurationError('This CoordinationControl already controls a running coordination; create one per run');
    this.#target = target;
    return () => {
      if (this.#target === target) this.#target = undefined;
    };
  }

  #coordination(method: string): ControlTarget {
    if (!this.#target) throw new NotRunningError('CoordinationControl', method);
    return this.#target;
  }
}

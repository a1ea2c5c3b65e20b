/**
 * Per-run controls: an object an application creates, passes to one run
 * (`run(runnable, input, { control })`), and calls from anywhere while the
 * run goes on, the way an `AbortController` cancels. Runnables stay
 * stateless: two runs of one runnable each have their own control.
 *
 * {@link RunControl} is the base every control shares: `cancel()`,
 * `running`, and one {@link NotRunningError} for a call while no run is
 * attached. {@link LoopControl} adds `pause()` and `unpause()` for loops;
 * plans (`PlanControl`) and coordinations (`CoordinationControl`) add their
 * own changes.
 * @module
 */
import { CancelledError, ConfigurationError } from './errors.js';

/** A control was called while no run is attached to it (code `not_running`). */
export class NotRunningError extends ConfigurationError {
  constructor(control: string, method: string) {
    super(`${control}.${method}(): no run with this control is running (pass it as \`control\` to the run, and call it while the run goes on)`, {
      code: 'not_running',
      details: { control, method },
    });
  }
}

/** What an attached run gives its control: how to cancel it. */
export interface ControlledRun {
  /** Abort the run's signal with `reason`. */
  cancel(reason: Error): void;
}

/**
 * The base of every per-run control: cancel the run it is attached to, and
 * tell whether one is. A control is attached to one run at a time; a
 * second run that gets it while the first still runs is refused.
 */
export class RunControl {
  #run: ControlledRun | undefined;

  /** True while a run with this control goes on. */
  get running(): boolean {
    return this.#run !== undefined;
  }

  /**
   * End the run now: its signal aborts with a `CancelledError` (`reason` as
   * its message), in-flight model and tool calls get it, and the run ends
   * with status `cancelled`. Throws {@link NotRunningError} when no run is
   * attached.
   */
  cancel(reason = 'The run was cancelled'): void {
    this.attached('cancel').cancel(new CancelledError(reason));
  }

  /** The attached run, or {@link NotRunningError} naming `method`. */
  protected attached(method: string): ControlledRun {
    if (!this.#run) throw new NotRunningError(this.constructor.name, method);
    return this.#run;
  }

  /**
   * Attach a run: what the kernel (or a pattern) calls when the run
   * starts; call the returned function when it ends.
   * @internal
   */
  attachRun(run: ControlledRun): () => void {
    if (this.#run) {
      throw new ConfigurationError(`This ${this.constructor.name} is already attached to a running run; create one per run`, { code: 'invalid_option' });
    }
    this.#run = run;
    return () => {
      if (this.#run === run) this.#run = undefined;
    };
  }
}

/**
 * The control of a run with loops in it (`reflect`, `orchestrate`): pause
 * at the next step boundary, unpause, cancel.
 *
 * @example
 * ```ts
 * const control = new LoopControl();
 * const running = run(reflect({ worker, evaluator }), 'Write the release notes', { adapter, store, control });
 * control.pause();                        // the loop ends its current iteration, then the run ends `paused`
 * const paused = await running;           // status: 'paused'
 * control.unpause();
 * await resume(flow, paused.runId, { store, adapter, control }); // continues at the next iteration
 * ```
 */
export class LoopControl extends RunControl {
  #paused = false;

  /** Whether a pause is in force. */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Stop after the current step: every loop of the run ends its current
   * iteration and the run ends with status `paused` (resume it later).
   * Works before the run starts too: it then pauses at its first boundary.
   */
  pause(): void {
    this.#paused = true;
  }

  /** Lift a pause: the next run (or resume) with this control continues where the paused one stopped. */
  unpause(): void {
    this.#paused = false;
  }
}

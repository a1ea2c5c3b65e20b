/**
 * `PlanControl`: the per-run control of a plan — what an application
 * changes in a plan while it runs (add, cancel, split and rewire chunks,
 * post messages to its workers) and how it cancels it, the way an
 * `AbortController` cancels: create it, pass it as `control`, call it from
 * anywhere. It is a `RunControl` (`cancel()`, `running`, `NotRunningError`).
 * Also the `change_plan` tool that gives an orchestrator or a lead agent
 * the same power, and how a replay finds the changes a recorded run made.
 * @module
 */
import { z } from 'zod';
import { raceAbort } from '../../core/abort.js';
import { NotRunningError, RunControl } from '../../core/control.js';
import { ConfigurationError, StoreError } from '../../core/errors.js';
import type { TroupeEvent } from '../../core/events.js';
import { defineOptions, listOf, check } from '../../core/options.js';
import { defineTool, type ToolDefinition } from '../../core/tools.js';
import type { MessageRecipient, PlanMessage, PlanMessageInput } from './messages.js';
import type { Plan, PlanChunk } from '../model/plan.js';
import { parsePlanChange, PlanChangeError, planChangeRecordSchema, planChangeSchema, type PlanChange, type PlanChangeRecord, type PlanChangeSource } from './replan.js';

/** What a running plan does for its {@link PlanControl}. */
export interface PlanControlTarget {
  change(change: PlanChange, source: PlanChangeSource): PlanChangeRecord;
  post(message: PlanMessageInput): PlanMessage;
  plan(): Plan;
  messages(): readonly PlanMessage[];
  /** Resolves once everything logged so far (checkpoint entries and run-log events) is in the run's store. */
  saved(): Promise<void>;
}

/** Options of the {@link PlanControl} calls that change a running plan. */
export interface PlanControlCallOptions {
  /** Stops waiting for the store (the change stays applied): the promise rejects with the abort's reason. */
  signal?: AbortSignal;
}

/** Options of {@link PlanControl}. */
export interface PlanControlOptions {
  /**
   * Changes to apply again, each once as many chunks have completed as when
   * it was first applied: what a zero-model replay of a run whose plan was
   * changed while it ran needs (see {@link planChangesFromLog}).
   */
  replay?: readonly PlanChangeRecord[];
}

/** The description {@link PlanControl} checks its options against. */
const planControlOptions = defineOptions<PlanControlOptions>('PlanControl', {
  replay: listOf(check('a recorded plan change (see planChangesFromLog)', (v) => planChangeRecordSchema.safeParse(v).success)),
});

/**
 * The control of a running plan. Pass it to the run (`executePlan(plan, {
 * control })`, or `run(planRunnable(plan), task, { control })`): each change
 * is validated against the live graph and applied at once and entirely, or
 * refused at once — the call throws a {@link PlanChangeError} naming the
 * problem; a call while no plan with this control runs throws a
 * `NotRunningError` (code `not_running`). Every change is a `plan.changed`
 * event and an entry of the plan's checkpoint, so a resumed run continues
 * the changed plan. The calls that change the plan (and `post`) return a
 * promise that resolves once the change, and everything logged before it
 * (the chunks that completed, earlier changes and messages), is in the
 * run's store — for a file store, written and flushed to disk — so a
 * process that dies after it resolved resumes with the change; without a
 * store it resolves at once. It rejects with a `StoreError` when the store
 * could not write them (the change stays applied in this process).
 * `cancel()` ends the run (status `cancelled`). One control per run; in a
 * run with several plans, the first plan that starts while the control is
 * free takes it.
 *
 * @example
 * ```ts
 * const control = new PlanControl();
 * const running = executePlan(plan, { adapter, control });
 * await control.addChunks([{ sequenceIndex: 9, title: 'Docs', prompt: 'Document the new endpoint.', dependsOnIndexes: [2], complexity: 'Low', role: 'Generic' }]);
 * await control.splitChunk(3, [partA, partB]);      // 3 is replaced by two parts; its dependents wait for them
 * await control.rewire(4, [1, 9]);                  // 4 (not started) now waits for 1 and 9
 * await control.cancelChunk(5);                     // nothing may still depend on 5
 * await control.post({ to: { role: 'Testing' }, text: 'The API now returns 201.' });
 * const outcome = await running;
 * ```
 */
export class PlanControl extends RunControl {
  #target: PlanControlTarget | undefined;
  readonly #replay: readonly PlanChangeRecord[];

  constructor(options: PlanControlOptions = {}) {
    super();
    planControlOptions.check(options);
    this.#replay = options.replay ?? [];
  }

  /** True while a plan with this control runs (its run may be running before the plan starts, and after it ends). */
  get controlsPlan(): boolean {
    return this.#target !== undefined;
  }

  /** The changes a replay applies again (empty otherwise). */
  get replaying(): readonly PlanChangeRecord[] {
    return this.#replay;
  }

  /**
   * Apply one change (any mix of add, cancel, split and rewire) atomically,
   * at once; resolves with its record once it is in the run's store (see
   * the class). Throws a {@link PlanChangeError} when it is refused.
   */
  change(change: PlanChange, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    return this.changeAs(change, 'api', options);
  }

  /** @internal A change from a planning session or a model's tool (recorded with its source). */
  changeAs(change: PlanChange, source: PlanChangeSource, options: PlanControlCallOptions = {}): Promise<PlanChangeRecord> {
    return this.applyChange(change, source, options).saved;
  }

  /** @internal Apply a change at once: its record, and the promise that resolves with it once it is in the store. */
  applyChange(change: PlanChange, source: PlanChangeSource, options: PlanControlCallOptions = {}): { record: PlanChangeRecord; saved: Promise<PlanChangeRecord> } {
    const checked = parsePlanChange(change);
    const target = this.#plan('change');
    const record = target.change(checked, source);
    return { record, saved: saved(target, record, options) };
  }

  /** Add chunks (new ids; they may depend on any chunk of the plan). Resolves as {@link PlanControl.change} does. */
  addChunks(chunks: PlanChunk[], reason?: string, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    return this.change({ add: chunks, ...(reason === undefined ? {} : { reason }) }, options);
  }

  /**
   * Remove a chunk that has not finished (a running attempt is aborted);
   * refused while another chunk depends on it. Resolves as
   * {@link PlanControl.change} does.
   */
  cancelChunk(sequenceIndex: number, reason?: string, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    return this.change({ cancel: [sequenceIndex], ...(reason === undefined ? {} : { reason }) }, options);
  }

  /** Replace a chunk that has not finished by parts (see `PlanChange.split`). Resolves as {@link PlanControl.change} does. */
  splitChunk(sequenceIndex: number, parts: PlanChunk[], reason?: string, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    return this.change({ split: [{ chunk: sequenceIndex, parts }], ...(reason === undefined ? {} : { reason }) }, options);
  }

  /** Give a chunk that has not started a new list of dependencies. Resolves as {@link PlanControl.change} does. */
  rewire(sequenceIndex: number, dependsOn: number[], reason?: string, options?: PlanControlCallOptions): Promise<PlanChangeRecord> {
    return this.change({ rewire: [{ chunk: sequenceIndex, dependsOn }], ...(reason === undefined ? {} : { reason }) }, options);
  }

  /**
   * Post a message to a chunk, a role or everyone in the plan (from `api`
   * unless `from` says otherwise), at once; resolves with it once it is in
   * the run's store, as {@link PlanControl.change} does. Throws when it is
   * refused (an unknown recipient, a limit of the plan's messages).
   */
  post(message: PlanMessageInput, options: PlanControlCallOptions = {}): Promise<PlanMessage> {
    const target = this.#plan('post');
    return saved(target, target.post(message), options);
  }

  /** The plan as it is now (chunks removed by changes left out). */
  plan(): Plan {
    return this.#plan('plan').plan();
  }

  /** The messages posted so far. */
  messages(): readonly PlanMessage[] {
    return this.#plan('messages').messages();
  }

  /** @internal The plan attaches itself while it runs. */
  attach(target: PlanControlTarget): () => void {
    if (this.#target) throw new ConfigurationError('This PlanControl already controls a running plan; create one per run');
    this.#target = target;
    return () => {
      if (this.#target === target) this.#target = undefined;
    };
  }

  #plan(method: string): PlanControlTarget {
    if (!this.#target) throw new NotRunningError('PlanControl', method);
    return this.#target;
  }
}

/** `value` once everything `target` logged so far is in the store (or the wait was aborted). */
async function saved<T>(target: PlanControlTarget, value: T, options: PlanControlCallOptions): Promise<T> {
  await raceAbort(target.saved(), options.signal);
  return value;
}

/**
 * The changes a recorded run made to its plans (every `plan.changed`
 * event, in order; only those of `planId` when given), for
 * `new PlanControl({ replay })` in a zero-model replay.
 *
 * @example
 * ```ts
 * const log = await readRun('plan-1', { store });
 * const control = new PlanControl({ replay: planChangesFromLog(log) });
 * await replayRun(planRunnable(plan), log, { control });
 * ```
 */
export function planChangesFromLog(log: { events: readonly TroupeEvent[] }, planId?: string): PlanChangeRecord[] {
  const out: PlanChangeRecord[] = [];
  for (const event of log.events) {
    if (event.type !== 'plan.changed') continue;
    const e = event as TroupeEvent<'plan.changed'>;
    if (planId !== undefined && e.planId !== planId) continue;
    out.push({ id: e.id, change: e.change, source: e.source, after: e.after, time: e.time });
  }
  return out;
}

/**
 * The `change_plan` tool: an orchestrator or a lead agent changes the
 * running plan of `control` (the same validation as the API; a refused
 * change is the tool's answer, naming the problem).
 */
export function planChangeTool(control: PlanControl): ToolDefinition<PlanChange> {
  return defineTool<PlanChange>({
    name: 'change_plan',
    description:
      'Change the running plan at once: add chunks, cancel chunks that have not finished, split a chunk into parts, or give a chunk that has not started new dependencies. The whole change applies or nothing does.',
    parameters: planChangeSchema as unknown as z.ZodType<PlanChange>,
    execute: async (change, { signal }) => {
      let durable: Promise<PlanChangeRecord>;
      try {
        durable = control.changeAs(change, 'tool', { signal });
      } catch (error) {
        if (error instanceof PlanChangeError) return `Refused (${error.problem}): ${error.message}`;
        if (error instanceof NotRunningError) return `Refused (not_running): ${error.message}`;
        throw error;
      }
      const plan = control.plan();
      const applied = `The plan now has ${plan.chunks.length} chunks: ${plan.chunks.map((c) => `${c.sequenceIndex} ${c.title}${c.dependsOnIndexes.length ? ` (after ${c.dependsOnIndexes.join(', ')})` : ''}`).join('; ')}.`;
      try {
        const record = await durable;
        return `Change ${record.id} applied. ${applied}`;
      } catch (error) {
        if (error instanceof StoreError) return `Change applied, but it could not be saved (${error.message}). ${applied}`;
        throw error;
      }
    },
  });
}

/** A recipient for `post`. */
export type { MessageRecipient };

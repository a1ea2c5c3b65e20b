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
import { NotRunningError, RunControl } from '../../core/control.js';
import { ConfigurationError } from '../../core/errors.js';
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
 * refused with a {@link PlanChangeError} naming the problem; a call while no
 * plan with this control runs throws a `NotRunningError` (code
 * `not_running`). Every change is a `plan.changed` event and an entry of the
 * plan's checkpoint, so a resumed run continues the changed plan.
 * `cancel()` ends the run (status `cancelled`). One control per run; in a
 * run with several plans, the first plan that starts while the control is
 * free takes it.
 *
 * @example
 * ```ts
 * const control = new PlanControl();
 * const running = executePlan(plan, { adapter, control });
 * control.addChunks([{ sequenceIndex: 9, title: 'Docs', prompt: 'Document the new endpoint.', dependsOnIndexes: [2], complexity: 'Low', role: 'Generic' }]);
 * control.splitChunk(3, [partA, partB]);      // 3 is replaced by two parts; its dependents wait for them
 * control.rewire(4, [1, 9]);                  // 4 (not started) now waits for 1 and 9
 * control.cancelChunk(5);                     // nothing may still depend on 5
 * control.post({ to: { role: 'Testing' }, text: 'The API now returns 201.' });
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

  /** Apply one change (any mix of add, cancel, split and rewire) atomically; returns its record. */
  change(change: PlanChange): PlanChangeRecord {
    return this.changeAs(change, 'api');
  }

  /** @internal A change from a planning session or a model's tool (recorded with its source). */
  changeAs(change: PlanChange, source: PlanChangeSource): PlanChangeRecord {
    const checked = parsePlanChange(change);
    return this.#plan('change').change(checked, source);
  }

  /** Add chunks (new ids; they may depend on any chunk of the plan). */
  addChunks(chunks: PlanChunk[], reason?: string): PlanChangeRecord {
    return this.change({ add: chunks, ...(reason === undefined ? {} : { reason }) });
  }

  /** Remove a chunk that has not finished (a running attempt is aborted); refused while another chunk depends on it. */
  cancelChunk(sequenceIndex: number, reason?: string): PlanChangeRecord {
    return this.change({ cancel: [sequenceIndex], ...(reason === undefined ? {} : { reason }) });
  }

  /** Replace a chunk that has not finished by parts (see `PlanChange.split`). */
  splitChunk(sequenceIndex: number, parts: PlanChunk[], reason?: string): PlanChangeRecord {
    return this.change({ split: [{ chunk: sequenceIndex, parts }], ...(reason === undefined ? {} : { reason }) });
  }

  /** Give a chunk that has not started a new list of dependencies. */
  rewire(sequenceIndex: number, dependsOn: number[], reason?: string): PlanChangeRecord {
    return this.change({ rewire: [{ chunk: sequenceIndex, dependsOn }], ...(reason === undefined ? {} : { reason }) });
  }

  /** Post a message to a chunk, a role or everyone in the plan (from `api` unless `from` says otherwise). */
  post(message: PlanMessageInput): PlanMessage {
    return this.#plan('post').post(message);
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
    execute: (change) => {
      try {
        const record = control.changeAs(change, 'tool');
        const plan = control.plan();
        return `Change ${record.id} applied. The plan now has ${plan.chunks.length} chunks: ${plan.chunks.map((c) => `${c.sequenceIndex} ${c.title}${c.dependsOnIndexes.length ? ` (after ${c.dependsOnIndexes.join(', ')})` : ''}`).join('; ')}.`;
      } catch (error) {
        if (error instanceof PlanChangeError) return `Refused (${error.problem}): ${error.message}`;
        if (error instanceof NotRunningError) return `Refused (not_running): ${error.message}`;
        throw error;
      }
    },
  });
}

/** A recipient for `post`. */
export type { MessageRecipient };

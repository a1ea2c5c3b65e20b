/**
 * Budgets: limits on tokens, cost, model calls and wall-clock time, set on
 * a run or on any op inside it. A budget is a meter on the op tree: every
 * model turn recorded in an op adds its usage to each budget of the op's
 * chain (its own and every enclosing one) exactly once, so nested agents,
 * tools that run agents and remote work count everywhere they should.
 * The tool loop reserves the call in the chain before each model call and
 * settles it after: calls in flight at once count against the limits
 * together, so a limit holds however many run in parallel. A call that
 * cannot reserve (it would overrun), a limit reached or a deadline passed
 * ends the op with a {@link BudgetExhaustedError} (status
 * `budget-exhausted`).
 * @module
 */
import type { Clock } from './clock.js';
import { ConfigurationError, TroupeError, describeValue, isTroupeError } from './errors.js';
import type { Usage } from './usage.js';

/** Every limit a budget can set, in one list. */
export const budgetLimitKeys = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'modelCalls', 'wallClockMs'] as const;

/** One limit of a budget: one of {@link budgetLimitKeys}. */
export type BudgetLimitKey = (typeof budgetLimitKeys)[number];

/**
 * Limits of a budget; each left out is no limit. Plain JSON, so a budget
 * travels with remote work (`ChunkJobData.budget`).
 */
export interface BudgetLimits {
  /** Prompt tokens of every model call, summed. */
  inputTokens?: number;
  /** Completion tokens, summed. */
  outputTokens?: number;
  /** Prompt and completion tokens together. */
  totalTokens?: number;
  /** Cost in US dollars, as the adapters report it. */
  costUsd?: number;
  /** Model calls (turns). */
  modelCalls?: number;
  /** Wall-clock time on the run's clock, from the first op that enters the budget. */
  wallClockMs?: number;
}

/**
 * A budget: limits, a name for events and the report, and whether it is
 * shared. A budget given to one op (`agent({ budget })`, `withBudget`,
 * `ctx.enter({ budget })`) gets a fresh meter each time the op runs; a
 * `shared` budget has one meter per run for every op entered with this same
 * object (a subtree of plan chunks, a team's members), so they spend
 * from one pot.
 *
 * @example
 * ```ts
 * const research: Budget = { name: 'research', totalTokens: 20_000, costUsd: 0.5, shared: true };
 * ```
 */
export interface Budget extends BudgetLimits {
  /** Shown in events, errors and the report. Default: the op's kind and name (`agent:writer`). */
  name?: string;
  /** One meter per run for every op entered with this object. Default: false (one per op run). */
  shared?: boolean;
}

/** What a budget has spent, by limit. */
export type BudgetSpend = Record<BudgetLimitKey, number>;

/** Why a budget ended an op. */
export type BudgetExhaustion = 'would-overrun' | 'reached' | 'deadline';

/** What a {@link BudgetExhaustedError} says about the budget. */
export interface BudgetExhaustedInfo {
  /** The budget's id in the run (`budget-1`, ...). */
  budgetId: string;
  /** The budget's name. */
  budget: string;
  /** The limit that ran out. */
  limit: BudgetLimitKey;
  /** Its value. */
  max: number;
  /** What was spent of it (for `would-overrun`, with the refused call's estimate). */
  spent: number;
  /** Why. */
  reason: BudgetExhaustion;
}

/**
 * A budget ran out. The op that hit it ends with status `budget-exhausted`
 * (its node in the op tree says so) and this error, whose `partial` is the
 * answer so far when there was one: the last text of the agent that was
 * stopped. Patterns treat it like any failed member; loops and plans end
 * with their own outcome (status `budget-exhausted`, what they did so far),
 * and {@link withBudget}'s op resolves with the partial answer.
 */
export class BudgetExhaustedError extends TroupeError {
  /** What ran out, where. */
  readonly info: BudgetExhaustedInfo;
  /** The answer so far, when the stopped op had one. */
  readonly partial: string | undefined;

  constructor(info: BudgetExhaustedInfo, partial?: string) {
    const what = info.reason === 'would-overrun' ? 'the next model call would pass it' : info.reason === 'deadline' ? 'its time ran out' : 'the limit was reached';
    super('budget_exhausted', `Budget "${info.budget}" exhausted: ${what} (${info.limit} ${format(info.spent)} of ${format(info.max)})`, {
      details: { ...info },
    });
    this.info = info;
    this.partial = partial;
  }

  /** The same exhaustion carrying `partial` (the error of a budget is shared by every op it stops, so it is never changed). */
  withPartial(partial: string | undefined): BudgetExhaustedError {
    if (partial === undefined || partial === '' || this.partial !== undefined) return this;
    return new BudgetExhaustedError(this.info, partial);
  }
}

function format(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(4);
}

/**
 * The {@link BudgetExhaustedError} behind `error`, or behind the abort of `signal`; undefined when neither is one.
 * @internal
 */
export function budgetExhaustion(error: unknown, signal?: AbortSignal): BudgetExhaustedError | undefined {
  if (error instanceof BudgetExhaustedError) return error;
  if (signal?.aborted && signal.reason instanceof BudgetExhaustedError) return signal.reason;
  return undefined;
}

/** True when `error` is a {@link BudgetExhaustedError}. */
export function isBudgetExhausted(error: unknown): error is BudgetExhaustedError {
  return isTroupeError(error, 'budget_exhausted') && error instanceof BudgetExhaustedError;
}

/**
 * Check a budget given as an option: an object whose limits are positive
 * finite numbers (model calls an integer). Returns it unchanged.
 */
export function validateBudget<B extends Budget | BudgetLimits | undefined>(option: string, budget: B): B {
  if (budget === undefined) return budget;
  if (budget === null || typeof budget !== 'object' || Array.isArray(budget)) {
    throw new ConfigurationError(`Expected \`${option}\` to be an object of limits, got ${describeValue(budget)}`);
  }
  for (const [key, value] of Object.entries(budget)) {
    if (key === 'name') {
      if (typeof value !== 'string' || value === '') throw new ConfigurationError(`Expected \`${option}.name\` to be a non-empty string, got ${describeValue(value)}`);
      continue;
    }
    if (key === 'shared') {
      if (typeof value !== 'boolean') throw new ConfigurationError(`Expected \`${option}.shared\` to be a boolean, got ${describeValue(value)}`);
      continue;
    }
    if (!(budgetLimitKeys as readonly string[]).includes(key)) {
      throw new ConfigurationError(`Unknown limit \`${option}.${key}\` (limits: ${budgetLimitKeys.join(', ')})`);
    }
    if (value === undefined) continue;
    const integer = key === 'modelCalls';
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value)))) {
      throw new ConfigurationError(`Expected \`${option}.${key}\` to be a positive ${integer ? 'integer' : 'number'}, got ${describeValue(value)}`);
    }
  }
  return budget;
}

/** The limits of a budget, without its name and flag. */
export function budgetLimits(budget: Budget | BudgetLimits): BudgetLimits {
  const out: BudgetLimits = {};
  for (const key of budgetLimitKeys) if (budget[key] !== undefined) out[key] = budget[key];
  return out;
}

/** A spend of zero. */
export function emptySpend(): BudgetSpend {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0, modelCalls: 0, wallClockMs: 0 };
}

/**
 * What a meter reports to its run (as events).
 * @internal
 */
export interface BudgetMeterHooks {
  /** The budget ran out: the first exhaustion, once. */
  exhausted(meter: BudgetMeter, error: BudgetExhaustedError): void;
}

/**
 * The meter of one budget in one run: what it has spent, what the calls in
 * flight have reserved, and a signal that aborts (with the
 * {@link BudgetExhaustedError}) once it ran out, so that every op spending
 * from it stops. A limit reached takes effect at once for new calls (none
 * can reserve) and aborts the signal once the calls in flight have settled
 * (they were admitted, so they are paid for: their answers are kept); a
 * deadline aborts it at once.
 * @internal
 */
export class BudgetMeter {
  /** Unique in the run (`budget-1`, ...). */
  readonly id: string;
  /** The budget's name. */
  readonly name: string;
  /** Its limits. */
  readonly limits: BudgetLimits;
  /** What it has spent so far (wall-clock time up to the last op that left it, or now while one runs). */
  readonly spent: BudgetSpend = emptySpend();
  readonly #clock: Clock;
  readonly #hooks: BudgetMeterHooks;
  readonly #controller = new AbortController();
  /** What the calls in flight reserved: one call each, and their estimated prompt tokens. */
  readonly #reserved = { modelCalls: 0, inputTokens: 0 };
  /** The error it ran out with (the signal aborts with it once no call is in flight). */
  #error: BudgetExhaustedError | undefined;
  #startedAt: number | undefined;
  #active = 0;
  #cancelTimer: (() => void) | undefined;

  constructor(id: string, name: string, limits: BudgetLimits, clock: Clock, hooks: BudgetMeterHooks) {
    this.id = id;
    this.name = name;
    this.limits = limits;
    this.#clock = clock;
    this.#hooks = hooks;
  }

  /** Aborts with the {@link BudgetExhaustedError} once the budget is exhausted. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  /** The error it ran out with, once it has (no call can reserve from then on). */
  get exhausted(): BudgetExhaustedError | undefined {
    return this.#error;
  }


  /** An op starts spending: the first one starts the clock; the deadline timer runs while any op is in. Returns `leave`. */
  enter(): () => void {
    const now = this.#clock.now();
    this.#startedAt ??= now;
    this.#active++;
    const deadline = this.limits.wallClockMs;
    if (deadline !== undefined && this.#cancelTimer === undefined && this.#error === undefined) {
      const left = this.#startedAt + deadline - now;
      if (left <= 0) this.#deadline();
      else this.#cancelTimer = this.#clock.setTimer(() => this.#deadline(), left);
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#active--;
      this.#tick();
      if (this.#active === 0) {
        this.#cancelTimer?.();
        this.#cancelTimer = undefined;
      }
    };
  }

  /** Add one turn's usage (called once per turn for each budget of the op's chain). */
  add(usage: Partial<Usage>): void {
    const s = this.spent;
    const input = usage.inputTokens ?? 0;
    const output = usage.outputTokens ?? 0;
    s.inputTokens += input;
    s.outputTokens += output;
    s.totalTokens += input + output;
    s.costUsd += usage.costUsd ?? 0;
    s.modelCalls += usage.turns ?? 1;
    this.#tick();
    for (const key of budgetLimitKeys) {
      const max = this.limits[key];
      // Model calls are counted before each call (a call past the limit never starts); time has its timer.
      if (key === 'wallClockMs' || key === 'modelCalls' || max === undefined || s[key] < max) continue;
      this.#exhaust({ limit: key, max, spent: s[key], reason: 'reached' });
      return;
    }
  }

  /**
   * Reserve one model call of about `inputTokens` prompt tokens: returns the
   * function that releases the reservation once the call settled (call it
   * before adding the call's usage), or the error to refuse the call with:
   * the budget ran out, or the call would overrun it counting the calls in
   * flight.
   */
  reserve(inputTokens: number): (() => void) | BudgetExhaustedError {
    const refused = this.check(inputTokens);
    if (refused) return refused;
    const r = this.#reserved;
    r.modelCalls++;
    r.inputTokens += inputTokens;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      r.modelCalls--;
      r.inputTokens -= inputTokens;
      if (this.#error !== undefined && r.modelCalls === 0) this.#stop();
    };
  }

  /**
   * The error a model call of about `inputTokens` prompt tokens would be
   * refused with now (the budget ran out, or the call would overrun it
   * counting the calls in flight), reserving nothing; undefined when it fits.
   */
  check(inputTokens: number): BudgetExhaustedError | undefined {
    if (this.#error) return this.#error;
    const s = this.spent;
    const r = this.#reserved;
    // Calls only ever add up: once the calls made and in flight reach the limit, no call fits again. The budget is spent.
    const calls = this.limits.modelCalls;
    if (calls !== undefined && s.modelCalls + r.modelCalls >= calls) return this.#exhaust({ limit: 'modelCalls', max: calls, spent: s.modelCalls + r.modelCalls, reason: 'reached' });
    const now: Partial<BudgetSpend> = { inputTokens: s.inputTokens + r.inputTokens, totalTokens: s.totalTokens + r.inputTokens };
    const next: Partial<BudgetSpend> = {
      modelCalls: s.modelCalls + r.modelCalls + 1,
      inputTokens: s.inputTokens + r.inputTokens + inputTokens,
      totalTokens: s.totalTokens + r.inputTokens + inputTokens,
    };
    for (const key of ['inputTokens', 'totalTokens'] as const) {
      const max = this.limits[key];
      // `spent` is what is spent and reserved now, not what the refused call would have made it.
      if (max !== undefined && next[key]! > max) return this.#exhaust({ limit: key, max, spent: now[key]!, reason: 'would-overrun' }, false);
    }
    return undefined;
  }

  /** What is left of each limit (never below zero); undefined when it sets none. */
  remaining(): BudgetLimits | undefined {
    this.#tick();
    let out: BudgetLimits | undefined;
    for (const key of budgetLimitKeys) {
      const max = this.limits[key];
      if (max === undefined) continue;
      (out ??= {})[key] = Math.max(0, max - this.spent[key]);
    }
    return out;
  }

  #tick(): void {
    if (this.#startedAt !== undefined && !this.signal.aborted) this.spent.wallClockMs = this.#clock.now() - this.#startedAt;
  }

  #deadline(): void {
    this.#cancelTimer = undefined;
    this.#tick();
    const max = this.limits.wallClockMs!;
    this.#exhaust({ limit: 'wallClockMs', max, spent: Math.max(this.spent.wallClockMs, max), reason: 'deadline' });
    // Time is up: the calls in flight are abandoned too.
    this.#stop();
  }

  /**
   * Build the error; `stop` (a limit reached, a deadline) also ends the
   * budget: no call reserves from it any more, and its signal aborts (so
   * every op spending from it ends) once no call is in flight. A call that
   * would overrun only stops the op that asked: smaller calls may still fit.
   */
  #exhaust(what: Omit<BudgetExhaustedInfo, 'budgetId' | 'budget'>, stop = true): BudgetExhaustedError {
    const error = new BudgetExhaustedError({ budgetId: this.id, budget: this.name, ...what });
    if (!stop) return error;
    if (this.#error) return this.#error;
    this.#error = error;
    this.#hooks.exhausted(this, error);
    if (this.#reserved.modelCalls === 0) this.#stop();
    return error;
  }

  /** Abort the signal with the error it ran out with (once). */
  #stop(): void {
    if (this.signal.aborted || this.#error === undefined) return;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#controller.abort(this.#error);
  }
}

/** What {@link BudgetChain.reserve} returns for a chain without budgets. */
const releaseNothing = (): void => undefined;

/**
 * The budgets an op spends from: its own and every enclosing one, each
 * once. Contexts carry one; `ctx.enter({ budget })` extends it.
 * @internal
 */
export class BudgetChain {
  /** The chain of a context without budgets. */
  static readonly empty = new BudgetChain([]);
  /** Outermost first. */
  readonly meters: readonly BudgetMeter[];

  private constructor(meters: readonly BudgetMeter[]) {
    this.meters = meters;
  }

  /** The chain with `meter` added (unchanged when it is already in it, so a shared budget counts once). */
  with(meter: BudgetMeter): BudgetChain {
    return this.meters.includes(meter) ? this : new BudgetChain([...this.meters, meter]);
  }

  /** Add one turn's usage to every budget of the chain. */
  record(usage: Partial<Usage>): void {
    for (const m of this.meters) m.add(usage);
  }

  /**
   * Reserve one model call of about `inputTokens` prompt tokens in every
   * budget of the chain; returns the function that releases it once the
   * call settled. Throws (reserving nothing) when a budget is exhausted or
   * the call would overrun one, counting the calls in flight.
   */
  reserve(inputTokens: number): () => void {
    if (this.meters.length === 0) return releaseNothing;
    const releases: Array<() => void> = [];
    for (const m of this.meters) {
      const reserved = m.reserve(inputTokens);
      if (typeof reserved === 'function') {
        releases.push(reserved);
        continue;
      }
      for (const release of releases) release();
      throw reserved;
    }
    return () => {
      for (const release of releases) release();
    };
  }

  /** The error a model call of about `inputTokens` prompt tokens would be refused with now by a budget of the chain, reserving nothing; undefined when it fits. */
  refusal(inputTokens: number): BudgetExhaustedError | undefined {
    for (const m of this.meters) {
      const error = m.check(inputTokens);
      if (error) return error;
    }
    return undefined;
  }

  /**
   * The tightest remaining limit of every key over the chain, for work
   * that runs elsewhere (a remote worker enforces it there); undefined when
   * no budget applies.
   */
  remaining(): BudgetLimits | undefined {
    let out: BudgetLimits | undefined;
    for (const m of this.meters) {
      const left = m.remaining();
      if (!left) continue;
      out ??= {};
      for (const key of budgetLimitKeys) {
        const v = left[key];
        if (v !== undefined) out[key] = Math.min(out[key] ?? Infinity, v);
      }
    }
    return out;
  }
}

/**
 * The meters of one run: shared budgets by object, and ids.
 * @internal
 */
export class BudgetRegistry {
  readonly #shared = new Map<Budget, BudgetMeter>();
  readonly #clock: Clock;
  readonly #hooks: BudgetMeterHooks;
  #next = 1;

  constructor(clock: Clock, hooks: BudgetMeterHooks) {
    this.#clock = clock;
    this.#hooks = hooks;
  }

  /** The meter for `budget` in an op named `fallbackName`: the shared one when it exists, else a new one (`created`). */
  meter(budget: Budget, fallbackName: string): { meter: BudgetMeter; created: boolean } {
    const existing = budget.shared === true ? this.#shared.get(budget) : undefined;
    if (existing) return { meter: existing, created: false };
    const meter = new BudgetMeter(`budget-${this.#next++}`, budget.name ?? fallbackName, budgetLimits(budget), this.#clock, this.#hooks);
    if (budget.shared === true) this.#shared.set(budget, meter);
    return { meter, created: true };
  }
}

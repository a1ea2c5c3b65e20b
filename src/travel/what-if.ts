/**
 * What-if replay: run a recorded run again with something changed (an
 * agent's prompt or model, a tool's result, or the runnable itself), with
 * every unchanged model call answered from the recording and only the
 * calls the change affects sent to the model; then compare the two runs.
 * `replayRun` is the same with nothing changed and no model at all.
 * @module
 */
import { RunControl } from '../core/control.js';
import { randomUUID } from 'node:crypto';
import type { ModelAdapter } from '../core/adapter.js';
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, describeValue, errorMessage, isTroupeError } from '../core/errors.js';
import type { RunParent, TroupeEvent } from '../core/events.js';
import { memoryStore } from '../core/memory-store.js';
import { launch, type RunResult, type RunThread } from '../core/run.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import type { Store } from '../core/store.js';
import { isEvent } from '../core/run-log-reader.js';
import { loggedOutcome } from '../core/outcome.js';
import { abortSignal, adapter as adapterCheck, anything, check, clock as clockCheck, defineOptions, listOf, nonEmptyString, nonNegativeNumber, object, store as storeCheck, string } from '../core/options.js';
import { turnRecordsFromEvents } from '../core/turn-record.js';
import { addUsage, emptyUsage, type Usage } from '../core/usage.js';
import { defined } from '../core/defined.js';
import '../patterns/events.js';
import { listCheckpoints, type RunEvents } from './checkpoints.js';
import { planFork, startRecord, writeSeed } from './fork.js';
import { Recording, adapterOn, describeChange, type WhatIfCall, type WhatIfChange, type WhatIfSource } from './what-if-adapter.js';

/** A scorer of a run: a number from its output and events (higher is better). */
export type RunScorer = (run: { output: string; events: readonly TroupeEvent[] }) => number | Promise<number>;

/** Options of {@link whatIf}. */
export interface WhatIfOptions {
  /** Where calls the change affects go (the model). Without one, any such call fails the what-if run. */
  adapter?: ModelAdapter;
  /** The same, for agents that name an adapter. */
  adapters?: Record<string, ModelAdapter>;
  /** What to change. The runnable itself may be changed too (an edited agent file): calls it makes differently go to the model. */
  changes?: readonly WhatIfChange[];
  /** Scorers besides the evaluators' scores the runs logged (`reflect.evaluated`), by name. */
  scorers?: Record<string, RunScorer>;
  /** A score that falls by more than this is a regression. Default: 0. */
  tolerance?: number;
  /** Log the what-if run here (its log starts with a `run.forked` record naming the recorded run). Default: not logged. */
  store?: Store;
  /** The what-if run's id. Default: a random UUID. */
  runId?: string;
  /** The clock of the what-if run. Default: the real clock. */
  clock?: Clock;
  /** Cancels the what-if run. */
  signal?: AbortSignal;
}

const whatIfOptions = defineOptions<WhatIfOptions>('whatIf', {
  adapter: adapterCheck,
  adapters: object,
  changes: listOf(anything),
  scorers: object,
  tolerance: nonNegativeNumber,
  store: storeCheck,
  runId: nonEmptyString,
  clock: clockCheck,
  signal: abortSignal,
});

/** One side of a what-if comparison. */
export interface RunSummary {
  output: string;
  /** The run's status, `failed` when it failed. */
  status: string;
  /** Why it ended so, when its runnable says (`goal-met`, `consensus`, ...). */
  reason?: string;
  usage: Usage;
  /** Scores by scorer: each evaluating loop's last score (by loop name), then the `scorers`. */
  scores: Record<string, number>;
  /** Each agent's last answer. */
  agents: Record<string, string>;
  /** Why it failed. */
  error?: string;
}

/** A score of both runs. */
export interface ScoreChange {
  scorer: string;
  recorded?: number;
  whatIf?: number;
  /** `whatIf - recorded`, when both have it. */
  delta?: number;
  /** It fell by more than the tolerance (or the what-if run lost it). */
  dropped: boolean;
}

/** The two runs side by side: see {@link whatIf} and `formatWhatIf`. */
export interface WhatIfReport {
  /** The recorded run's id, when known. */
  recordedRunId?: string;
  /** The what-if run's id. */
  runId: string;
  /** What was changed, one line each. */
  changes: string[];
  recorded: RunSummary;
  whatIf: RunSummary;
  /** Every model call of the what-if run, in the order answered. */
  calls: WhatIfCall[];
  /** The calls by where their answer came from. */
  counts: Record<WhatIfSource, number>;
  /** What the model calls of the what-if run cost (`live` and `context` calls). */
  liveUsage: Usage;
  /** Agents with at least one call sent to the model. */
  liveAgents: string[];
  /** Agents whose last answer differs (or that answered in one run only). */
  changedAgents: string[];
  outputChanged: boolean;
  scores: ScoreChange[];
  /** A score dropped, or the what-if run failed where the recorded one did not. */
  regressed: boolean;
}

/**
 * Run `runnable` again on the input of `recorded` (a run log, an exported
 * run, or `{ events }`) with `changes`: every model call whose input is
 * unchanged — same agent, model, system prompt, tools and inputs so far in
 * its session — is answered from the recording, and only the calls the
 * change affects go to `options.adapter`. A recorded fork is seeded as it
 * was and continued. The report compares the two runs: outputs, scores,
 * usage and cost, and which calls were new. A failing what-if run is
 * reported (status `failed`), not thrown.
 *
 * @example
 * ```ts
 * const recorded = await readRun('review-1', { store });
 * const report = await whatIf(review, recorded, { adapter, changes: [{ agent: 'critic', prompt: 'Be specific.' }] });
 * console.log(formatWhatIf(report));
 * if (report.regressed) process.exitCode = 1;
 * ```
 */
export async function whatIf(runnable: Runnable, recorded: RunEvents, options: WhatIfOptions = {}): Promise<WhatIfReport> {
  whatIfOptions.check(options);
  const tolerance = options.tolerance ?? 0;
  const replay = await replayWith(runnable, recorded, options, options.changes ?? []);
  const recordedEvents = recorded.events.filter(isEvent);
  const before = await summarise(recordedEvents, options.scorers);
  const after = await summarise(replay.events, options.scorers, replay.error);
  return compare(recorded, replay, before, after, tolerance);
}

/** Options of {@link replayRun}. */
export interface ReplayRunOptions {
  /** Adapter names the runnable's agents use (each answered from the recording too). */
  adapterNames?: readonly string[];
  /** Log the replay here. Default: not logged. */
  store?: Store;
  /** The replay's run id. Default: a random UUID. */
  runId?: string;
  clock?: Clock;
  signal?: AbortSignal;
  /** The replay's control (`run(..., { control })`): a `PlanControl({ replay })` applies the plan changes the recorded run made. */
  control?: RunControl;
}

const replayRunOptions = defineOptions<ReplayRunOptions>('replayRun', {
  adapterNames: listOf(string),
  store: storeCheck,
  runId: nonEmptyString,
  clock: clockCheck,
  signal: abortSignal,
  control: check('a RunControl (a PlanControl with replay)', (v) => v instanceof RunControl),
});

/** The result of {@link replayRun}: the run's result and how many turns the recording answered. */
export type ReplayRunResult<O extends Outcome = Outcome> = RunResult<O> & { served: number };

/**
 * Replay `recorded` with zero model calls: run `runnable` on its input
 * with every model call answered from its log (a fork is seeded from its
 * log as it was and continued). A call that is not in the recording fails
 * with a `ReplayDivergenceError`.
 *
 * @example
 * ```ts
 * const again = await replayRun(flow, await readRun('review-1', { store }));
 * console.log(again.output, again.served);
 * ```
 */
export async function replayRun<O extends Outcome>(runnable: Runnable<O>, recorded: RunEvents, options: ReplayRunOptions = {}): Promise<ReplayRunResult<O>> {
  replayRunOptions.check(options);
  const adapters: Record<string, ModelAdapter | undefined> = Object.fromEntries((options.adapterNames ?? []).map((name) => [name, undefined]));
  const replay = await replayWith(runnable, recorded, { ...options, adapters }, []);
  if (replay.error !== undefined) throw replay.error;
  return { ...(replay.result as RunResult<O>), served: replay.calls.length };
}

interface Replayed {
  runId: string;
  changes: string[];
  result?: RunResult;
  error?: unknown;
  events: TroupeEvent[];
  calls: WhatIfCall[];
}

/** Run `runnable` against the recording of `recorded` with `changes`; a failure is returned, not thrown. */
async function replayWith(
  runnable: Runnable<Outcome>,
  recorded: RunEvents,
  options: Omit<WhatIfOptions, 'adapters'> & { adapters?: Record<string, ModelAdapter | undefined>; control?: RunControl },
  changes: readonly WhatIfChange[],
): Promise<Replayed> {
  if (!recorded || !Array.isArray(recorded.events)) throw new ConfigurationError(`Expected a recorded run (an object with \`events\`), got ${describeValue(recorded)}`);
  const start = startRecord(recorded);
  const recording = new Recording(turnRecordsFromEvents(recorded.events));
  const calls: WhatIfCall[] = [];
  const make = (live: ModelAdapter | undefined) => adapterOn(recording, { ...defined({ live }), changes, onCall: (c) => calls.push(c) });
  const adapter = make(options.adapter);
  const adapters = Object.fromEntries(Object.entries(options.adapters ?? {}).map(([name, live]) => [name, make(live)]));
  const runId = options.runId ?? randomUUID();
  const lines = changes.map(describeChange);
  const parent: RunParent = { runId: recorded.runId ?? start.forked?.runId ?? 'recorded' };
  const seeded = listCheckpoints(recorded).filter((c) => c.seeded);
  const isFork = seeded.length > 0;
  const store = options.store ?? (isFork ? memoryStore() : undefined);
  if (store) {
    // A fork is seeded with the checkpoints its own log starts with; any other run starts from nothing.
    const seeds = isFork ? planFork({ ...recorded, runId: parent.runId }, { at: seeded[seeded.length - 1]!.id }) : { seeds: [], names: new Map<string, string>() };
    const header = { runnable: start.runnable, input: start.input, parent, seeds: seeds.seeds, names: seeds.names, changes: lines };
    await writeSeed(store, runId, header, options.clock ?? realClock, defined({ signal: options.signal }), 'what-if');
  }
  const events: TroupeEvent[] = [];
  const handle = launch(
    runnable,
    start.input,
    { adapter, adapters, runId, onEvent: (e) => events.push(e), ...defined({ store, clock: options.clock, signal: options.signal, control: options.control, resource: loggedResource(recorded) }) },
    isFork,
    parent,
    loggedThread(recorded),
    { events: recorded.events.filter(isEvent) },
  );
  try {
    const result = await handle.result;
    return { runId, changes: lines, result, events, calls };
  } catch (error) {
    return { runId, changes: lines, error, events, calls };
  }
}

/**
 * The thread a recorded run continued, with the history its entry agent
 * was given (its `thread.loaded`): a replay gives the same history and
 * leaves the thread in the store alone.
 */
function loggedThread(recorded: RunEvents): RunThread | undefined {
  for (const record of recorded.events) {
    const e = record as Partial<TroupeEvent<'thread.loaded'>> | null;
    if (!e || typeof e !== 'object' || e.type !== 'thread.loaded' || typeof e.thread !== 'string' || !Array.isArray(e.messages)) continue;
    return { id: e.thread, history: e.messages, runs: typeof e.runs === 'number' ? e.runs : 0, persist: false };
  }
  return undefined;
}

/** The resource a recorded run was about (its `run.started`). */
function loggedResource(recorded: RunEvents): string | undefined {
  for (const record of recorded.events) {
    const e = record as Partial<TroupeEvent<'run.started'>> | null;
    if (e && typeof e === 'object' && e.type === 'run.started') return typeof e.resource === 'string' ? e.resource : undefined;
  }
  return undefined;
}

/** Output, status, usage, scores and agents' answers of a run, from its events. */
async function summarise(events: readonly TroupeEvent[], scorers: WhatIfOptions['scorers'], error?: unknown): Promise<RunSummary> {
  let output = '';
  let status = 'failed';
  let reason: string | undefined;
  let usage = emptyUsage();
  let failure: string | undefined = error === undefined ? undefined : `${isTroupeError(error) ? `${error.code}: ` : ''}${errorMessage(error)}`;
  const scores: Record<string, number> = {};
  const agents: Record<string, string> = {};
  for (const e of events) {
    if (e.type === 'run.completed') {
      output = e.output;
      // A run logged before outcomes had a reason reads in today's words.
      ({ status, reason } = loggedOutcome(e.status, e.reason));
      usage = e.usage;
      failure = undefined;
    } else if (e.type === 'run.failed') {
      status = 'failed';
      reason = undefined;
      failure = `${e.code ? `${e.code}: ` : ''}${e.error}`;
    } else if (e.type === 'reflect.evaluated') scores[e.loop] = e.score;
    else if (e.type === 'agent.completed') agents[e.agent] = e.output;
  }
  if (status !== 'failed') for (const [name, scorer] of Object.entries(scorers ?? {})) scores[name] = await scorer({ output, events });
  return { output, status, ...defined({ reason }), usage, scores, agents, ...defined({ error: failure }) };
}

function compare(recorded: RunEvents, replay: Replayed, before: RunSummary, after: RunSummary, tolerance: number): WhatIfReport {
  const counts: Record<WhatIfSource, number> = { recorded: 0, live: 0, context: 0 };
  let liveUsage = emptyUsage();
  const liveAgents = new Set<string>();
  for (const c of replay.calls) {
    counts[c.source]++;
    if (c.source !== 'recorded') {
      liveUsage = addUsage(liveUsage, { turns: 1, ...c.usage });
      liveAgents.add(c.agent);
    }
  }
  const agentNames = new Set([...Object.keys(before.agents), ...Object.keys(after.agents)]);
  const changedAgents = [...agentNames].filter((a) => before.agents[a] !== after.agents[a]).sort();
  const scorers = [...new Set([...Object.keys(before.scores), ...Object.keys(after.scores)])].sort();
  const scores = scorers.map((scorer): ScoreChange => {
    const r = before.scores[scorer];
    const w = after.scores[scorer];
    const delta = r !== undefined && w !== undefined ? w - r : undefined;
    return { scorer, ...defined({ recorded: r, whatIf: w, delta }), dropped: r !== undefined && (w === undefined || r - w > tolerance) };
  });
  const regressed = scores.some((s) => s.dropped) || (after.status === 'failed' && before.status !== 'failed');
  return {
    ...defined({ recordedRunId: recorded.runId }),
    runId: replay.runId,
    changes: replay.changes,
    recorded: before,
    whatIf: after,
    calls: replay.calls,
    counts,
    liveUsage,
    liveAgents: [...liveAgents].sort(),
    changedAgents,
    outputChanged: before.output !== after.output,
    scores,
    regressed,
  };
}

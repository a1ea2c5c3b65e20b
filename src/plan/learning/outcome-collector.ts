/**
 * The outcome collector: folds a run's events (live, or from its run log)
 * into the tallies of `outcome-stats.ts` — per chunk role, per agent, per
 * model, and per role and model together.
 * @module
 */
import type { TroupeEvent } from '../../core/events.js';
import { runEventsStream } from '../../core/run-log-writer.js';
import type { Usage } from '../../core/usage.js';
// The events this reader folds (their declarations merge into `TroupeEvent`; the modules hold types only).
import '../../patterns/events.js';
import '../events.js';
import { currentChunkStatus } from '../engine/state.js';
import { emptyTally, outcomeStatsOptions, recordOutcomes, type OutcomeDelta, type OutcomeStats, type OutcomeStatsOptions, type OutcomeTally } from './outcome-stats.js';

/** Folds events into outcome deltas, one per run; see {@link outcomeCollector}. */
export interface OutcomeCollector {
  /** Fold one event in (pass it as a run's `onEvent`). Never throws. */
  readonly onEvent: (event: TroupeEvent) => void;
  /** The deltas of every run seen so far, in the order the runs started. */
  deltas(): OutcomeDelta[];
}

interface OpInfo {
  parentId: string | undefined;
  kind: string;
  agent: string | undefined;
  path: string | undefined;
  /** `<plan op id>/<chunk id>` of the plan chunk the op serves. */
  chunk: string | undefined;
  /** The last model its turns used. */
  model?: string;
  /** Agents that made a model turn under this op since its last evaluation. */
  evaluated?: Set<string>;
}

interface ChunkInfo {
  role: string;
  start?: number;
  status?: 'completed' | 'failed';
  end?: number;
  attempts: number;
  error?: string;
  model?: string;
  usage: Usage[];
  scoreSum: number;
  scores: number;
}

/** Kinds of op that are one agent's work (an agent, an orchestration's worker, a team member). */
const AGENT_KINDS: ReadonlySet<string> = new Set(['agent', 'worker', 'team-member']);

/** The model a turn used, as the statistics name it (`<adapter>:default` when the spec names none). */
function modelName(adapter: string, model: string | undefined): string {
  return model ?? `${adapter}:default`;
}

/** A kind of failure: an error code, else the error's first words. */
function failureKind(code: string | undefined, error: string | undefined): string {
  if (code) return code;
  const words = (error ?? 'error').split('\n', 1)[0]!.trim().split(/\s+/).slice(0, 6).join(' ');
  return words.length > 60 ? `${words.slice(0, 60)}…` : words || 'error';
}

function tally(map: Record<string, OutcomeTally>, key: string): OutcomeTally {
  return (map[key] ??= emptyTally());
}

/** Count one finished outcome into `t`. */
function count(t: OutcomeTally, ok: boolean, attempts: number, durationMs: number, usage: Partial<Usage>, failure?: string): void {
  t.count++;
  if (ok) t.completed++;
  else {
    t.failed++;
    if (failure) t.failures[failure] = (t.failures[failure] ?? 0) + 1;
  }
  t.attempts += attempts;
  t.durationMs += Math.max(0, durationMs);
  t.inputTokens += usage.inputTokens ?? 0;
  t.outputTokens += usage.outputTokens ?? 0;
  t.costUsd += usage.costUsd ?? 0;
}

/** One run's fold. */
class RunFold {
  readonly delta: OutcomeDelta;
  readonly #ops = new Map<string, OpInfo>();
  readonly #chunks = new Map<string, ChunkInfo>();
  /** The last model each agent used. */
  readonly #agentModels = new Map<string, string>();

  constructor(runId: string) {
    this.delta = { runId, roles: {}, agents: {}, models: {}, roleModels: {} };
  }

  apply(event: TroupeEvent): void {
    switch (event.type) {
      case 'op.started':
        return this.#opStarted(event);
      case 'model.turn':
        return this.#modelTurn(event);
      case 'op.completed':
        return this.#opCompleted(event);
      case 'chunk.status':
        return this.#chunkStatus(event);
      case 'reflect.evaluated':
        return this.#evaluated(event);
      default:
        return;
    }
  }

  #op(id: string | undefined): OpInfo | undefined {
    return id === undefined ? undefined : this.#ops.get(id);
  }

  #opStarted(event: TroupeEvent<'op.started'>): void {
    if (event.opId === undefined) return;
    const parent = this.#op(event.parentId);
    let chunk = parent?.chunk;
    // A chunk's ops run under `<plan path>/chunk-<id>`.
    if (parent?.kind === 'plan' && event.path !== undefined && parent.path !== undefined && event.path.startsWith(`${parent.path}/chunk-`)) {
      chunk = `${event.parentId}/${event.path.slice(parent.path.length + 7).split('/', 1)[0]}`;
    }
    this.#ops.set(event.opId, { parentId: event.parentId, kind: event.kind, agent: event.agent, path: event.path, chunk });
  }

  #modelTurn(event: TroupeEvent<'model.turn'>): void {
    const model = modelName(event.adapter, event.spec.model);
    this.#agentModels.set(event.agent, model);
    const op = this.#op(event.opId);
    if (op) op.model = model;
    // The loops above this op evaluate what this agent said.
    for (let up = op; up; up = this.#op(up.parentId)) (up.evaluated ??= new Set()).add(event.agent);
    const chunk = op?.chunk === undefined ? undefined : this.#chunks.get(op.chunk);
    if (chunk) chunk.model = model;
  }

  #opCompleted(event: TroupeEvent<'op.completed'>): void {
    const op = this.#op(event.opId);
    if (!op) return;
    // An attempt's ops sit right under the plan: their usage is the chunk's.
    if (op.chunk !== undefined && this.#op(op.parentId)?.kind === 'plan') this.#chunks.get(op.chunk)?.usage.push(event.usage);
    const agent = event.agent;
    if (!AGENT_KINDS.has(event.kind) || agent === undefined || (event.status !== 'completed' && event.status !== 'failed')) return;
    // Only the outermost op of one agent counts.
    for (let up = this.#op(op.parentId); up; up = this.#op(up.parentId)) if (AGENT_KINDS.has(up.kind) && up.agent === agent) return;
    const ok = event.status === 'completed';
    const failure = ok ? undefined : failureKind(event.code, event.error);
    const model = op.model ?? this.#agentModels.get(agent);
    count(tally(this.delta.agents, agent), ok, 1, event.durationMs, event.usage, failure);
    if (model !== undefined) count(tally(this.delta.models, model), ok, 1, event.durationMs, event.usage, failure);
  }

  #chunkStatus(event: TroupeEvent<'chunk.status'>): void {
    if (event.opId === undefined) return;
    const id = `${event.opId}/${event.chunkId}`;
    let chunk = this.#chunks.get(id);
    if (!chunk) this.#chunks.set(id, (chunk = { role: event.role, attempts: 0, usage: [], scoreSum: 0, scores: 0 }));
    chunk.attempts = Math.max(chunk.attempts, event.attempt);
    if (event.status === 'running' && chunk.start === undefined) chunk.start = event.time;
    const status = currentChunkStatus(event.status);
    if (status === 'completed' || status === 'failed') {
      chunk.status = status;
      chunk.end = event.time;
      if (event.error !== undefined) chunk.error = event.error;
    }
  }

  #evaluated(event: TroupeEvent<'reflect.evaluated'>): void {
    const loop = this.#op(event.opId);
    if (!loop) return;
    const agents = [...(loop.evaluated ?? [])].filter((a) => a !== event.evaluator);
    loop.evaluated = undefined;
    const score = (t: { scoreSum: number; scores: number }) => {
      t.scoreSum += event.score;
      t.scores++;
    };
    const models = new Set<string>();
    for (const agent of agents) {
      score(tally(this.delta.agents, agent));
      const model = this.#agentModels.get(agent);
      if (model !== undefined) models.add(model);
    }
    for (const model of models) score(tally(this.delta.models, model));
    const chunk = loop.chunk === undefined ? undefined : this.#chunks.get(loop.chunk);
    if (chunk) score(chunk);
  }

  /** The delta with the chunks that finished counted in. */
  result(): OutcomeDelta {
    const out: OutcomeDelta = structuredClone(this.delta);
    for (const chunk of this.#chunks.values()) {
      if (chunk.status === undefined || chunk.end === undefined) continue;
      const ok = chunk.status === 'completed';
      const usage: Partial<Usage> = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
      for (const u of chunk.usage) {
        usage.inputTokens! += u.inputTokens;
        usage.outputTokens! += u.outputTokens;
        usage.costUsd! += u.costUsd;
      }
      const targets = [tally(out.roles, chunk.role)];
      if (chunk.model !== undefined) targets.push(tally((out.roleModels[chunk.role] ??= {}), chunk.model));
      for (const t of targets) {
        count(t, ok, Math.max(1, chunk.attempts), chunk.end - (chunk.start ?? chunk.end), usage, ok ? undefined : failureKind(undefined, chunk.error));
        t.scoreSum += chunk.scoreSum;
        t.scores += chunk.scores;
      }
    }
    return out;
  }
}

/**
 * A collector of outcomes: feed it a run's events (as `onEvent`, or from a
 * run log) and read each run's delta. It counts:
 *
 * - per chunk role, each chunk that completed or failed: its attempts,
 *   the time from its first start to its end, the usage of its attempts'
 *   ops, and the model its turns used (also per role and model);
 * - per agent and per model, each agent run (an `agent`, `worker` or
 *   `team-member` op, the outermost of one agent) that completed or failed
 *   (cancelled runs are not counted): its duration and usage;
 * - evaluation scores (`reflect.evaluated`): for each agent that made a
 *   model turn under the evaluated loop since its last evaluation (the
 *   evaluator excepted), its model, and the role of the chunk the loop
 *   runs in.
 *
 * @example
 * ```ts
 * const outcomes = outcomeCollector();
 * await executePlan(plan, { adapter, onEvent: outcomes.onEvent });
 * for (const delta of outcomes.deltas()) await recordOutcomes(delta, { store });
 * ```
 */
export function outcomeCollector(): OutcomeCollector {
  const runs = new Map<string, RunFold>();
  return {
    onEvent(event) {
      try {
        let fold = runs.get(event.runId);
        if (!fold) runs.set(event.runId, (fold = new RunFold(event.runId)));
        fold.apply(event);
      } catch {
        // A malformed event (a foreign log line) adds nothing.
      }
    },
    deltas: () => [...runs.values()].map((fold) => fold.result()),
  };
}

function isEvent(value: unknown): value is TroupeEvent {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && typeof (value as { runId?: unknown }).runId === 'string';
}

/**
 * Fold the run log of `runId` in `options.store` (a run made with
 * `{ store }`) into its outcomes and add them to the statistics there (see
 * `recordOutcomes`); recording a run twice counts it once.
 *
 * @example
 * ```ts
 * await recordRunOutcomes(result.runId, { store });
 * ```
 */
export async function recordRunOutcomes(runId: string, options: OutcomeStatsOptions): Promise<OutcomeStats> {
  outcomeStatsOptions.check(options, '', 'recordRunOutcomes');
  const { key: _key, store, ...call } = options;
  const collector = outcomeCollector();
  const { records } = await store.read(runEventsStream(runId), call);
  for (const record of records) if (isEvent(record)) collector.onEvent(record);
  const delta = collector.deltas().find((d) => d.runId === runId) ?? { runId, roles: {}, agents: {}, models: {}, roleModels: {} };
  return recordOutcomes(delta, options);
}

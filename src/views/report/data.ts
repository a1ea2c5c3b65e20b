/**
 * The data of a run report: a run's events folded into what the page
 * draws (ops, model turns, tool calls, timeline lanes, plans with their
 * critical path, usage per agent and model, evaluator scores). Plain JSON,
 * built from the run log alone.
 * @module
 */
import type { ToolCall, ToolResult } from '../../core/adapter.js';
import type { TroupeEvent } from '../../core/events.js';
import { defineOptions, positiveInteger } from '../../core/options.js';
import { currentChunkStatus, type ChunkStatus } from '../../plan/engine/state.js';
import { criticalPathOf } from '../../plan/model/dag.js';
import { isEvent } from '../../core/run-log-reader.js';
import { isAgentOp } from '../../core/event-fold.js';
import type { OutcomeReason, OutcomeStatus } from '../../core/outcome.js';
import { addUsage, emptyUsage, type Usage } from '../../core/usage.js';
import { emptySpend, type BudgetExhaustion, type BudgetLimitKey, type BudgetLimits, type BudgetSpend } from '../../core/budget.js';
import { RunTracker, type TrackedOp } from '../tracker.js';
import { defined } from '../../core/defined.js';

/** An op of the report. Ids of a resumed run's later segments are prefixed (`s1/op-3`). */
export interface ReportOp {
  id: string;
  parentId?: string;
  kind: string;
  name: string;
  agent?: string;
  depth: number;
  start: number;
  end?: number;
  status: OutcomeStatus | 'running';
  /** Why it ended so, when its pattern says (`goal-met`, `max-rounds`, ...). */
  reason?: OutcomeReason;
  usage?: Usage;
  error?: string;
  code?: string;
  plan?: { planId: string; chunkId?: string; attempt?: number };
  iteration?: number;
  round?: number;
  input?: string;
  output?: string;
}

/** One model turn. */
export interface ReportTurn {
  opId?: string;
  agent: string;
  adapter: string;
  model?: string;
  session: number;
  turn: number;
  start: number;
  end: number;
  usage?: Partial<Usage>;
  input: string;
  output?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  error?: string;
}

/** One tool call. */
export interface ReportToolCall {
  opId?: string;
  agent: string;
  callId: string;
  name: string;
  start: number;
  end?: number;
  arguments: string;
  result?: string;
  isError?: boolean;
}

/** One attempt of a chunk. */
export interface ReportAttempt {
  attempt: number;
  start: number;
  end?: number;
  /** How the attempt ended: `completed`, `retrying` (failed, tried again), `failed`, `cancelled`, or `running`. */
  status: ChunkStatus;
  error?: string;
}

/** One chunk of a plan. */
export interface ReportChunk {
  chunkId: string;
  title: string;
  role: string;
  dependsOn: string[];
  status: ChunkStatus;
  attempts: ReportAttempt[];
  /** From its first start to its end (0 when it never ran). */
  durationMs: number;
  /** On the plan's critical path (the longest chain of measured durations). */
  critical: boolean;
  /** The ops that ran its attempts (those right under the plan). */
  opIds: string[];
  error?: string;
}

/** One plan. */
export interface ReportPlan {
  planId: string;
  opId: string;
  chunks: ReportChunk[];
  /** Chunk ids of the critical path, first to last. */
  criticalPath: string[];
  /** False when the log has no dependency graph (it predates `plan.started`'s `graph`). */
  hasGraph: boolean;
}

/** A bar of the timeline. */
export interface ReportBar {
  start: number;
  end: number;
  /** Sub-row within the lane (bars that overlap go on separate rows). */
  row: number;
  /** What the bar is: an op, a model turn, a chunk attempt or the wait before a retry. */
  kind: 'op' | 'turn' | 'attempt' | 'wait';
  /** The colour class: an op status or a chunk status. */
  status: string;
  /** The op's reason beside its status, when it has one (`max-iterations`: drawn as stopped early). */
  reason?: string;
  label: string;
  /** The op to show on click. */
  opId?: string;
  /** The chunk to show on click (`<planOpId>|<chunkId>`). */
  chunk?: string;
  /** The bar never ended (the log stops while it ran). */
  open?: boolean;
  /** A model turn drawn over its op's bar (clicks go to the op). */
  inside?: boolean;
}

/** A point event on the timeline. */
export interface ReportMarker {
  time: number;
  kind: 'retry' | 'stall' | 'cancel' | 'warning' | 'failure';
  label: string;
}

/** A row of the timeline. */
export interface ReportLane {
  id: string;
  label: string;
  group: 'flow' | 'chunks' | 'agents';
  rows: number;
  bars: ReportBar[];
  markers: ReportMarker[];
}

/** Usage of one agent on one model. */
export interface ReportUsageRow extends Usage {
  agent: string;
  model: string;
  adapter: string;
}

/** The evaluator's scores of one loop. */
export interface ReportLoop {
  opId?: string;
  name: string;
  scores: Array<{ iteration: number; score: number; trend: string; goalMet: boolean; evaluator: string; rationale: string }>;
  stalls: Array<{ iteration: number; stalled: boolean }>;
}

/** A budget of the run: its limits and what was spent against each (from `budget.*` events). */
export interface ReportBudget {
  budgetId: string;
  name: string;
  /** The op that opened it. */
  opId?: string;
  shared: boolean;
  limits: BudgetLimits;
  spent: BudgetSpend;
  /** Why it ran out, when it did (the first exhaustion). */
  exhausted?: { limit: BudgetLimitKey; reason: BudgetExhaustion; time: number };
}

/** A compaction of a session's conversation (from `context.compacted`). */
export interface ReportCompaction {
  time: number;
  agent: string;
  budget: number;
  before: number;
  after: number;
  strategy: 'summary' | 'drop';
}

/** Everything the report page draws. */
export interface RunReportData {
  format: 'troupe.report';
  version: 1;
  run: {
    runId: string;
    name: string;
    status: OutcomeStatus | 'running';
    /** Why it ended so, when its runnable says (`goal-met`, `consensus`, ...). */
    reason?: OutcomeReason;
    start: number;
    end?: number;
    input?: string;
    output?: string;
    error?: string;
    usage: Usage;
    /** How many times the run was started (more than 1 when it was resumed). */
    segments: number;
  };
  ops: ReportOp[];
  turns: ReportTurn[];
  tools: ReportToolCall[];
  plans: ReportPlan[];
  lanes: ReportLane[];
  usage: ReportUsageRow[];
  loops: ReportLoop[];
  /** Every budget of the run, with its spend. */
  budgets: ReportBudget[];
  /** Every compaction of a session's conversation. */
  compactions: ReportCompaction[];
  warnings: Array<{ time: number; message: string; code?: string }>;
  /** Records of the log that are not events (skipped). */
  skipped: number;
  /** Texts longer than `maxTextLength` were cut. */
  truncated: number;
}

/** Options of {@link buildReportData}. */
export interface ReportDataOptions {
  /** Cut every text (inputs, outputs, tool results) to this many characters. Default: 20000. */
  maxTextLength?: number;
}

/** The description {@link ReportDataOptions} are checked against (`renderRunReport` extends it). */
export const reportDataOptions = defineOptions<ReportDataOptions>('buildReportData', { maxTextLength: positiveInteger });

/** Build the report data from a run's events (records that are not events are skipped and counted). */
export function buildReportData(records: readonly unknown[], options: ReportDataOptions = {}): RunReportData {
  reportDataOptions.check(options);
  const events: TroupeEvent[] = [];
  let skipped = 0;
  for (const r of records) {
    if (isEvent(r)) events.push(r);
    else skipped++;
  }
  const builder = new ReportBuilder(events[0], options.maxTextLength ?? 20_000);
  for (const e of events) builder.add(e);
  return builder.result(events, skipped);
}

/** Builds the report of one run from its events, in order. */
class ReportBuilder {
  readonly #max: number;
  #truncated = 0;
  readonly #tracker = new RunTracker();
  readonly #ops = new Map<string, ReportOp>();
  readonly #turns: ReportTurn[] = [];
  readonly #tools: ReportToolCall[] = [];
  readonly #openTools = new Map<string, ReportToolCall>();
  readonly #loops = new Map<string, ReportLoop>();
  readonly #warnings: RunReportData['warnings'] = [];
  readonly #budgets = new Map<string, ReportBudget>();
  readonly #compactions: ReportCompaction[] = [];
  readonly #markers = new Map<string, ReportMarker[]>();
  readonly #plans = new Map<string, PlanBuild>();
  readonly #run: RunReportData['run'];
  readonly #rootRunId: string;
  /** Which part of a resumed run the events belong to (op ids restart with each part). */
  #segment = -1;

  constructor(first: TroupeEvent | undefined, max: number) {
    this.#max = max;
    this.#run = { runId: first?.runId ?? '', name: '', status: 'running', start: first?.time ?? 0, usage: emptyUsage(), segments: 0 };
    this.#rootRunId = this.#run.runId;
  }

  /** Fold one event in. Events of other runs (a nested standalone run logged in the same stream) keep their own tracker state but are not drawn. */
  add(e: TroupeEvent): void {
    const tracker = this.#tracker;
    const turnStart = e.type === 'model.turn' ? tracker.turnStart(e) : 0;
    if (e.type === 'run.started' && e.runId === this.#rootRunId) this.#newSegment(e);
    tracker.apply(e);
    if (e.runId !== this.#rootRunId) return;
    const op = tracker.op(e.runId, e.opId);
    switch (e.type) {
      case 'run.started':
      case 'op.started':
        if (op) this.#ops.set(this.#uid(op.id)!, this.#toReportOp(op));
        return;
      case 'op.completed':
        return this.#opCompleted(e, op);
      case 'run.completed':
      case 'run.failed':
        return this.#runEnded(e);
      case 'agent.started':
      case 'agent.completed': {
        const reportOp = op ? this.#ops.get(this.#uid(op.id)!) : undefined;
        if (reportOp && e.type === 'agent.started') reportOp.input = this.#cut(e.input);
        else if (reportOp && e.type === 'agent.completed') reportOp.output = this.#cut(e.output);
        return;
      }
      case 'model.turn':
        return this.#turn(e, turnStart);
      case 'tool.called':
      case 'tool.completed':
        return this.#tool(e);
      case 'plan.started':
        return this.#planStarted(e);
      case 'chunk.status':
        return this.#chunkStatus(e);
      default:
        return this.#markEvent(e);
    }
  }

  /** The report, once every event is in. */
  result(events: readonly TroupeEvent[], skipped: number): RunReportData {
    const run = this.#run;
    const opList = [...this.#ops.values()];
    const root = opList.find((o) => o.kind === 'run');
    let turnUsage = emptyUsage();
    for (const t of this.#turns) turnUsage = addUsage(turnUsage, { turns: 1, ...t.usage });
    // One total everywhere: the header, the usage rows and their "Run total" all count the logged model turns
    // (the run op's own usage can leave out a turn that failed, and then said 12 where the rows said 13).
    run.usage = this.#turns.length > 0 ? turnUsage : (root?.usage ?? turnUsage);
    let lastTime = run.start;
    for (const e of events) if (e.runId === this.#rootRunId && e.time > lastTime) lastTime = e.time;
    const planList = [...this.#plans.values()].map((p) => finishPlan(p, opList, lastTime));
    return {
      format: 'troupe.report',
      version: 1,
      run,
      ops: opList,
      turns: this.#turns,
      tools: this.#tools,
      plans: planList,
      lanes: buildLanes(opList, this.#turns, planList, this.#markers, lastTime),
      usage: usageRows(this.#turns),
      loops: [...this.#loops.values()],
      budgets: [...this.#budgets.values()],
      compactions: this.#compactions,
      warnings: this.#warnings,
      skipped,
      truncated: this.#truncated,
    };
  }

  #newSegment(e: TroupeEvent<'run.started'>): void {
    this.#segment++;
    this.#run.segments++;
    if (this.#segment !== 0) return;
    this.#run.name = e.runnable;
    this.#run.input = this.#cut(e.input);
    this.#run.start = e.time;
  }

  #cut(text: string): string {
    const max = this.#max;
    if (text.length <= max) return text;
    this.#truncated++;
    return `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
  }

  /** An op id unique over the parts of a resumed run. */
  #uid(opId: string | undefined): string | undefined {
    return opId === undefined ? undefined : this.#segment > 0 ? `s${this.#segment}/${opId}` : opId;
  }

  #mark(opId: string | undefined, marker: ReportMarker): void {
    const key = this.#uid(opId) ?? 'op-0';
    this.#markers.set(key, [...(this.#markers.get(key) ?? []), marker]);
  }

  #toReportOp(op: TrackedOp): ReportOp {
    const out: ReportOp = { id: this.#uid(op.id)!, kind: op.kind, name: op.name, depth: op.depth, start: op.start, status: op.status };
    if (op.parentId !== undefined) out.parentId = this.#uid(op.parentId)!;
    if (op.agent !== undefined) out.agent = op.agent;
    if (op.plan) out.plan = { planId: op.plan.planId, ...defined({ chunkId: op.plan.chunkId, attempt: op.plan.attempt }) };
    if (op.iteration !== undefined) out.iteration = op.iteration;
    if (op.round !== undefined) out.round = op.round;
    return out;
  }

  #opCompleted(e: TroupeEvent<'op.completed'>, op: TrackedOp | undefined): void {
    const reportOp = op ? this.#ops.get(this.#uid(op.id)!) : undefined;
    if (!op || !reportOp) return;
    reportOp.status = op.status;
    if (op.reason !== undefined) reportOp.reason = op.reason;
    if (op.end !== undefined) reportOp.end = op.end;
    if (op.usage) reportOp.usage = op.usage;
    if (op.error !== undefined) reportOp.error = op.error;
    if (op.code !== undefined) reportOp.code = op.code;
    if (op.status === 'cancelled') this.#mark(op.id, { time: e.time, kind: 'cancel', label: `${op.kind} ${op.name} cancelled` });
  }

  #runEnded(e: TroupeEvent<'run.completed' | 'run.failed'>): void {
    const run = this.#run;
    const root = this.#tracker.op(e.runId, e.opId ?? 'op-0');
    const rootOp = this.#ops.get(this.#uid(e.opId ?? 'op-0')!);
    if (root && rootOp) {
      rootOp.status = root.status;
      if (root.reason !== undefined) rootOp.reason = root.reason;
      rootOp.end = e.time;
      if (root.usage) rootOp.usage = root.usage;
      if (root.error !== undefined) rootOp.error = root.error;
      if (root.code !== undefined) rootOp.code = root.code;
    }
    run.status = root?.status ?? (e.type === 'run.completed' ? e.status : 'failed');
    const reason = root?.reason ?? (e.type === 'run.completed' ? e.reason : undefined);
    if (reason !== undefined) run.reason = reason;
    else delete run.reason;
    run.end = e.time;
    if (e.type === 'run.completed') {
      run.output = this.#cut(e.output);
      if (rootOp) rootOp.output = run.output;
      delete run.error;
    } else run.error = e.error;
  }

  #turn(e: TroupeEvent<'model.turn'>, start: number): void {
    const t: ReportTurn = { agent: e.agent, adapter: e.adapter, session: e.session, turn: e.turn, start, end: e.time, input: this.#cut(renderInput(e.input)) };
    if (e.opId !== undefined) t.opId = this.#uid(e.opId)!;
    if (e.spec.model !== undefined) t.model = e.spec.model;
    if (e.reply) {
      t.output = this.#cut(e.reply.text);
      if (e.reply.usage) t.usage = e.reply.usage;
      if (e.reply.toolCalls.length > 0) t.toolCalls = e.reply.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: this.#cut(renderArguments(c)) }));
    }
    if (e.error !== undefined) t.error = e.error;
    this.#turns.push(t);
  }

  #tool(e: TroupeEvent<'tool.called' | 'tool.completed'>): void {
    if (e.type === 'tool.called') {
      const call: ReportToolCall = { agent: e.agent, callId: e.call.id, name: e.call.name, start: e.time, arguments: this.#cut(renderArguments(e.call)) };
      if (e.opId !== undefined) call.opId = this.#uid(e.opId)!;
      this.#tools.push(call);
      this.#openTools.set(`${call.opId ?? ''}|${call.callId}`, call);
      return;
    }
    const key = `${this.#uid(e.opId) ?? ''}|${e.callId}`;
    const call = this.#openTools.get(key);
    if (!call) return;
    this.#openTools.delete(key);
    call.end = e.time;
    call.result = this.#cut(e.content);
    if (e.isError) call.isError = true;
  }

  #planStarted(e: TroupeEvent<'plan.started'>): void {
    const planOpId = this.#uid(e.opId);
    if (planOpId === undefined) return;
    const build: PlanBuild = { planId: e.planId, opId: planOpId, hasGraph: e.graph !== undefined, chunks: new Map() };
    for (const node of e.graph ?? []) build.chunks.set(node.chunkId, { chunkId: node.chunkId, title: node.title, role: node.role, dependsOn: [...node.dependsOn], status: 'pending', attempts: [], durationMs: 0, critical: false, opIds: [] });
    this.#plans.set(planOpId, build);
  }

  #chunkStatus(e: TroupeEvent<'chunk.status'>): void {
    const build = this.#plans.get(this.#uid(e.opId) ?? '');
    if (!build) return;
    let c = build.chunks.get(e.chunkId);
    if (!c) {
      c = { chunkId: e.chunkId, title: e.title, role: e.role, dependsOn: [], status: 'pending', attempts: [], durationMs: 0, critical: false, opIds: [] };
      build.chunks.set(e.chunkId, c);
    }
    // A run log written before the statuses were renamed says `succeeded` and `aborted`.
    const status = currentChunkStatus(e.status) as ChunkStatus;
    c.status = status;
    if (e.error !== undefined) c.error = e.error;
    else if (status === 'completed') delete c.error;
    const last = c.attempts.at(-1);
    if (status === 'running') c.attempts.push({ attempt: e.attempt, start: e.time, status: 'running' });
    else if (last && last.end === undefined && status !== 'queued' && status !== 'waiting-for-dependencies') {
      last.end = e.time;
      last.status = status;
      if (e.error !== undefined) last.error = e.error;
    }
    if (status === 'retrying') this.#mark(e.opId, { time: e.time, kind: 'retry', label: `chunk ${e.chunkId} attempt ${e.attempt} failed; retrying` });
  }

  /** A budget opened, ran out or closed: its limits and its latest spend. */
  #budget(e: TroupeEvent<'budget.opened' | 'budget.exhausted' | 'budget.closed'>): void {
    const key = budgetKey(this.#segment, e.budgetId);
    let budget = this.#budgets.get(key);
    if (!budget) {
      const limits = e.type === 'budget.exhausted' ? {} : { ...e.limits };
      const opId = this.#uid(e.opId);
      budget = { budgetId: e.budgetId, name: e.budget, shared: e.type === 'budget.opened' && e.shared, limits, spent: emptySpend(), ...(opId === undefined ? {} : { opId }) };
      this.#budgets.set(key, budget);
    }
    if (e.type === 'budget.opened') return;
    budget.spent = { ...e.spent };
    if (e.type === 'budget.exhausted') {
      budget.exhausted ??= { limit: e.limit, reason: e.reason, time: e.time };
      this.#mark(e.opId, { time: e.time, kind: 'failure', label: `budget "${e.budget}" exhausted: ${e.limit} ${e.reason}` });
    }
  }

  /** Loops' scores and stalls, retries, failures and warnings: markers on the timeline. */
  #markEvent(e: TroupeEvent): void {
    const loops = this.#loops;
    switch (e.type) {
      case 'reflect.iteration.started':
        loopOf(loops, this.#uid(e.opId), e.loop);
        return;
      case 'reflect.evaluated':
        loopOf(loops, this.#uid(e.opId), e.loop).scores.push({ iteration: e.iteration, score: e.score, trend: e.trend, goalMet: e.goalMet, evaluator: e.evaluator, rationale: this.#cut(e.rationale) });
        return;
      case 'reflect.stall.warning':
      case 'reflect.stalled': {
        const stalled = e.type === 'reflect.stalled';
        loopOf(loops, this.#uid(e.opId), e.loop).stalls.push({ iteration: e.iteration, stalled });
        this.#mark(e.opId, { time: e.time, kind: 'stall', label: stalled ? `stalled at iteration ${e.iteration}` : `stall warning at iteration ${e.iteration}` });
        return;
      }
      case 'router.retry':
        this.#mark(e.opId, { time: e.time, kind: 'retry', label: `router ${e.router} asked again${e.choice === undefined ? '' : ` (invalid choice "${e.choice}")`}` });
        return;
      case 'reflect.iteration.failed':
        this.#mark(e.opId, { time: e.time, kind: 'failure', label: `iteration ${e.iteration} failed: ${e.error}` });
        return;
      case 'budget.opened':
      case 'budget.exhausted':
      case 'budget.closed':
        return this.#budget(e);
      case 'context.compacted':
        this.#compactions.push({ time: e.time, agent: e.agent, budget: e.budget, before: e.before, after: e.after, strategy: e.strategy });
        this.#mark(e.opId, { time: e.time, kind: 'warning', label: `context of ${e.agent} compacted (${e.strategy}): ${e.before} → ${e.after} tokens` });
        return;
      case 'warning':
        this.#warnings.push({ time: e.time, message: e.message, ...defined({ code: e.code }) });
        this.#mark(e.opId, { time: e.time, kind: 'warning', label: e.message });
        return;
      default:
        return;
    }
  }
}

/** Budgets are keyed by run segment and id (ids restart when a run is resumed). */
function budgetKey(segment: number, id: string): string {
  return `${segment}|${id}`;
}

interface PlanBuild {
  planId: string;
  opId: string;
  hasGraph: boolean;
  chunks: Map<string, ReportChunk>;
}

function finishPlan(p: PlanBuild, ops: readonly ReportOp[], lastTime: number): ReportPlan {
  const chunks = [...p.chunks.values()];
  for (const o of ops) {
    if (o.parentId !== p.opId || o.plan?.chunkId === undefined) continue;
    p.chunks.get(o.plan.chunkId)?.opIds.push(o.id);
  }
  for (const c of chunks) {
    const first = c.attempts[0];
    const last = c.attempts.at(-1);
    c.durationMs = first ? (last?.end ?? lastTime) - first.start : 0;
  }
  // The plan model's critical path, weighed by measured durations (chunks that never ran weigh nothing).
  const criticalPath = criticalPathOf(chunks.map((c) => ({ id: c.chunkId, dependsOn: c.dependsOn, weight: c.durationMs })));
  const onPath = new Set(criticalPath);
  for (const c of chunks) c.critical = onPath.has(c.chunkId);
  return { planId: p.planId, opId: p.opId, chunks, criticalPath, hasGraph: p.hasGraph };
}


/** The timeline's lanes: the run and its patterns, each plan's chunks, then one lane per agent. */
function buildLanes(ops: readonly ReportOp[], turns: readonly ReportTurn[], plans: readonly ReportPlan[], markers: Map<string, ReportMarker[]>, lastTime: number): ReportLane[] {
  const flow = new Map<string, ReportLane>();
  const agents = new Map<string, ReportLane>();
  const lane = (map: Map<string, ReportLane>, id: string, label: string, group: ReportLane['group']): ReportLane => {
    let l = map.get(id);
    if (!l) {
      l = { id, label, group, rows: 1, bars: [], markers: [] };
      map.set(id, l);
    }
    return l;
  };
  const opBar = (o: ReportOp): ReportBar => ({
    start: o.start,
    end: o.end ?? lastTime,
    row: 0,
    kind: 'op',
    status: o.status,
    ...defined({ reason: o.reason }),
    label: `${o.kind} ${o.name}${o.reason === undefined ? '' : ` (${o.reason})`}`,
    opId: o.id,
    ...(o.end === undefined ? { open: true } : {}),
  });
  const agentOps = new Set<string>();
  for (const o of ops) {
    if (isAgentOp(o)) {
      lane(agents, `agent:${o.agent}`, o.agent, 'agents').bars.push(opBar(o));
      agentOps.add(o.id);
    } else {
      const l = lane(flow, `${o.kind}:${o.name}`, o.kind === 'run' ? `run ${o.name}` : `${o.kind} ${o.name}`, 'flow');
      l.bars.push(opBar(o));
      for (const m of markers.get(o.id) ?? []) l.markers.push(m);
    }
  }
  const byId = new Map(ops.map((o) => [o.id, o]));
  for (const [id, list] of markers) {
    const o = agentOps.has(id) ? byId.get(id) : undefined;
    const l = o ? agents.get(`agent:${o.agent}`) : undefined;
    if (l) for (const m of list) l.markers.push(m);
  }
  // Model turns on their agent's lane (turns made directly in a pattern's op, such as a reflect loop's, included).
  for (const t of turns) {
    lane(agents, `agent:${t.agent}`, t.agent, 'agents').bars.push({
      start: t.start,
      end: t.end,
      row: 0,
      kind: 'turn',
      status: t.error === undefined ? 'turn' : 'failed',
      label: `turn ${t.turn} of ${t.agent}${t.model ? ` (${t.model})` : ''}`,
      ...defined({ opId: t.opId }),
    });
  }
  const chunkLanes: ReportLane[] = [];
  for (const p of plans) {
    for (const c of p.chunks) {
      const l: ReportLane = { id: `chunk:${p.opId}|${c.chunkId}`, label: `${p.planId} #${c.chunkId} ${c.title}`, group: 'chunks', rows: 1, bars: [], markers: [] };
      let previousEnd: number | undefined;
      for (const a of c.attempts) {
        if (previousEnd !== undefined && a.start > previousEnd) {
          l.bars.push({ start: previousEnd, end: a.start, row: 0, kind: 'wait', status: 'retrying', label: `waiting to retry (attempt ${a.attempt})`, chunk: `${p.opId}|${c.chunkId}` });
        }
        l.bars.push({
          start: a.start,
          end: a.end ?? lastTime,
          row: 0,
          kind: 'attempt',
          status: a.status,
          label: `attempt ${a.attempt}: ${a.status}${a.error ? ` (${a.error})` : ''}`,
          chunk: `${p.opId}|${c.chunkId}`,
          ...(a.end === undefined ? { open: true } : {}),
        });
        if (a.status === 'retrying') l.markers.push({ time: a.end ?? a.start, kind: 'retry', label: `attempt ${a.attempt} failed; retrying` });
        previousEnd = a.end;
      }
      chunkLanes.push(l);
    }
  }
  const all = [...flow.values(), ...chunkLanes, ...agents.values()];
  for (const l of all) pack(l);
  return all;
}

/** Give overlapping bars of a lane their own rows (turns stay on the row of the op they belong to). */
function pack(l: ReportLane): void {
  const rowEnds: number[] = [];
  const rowOf = new Map<string, number>();
  const mains = l.bars.filter((b) => b.kind !== 'turn').sort((a, b) => a.start - b.start || b.end - a.end);
  for (const b of mains) {
    let row = rowEnds.findIndex((end) => end <= b.start);
    if (row < 0) row = rowEnds.push(b.end) - 1;
    else rowEnds[row] = b.end;
    b.row = row;
    if (b.opId !== undefined) rowOf.set(b.opId, row);
  }
  for (const b of l.bars) {
    if (b.kind !== 'turn') continue;
    const row = b.opId === undefined ? undefined : rowOf.get(b.opId);
    if (row !== undefined) {
      b.row = row;
      b.inside = true;
    } else {
      let r = rowEnds.findIndex((end) => end <= b.start);
      if (r < 0) r = rowEnds.push(b.end) - 1;
      else rowEnds[r] = b.end;
      b.row = r;
    }
  }
  l.rows = Math.max(1, rowEnds.length);
}

function usageRows(turns: readonly ReportTurn[]): ReportUsageRow[] {
  const rows = new Map<string, ReportUsageRow>();
  for (const t of turns) {
    const model = t.model ?? '(adapter default)';
    const key = `${t.agent}\u0000${model}\u0000${t.adapter}`;
    const previous = rows.get(key);
    const usage = addUsage(previous, { turns: 1, ...t.usage });
    rows.set(key, { agent: t.agent, model, adapter: t.adapter, ...usage });
  }
  return [...rows.values()].sort((a, b) => b.costUsd - a.costUsd || b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens));
}

function loopOf(loops: Map<string, ReportLoop>, opId: string | undefined, name: string): ReportLoop {
  const key = opId ?? name;
  let loop = loops.get(key);
  if (!loop) {
    loop = { name, scores: [], stalls: [], ...defined({ opId }) };
    loops.set(key, loop);
  }
  return loop;
}

function renderInput(input: string | readonly ToolResult[]): string {
  if (typeof input === 'string') return input;
  return input.map((r) => `[${r.isError ? 'tool error' : 'tool result'} ${r.name}#${r.callId}] ${r.content}`).join('\n');
}

function renderArguments(call: ToolCall): string {
  if (call.arguments === undefined) return call.rawArguments ?? '';
  try {
    return JSON.stringify(call.arguments, null, 2) ?? '';
  } catch {
    return String(call.arguments);
  }
}

/**
 * Progress of `troupe run`: on a terminal, a live view (the ops in flight,
 * tokens and cost so far, elapsed time, each plan's done/total chunks)
 * redrawn in place with log-update, with finished ops and notable events
 * kept above it; elsewhere (CI, pipes), plain one-line events. Both read
 * the run's events only.
 * @module
 */
import type { Clock } from '../core/clock.js';
import type { TroupeEvent } from '../core/events.js';
import { addUsage, emptyUsage, type Usage } from '../core/usage.js';
import { FINISHED_CHUNK_STATUSES, RunTracker, type TrackedOp } from '../views/tracker.js';

/** Where live progress is drawn: a terminal stream (`process.stderr`). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
  write(text: string): unknown;
}

/** A progress listener: feed it every event, then `close()` it when the run settles. */
export interface Progress {
  readonly onEvent: (event: TroupeEvent) => void;
  /** Draw the last frame (live mode) and stop redrawing. */
  close(): void;
}

/** Formats the run's events as one line each (those worth a line), with the time since the run started. */
export class ProgressLines {
  readonly #tracker = new RunTracker();
  #start: number | undefined;
  #usage: Usage = emptyUsage();

  /** Tokens and cost of the turns seen so far. */
  get usage(): Usage {
    return this.#usage;
  }

  /** The tracker the lines are read with (for the live view). */
  get tracker(): RunTracker {
    return this.#tracker;
  }

  /** Clock time the run started (its first event). */
  get start(): number | undefined {
    return this.#start;
  }

  /** Fold `event` in and return its line, if it is worth one. */
  line(event: TroupeEvent): string | undefined {
    this.#start ??= event.time;
    this.#tracker.apply(event);
    if (event.type === 'model.turn' && event.reply?.usage) this.#usage = addUsage(this.#usage, { turns: 1, ...event.reply.usage });
    const text = this.#text(event);
    if (text === undefined) return undefined;
    const depth = event.opId === undefined ? 0 : (this.#tracker.op(event.runId, event.opId)?.depth ?? 0);
    return `[${seconds(event.time - this.#start)}] ${'  '.repeat(Math.max(0, depth - (event.type === 'op.started' || event.type === 'op.completed' ? 1 : 0)))}${text}`;
  }

  #text(e: TroupeEvent): string | undefined {
    switch (e.type) {
      case 'run.started':
        return `run ${e.runnable}${e.resumed ? ' (resumed)' : ''}`;
      case 'run.completed':
        return `run ${e.runnable} ${e.status}${e.reason ? ` (${e.reason})` : ''} in ${seconds(e.durationMs)}s · ${usageText(e.usage)}`;
      case 'run.failed':
        return `run ${e.runnable} failed${e.code ? ` (${e.code})` : ''}: ${oneLine(e.error)}`;
      case 'op.started': {
        const op = this.#tracker.op(e.runId, e.opId);
        return `▸ ${op ? label(op) : `${e.kind} ${e.name}`}${e.agent !== undefined && e.agent !== e.name ? ` (${e.agent})` : ''}`;
      }
      case 'op.completed': {
        const op = this.#tracker.op(e.runId, e.opId);
        const mark = e.status === 'failed' ? '✗' : e.status === 'cancelled' ? '⊘' : '✓';
        const tail = e.error !== undefined ? `: ${oneLine(e.error)}` : e.usage.turns > 0 ? ` · ${usageText(e.usage)}` : '';
        return `${mark} ${op ? label(op) : `${e.kind} ${e.name}`} ${e.status}${e.reason ? ` (${e.reason})` : ''} ${e.durationMs}ms${tail}`;
      }
      case 'tool.called':
        return `  tool ${e.call.name} (${e.agent})`;
      case 'tool.completed':
        return e.isError ? `  tool ${e.name} returned an error: ${oneLine(e.content)}` : undefined;
      case 'router.selected':
        return `  route → ${e.destination}${e.reason ? ` (${oneLine(e.reason)})` : ''}`;
      case 'plan.started':
        return `plan ${e.planId}: ${e.chunks} chunks${e.resumed ? ' (resumed)' : ''}`;
      case 'chunk.status': {
        if (e.status !== 'running' && e.status !== 'retrying' && !FINISHED_CHUNK_STATUSES.has(e.status)) return undefined;
        const plan = this.#tracker.plan(e.runId, e.opId);
        const done = plan?.done ?? 0;
        const attempt = e.attempt > 1 || e.status === 'retrying' ? ` (attempt ${e.attempt})` : '';
        return `chunk #${e.chunkId} ${e.title}: ${e.status}${attempt}${e.error && e.status !== 'completed' ? ` – ${oneLine(e.error)}` : ''} [${done}/${plan?.total ?? '?'} done]`;
      }
      case 'plan.completed':
        return `plan ${e.planId} ${e.status}${e.reason ? ` (${e.reason})` : ''}: ${e.completed} completed, ${e.failed} failed, ${e.skipped} skipped`;
      case 'reflect.iteration.started':
        return `${e.loop}: iteration ${e.iteration}/${e.maxIterations}`;
      case 'reflect.evaluated':
        return `${e.loop}: score ${e.score.toFixed(2)} (${e.trend})${e.goalMet ? ', goal met' : ''}`;
      case 'reflect.stall.warning':
        return `${e.loop}: stall warning at iteration ${e.iteration} (similarity ${e.similarity.toFixed(2)})`;
      case 'reflect.stalled':
        return `${e.loop}: stalled at iteration ${e.iteration}`;
      case 'team.round.started':
        return `${e.team}: round ${e.round}`;
      case 'warning':
        return `warning: ${oneLine(e.message)}`;
      default:
        return undefined;
    }
  }
}

/** Plain progress: one line per event worth one, through `write`. */
export function plainProgress(write: (line: string) => void): Progress {
  const lines = new ProgressLines();
  return {
    onEvent(event) {
      const line = lines.line(event);
      if (line !== undefined) write(line);
    },
    close() {},
  };
}

/** The log-update instance the live view draws with. */
interface LiveRegion {
  (text: string): void;
  done(): void;
  persist(text: string): void;
}

/**
 * Live progress on a terminal, drawn with log-update: finished ops and
 * notable events scroll above; below them, the run's totals, each plan's
 * done/total chunks and the ops in flight, redrawn on every event and on a
 * timer of `clock` (for the elapsed time).
 */
export async function liveProgress(stream: ProgressStream, clock: Clock, intervalMs = 200): Promise<Progress> {
  const { createLogUpdate } = await import('log-update');
  const region = createLogUpdate(stream as NodeJS.WriteStream, { showCursor: false }) as LiveRegion;
  const lines = new ProgressLines();
  let runId: string | undefined;
  let name = '';
  let finished = 0;
  let closed = false;
  let cancel: (() => void) | undefined;
  const draw = () => {
    if (closed) return;
    region(frame(lines, runId, name, finished, clock.now(), stream.rows ?? 24));
  };
  const tick = () => {
    draw();
    if (!closed) cancel = clock.setTimer(tick, intervalMs);
  };
  cancel = clock.setTimer(tick, intervalMs);
  return {
    onEvent(event) {
      runId ??= event.runId;
      if (event.type === 'run.started' && event.runId === runId) name = event.runnable;
      if (event.type === 'op.completed') finished++;
      const line = lines.line(event);
      const keep = line !== undefined && event.type !== 'op.started' && event.type !== 'chunk.status' && event.type !== 'tool.called';
      if (keep || (event.type === 'chunk.status' && (event.status === 'retrying' || FINISHED_CHUNK_STATUSES.has(event.status)))) region.persist(line!);
      draw();
    },
    close() {
      if (closed) return;
      draw();
      closed = true;
      cancel?.();
      region.done();
    },
  };
}

/** The live region's text. */
export function frame(lines: ProgressLines, runId: string | undefined, name: string, finished: number, now: number, rows: number): string {
  const tracker = lines.tracker;
  const start = lines.start ?? now;
  const u = lines.usage;
  const out = [`● ${name || 'run'} · ${seconds(now - start)}s · ${u.inputTokens} in · ${u.outputTokens} out${u.costUsd > 0 ? ` · $${u.costUsd.toFixed(4)}` : ''} · ${finished} ops done`];
  if (runId === undefined) return out[0]!;
  for (const plan of tracker.plans(runId)) {
    const running = [...plan.chunks.values()].filter((c) => c.status === 'running').map((c) => `#${c.chunkId}`);
    const shown = running.length > 8 ? [...running.slice(0, 8), `+${running.length - 8}`] : running;
    out.push(`  plan ${plan.planId}: ${plan.done}/${plan.total} chunks done${shown.length ? ` · running ${shown.join(' ')}` : ''}`);
  }
  const inFlight = tracker.ops(runId).filter((op) => op.status === 'running' && op.kind !== 'run');
  const room = Math.max(3, rows - out.length - 2);
  for (const op of inFlight.slice(0, room)) out.push(`  ${'  '.repeat(Math.max(0, op.depth - 1))}… ${label(op)} ${seconds(now - op.start)}s`);
  if (inFlight.length > room) out.push(`  … and ${inFlight.length - room} more`);
  return out.join('\n');
}

function label(op: TrackedOp): string {
  const chunk = op.plan?.chunkId === undefined ? '' : ` [#${op.plan.chunkId}${op.plan.attempt && op.plan.attempt > 1 ? ` attempt ${op.plan.attempt}` : ''}]`;
  return `${op.kind} ${op.name}${chunk}`;
}

function usageText(u: Usage): string {
  return `in=${u.inputTokens} out=${u.outputTokens} turns=${u.turns}${u.costUsd > 0 ? ` $${u.costUsd.toFixed(4)}` : ''}`;
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** The first line of a text, at most 160 characters. */
function oneLine(text: string): string {
  const end = text.indexOf('\n');
  const first = end < 0 ? text : `${text.slice(0, end)} …`;
  return first.length > 160 ? `${first.slice(0, 159)}…` : first;
}

/**
 * The team pattern: members deliberate over a shared channel in rounds;
 * the team ends by consensus, after a number of rounds, or when the
 * lead decides, and the lead writes the final answer.
 * @module
 */
import { z } from 'zod';
import { combineSignals, throwIfAborted } from '../core/abort.js';
import { isCancellation, type RunContext } from '../core/context.js';
import { CancelledError, ConfigurationError, TroupeError, describeValue, errorMessage } from '../core/errors.js';
import { defineRunnable, type Outcome, type Runnable } from '../core/runnable.js';
import { RunControl } from '../core/control.js';
import { TeamParticipant, type TeamReply } from './team-member.js';
import { checkResumeState, initialState, validateTeamOptions, type ResolvedTeamOptions, type TeamOptions, type TeamVote } from './team-options.js';
import { renderIntro, renderMessages } from './team-protocol.js';
import { TEAM_SENDER, USER_SENDER, teamMessageSchema, teamStateSchema, visibleTo, type TeamMessage, type TeamReason, type TeamState, type TeamStatus } from './team-state.js';
import { savedOutcomeSchema } from '../core/checkpoint.js';
import { legacyOutcome } from '../core/outcome.js';
import { defined } from '../core/defined.js';

const teamOutcomeSchema = z.preprocess(legacyOutcome, savedOutcomeSchema.extend({ transcript: z.array(teamMessageSchema), rounds: z.number().int().nonnegative() }));

export type { TeamOptions, TeamVote } from './team-options.js';

/** The outcome of a team. */
export interface TeamOutcome extends Outcome {
  status: TeamStatus;
  /** Why the team ended: `consensus`, `max-rounds` or `lead-decided` (none when `shouldContinue` stopped it). */
  reason?: TeamReason;
  /** The whole channel, in order. */
  transcript: TeamMessage[];
  /** Rounds held. */
  rounds: number;
  /** The lead's `conclude_team` summary, when it concluded with one. */
  summary?: string;
}

/** A team runnable. */
export interface Team extends Runnable<TeamOutcome> {
  readonly kind: 'team';
}

/**
 * The control of a run with a team in it: post a message from the
 * application to one participant (by name) or to `'all'`, and cancel. Like
 * every control, one per run: two runs of one team each have their own
 * queue.
 *
 * @example
 * ```ts
 * const control = new TeamControl();
 * const running = run(panel, 'Review this change', { adapter, control });
 * control.post('security', 'Check the session cookie flags too.'); // enters the channel at the next round
 * await running;
 * ```
 */
export class TeamControl extends RunControl {
  readonly #pending: Array<{ to: string; text: string }> = [];
  #participants: ReadonlySet<string> | undefined;

  /**
   * Queue `message` for participant `to` (a member's or the lead's name) or
   * for `'all'`; it enters the channel at the start of the next round.
   * Throws a `NotRunningError` when no run is attached, and a
   * `ConfigurationError` for a name that is no participant's.
   */
  post(to: string, message: string): void {
    this.attached('post');
    if (typeof to !== 'string' || to === '') throw new ConfigurationError(`Expected \`to\` to be a participant's name or 'all', got ${describeValue(to)}`, { code: 'invalid_argument' });
    if (typeof message !== 'string') throw new ConfigurationError(`Expected a posted message to be a string, got ${describeValue(message)}`, { code: 'invalid_argument' });
    if (to !== 'all' && this.#participants && !this.#participants.has(to)) {
      throw new ConfigurationError(`Cannot post to the team: no participant "${to}" (use a member's name, the lead's or 'all')`, { code: 'invalid_argument' });
    }
    this.#pending.push({ to, text: message });
  }

  /**
   * The team of the run says who takes part; the messages queued so far.
   * @internal
   */
  take(participants: ReadonlySet<string>): Array<{ to: string; text: string }> {
    this.#participants = participants;
    return this.#pending.splice(0).filter((m) => m.to === 'all' || participants.has(m.to));
  }
}

/** Every member failed (or the lead did): the team cannot answer. */
export class TeamFailedError extends TroupeError {
  constructor(message: string, state: TeamState, cause?: unknown) {
    super('team_failed', message, { cause, details: { team: state.team, state } });
  }
}

const WHY: Record<TeamReason | 'stopped', string> = {
  consensus: 'every member voted to conclude',
  'lead-decided': 'you concluded it',
  'max-rounds': 'the round limit was reached',
  stopped: 'the discussion was stopped',
};

/**
 * Create a team.
 *
 * @example
 * ```ts
 * const panel = team({ members: [analyst, developer], lead, terminationMode: 'consensus', maxRounds: 4 });
 * const { output, status, transcript } = await run(panel, 'Review this change', { adapter });
 * ```
 */
export function team(options: TeamOptions): Team {
  const opts = validateTeamOptions(options);
  const names: ReadonlySet<string> = new Set([...opts.members.map((m) => m.name), opts.lead.name]);
  // Messages posted to the run come through its TeamControl (`run(panel, input, { control })`): the runnable keeps no queue.
  const posted = (ctx: RunContext) => (ctx.control instanceof TeamControl ? ctx.control.take(names) : []);
  const runnable = defineRunnable<TeamOutcome>({ name: opts.name, kind: 'team', run: (input, ctx) => deliberate(opts, input, ctx, () => posted(ctx)) });
  return { ...runnable, kind: 'team' };
}

async function deliberate(opts: ResolvedTeamOptions, input: string, ctx: RunContext, pending: () => Array<{ to: string; text: string }>): Promise<Omit<TeamOutcome, 'usage'>> {
  // In a resumed run, the run's own checkpoint: a finished team returns its outcome.
  const checkpoint = ctx.checkpoint<TeamState, TeamOutcome>({ kind: 'team', version: 1, state: teamStateSchema, outcome: teamOutcomeSchema });
  const saved = await checkpoint.restore();
  if (saved?.outcome) return saved.outcome;
  const from = saved?.state ? checkResumeState(saved.state, opts) : undefined;
  const deliberation = new Deliberation(opts, ctx, from ? structuredClone(from) : initialState(opts, input));
  try {
    while (!deliberation.state.conclusion) {
      await deliberation.round(pending);
      await checkpoint.save(deliberation.state);
    }
    const outcome = await deliberation.conclude();
    await checkpoint.finish(deliberation.state, outcome);
    return outcome;
  } finally {
    await deliberation.close();
  }
}

/** A member's failed turn (after its retry). */
type Failure = { failure: unknown };

/** The deliberation of one run of a team: its state, its participants, one round at a time. */
class Deliberation {
  readonly state: TeamState;
  readonly #opts: ResolvedTeamOptions;
  readonly #ctx: RunContext;
  /** Ends turns still in flight when the team ends early (a member's configuration error, a failed hook). */
  readonly #stop = new AbortController();
  readonly #turnCtx: RunContext;
  readonly #members: TeamParticipant[];
  readonly #lead: TeamParticipant;
  readonly #memberNames: string[];
  #lastFailure: unknown;

  constructor(opts: ResolvedTeamOptions, ctx: RunContext, state: TeamState) {
    this.#opts = opts;
    this.#ctx = ctx;
    this.state = state;
    this.#turnCtx = ctx.withSignal(combineSignals(ctx.signal, this.#stop.signal));
    this.#memberNames = opts.members.map((m) => m.name);
    this.#members = opts.members.map((m) => new TeamParticipant(m, 'member', false));
    this.#lead = new TeamParticipant(opts.lead, 'lead', opts.terminationMode === 'lead-decides');
  }

  /** One round: injected messages, every active member's turn, then the termination checks. */
  async round(pending: () => Array<{ to: string; text: string }>): Promise<void> {
    const { state } = this;
    const opts = this.#opts;
    const round = state.round + 1;
    for (const { to, text } of pending()) await this.#add({ from: USER_SENDER, round, text, ...(to === 'all' ? {} : { to }) });
    const active = this.#members.filter((p) => this.#entry(p.name).active);
    this.#ctx.emit('team.round.started', { team: opts.name, round, members: active.map((p) => p.name) });
    if (opts.turnBased) {
      for (const p of active) await this.#speak(p, round, await this.#turn(p, round, state.transcript.length));
    } else {
      const upTo = state.transcript.length;
      const results = await Promise.all(active.map((p) => this.#turn(p, round, upTo)));
      for (const [i, p] of active.entries()) await this.#speak(p, round, results[i]!);
    }
    if (!state.members.some((m) => m.active)) this.#fail('every member failed', this.#lastFailure);
    await this.#conclusion(round);
    state.round = round;
    if (!state.conclusion && round >= opts.maxRounds) state.conclusion = { reason: 'max-rounds' };
    if (!state.conclusion && opts.shouldContinue && !(await opts.shouldContinue(structuredClone(state)))) state.conclusion = {};
  }

  /** The lead writes the final answer. */
  async conclude(): Promise<Omit<TeamOutcome, 'usage'>> {
    const { state } = this;
    const conclusion = state.conclusion!;
    const final = await this.#turn(this.#lead, state.round, state.transcript.length, `\n\nThe team has finished: ${WHY[conclusion.reason ?? 'stopped']}. Write the final answer to the task.`, 'final');
    if ('failure' in final) return this.#fail('the lead could not write the final answer', final.failure);
    const why = defined({ reason: conclusion.reason });
    this.#ctx.emit('team.concluded', { team: this.#opts.name, status: 'completed', ...why, rounds: state.round, output: final.text, transcript: structuredClone(state.transcript) });
    const outcome: Omit<TeamOutcome, 'usage'> = { output: final.text, agent: final.from, status: 'completed', ...why, transcript: structuredClone(state.transcript), rounds: state.round };
    if (conclusion.summary !== undefined) outcome.summary = conclusion.summary;
    return outcome;
  }

  async close(): Promise<void> {
    const status = this.#ctx.signal.aborted ? 'cancelled' : 'completed';
    this.#stop.abort(new CancelledError(`Team "${this.#opts.name}" has ended`));
    await Promise.all([...this.#members, this.#lead].map((p) => p.close(status)));
  }

  /** Consensus, or the lead's review in `lead-decides`. */
  async #conclusion(round: number): Promise<void> {
    const { state } = this;
    const opts = this.#opts;
    const stillActive = state.members.filter((m) => m.active).map((m) => m.name);
    if (opts.terminationMode === 'consensus' && stillActive.every((m) => state.votes.includes(m))) {
      state.conclusion = { reason: 'consensus' };
    } else if (opts.terminationMode === 'lead-decides') {
      const lead = this.#lead;
      const review = await this.#turn(lead, round, state.transcript.length, `\n\nReview round ${round}: reply with guidance for the team, or conclude.`);
      if ('failure' in review) return this.#fail('the lead failed', review.failure);
      const { text, conclude, summary } = review;
      if (text !== '') await this.#add({ from: review.from, round, text, ...(review.from === lead.name ? {} : { member: lead.name }) });
      if (conclude) state.conclusion = { reason: 'lead-decided', ...defined({ summary }) };
    }
  }

  #entry(name: string): TeamState['members'][number] {
    return this.state.members.find((m) => m.name === name)!;
  }

  #seenOf(p: TeamParticipant): { seen: number } {
    return p === this.#lead ? this.state.lead : this.#entry(p.name);
  }

  async #add(message: TeamMessage): Promise<void> {
    this.state.transcript.push(message);
    this.#ctx.emit('team.message', { team: this.#opts.name, message });
    await this.#opts.onMessage?.(message);
  }

  async #setVote(member: string, round: number, vote: boolean, reason?: string): Promise<void> {
    const { state } = this;
    const had = state.votes.includes(member);
    if (vote === had && !vote) return;
    state.votes = state.votes.filter((v) => v !== member);
    if (vote) state.votes.push(member);
    const event: TeamVote = { member, round, vote, ...defined({ reason }) };
    this.#ctx.emit('team.vote', { team: this.#opts.name, ...event });
    await this.#opts.onVote?.(event);
  }

  /** One turn with one retry; a cancellation propagates, a second failure is returned. */
  async #turn(p: TeamParticipant, round: number, upTo: number, suffix = '', scope = `round-${round}`): Promise<TeamReply | Failure> {
    const { state } = this;
    const opts = this.#opts;
    const turnCtx = this.#turnCtx;
    const seen = this.#seenOf(p);
    const messages = visibleTo(state.transcript, p.name, p.fresh ? 0 : seen.seen, upTo, p.fresh);
    let text = renderMessages(messages, p.name, round) + suffix;
    if (p.fresh) {
      const intro = renderIntro({ task: state.task, self: p.name, members: this.#memberNames, lead: this.#lead.name, role: p.role, tools: p.usesTools(turnCtx), mode: opts.terminationMode });
      text = `${intro}\n\n${text}`;
    }
    let failure: unknown;
    for (let attempt = 1; attempt <= 2; attempt++) {
      throwIfAborted(turnCtx.signal);
      try {
        // Children of a turn are keyed by round, so a resumed round finds their checkpoints.
        const reply = await p.turn(text, turnCtx, scope);
        p.fresh = false;
        seen.seen = upTo;
        return reply;
      } catch (error) {
        // cancellation and configuration mistakes are not a member's failure
        if (turnCtx.signal.aborted || isCancellation(error, turnCtx.signal) || error instanceof ConfigurationError) throw error;
        failure = error;
        this.#ctx.emit('warning', { message: `Team "${opts.name}": ${p.name} failed (attempt ${attempt} of 2): ${errorMessage(error)}`, code: 'team_member_failed' });
      }
    }
    return { failure };
  }

  /** A member's turn goes to the channel (with its vote); a member that failed twice leaves the team. */
  async #speak(p: TeamParticipant, round: number, result: TeamReply | Failure): Promise<void> {
    const { state } = this;
    if ('failure' in result) {
      this.#lastFailure = result.failure;
      this.#entry(p.name).active = false;
      state.votes = state.votes.filter((v) => v !== p.name);
      await p.close('failed');
      await this.#add({ from: TEAM_SENDER, round, text: `${p.name} failed twice and left the team: ${errorMessage(result.failure)}` });
      return;
    }
    if (result.text !== '' || result.vote) {
      await this.#add({ from: result.from, round, text: result.text, ...(result.from === p.name ? {} : { member: p.name }), ...(result.vote ? { vote: true } : {}) });
    }
    await this.#setVote(p.name, round, result.vote, result.reason);
  }

  #fail(message: string, cause?: unknown): never {
    throw new TeamFailedError(`Team "${this.#opts.name}" failed: ${message}`, structuredClone(this.state), cause);
  }
}

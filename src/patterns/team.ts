/**
 * The team pattern: members deliberate over a shared channel in rounds;
 * the team ends by consensus, after a number of rounds, or when the
 * coordinator decides, and the coordinator writes the final answer.
 * @module
 */
import type { RunContext } from '../core/context.js';
import { isCancellation } from '../core/context.js';
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, TroupeError, describeValue, errorMessage } from '../core/errors.js';
import type { Outcome, Runnable } from '../core/runnable.js';
import { renderIntro, renderMessages } from './team-protocol.js';
import { TeamParticipant, type TeamReply } from './team-member.js';
import {
  TEAM_SENDER,
  USER_SENDER,
  teamStateSchema,
  visibleTo,
  type TeamMessage,
  type TeamState,
  type TeamStatus,
  type TerminationMode,
} from './team-state.js';

/** A vote cast or withdrawn, as `onVote` and the `team.vote` event report it. */
export interface TeamVote {
  member: string;
  round: number;
  /** True when cast, false when withdrawn by speaking without a vote. */
  vote: boolean;
  reason?: string;
}

/** Options of {@link team}. */
export interface TeamOptions {
  /** The team's name. Default: `team`. */
  name?: string;
  /** The members; agents keep one session each, other runnables run once per turn. */
  members: Runnable[];
  /** Reviews (in `coordinatorDecides`) and writes the final answer. */
  coordinator: Runnable;
  /** How the team ends besides `maxRounds`. Default: `consensus`. */
  terminationMode?: TerminationMode;
  /** The most rounds, in every mode. Default: 10. */
  maxRounds?: number;
  /** Members speak one after another and see this round's earlier messages. Default: false (parallel). */
  turnBased?: boolean;
  /** Called for every message added to the channel. */
  onMessage?: (message: TeamMessage) => void | Promise<void>;
  /** Called for every vote cast or withdrawn. */
  onVote?: (vote: TeamVote) => void | Promise<void>;
  /** Called after every round that did not conclude; `false` ends the deliberation (status `completed`). */
  shouldContinue?: (state: TeamState) => boolean | Promise<boolean>;
  /** Called, and awaited, with the state after every round. */
  onCheckpoint?: (state: TeamState, options: { signal: AbortSignal }) => void | Promise<void>;
  /** Continue from a checkpointed state at its next round (the run's input is then ignored). */
  resumeFrom?: TeamState;
}

/** The outcome of a team. */
export interface TeamOutcome extends Outcome {
  status: TeamStatus;
  /** The whole channel, in order. */
  transcript: TeamMessage[];
  /** Rounds held. */
  rounds: number;
  /** The coordinator's `conclude_team` summary, when it concluded with one. */
  summary?: string;
}

/** A team runnable. */
export interface Team extends Runnable<TeamOutcome> {
  readonly kind: 'team';
  /**
   * Queue a message from the application for one participant (by name) or
   * for `'all'`; it enters the channel at the start of the next round.
   */
  inject(to: string, message: string): void;
}

/** Every member failed (or the coordinator did): the team cannot answer. */
export class TeamFailedError extends TroupeError {
  constructor(message: string, state: TeamState, cause?: unknown) {
    super('team_failed', message, { cause, details: { team: state.team, state } });
  }
}

const MODES: readonly TerminationMode[] = ['consensus', 'maxRounds', 'coordinatorDecides'];
const WHY: Record<TeamStatus, string> = {
  consensus: 'every member voted to conclude',
  coordinator: 'you concluded it',
  'max-rounds': 'the round limit was reached',
  completed: 'the discussion was stopped',
};

/**
 * Create a team.
 *
 * @example
 * ```ts
 * const panel = team({ members: [analyst, developer], coordinator: lead, terminationMode: 'consensus', maxRounds: 4 });
 * const { output, status, transcript } = await run(panel, 'Review this change', { adapter });
 * ```
 */
export function team(options: TeamOptions): Team {
  const opts = validateTeamOptions(options);
  const pending: Array<{ to: string; text: string }> = [];
  const names = new Set([...opts.members.map((m) => m.name), opts.coordinator.name]);
  return {
    name: opts.name,
    kind: 'team',
    inject(to, message) {
      if (to !== 'all' && !names.has(to)) {
        throw new ConfigurationError(`Cannot inject into team "${opts.name}": no participant "${to}" (use a member's name or 'all')`);
      }
      if (typeof message !== 'string') throw new ConfigurationError(`Expected an injected message to be a string, got ${describeValue(message)}`);
      pending.push({ to, text: message });
    },
    run(input, parent) {
      return parent.enter<TeamOutcome>({ kind: 'team', name: opts.name }, (ctx) => deliberate(opts, input, ctx, pending));
    },
  };
}

type Resolved = Required<Pick<TeamOptions, 'name' | 'members' | 'coordinator' | 'terminationMode' | 'maxRounds' | 'turnBased'>> & TeamOptions;

async function deliberate(opts: Resolved, input: string, ctx: RunContext, pending: Array<{ to: string; text: string }>) {
  const state: TeamState = opts.resumeFrom ? structuredClone(opts.resumeFrom) : initialState(opts, input);
  const memberNames = opts.members.map((m) => m.name);
  const members = opts.members.map((m) => new TeamParticipant(m, 'member', false));
  const coordinator = new TeamParticipant(opts.coordinator, 'coordinator', opts.terminationMode === 'coordinatorDecides');
  const entry = (name: string) => state.members.find((m) => m.name === name)!;
  const seenOf = (p: TeamParticipant) => (p === coordinator ? state.coordinator : entry(p.name));

  const add = async (message: TeamMessage) => {
    state.transcript.push(message);
    ctx.emit('team.message', { team: opts.name, message });
    await opts.onMessage?.(message);
  };
  const setVote = async (member: string, round: number, vote: boolean, reason?: string) => {
    const had = state.votes.includes(member);
    if (vote === had && !vote) return;
    state.votes = state.votes.filter((v) => v !== member);
    if (vote) state.votes.push(member);
    const event: TeamVote = { member, round, vote, ...(reason === undefined ? {} : { reason }) };
    ctx.emit('team.vote', { team: opts.name, ...event });
    await opts.onVote?.(event);
  };
  /** One turn with one retry; a cancellation propagates, a second failure is returned. */
  const turn = async (p: TeamParticipant, round: number, upTo: number, suffix = '') => {
    const seen = seenOf(p);
    const messages = visibleTo(state.transcript, p.name, p.fresh ? 0 : seen.seen, upTo, p.fresh);
    let text = renderMessages(messages, p.name, round) + suffix;
    if (p.fresh) {
      const intro = renderIntro({ task: state.task, self: p.name, members: memberNames, coordinator: coordinator.name, role: p.role, tools: p.usesTools(ctx), mode: opts.terminationMode });
      text = `${intro}\n\n${text}`;
    }
    let failure: unknown;
    for (let attempt = 1; attempt <= 2; attempt++) {
      throwIfAborted(ctx.signal);
      try {
        const reply = await p.turn(text, ctx);
        p.fresh = false;
        seen.seen = upTo;
        return reply;
      } catch (error) {
        if (ctx.signal.aborted || isCancellation(error, ctx.signal)) throw error;
        failure = error;
        ctx.emit('warning', { message: `Team "${opts.name}": ${p.name} failed (attempt ${attempt} of 2): ${errorMessage(error)}`, code: 'team_member_failed' });
      }
    }
    return { failure };
  };
  const speak = async (p: TeamParticipant, round: number, result: TeamReply | { failure: unknown }) => {
    if ('failure' in result) {
      entry(p.name).active = false;
      state.votes = state.votes.filter((v) => v !== p.name);
      await p.close('failed');
      await add({ from: TEAM_SENDER, round, text: `${p.name} failed twice and left the team: ${errorMessage(result.failure)}` });
      return;
    }
    if (result.text !== '' || result.vote) {
      await add({ from: result.from, round, text: result.text, ...(result.from === p.name ? {} : { member: p.name }), ...(result.vote ? { vote: true } : {}) });
    }
    await setVote(p.name, round, result.vote, result.reason);
  };
  const fail = (message: string, cause?: unknown): never => {
    throw new TeamFailedError(`Team "${opts.name}" failed: ${message}`, structuredClone(state), cause);
  };

  try {
    while (!state.conclusion) {
      const round = state.round + 1;
      for (const { to, text } of pending.splice(0)) await add({ from: USER_SENDER, round, text, ...(to === 'all' ? {} : { to }) });
      const active = members.filter((p) => entry(p.name).active);
      ctx.emit('team.round.started', { team: opts.name, round, members: active.map((p) => p.name) });
      if (opts.turnBased) {
        for (const p of active) await speak(p, round, await turn(p, round, state.transcript.length));
      } else {
        const upTo = state.transcript.length;
        const results = await Promise.all(active.map((p) => turn(p, round, upTo)));
        for (const [i, p] of active.entries()) await speak(p, round, results[i]!);
      }
      if (!state.members.some((m) => m.active)) fail('every member failed');
      const stillActive = state.members.filter((m) => m.active).map((m) => m.name);
      if (opts.terminationMode === 'consensus' && stillActive.every((m) => state.votes.includes(m))) {
        state.conclusion = { status: 'consensus' };
      } else if (opts.terminationMode === 'coordinatorDecides') {
        const review = await turn(coordinator, round, state.transcript.length, `\n\nReview round ${round}: reply with guidance for the team, or conclude.`);
        if ('failure' in review) return fail('the coordinator failed', review.failure);
        const { text, conclude, summary } = review;
        if (text !== '') await add({ from: review.from, round, text, ...(review.from === coordinator.name ? {} : { member: coordinator.name }) });
        if (conclude) state.conclusion = { status: 'coordinator', ...(summary === undefined ? {} : { summary }) };
      }
      state.round = round;
      if (!state.conclusion && round >= opts.maxRounds) state.conclusion = { status: 'max-rounds' };
      if (!state.conclusion && opts.shouldContinue && !(await opts.shouldContinue(structuredClone(state)))) {
        state.conclusion = { status: 'completed' };
      }
      await opts.onCheckpoint?.(structuredClone(state), { signal: ctx.signal });
    }
    const conclusion = state.conclusion;
    const final = await turn(coordinator, state.round, state.transcript.length, `\n\nThe team has finished: ${WHY[conclusion.status]}. Write the final answer to the task.`);
    if ('failure' in final) return fail('the coordinator could not write the final answer', final.failure);
    ctx.emit('team.concluded', { team: opts.name, status: conclusion.status, rounds: state.round, output: final.text, transcript: structuredClone(state.transcript) });
    const outcome: Omit<TeamOutcome, 'usage'> = {
      output: final.text,
      agent: final.from,
      status: conclusion.status,
      transcript: structuredClone(state.transcript),
      rounds: state.round,
    };
    if (conclusion.summary !== undefined) outcome.summary = conclusion.summary;
    return outcome;
  } finally {
    await Promise.all([...members, coordinator].map((p) => p.close('completed')));
  }
}

function initialState(opts: Resolved, task: string): TeamState {
  return {
    schemaVersion: 1,
    team: opts.name,
    task,
    terminationMode: opts.terminationMode,
    round: 0,
    transcript: [],
    members: opts.members.map((m) => ({ name: m.name, seen: 0, active: true })),
    coordinator: { name: opts.coordinator.name, seen: 0 },
    votes: [],
  };
}

function isRunnable(value: unknown): value is Runnable {
  return typeof value === 'object' && value !== null && typeof (value as Runnable).run === 'function' && typeof (value as Runnable).name === 'string';
}

function validateTeamOptions(options: TeamOptions): Resolved {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected team options to be an object, got ${describeValue(options)}`);
  const name = options.name ?? 'team';
  if (typeof name !== 'string' || name.trim() === '') throw new ConfigurationError(`Expected team \`name\` to be a non-empty string, got ${describeValue(name)}`);
  if (!Array.isArray(options.members) || options.members.length === 0 || !options.members.every(isRunnable)) {
    throw new ConfigurationError(`Expected \`members\` to be a non-empty array of runnables, got ${describeValue(options.members)}`);
  }
  if (!isRunnable(options.coordinator)) throw new ConfigurationError(`Expected \`coordinator\` to be a runnable, got ${describeValue(options.coordinator)}`);
  const seen = new Set<string>();
  for (const p of [...options.members, options.coordinator]) {
    if (p.name === TEAM_SENDER || p.name === USER_SENDER) throw new ConfigurationError(`Team "${name}": the name "${p.name}" is reserved for the channel`);
    if (seen.has(p.name)) throw new ConfigurationError(`Team "${name}" has two participants named "${p.name}"`);
    seen.add(p.name);
  }
  const terminationMode = options.terminationMode ?? 'consensus';
  if (!MODES.includes(terminationMode)) {
    throw new ConfigurationError(`Expected \`terminationMode\` to be one of ${MODES.join(', ')}, got ${describeValue(terminationMode)}`);
  }
  const maxRounds = options.maxRounds ?? 10;
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new ConfigurationError(`Expected \`maxRounds\` to be a positive integer, got ${describeValue(options.maxRounds)}`);
  const resolved: Resolved = { ...options, name, terminationMode, maxRounds, turnBased: options.turnBased ?? false };
  if (options.resumeFrom !== undefined) resolved.resumeFrom = checkResumeState(options.resumeFrom, resolved);
  return resolved;
}

function checkResumeState(value: unknown, opts: Resolved): TeamState {
  const parsed = teamStateSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigurationError(`Expected \`resumeFrom\` to be a team state (schemaVersion 1): ${issues}`);
  }
  const state = parsed.data;
  const want = opts.members.map((m) => m.name).join(',');
  const got = state.members.map((m) => m.name).join(',');
  if (want !== got || state.coordinator.name !== opts.coordinator.name) {
    throw new ConfigurationError(`Cannot resume team "${opts.name}": the state has members [${got}] and coordinator "${state.coordinator.name}", the team has [${want}] and "${opts.coordinator.name}"`);
  }
  return state;
}

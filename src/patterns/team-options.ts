/**
 * The options of a team, their validation, and the state a team starts from.
 * @module
 */
import type { Runnable } from '../core/runnable.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { boolean, check, defineOptions, func, oneOf, positiveInteger, required, runnable } from '../core/options.js';
import { TEAM_SENDER, USER_SENDER, terminationModes, type TeamMessage, type TeamState, type TerminationMode } from './team-state.js';

/** A vote cast or withdrawn, as `onVote` and the `team.vote` event report it. */
export interface TeamVote {
  member: string;
  round: number;
  /** True when cast, false when withdrawn by speaking without a vote. */
  vote: boolean;
  reason?: string;
}

/** Options of `team()`. */
export interface TeamOptions {
  /** The team's name. Default: `team`. */
  name?: string;
  /** The members; agents keep one session each, other runnables run once per turn. */
  members: Runnable[];
  /** The lead: reviews each round (in `lead-decides`) and writes the final answer. */
  lead: Runnable;
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
}

/** Team options with defaults applied. */
export type ResolvedTeamOptions = Required<Pick<TeamOptions, 'name' | 'members' | 'lead' | 'terminationMode' | 'maxRounds' | 'turnBased'>> & TeamOptions;

/** The description {@link team} checks its options against. */
export const teamOptions = defineOptions<TeamOptions>('team', {
  name: check('a non-empty string', (v) => typeof v === 'string' && v.trim() !== ''),
  members: required(check('a non-empty array of runnables', (v) => Array.isArray(v) && v.length > 0 && v.every(isRunnable))),
  lead: required(runnable),
  terminationMode: oneOf(terminationModes),
  maxRounds: positiveInteger,
  turnBased: boolean,
  onMessage: func,
  onVote: func,
  shouldContinue: func,
});

/** The state of a team before its first round. */
export function initialState(opts: ResolvedTeamOptions, task: string): TeamState {
  return {
    schemaVersion: 1,
    team: opts.name,
    task,
    terminationMode: opts.terminationMode,
    round: 0,
    transcript: [],
    members: opts.members.map((m) => ({ name: m.name, seen: 0, active: true })),
    lead: { name: opts.lead.name, seen: 0 },
    votes: [],
  };
}

function isRunnable(value: unknown): value is Runnable {
  return typeof value === 'object' && value !== null && typeof (value as Runnable).run === 'function' && typeof (value as Runnable).name === 'string';
}

/** Validate team options eagerly and apply defaults. */
export function validateTeamOptions(options: TeamOptions): ResolvedTeamOptions {
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected team options to be an object, got ${describeValue(options)}`);
  teamOptions.check(options);
  const name = options.name ?? 'team';
  const seen = new Set<string>();
  for (const p of [...options.members, options.lead]) {
    if (p.name === TEAM_SENDER || p.name === USER_SENDER) throw new ConfigurationError(`Team "${name}": the name "${p.name}" is reserved for the channel`);
    if (seen.has(p.name)) throw new ConfigurationError(`Team "${name}" has two participants named "${p.name}"`);
    seen.add(p.name);
  }
  const terminationMode = options.terminationMode ?? 'consensus';
  const maxRounds = options.maxRounds ?? 10;
  return { ...options, name, terminationMode, maxRounds, turnBased: options.turnBased ?? false };
}

/** Check a restored team state against the team's options (members and lead must match). */
export function checkResumeState(state: TeamState, opts: ResolvedTeamOptions): TeamState {
  const want = opts.members.map((m) => m.name).join(',');
  const got = state.members.map((m) => m.name).join(',');
  if (want !== got || state.lead.name !== opts.lead.name) {
    throw new ConfigurationError(`Cannot resume team "${opts.name}": the state has members [${got}] and lead "${state.lead.name}", the team has [${want}] and "${opts.lead.name}"`);
  }
  return state;
}
